//! Compensation for stuck workers: while every worker is stuck in a
//! blocking call, spare workers run the other tasks; when the calls return,
//! the spares step down and their threads exit after the keep-alive.
//! `block_in_place` hands off at once. Every wait is bounded and nothing
//! here measures time: a stuck runtime fails a test by timing out.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use brigade::{Builder, Runtime};
use common::{TIMEOUT, wait_until, with_timeout};

/// A blocking call made by mistake: `block` blocks the calling thread until
/// `release` (or [`TIMEOUT`]); `entered` counts the threads blocked in it.
#[derive(Clone, Default)]
struct Gate(Arc<(Mutex<GateState>, Condvar)>);

#[derive(Default)]
struct GateState {
    released: bool,
    entered: usize,
}

impl Gate {
    fn block(&self) {
        let (state, condvar) = &*self.0;
        let mut state = state.lock().unwrap();
        state.entered += 1;
        condvar.notify_all();
        let (state, timeout) = condvar
            .wait_timeout_while(state, TIMEOUT, |state| !state.released)
            .unwrap();
        assert!(!timeout.timed_out(), "the gate was never released");
        drop(state);
    }

    fn entered(&self) -> usize {
        self.0.0.lock().unwrap().entered
    }

    fn release(&self) {
        self.0.0.lock().unwrap().released = true;
        self.0.1.notify_all();
    }
}

fn runtime(workers: usize, keep_alive: Duration) -> Runtime {
    Builder::new()
        .worker_threads(workers)
        .compensation_threshold(Some(Duration::from_millis(2)))
        .thread_keep_alive(keep_alive)
        .build()
        .unwrap()
}

/// One worker, no automatic compensation (`block_in_place` still hands off).
fn uncompensated_runtime() -> Runtime {
    Builder::new()
        .worker_threads(1)
        .compensation_threshold(None)
        .build()
        .unwrap()
}

/// Blocks every worker of `rt` in `gate` and waits until they all are.
fn block_every_worker(rt: &Runtime, workers: usize, gate: &Gate) -> Vec<brigade::JoinHandle<()>> {
    let blockers = (0..workers)
        .map(|_| {
            let gate = gate.clone();
            rt.spawn(async move { gate.block() })
        })
        .collect();
    wait_until("every worker is blocked", || gate.entered() == workers);
    blockers
}

/// Spawns `count` tasks that each count one run, and waits until all ran.
fn run_small_tasks(rt: &Runtime, count: usize) {
    let runs = Arc::new(AtomicUsize::new(0));
    let tasks: Vec<_> = (0..count)
        .map(|_| {
            let runs = runs.clone();
            rt.spawn(async move {
                runs.fetch_add(1, Ordering::SeqCst);
            })
        })
        .collect();
    for task in tasks {
        rt.block_on(task).unwrap();
    }
    assert_eq!(runs.load(Ordering::SeqCst), count, "each task ran once");
}

#[test]
fn tasks_run_while_every_worker_is_blocked() {
    for workers in [1, 2] {
        with_timeout(120, move || {
            let rt = runtime(workers, Duration::from_secs(10));
            let gate = Gate::default();
            let blockers = block_every_worker(&rt, workers, &gate);
            // Every worker is still blocked: only spares can run these.
            run_small_tasks(&rt, 200);
            // Tasks spawned from inside a task, and timers, work too.
            let nested = rt.block_on(rt.spawn(async {
                brigade::time::sleep(Duration::from_millis(1)).await;
                brigade::spawn(async { 7 }).await.unwrap()
            }));
            assert_eq!(nested.unwrap(), 7);
            assert_eq!(gate.entered(), workers, "no blocker finished");
            let metrics = rt.metrics();
            assert!(metrics.compensations() >= 1);
            assert!(metrics.num_serving_spares() >= 1);
            assert!(
                metrics.num_serving_spares() <= workers,
                "bounded by max_spare_workers"
            );
            gate.release();
            for blocker in blockers {
                rt.block_on(blocker).unwrap();
            }
            // Back to the configured count, once the spares notice.
            wait_until("the spares stepped down", || {
                metrics.num_serving_spares() == 0
            });
            run_small_tasks(&rt, 50);
        });
    }
}

