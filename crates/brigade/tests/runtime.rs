//! Integration tests of the runtime as a whole: spawning at scale, spawning
//! from many threads, wake-ups through a channel, panicking tasks, and what
//! shutdown does to tasks that never finish.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::thread;

use brigade::{Builder, Handle, JoinHandle, Runtime};
use common::{
    DropCounter, TIMEOUT, TIMEOUT_SECS, bounded, channel, local_block_on, poll_once, wait_until,
    with_timeout,
};

const MILLION: u64 = 1_000_000;

/// On the default runtime (one worker per CPU, like `Runtime::new()`).
#[brigade::test(flavor = "multi_thread")]
async fn a_million_tasks_spawned_from_block_on_all_complete() {
    let (sum, spawned) = bounded(async {
        let handles: Vec<JoinHandle<u64>> = (0..MILLION)
            .map(|n| brigade::spawn(async move { n }))
            .collect();
        let mut sum = 0;
        for handle in handles {
            sum += handle.await.unwrap();
        }
        (sum, Handle::current().metrics().spawned_tasks_count())
    })
    .await;
    assert_eq!(sum, MILLION * (MILLION - 1) / 2);
    assert!(spawned >= MILLION, "spawned_tasks_count() = {spawned}");
}

#[test]
fn tasks_spawned_from_inside_a_task_all_complete() {
    const N: u64 = 100_000;
    let sum = with_timeout(TIMEOUT_SECS, || {
        let rt = Builder::new().worker_threads(2).build().unwrap();
        let parent = rt.spawn(async {
            let handles: Vec<_> = (0..N).map(|n| brigade::spawn(async move { n })).collect();
            let mut sum = 0;
            for handle in handles {
                sum += handle.await.unwrap();
            }
            sum
        });
        rt.block_on(parent).unwrap()
    });
    assert_eq!(sum, N * (N - 1) / 2);
}

#[test]
fn tasks_spawned_from_many_external_threads_all_complete() {
    const THREADS: u64 = 8;
    const PER_THREAD: u64 = 10_000;
    with_timeout(TIMEOUT_SECS, || {
        let rt = Builder::new().worker_threads(2).build().unwrap();
        let ran = Arc::new(AtomicU64::new(0));
        let barrier = Arc::new(std::sync::Barrier::new(THREADS as usize));
        let spawners: Vec<_> = (0..THREADS)
            .map(|t| {
                let handle = rt.handle().clone();
                let ran = ran.clone();
                let barrier = barrier.clone();
                thread::spawn(move || {
                    barrier.wait();
                    let tasks: Vec<_> = (0..PER_THREAD)
                        .map(|i| {
                            let ran = ran.clone();
                            handle.spawn(async move {
                                ran.fetch_add(1, Ordering::Relaxed);
                                t * PER_THREAD + i
                            })
                        })
                        .collect();
                    handle.block_on(async {
                        let mut sum = 0;
                        for task in tasks {
                            sum += task.await.unwrap();
                        }
                        sum
                    })
                })
            })
            .collect();
        let sum: u64 = spawners.into_iter().map(|t| t.join().unwrap()).sum();
        let total = THREADS * PER_THREAD;
        assert_eq!(sum, total * (total - 1) / 2);
        assert_eq!(ran.load(Ordering::Relaxed), total);
    });
}

/// Two tasks bounce a counter back and forth `rounds` times.
fn ping_pong(rt: &Runtime, rounds: u64) {
    let (to_pong, mut pong_inbox) = channel::<u64>();
    let (to_ping, mut ping_inbox) = channel::<u64>();
    let pong = rt.spawn(async move {
        let mut replies = 0u64;
        while let Some(n) = pong_inbox.recv().await {
            to_ping.send(n + 1);
            replies += 1;
        }
        replies
    });
    let ping = rt.spawn(async move {
        let mut n = 0;
        for _ in 0..rounds {
            to_pong.send(n);
            n = ping_inbox.recv().await.expect("pong hung up");
        }
        n
    });
    assert_eq!(rt.block_on(ping).unwrap(), rounds);
    assert_eq!(rt.block_on(pong).unwrap(), rounds);
}

#[test]
fn ping_pong_through_a_channel_100_000_times() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = Builder::new().worker_threads(2).build().unwrap();
        ping_pong(&rt, 100_000);
    });
}

