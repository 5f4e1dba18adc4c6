//! The yield queue's starvation bound (`Builder::max_yield_delay`): under a
//! flood of foreground work that never lets up, yielded work still runs;
//! without the bound it never does. And the ends: an aborted or shut-down
//! background task waiting in the yield queue is dropped at once. Every
//! wait is bounded and nothing here measures time.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use brigade::task::{Builder as TaskBuilder, TaskClass};
use brigade::{Builder, JoinHandle, Runtime};
use common::{DropFlag, TIMEOUT, TIMEOUT_SECS, wait_until, with_timeout};

fn one_worker(max_yield_delay: Option<Duration>) -> Runtime {
    Builder::new()
        .worker_threads(1)
        .max_yield_delay(max_yield_delay)
        // A worker the OS takes off its CPU for a while would get a
        // spare, which would run the queues in another order.
        .compensation_threshold(None)
        .build()
        .unwrap()
}

/// Two workers, without the starvation bound (so only the rules under test
/// can move yielded work) and without spares.
fn two_workers_without_the_bound() -> Runtime {
    Builder::new()
        .worker_threads(2)
        .max_yield_delay(None)
        .compensation_threshold(None)
        .build()
        .unwrap()
}

/// Foreground work that keeps the worker's deque from ever emptying: a
/// task that spawns and awaits a child, in a loop, until `stop`.
struct Flood {
    stop: Arc<AtomicBool>,
    rounds: Arc<AtomicU64>,
    task: JoinHandle<()>,
}

impl Flood {
    fn start(rt: &Runtime) -> Flood {
        let stop = Arc::new(AtomicBool::new(false));
        let rounds = Arc::new(AtomicU64::new(0));
        let task = rt.spawn({
            let (stop, rounds) = (stop.clone(), rounds.clone());
            async move {
                while !stop.load(Ordering::Relaxed) {
                    brigade::spawn(async {}).await.unwrap();
                    rounds.fetch_add(1, Ordering::Relaxed);
                }
            }
        });
        wait_until("the flood runs", || rounds.load(Ordering::Relaxed) > 100);
        Flood { stop, rounds, task }
    }

    fn stop(self, rt: &Runtime) {
        self.stop.store(true, Ordering::Relaxed);
        rt.block_on(self.task).unwrap();
    }
}

/// Background work: a unit, then a yield point, until `stop`.
#[derive(Clone, Default)]
struct Background {
    units: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
}

impl Background {
    fn spawn(&self, rt: &Runtime, class: TaskClass, if_busy: bool) -> JoinHandle<()> {
        let this = self.clone();
        TaskBuilder::new().class(class).spawn_on(
            async move {
                while !this.stop.load(Ordering::Relaxed) {
                    this.units.fetch_add(1, Ordering::Relaxed);
                    if if_busy {
                        brigade::yield_if_busy().await;
                    } else {
                        brigade::yield_now().await;
                    }
                }
            },
            rt.handle(),
        )
    }

    fn units(&self) -> u64 {
        self.units.load(Ordering::Relaxed)
    }
}

#[test]
fn yielded_work_is_rescued_from_a_flood() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = one_worker(Some(Duration::from_millis(2)));
        let flood = Flood::start(&rt);
        let if_busy = Background::default();
        let if_busy_task = if_busy.spawn(&rt, TaskClass::Auto, true);
        let demoted = Background::default();
        let demoted_task = demoted.spawn(&rt, TaskClass::Background, false);
        wait_until("both background tasks make progress", || {
            if_busy.units() > 100 && demoted.units() > 100
        });
        let metrics = rt.metrics();
        assert!(metrics.yield_queue_rescues() >= 2);
        assert!(flood.rounds.load(Ordering::Relaxed) > 100);
        if_busy.stop.store(true, Ordering::Relaxed);
        demoted.stop.store(true, Ordering::Relaxed);
        flood.stop(&rt);
        rt.block_on(async {
            if_busy_task.await.unwrap();
            demoted_task.await.unwrap();
        });
    });
}