#[test]
fn io_and_timers_are_served_while_every_worker_is_blocked() {
    use std::io::{Read, Write};
    with_timeout(60, || {
        let rt = runtime(1, Duration::from_secs(10));
        let listener = rt
            .block_on(brigade::net::TcpListener::bind("127.0.0.1:0"))
            .unwrap();
        let addr = listener.local_addr().unwrap();
        let server = rt.spawn(async move {
            use tokio::io::{AsyncReadExt, AsyncWriteExt};
            let (mut stream, _) = listener.accept().await.unwrap();
            let mut buf = [0u8; 1];
            loop {
                match stream.read(&mut buf).await.unwrap() {
                    0 => break,
                    n => stream.write_all(&buf[..n]).await.unwrap(),
                }
            }
        });
        let mut client = std::net::TcpStream::connect(addr).unwrap();
        client.set_read_timeout(Some(TIMEOUT)).unwrap();
        let mut round_trip = |byte: u8| {
            client.write_all(&[byte]).unwrap();
            let mut echoed = [0u8; 1];
            client.read_exact(&mut echoed).unwrap();
            assert_eq!(echoed[0], byte);
        };
        round_trip(1); // the server now waits on its socket
        let sleeper = rt.spawn(async {
            brigade::time::sleep(Duration::from_millis(30)).await;
        });
        let gate = Gate::default();
        let blockers = block_every_worker(&rt, 1, &gate);
        // Nobody polls the driver while the only worker is blocked: the
        // monitor does, sees the work, and a spare serves it.
        for byte in 2..20 {
            round_trip(byte);
        }
        rt.block_on(sleeper).unwrap();
        assert_eq!(gate.entered(), 1);
        assert!(rt.metrics().compensations() >= 1);
        gate.release();
        for blocker in blockers {
            rt.block_on(blocker).unwrap();
        }
        drop(client);
        rt.block_on(server).unwrap();
    });
}

#[test]
fn without_compensation_a_blocked_worker_holds_back_other_tasks() {
    with_timeout(60, || {
        let rt = uncompensated_runtime();
        let gate = Gate::default();
        let blockers = block_every_worker(&rt, 1, &gate);
        let ran = Arc::new(AtomicUsize::new(0));
        let task = {
            let ran = ran.clone();
            rt.spawn(async move {
                ran.fetch_add(1, Ordering::SeqCst);
            })
        };
        // The monitor counts the stuck poll as long once it has watched it
        // for the long-poll threshold (10 ms by default), past twice the
        // default compensation threshold: a spare ignoring the setting
        // would have been counted by now.
        wait_until("the monitor sees the stuck poll", || {
            rt.metrics().long_polls() == 1
        });
        assert_eq!(rt.metrics().compensations(), 0);
        assert_eq!(rt.metrics().num_spare_threads(), 0);
        assert_eq!(ran.load(Ordering::SeqCst), 0, "the only worker is blocked");
        gate.release();
        rt.block_on(task).unwrap();
        for blocker in blockers {
            rt.block_on(blocker).unwrap();
        }
    });
}

#[test]
fn repeated_episodes_return_to_the_baseline() {
    with_timeout(120, || {
        let keep_alive = Duration::from_millis(50);
        let rt = runtime(2, keep_alive);
        let metrics = rt.metrics();
        for _ in 0..10 {
            let gate = Gate::default();
            let blockers = block_every_worker(&rt, 2, &gate);
            run_small_tasks(&rt, 20);
            gate.release();
            for blocker in blockers {
                rt.block_on(blocker).unwrap();
            }
            wait_until("the spares stepped down", || {
                metrics.num_serving_spares() == 0
            });
        }
        assert!(metrics.compensations() >= 10);
        // Spare threads rest for their keep-alive, then exit.
        wait_until("the spare threads exited", || {
            metrics.num_spare_threads() == 0
        });
    });
}

/// The one worker spawns a child, which goes to its run-next slot with no
/// notification, then blocks until the child has run. Nothing else waits,
/// and no worker is idle: the monitor must open the slot (so the task
/// counts as waiting work) and a spare must take the child from it.
#[test]
fn a_child_waiting_in_a_blocked_workers_run_next_slot_runs_on_a_spare() {
    with_timeout(120, || {
        let rt = runtime(1, Duration::from_secs(10));
        let gate = Gate::default();
        let parent = {
            let gate = gate.clone();
            rt.spawn(async move {
                let child = {
                    let gate = gate.clone();
                    brigade::spawn(async move { gate.release() })
                };
                gate.block();
                child.await.unwrap();
            })
        };
        rt.block_on(parent).unwrap();
        assert!(rt.metrics().compensations() >= 1);
    });
}