#[test]
fn ping_pong_on_a_single_worker() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = Builder::new().worker_threads(1).build().unwrap();
        ping_pong(&rt, 100_000);
    });
}

fn boom() -> u32 {
    panic!("boom")
}

#[test]
fn a_panicking_task_yields_a_panic_join_error_and_the_worker_survives() {
    with_timeout(TIMEOUT_SECS, || {
        // One worker: if the panic killed it, nothing below could run.
        let rt = Builder::new().worker_threads(1).build().unwrap();
        // Tasks already waiting when the panic happens.
        let (sender, mut receiver) = channel::<u32>();
        let waiter = rt.spawn(async move {
            let mut sum = 0;
            while let Some(n) = receiver.recv().await {
                sum += n;
            }
            sum
        });
        let error = rt.block_on(rt.spawn(async { boom() })).unwrap_err();
        assert!(error.is_panic());
        assert!(!error.is_cancelled());
        assert!(error.to_string().contains("boom"), "Display: {error}");
        assert!(format!("{error:?}").contains("boom"), "Debug: {error:?}");
        let payload = error.into_panic();
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"boom"));

        // A formatted panic message arrives as a `String`.
        let error = rt
            .block_on(rt.spawn(async {
                let n = 7;
                if n == 7 {
                    panic!("boom {n}");
                }
            }))
            .unwrap_err();
        let payload = error.try_into_panic().unwrap();
        assert_eq!(
            payload.downcast_ref::<String>().map(String::as_str),
            Some("boom 7")
        );

        // The worker still runs new tasks and wakes old ones.
        for n in 1..=10 {
            let sender = sender.clone();
            rt.block_on(rt.spawn(async move { sender.send(n) }))
                .unwrap();
        }
        drop(sender);
        assert_eq!(rt.block_on(waiter).unwrap(), 55);
        let answers: u32 = (0..100u32)
            .map(|n| rt.spawn(async move { n }))
            .collect::<Vec<_>>()
            .into_iter()
            .map(|task| rt.block_on(task).unwrap())
            .sum();
        assert_eq!(answers, 4950);
    });
}

#[test]
fn dropping_the_runtime_drops_ten_thousand_pending_futures() {
    const N: usize = 10_000;
    with_timeout(TIMEOUT_SECS, || {
        let rt = Builder::new().worker_threads(2).build().unwrap();
        let dropped = Arc::new(AtomicUsize::new(0));
        let started = Arc::new(AtomicUsize::new(0));
        let handles: Vec<JoinHandle<()>> = (0..N)
            .map(|_| {
                let guard = DropCounter(dropped.clone());
                let started = started.clone();
                rt.spawn(async move {
                    let _guard = guard;
                    started.fetch_add(1, Ordering::SeqCst);
                    std::future::pending::<()>().await;
                })
            })
            .collect();
        wait_until("every task has been polled once", || {
            started.load(Ordering::SeqCst) == N
        });
        assert_eq!(rt.metrics().num_alive_tasks(), N);
        assert_eq!(dropped.load(Ordering::SeqCst), 0);
        drop(rt);
        assert_eq!(dropped.load(Ordering::SeqCst), N);
        for mut handle in handles {
            assert!(handle.is_finished());
            match poll_once(&mut handle) {
                std::task::Poll::Ready(Err(error)) => assert!(error.is_cancelled(), "{error}"),
                std::task::Poll::Ready(Ok(())) => panic!("a pending task completed"),
                std::task::Poll::Pending => panic!("JoinHandle still pending after shutdown"),
            }
        }
    });
}

#[test]
fn dropping_the_runtime_right_after_spawning_drops_every_future() {
    // Some tasks are still queued (never polled) when the runtime goes away.
    const N: usize = 10_000;
    with_timeout(TIMEOUT_SECS, || {
        let rt = Builder::new().worker_threads(2).build().unwrap();
        let dropped = Arc::new(AtomicUsize::new(0));
        let handles: Vec<JoinHandle<()>> = rt.block_on(async {
            (0..N)
                .map(|_| {
                    let guard = DropCounter(dropped.clone());
                    brigade::spawn(async move {
                        let _guard = guard;
                        std::future::pending::<()>().await;
                    })
                })
                .collect()
        });
        drop(rt);
        assert_eq!(dropped.load(Ordering::SeqCst), N);
        for handle in handles {
            let error = local_block_on(handle).unwrap_err();
            assert!(error.is_cancelled(), "{error}");
        }
    });
}