#[test]
fn without_the_bound_yielded_work_waits_for_the_flood_to_end() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = one_worker(None);
        let flood = Flood::start(&rt);
        let background = Background::default();
        let task = background.spawn(&rt, TaskClass::Auto, true);
        wait_until("the background task parks", || {
            rt.metrics().yield_queue_depth() == 1
        });
        let parked_at = background.units();
        // The flood goes on for many more rounds; the parked task does not
        // run once in the meantime.
        let rounds = flood.rounds.load(Ordering::Relaxed);
        wait_until("the flood goes on", || {
            flood.rounds.load(Ordering::Relaxed) > rounds + 10_000
        });
        assert_eq!(background.units(), parked_at);
        assert_eq!(rt.metrics().yield_queue_rescues(), 0);
        flood.stop(&rt);
        wait_until("the background task runs once the flood ends", || {
            background.units() > parked_at
        });
        background.stop.store(true, Ordering::Relaxed);
        rt.block_on(task).unwrap();
    });
}

#[test]
fn an_aborted_background_task_waiting_in_the_yield_queue_is_dropped_at_once() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = one_worker(None);
        let flood = Flood::start(&rt);
        let dropped = Arc::new(AtomicBool::new(false));
        let task = TaskBuilder::new().class(TaskClass::Background).spawn_on(
            {
                let guard = DropFlag(dropped.clone());
                async move {
                    let _guard = guard;
                    loop {
                        brigade::yield_now().await;
                    }
                }
            },
            rt.handle(),
        );
        wait_until("the task waits in the yield queue", || {
            rt.metrics().yield_queue_depth() == 1
        });
        task.abort();
        let outcome = rt.block_on(async { brigade::time::timeout(TIMEOUT, task).await });
        let error = outcome.expect("the abort was not seen").unwrap_err();
        assert!(error.is_cancelled());
        assert!(dropped.load(Ordering::SeqCst));
        assert_eq!(rt.metrics().yield_queue_depth(), 0);
        flood.stop(&rt);
    });
}

#[test]
fn shutdown_drops_background_tasks_waiting_in_the_yield_queue() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = one_worker(None);
        let _flood = Flood::start(&rt);
        let dropped = Arc::new(AtomicBool::new(false));
        let guard = DropFlag(dropped.clone());
        let task = TaskBuilder::new().class(TaskClass::Background).spawn_on(
            async move {
                let _guard = guard;
                loop {
                    brigade::yield_now().await;
                }
            },
            rt.handle(),
        );
        let if_busy_dropped = Arc::new(AtomicBool::new(false));
        let if_busy_guard = DropFlag(if_busy_dropped.clone());
        rt.spawn(async move {
            let _guard = if_busy_guard;
            loop {
                brigade::yield_if_busy().await;
            }
        });
        wait_until("both wait in the yield queue", || {
            rt.metrics().yield_queue_depth() == 2
        });
        rt.shutdown_timeout(TIMEOUT);
        assert!(dropped.load(Ordering::SeqCst));
        assert!(if_busy_dropped.load(Ordering::SeqCst));
        drop(task);
    });
}

#[test]
fn yielders_that_never_need_to_give_way_let_queued_yielders_run() {
    with_timeout(TIMEOUT_SECS, || {
        // No foreground at all: whichever yielder runs never needs to give
        // way to it, and the other waits in the yield queue until the queue
        // is overdue.
        let rt = one_worker(Some(Duration::from_millis(2)));
        let yielders: Vec<Background> = (0..2).map(|_| Background::default()).collect();
        let tasks: Vec<_> = yielders
            .iter()
            .map(|yielder| yielder.spawn(&rt, TaskClass::Foreground, true))
            .collect();
        wait_until("both yielders make progress", || {
            yielders.iter().all(|yielder| yielder.units() > 10_000)
        });
        for (yielder, task) in yielders.iter().zip(tasks) {
            yielder.stop.store(true, Ordering::Relaxed);
            rt.block_on(task).unwrap();
        }
    });
}