#[test]
fn every_task_runs_exactly_once_across_hand_offs() {
    with_timeout(120, || {
        let rt = runtime(2, Duration::from_millis(20));
        let runs: Arc<Vec<AtomicUsize>> =
            Arc::new((0..2000).map(|_| AtomicUsize::new(0)).collect());
        for round in 0..4 {
            let gate = Gate::default();
            // Tasks queued on the workers' own deques before they block:
            // spawned from a task, so they go to its worker's deque.
            let spawner = {
                let runs = runs.clone();
                let gate = gate.clone();
                rt.spawn(async move {
                    let tasks: Vec<_> = (round * 500..(round + 1) * 500)
                        .map(|index| {
                            let runs = runs.clone();
                            brigade::spawn(async move {
                                runs[index].fetch_add(1, Ordering::SeqCst);
                                brigade::yield_now().await;
                            })
                        })
                        .collect();
                    // Blocks with its tasks in its own deque.
                    gate.block();
                    for task in tasks {
                        task.await.unwrap();
                    }
                })
            };
            let other = {
                let gate = gate.clone();
                rt.spawn(async move { gate.block() })
            };
            wait_until("both workers are blocked", || gate.entered() == 2);
            wait_until("the queued tasks ran", || {
                runs[round * 500..(round + 1) * 500]
                    .iter()
                    .all(|count| count.load(Ordering::SeqCst) == 1)
            });
            gate.release();
            rt.block_on(spawner).unwrap();
            rt.block_on(other).unwrap();
        }
        assert!(runs.iter().all(|count| count.load(Ordering::SeqCst) == 1));
    });
}

#[test]
fn a_spare_steps_down_when_the_stuck_task_goes_on_past_yield_points() {
    with_timeout(60, || {
        let rt = runtime(1, Duration::from_secs(10));
        let gate = Gate::default();
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let looper = {
            let (gate, stop) = (gate.clone(), stop.clone());
            rt.spawn(async move {
                gate.block();
                // The same poll goes on, now with yield points: no longer
                // stuck, though it never returns to the scheduler while the
                // spare is idle.
                while !stop.load(Ordering::SeqCst) {
                    brigade::yield_if_busy().await;
                    std::thread::yield_now();
                }
            })
        };
        wait_until("the worker is blocked", || gate.entered() == 1);
        run_small_tasks(&rt, 10);
        assert_eq!(rt.metrics().num_serving_spares(), 1);
        gate.release();
        wait_until("the spare stepped down", || {
            rt.metrics().num_serving_spares() == 0
        });
        assert!(!looper.is_finished());
        stop.store(true, Ordering::SeqCst);
        rt.block_on(looper).unwrap();
    });
}

#[test]
fn block_in_place_hands_off_at_once() {
    with_timeout(60, || {
        // No automatic compensation: the hand-off is block_in_place's.
        let rt = uncompensated_runtime();
        let (tx, rx) = std::sync::mpsc::channel();
        let waiter =
            rt.spawn(
                async move { brigade::task::block_in_place(|| rx.recv_timeout(TIMEOUT).unwrap()) },
            );
        rt.block_on(rt.spawn(async move { tx.send(5).unwrap() }))
            .unwrap();
        assert_eq!(rt.block_on(waiter).unwrap(), 5);
        assert_eq!(rt.metrics().compensations(), 1);
        assert_eq!(
            rt.metrics().long_polls(),
            0,
            "declared blocking is no long poll"
        );
        wait_until("the spare stepped down", || {
            rt.metrics().num_serving_spares() == 0
        });
    });
}

#[test]
fn block_in_place_after_a_long_stretch_keeps_its_spare() {
    with_timeout(60, || {
        // The monitor may cover the long stretch just before the task enters
        // block_in_place: the cover must then stay (taken over by
        // block_in_place) for as long as the closure blocks.
        for _ in 0..20 {
            let rt = runtime(1, Duration::from_secs(10));
            let (tx, rx) = std::sync::mpsc::channel();
            let waiter = rt.spawn(async move {
                common::spin_for(Duration::from_millis(10));
                brigade::task::block_in_place(|| rx.recv_timeout(TIMEOUT).unwrap())
            });
            // Waits behind the spinning task until a spare runs it.
            let sender = rt.spawn(async move {
                std::thread::sleep(Duration::from_millis(20));
                tx.send(3).unwrap();
            });
            assert_eq!(rt.block_on(waiter).unwrap(), 3);
            rt.block_on(sender).unwrap();
        }
    });
}