#[test]
fn join_handles_detached_before_shutdown_do_not_leak_futures() {
    const N: usize = 1_000;
    with_timeout(TIMEOUT_SECS, || {
        let rt = Builder::new().worker_threads(1).build().unwrap();
        let dropped = Arc::new(AtomicUsize::new(0));
        for _ in 0..N {
            let guard = DropCounter(dropped.clone());
            drop(rt.spawn(async move {
                let _guard = guard;
                std::future::pending::<()>().await;
            }));
        }
        drop(rt);
        assert_eq!(dropped.load(Ordering::SeqCst), N);
    });
}

#[test]
fn spawning_on_a_handle_after_shutdown_cancels_the_task() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = Builder::new().worker_threads(1).build().unwrap();
        let handle = rt.handle().clone();
        drop(rt);
        let dropped = Arc::new(AtomicUsize::new(0));
        let guard = DropCounter(dropped.clone());
        let task = handle.spawn(async move {
            let _guard = guard;
            1u32
        });
        let error = local_block_on(task).unwrap_err();
        assert!(error.is_cancelled(), "{error}");
        assert_eq!(dropped.load(Ordering::SeqCst), 1);

        let blocking = handle.spawn_blocking(|| 2u32);
        let error = local_block_on(blocking).unwrap_err();
        assert!(error.is_cancelled(), "{error}");
    });
}

#[test]
fn shutdown_timeout_returns_while_a_blocking_closure_still_runs() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = Builder::new().worker_threads(1).build().unwrap();
        let (started_tx, started_rx) = mpsc::channel();
        let (release_tx, release_rx) = mpsc::channel::<()>();
        let finished = Arc::new(AtomicBool::new(false));
        let blocking = rt.spawn_blocking({
            let finished = finished.clone();
            move || {
                started_tx.send(()).unwrap();
                // Blocks until the test releases it (bounded).
                let _ = release_rx.recv_timeout(TIMEOUT);
                finished.store(true, Ordering::SeqCst);
            }
        });
        started_rx.recv_timeout(TIMEOUT).unwrap();
        rt.shutdown_timeout(std::time::Duration::from_millis(50));
        // It returned although the closure is still blocked.
        assert!(!finished.load(Ordering::SeqCst));
        release_tx.send(()).unwrap();
        wait_until("the released closure finishes", || {
            finished.load(Ordering::SeqCst)
        });
        drop(blocking);
    });
}

/// With and without the fallback driver thread (whose join, step 9 of the
/// shutdown, is bounded by the deadline too).
#[test]
fn shutdown_timeout_returns_while_a_task_blocks_its_worker() {
    for driver_thread in [false, true] {
        shutdown_timeout_with_a_blocked_worker(driver_thread);
    }
}

fn shutdown_timeout_with_a_blocked_worker(driver_thread: bool) {
    with_timeout(TIMEOUT_SECS, move || {
        let rt = Builder::new()
            .worker_threads(1)
            .driver_thread(driver_thread)
            .build()
            .unwrap();
        let (started_tx, started_rx) = mpsc::channel();
        let (release_tx, release_rx) = mpsc::channel::<()>();
        let finished = Arc::new(AtomicBool::new(false));
        let task = rt.spawn({
            let finished = finished.clone();
            async move {
                started_tx.send(()).unwrap();
                // Blocks the worker thread (a misbehaving task), bounded.
                let _ = release_rx.recv_timeout(TIMEOUT);
                finished.store(true, Ordering::SeqCst);
            }
        });
        started_rx.recv_timeout(TIMEOUT).unwrap();
        rt.shutdown_timeout(std::time::Duration::from_millis(50));
        assert!(!finished.load(Ordering::SeqCst));
        release_tx.send(()).unwrap();
        // The task was mid-poll at shutdown; its poll completes the task.
        let _ = local_block_on(task);
        assert!(finished.load(Ordering::SeqCst));
    });
}