/// Two workers, two background loops that only ever wake themselves, and
/// a foreground task that holds one worker: the loop that stepped aside
/// into the held worker's shard of the yield queue must still take turns
/// with the one on the free worker (the free worker takes the older entry
/// of another shard before its own recent one). Without the starvation
/// bound, so only the turn-taking can make it progress.
#[test]
fn a_loop_waiting_in_a_busy_workers_shard_still_takes_turns() {
    with_timeout(2 * TIMEOUT_SECS, || {
        let rt = two_workers_without_the_bound();
        let loops = [Background::default(), Background::default()];
        let tasks: Vec<_> = loops
            .iter()
            .map(|background| background.spawn(&rt, TaskClass::Background, false))
            .collect();
        wait_until("both loops run", || loops.iter().all(|l| l.units() > 100));
        // Holds one worker until both loops have made progress while it
        // does (or the bound passes).
        let holder = rt.spawn({
            let loops = loops.clone();
            async move {
                let start = loops.each_ref().map(Background::units);
                let deadline = std::time::Instant::now() + TIMEOUT;
                while loops.iter().zip(start).any(|(l, at)| l.units() < at + 1000) {
                    assert!(
                        std::time::Instant::now() < deadline,
                        "a loop made no progress while a worker was held: {:?} since {start:?}",
                        loops.each_ref().map(Background::units),
                    );
                    std::hint::spin_loop();
                }
            }
        });
        rt.block_on(holder).unwrap();
        for background in &loops {
            background.stop.store(true, Ordering::Relaxed);
        }
        rt.block_on(async {
            for task in tasks {
                task.await.unwrap();
            }
        });
    });
}

/// A task that stepped aside on a worker that then got stuck (in a task
/// that spins until the stepped-aside task runs) is run by the other
/// worker, which went to sleep meanwhile: a lone entry in another worker's
/// shard of the yield queue is left to its own worker only for a grace
/// (`YieldQueue::may_take`), and a worker that goes to sleep while one
/// waits wakes when the grace ends. Without that wake-up nothing else would
/// wake it here, and the test would time out.
#[test]
fn a_task_that_stepped_aside_on_a_stuck_worker_is_run_by_a_sleeping_one() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = two_workers_without_the_bound();
        let flag = || Arc::new(AtomicBool::new(false));
        let spin_until = |flag: &AtomicBool| {
            while !flag.load(Ordering::Acquire) {
                std::hint::spin_loop();
            }
        };
        let (holding, release) = (flag(), flag());
        // Holds one worker, so that no worker is idle when the stepper
        // decides: `yield_if_busy()` then steps aside.
        let holder = rt.spawn({
            let (holding, release) = (holding.clone(), release.clone());
            async move {
                holding.store(true, Ordering::Release);
                spin_until(&release);
            }
        });
        wait_until("a worker is held", || holding.load(Ordering::Acquire));
        let (ready, go, stepped_back) = (flag(), flag(), flag());
        let stepper = rt.spawn({
            let (ready, go, stepped_back) = (ready.clone(), go.clone(), stepped_back.clone());
            async move {
                ready.store(true, Ordering::Release);
                spin_until(&go);
                brigade::yield_if_busy().await;
                stepped_back.store(true, Ordering::Release);
            }
        });
        wait_until("the stepper runs", || ready.load(Ordering::Acquire));
        // Both workers busy: this waits in the injector, so the stepper
        // steps aside for it, and its worker takes it and is stuck in it.
        let stuck = rt.spawn({
            let stepped_back = stepped_back.clone();
            async move { spin_until(&stepped_back) }
        });
        go.store(true, Ordering::Release);
        wait_until("the stepper stepped aside", || {
            rt.metrics().yield_queue_entries() >= 1
        });
        // The held worker finds nothing it may take yet, and sleeps.
        release.store(true, Ordering::Release);
        rt.block_on(async {
            stepper.await.unwrap();
            stuck.await.unwrap();
            holder.await.unwrap();
        });
        assert_eq!(rt.metrics().yield_queue_entries(), 1);
    });
}