#[test]
fn block_in_place_runs_in_place_where_it_cannot_hand_off() {
    with_timeout(60, || {
        // Outside any runtime.
        assert_eq!(brigade::task::block_in_place(|| 1), 1);
        let rt = Builder::new()
            .worker_threads(1)
            .max_spare_workers(0)
            .build()
            .unwrap();
        // In block_on, and on a runtime with no spares.
        assert_eq!(
            rt.block_on(async { brigade::task::block_in_place(|| 2) }),
            2
        );
        let nested = rt
            .spawn(async { brigade::task::block_in_place(|| brigade::task::block_in_place(|| 3)) });
        assert_eq!(rt.block_on(nested).unwrap(), 3);
        assert_eq!(rt.metrics().compensations(), 0);
        // On the blocking pool.
        assert_eq!(
            rt.block_on(rt.spawn_blocking(|| brigade::task::block_in_place(|| 4)))
                .unwrap(),
            4
        );
    });
}

#[test]
fn a_panic_in_block_in_place_ends_the_hand_off() {
    with_timeout(60, || {
        let rt = Builder::new().worker_threads(1).build().unwrap();
        let task = rt.spawn(async {
            brigade::task::block_in_place(|| panic!("inside block_in_place"));
        });
        assert!(rt.block_on(task).unwrap_err().is_panic());
        wait_until("the spare stepped down", || {
            rt.metrics().num_serving_spares() == 0
        });
        run_small_tasks(&rt, 10);
    });
}

#[test]
fn long_polls_are_counted_while_they_still_run() {
    with_timeout(60, || {
        let rt = Builder::new()
            .worker_threads(2)
            .long_poll_threshold(Some(Duration::from_millis(5)))
            .build()
            .unwrap();
        let gate = Gate::default();
        let blocker = {
            let gate = gate.clone();
            rt.spawn(async move { gate.block() })
        };
        wait_until("the long poll is counted", || {
            rt.metrics().long_polls() == 1
        });
        assert!(!blocker.is_finished(), "counted while still running");
        gate.release();
        rt.block_on(blocker).unwrap();
        // That it is counted only once is checked in `long_poll.rs`, which
        // can wait for the monitor to report a later poll.
    });
}

#[test]
fn a_blocked_elastic_task_is_charged_for_its_cpu_not_its_wall_time() {
    with_timeout(60, || {
        let rt = runtime(1, Duration::from_secs(10));
        let gate = Gate::default();
        let before = rt.metrics().elastic_cpu_time();
        let spawned = Instant::now();
        let blocker = {
            let gate = gate.clone();
            rt.spawn_elastic(async move { gate.block() })
        };
        wait_until("the elastic task is blocked", || gate.entered() == 1);
        // Work waiting: the monitor covers the blocked worker; the spare
        // has run these tasks, so the cover happened before this returns.
        run_small_tasks(&rt, 10);
        assert!(rt.metrics().compensations() >= 1);
        let covered = spawned.elapsed();
        // What is under test is wall time that costs no CPU, so some has
        // to pass: a second, measured, not slept for and assumed.
        let blocked_since_cover = Instant::now();
        wait_until("a second passed since the cover", || {
            blocked_since_cover.elapsed() >= Duration::from_secs(1)
        });
        gate.release();
        rt.block_on(blocker).unwrap();
        let charged = rt.metrics().elastic_cpu_time() - before;
        // Charged at most until the cover, plus the CPU it used since (none
        // to speak of: it slept), not the second it spent blocked after.
        assert!(
            charged < covered + Duration::from_millis(500),
            "charged {charged:?}; covered within {covered:?}"
        );
    });
}