#[test]
fn dropping_the_runtime_waits_for_a_running_blocking_closure() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = Builder::new().worker_threads(1).build().unwrap();
        let (started_tx, started_rx) = mpsc::channel();
        let finished = Arc::new(AtomicBool::new(false));
        let _blocking = rt.spawn_blocking({
            let finished = finished.clone();
            move || {
                started_tx.send(()).unwrap();
                thread::sleep(std::time::Duration::from_millis(100));
                finished.store(true, Ordering::SeqCst);
            }
        });
        started_rx.recv_timeout(TIMEOUT).unwrap();
        drop(rt);
        assert!(finished.load(Ordering::SeqCst));
    });
}

#[test]
fn the_runtime_can_be_dropped_from_one_of_its_own_tasks() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = Builder::new().worker_threads(2).build().unwrap();
        let handle = rt.handle().clone();
        let dropped = Arc::new(AtomicUsize::new(0));
        let guard = DropCounter(dropped.clone());
        let _pending = rt.spawn(async move {
            let _guard = guard;
            std::future::pending::<()>().await;
        });
        let (done_tx, done_rx) = mpsc::channel();
        let slot = Arc::new(std::sync::Mutex::new(Some(rt)));
        handle.spawn({
            let slot = slot.clone();
            async move {
                let rt = slot.lock().unwrap().take();
                drop(rt);
                done_tx.send(()).unwrap();
            }
        });
        done_rx
            .recv_timeout(TIMEOUT)
            .expect("dropping the runtime from its own task did not return");
        assert_eq!(dropped.load(Ordering::SeqCst), 1);
    });
}

#[test]
fn metrics_count_workers_spawns_and_live_tasks() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = Builder::new().worker_threads(3).build().unwrap();
        let metrics = rt.metrics();
        assert_eq!(metrics.num_workers(), 3);
        assert_eq!(rt.handle().metrics().num_workers(), 3);
        let (sender, mut receiver) = channel::<()>();
        let waiting: Vec<_> = (0..10)
            .map(|_| {
                let sender = sender.clone();
                rt.spawn(async move {
                    let _keep_open = sender;
                    std::future::pending::<()>().await;
                })
            })
            .collect();
        drop(sender);
        assert!(metrics.spawned_tasks_count() >= 10);
        assert_eq!(metrics.num_alive_tasks(), 10);
        for task in &waiting {
            task.abort();
        }
        for task in waiting {
            assert!(rt.block_on(task).unwrap_err().is_cancelled());
        }
        // Every sender was dropped with its future.
        assert_eq!(rt.block_on(receiver.recv()), None);
        wait_until("the aborted tasks leave the registry", || {
            metrics.num_alive_tasks() == 0
        });
        let polls_before = metrics.total_polls();
        rt.block_on(rt.spawn(async {})).unwrap();
        assert!(metrics.total_polls() > polls_before);
        // The Debug form shows the values read now, under their names.
        let debug = format!("{metrics:?}");
        assert!(
            debug.starts_with("RuntimeMetrics { num_workers: 3, "),
            "{debug}"
        );
        for figure in [
            format!("yields: {}", metrics.yields()),
            format!("budget_forced_yields: {}", metrics.budget_forced_yields()),
            "yield_queue_depth: 0".to_owned(),
            "num_alive_tasks: 0".to_owned(),
            "Worker { index: 2, ".to_owned(),
        ] {
            assert!(debug.contains(&figure), "{figure} missing from {debug}");
        }
    });
}

/// An abort that lands while a worker is about to poll the task (after the
/// worker's look at the cancel flag, before the poll starts) must still end
/// the task. The window is narrow, so race many spawns against aborts.
#[test]
fn aborts_racing_with_the_first_poll_all_cancel() {
    with_timeout(TIMEOUT_SECS, || {
        for _ in 0..300 {
            let rt = Builder::new().worker_threads(3).build().unwrap();
            let tasks: Vec<_> = (0..10)
                .map(|_| rt.spawn(std::future::pending::<()>()))
                .collect();
            tasks.iter().for_each(JoinHandle::abort);
            for task in tasks {
                assert!(rt.block_on(task).unwrap_err().is_cancelled());
            }
            assert_eq!(rt.metrics().num_alive_tasks(), 0);
        }
    });
}