#[test]
fn shutdown_ends_serving_and_resting_spares() {
    with_timeout(60, || {
        // A spare serving next to a blocked worker: the drop waits for the
        // blocked poll (as always), and ends the spare too.
        let rt = runtime(1, Duration::from_secs(60));
        let gate = Gate::default();
        let blockers = block_every_worker(&rt, 1, &gate);
        run_small_tasks(&rt, 10);
        assert_eq!(rt.metrics().num_spare_threads(), 1);
        let metrics = rt.metrics();
        let releaser = {
            let gate = gate.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(50));
                gate.release();
            })
        };
        drop(blockers);
        drop(rt);
        releaser.join().unwrap();
        assert_eq!(metrics.num_spare_threads(), 0);
        // A resting spare (60 s keep-alive) does not hold up the drop.
        let rt = runtime(1, Duration::from_secs(60));
        let gate = Gate::default();
        let blockers = block_every_worker(&rt, 1, &gate);
        run_small_tasks(&rt, 10);
        gate.release();
        for blocker in blockers {
            rt.block_on(blocker).unwrap();
        }
        wait_until("the spare stepped down", || {
            rt.metrics().num_serving_spares() == 0
        });
        let metrics = rt.metrics();
        assert_eq!(metrics.num_spare_threads(), 1, "resting");
        drop(rt);
        assert_eq!(metrics.num_spare_threads(), 0);
    });
}

#[test]
fn a_runtime_dropped_on_a_spare_shuts_down() {
    with_timeout(60, || {
        let rt = runtime(1, Duration::from_secs(10));
        let gate = Gate::default();
        let blockers = block_every_worker(&rt, 1, &gate);
        let (tx, rx) = std::sync::mpsc::channel();
        let metrics = rt.metrics();
        // Runs on the spare (the only worker is blocked) and drops the
        // runtime there.
        let rt = Arc::new(Mutex::new(Some(rt)));
        let dropper = {
            let rt = rt.clone();
            let gate = gate.clone();
            std::thread::spawn(move || {
                let handle = rt.lock().unwrap().as_ref().unwrap().handle().clone();
                handle.spawn(async move {
                    let runtime = rt.lock().unwrap().take();
                    gate.release();
                    drop(runtime);
                    tx.send(()).unwrap();
                });
            })
        };
        dropper.join().unwrap();
        rx.recv_timeout(TIMEOUT)
            .expect("the drop on the spare finished");
        drop(blockers);
        wait_until("every spare thread exited", || {
            metrics.num_spare_threads() == 0
        });
    });
}

/// `block_in_place` on a spare when the only spare allowed is that one:
/// nobody is left to take over, so the closure runs in place (on the
/// spare's own thread) and, once it returns, the spare serves again; every
/// task runs once.
#[test]
fn block_in_place_runs_in_place_when_every_spare_is_serving() {
    with_timeout(60, || {
        let rt = Builder::new()
            .worker_threads(1)
            .max_spare_workers(1)
            .compensation_threshold(None)
            .build()
            .unwrap();
        let (first_entered, first_in) = std::sync::mpsc::channel();
        let (release_first, first_released) = std::sync::mpsc::channel::<()>();
        // Hands the worker's queue to the only spare.
        let first = rt.spawn(async move {
            brigade::task::block_in_place(|| {
                first_entered.send(()).unwrap();
                first_released.recv_timeout(TIMEOUT).unwrap();
            })
        });
        first_in
            .recv_timeout(TIMEOUT)
            .expect("the first closure runs");
        assert_eq!(rt.metrics().num_serving_spares(), 1);
        let (second_entered, second_in) = std::sync::mpsc::channel();
        let (release_second, second_released) = std::sync::mpsc::channel::<()>();
        // Runs on the spare, which has nobody to hand off to.
        let second = rt.spawn(async move {
            let polled_on = std::thread::current().id();
            brigade::task::block_in_place(|| {
                second_entered
                    .send(std::thread::current().id() == polled_on)
                    .unwrap();
                second_released.recv_timeout(TIMEOUT).unwrap();
            });
            std::thread::current().id() == polled_on
        });
        let in_place = second_in
            .recv_timeout(TIMEOUT)
            .expect("the second closure runs");
        assert!(in_place, "the closure ran on another thread than its task");
        assert_eq!(rt.metrics().compensations(), 1, "no second spare");
        assert!(rt.metrics().num_spare_threads() <= 1);
        release_second.send(()).unwrap();
        assert!(rt.block_on(second).unwrap(), "the task moved threads");
        // The spare serves again while the worker is still handed off.
        run_small_tasks(&rt, 20);
        assert!(!first.is_finished());
        release_first.send(()).unwrap();
        rt.block_on(first).unwrap();
        wait_until("the spare stepped down", || {
            rt.metrics().num_serving_spares() == 0
        });
        run_small_tasks(&rt, 10);
    });
}