#[test]
fn a_block_on_awaiting_a_pending_task_returns_when_the_runtime_is_dropped() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = Builder::new().worker_threads(2).build().unwrap();
        let handle = rt.handle().clone();
        let (started_tx, started_rx) = mpsc::channel();
        let task = rt.spawn(async move {
            started_tx.send(()).unwrap();
            std::future::pending::<u32>().await
        });
        started_rx.recv_timeout(TIMEOUT).unwrap();
        let (waiting_tx, waiting_rx) = mpsc::channel();
        let waiter = thread::spawn(move || {
            handle.block_on(async move {
                waiting_tx.send(()).unwrap();
                task.await
            })
        });
        waiting_rx.recv_timeout(TIMEOUT).unwrap();
        drop(rt);
        let outcome = waiter.join().unwrap();
        assert!(outcome.unwrap_err().is_cancelled());
    });
}

#[test]
fn spawning_while_the_runtime_shuts_down_leaks_no_future() {
    with_timeout(TIMEOUT_SECS, || {
        for _ in 0..10 {
            let rt = Builder::new().worker_threads(2).build().unwrap();
            let handle = rt.handle().clone();
            let dropped = Arc::new(AtomicUsize::new(0));
            let stop = Arc::new(AtomicBool::new(false));
            let spawner = thread::spawn({
                let dropped = dropped.clone();
                let stop = stop.clone();
                move || {
                    let mut spawned = 0usize;
                    let mut handles = Vec::new();
                    while !stop.load(Ordering::SeqCst) {
                        let guard = DropCounter(dropped.clone());
                        handles.push(handle.spawn(async move {
                            let _guard = guard;
                            std::future::pending::<()>().await;
                        }));
                        spawned += 1;
                    }
                    (spawned, handles)
                }
            });
            wait_until("the spawner has started", || {
                dropped.load(Ordering::SeqCst) > 0 || rt.metrics().spawned_tasks_count() >= 100
            });
            drop(rt);
            stop.store(true, Ordering::SeqCst);
            let (spawned, handles) = spawner.join().unwrap();
            assert_eq!(dropped.load(Ordering::SeqCst), spawned);
            for handle in handles {
                assert!(local_block_on(handle).unwrap_err().is_cancelled());
            }
        }
    });
}

#[test]
fn tasks_spawning_tasks_while_the_runtime_shuts_down_leak_no_future() {
    with_timeout(TIMEOUT_SECS, || {
        for _ in 0..10 {
            let rt = Builder::new().worker_threads(2).build().unwrap();
            let dropped = Arc::new(AtomicUsize::new(0));
            let spawned = Arc::new(AtomicUsize::new(0));
            for _ in 0..2 {
                let dropped = dropped.clone();
                let spawned = spawned.clone();
                rt.spawn(async move {
                    loop {
                        let guard = DropCounter(dropped.clone());
                        brigade::spawn(async move {
                            let _guard = guard;
                            std::future::pending::<()>().await;
                        });
                        spawned.fetch_add(1, Ordering::SeqCst);
                        brigade::yield_now().await;
                    }
                });
            }
            wait_until("the spawners run", || spawned.load(Ordering::SeqCst) >= 100);
            drop(rt);
            assert_eq!(
                dropped.load(Ordering::SeqCst),
                spawned.load(Ordering::SeqCst)
            );
        }
    });
}

/// Names of this process's threads (Linux: `/proc/self/task/*/comm`).
#[cfg(target_os = "linux")]
fn thread_names() -> Vec<String> {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .filter_map(|entry| std::fs::read_to_string(entry.ok()?.path().join("comm")).ok())
        .map(|name| name.trim_end().to_owned())
        .collect()
}

#[cfg(target_os = "linux")]
#[test]
fn dropping_the_runtime_stops_all_its_threads() {
    // A name no other test uses (the kernel keeps 15 bytes of it).
    const NAME: &str = "rt-threads";
    with_timeout(TIMEOUT_SECS, || {
        let rt = Builder::new()
            .worker_threads(2)
            .max_blocking_threads(3)
            .thread_name(NAME)
            .build()
            .unwrap();
        let blocking: Vec<_> = (0..3)
            .map(|_| rt.spawn_blocking(|| thread::sleep(std::time::Duration::from_millis(5))))
            .collect();
        for task in blocking {
            rt.block_on(task).unwrap();
        }
        let ours = |names: Vec<String>| names.iter().filter(|n| n.starts_with(NAME)).count();
        assert!(ours(thread_names()) >= 3, "{:?}", thread_names());
        drop(rt);
        wait_until("every runtime thread has exited", || {
            ours(thread_names()) == 0
        });
    });
}
