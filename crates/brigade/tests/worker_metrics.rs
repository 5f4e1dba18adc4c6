//! Per-worker metrics under tokio's names: each worker's figures move with
//! what that worker did, and they add up to the totals.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use common::{TIMEOUT, TIMEOUT_SECS, with_timeout};

/// A runtime of `workers` workers with no spare workers (a spare would
/// take a blocked worker's tasks, and its work has no worker index).
fn runtime(workers: usize) -> brigade::Runtime {
    brigade::Builder::new()
        .worker_threads(workers)
        .compensation_threshold(None)
        .build()
        .expect("runtime")
}

/// Waits, bounded, until `done` holds.
fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + TIMEOUT;
    while !done() {
        assert!(Instant::now() < deadline, "never saw {what}");
        std::thread::yield_now();
    }
}

#[test]
fn polls_per_worker_add_up_to_the_total() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = runtime(2);
        rt.block_on(async {
            let tasks: Vec<_> = (0..200).map(|_| brigade::spawn(async {})).collect();
            for task in tasks {
                task.await.expect("empty task");
            }
        });
        let metrics = rt.metrics();
        let per_worker: u64 = (0..2).map(|w| metrics.worker_poll_count(w)).sum();
        assert!(per_worker >= 200, "200 tasks polled, counted {per_worker}");
        assert_eq!(per_worker, metrics.total_polls());
        let busy: std::time::Duration = (0..2).map(|w| metrics.worker_total_busy_duration(w)).sum();
        assert!(busy > std::time::Duration::ZERO);
    });
}

#[test]
fn an_idle_worker_counts_its_parks() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = runtime(2);
        rt.block_on(async { brigade::spawn(async {}).await.expect("empty task") });
        let metrics = rt.metrics();
        wait_until("a park on every worker", || {
            (0..2).all(|w| metrics.worker_park_count(w) > 0)
        });
        let parks: u64 = (0..2).map(|w| metrics.worker_park_count(w)).sum();
        assert_eq!(parks, metrics.total_parks());
    });
}

/// Worker-blocking task: spawns `queued` empty tasks onto its own worker's
/// deque, then spins until `release` is set, so they wait there (or are
/// stolen).
fn block_a_worker_with_queued_tasks(
    rt: &brigade::Runtime,
    queued: usize,
    release: Arc<AtomicBool>,
    spawned: Arc<AtomicBool>,
) -> brigade::JoinHandle<Vec<brigade::JoinHandle<()>>> {
    rt.spawn(async move {
        let tasks: Vec<_> = (0..queued).map(|_| brigade::spawn(async {})).collect();
        spawned.store(true, Ordering::Release);
        let deadline = Instant::now() + TIMEOUT;
        while !release.load(Ordering::Acquire) && Instant::now() < deadline {
            std::hint::spin_loop();
        }
        tasks
    })
}

#[test]
fn a_blocked_workers_queue_depth_shows_its_waiting_tasks() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = runtime(1);
        let release = Arc::new(AtomicBool::new(false));
        let spawned = Arc::new(AtomicBool::new(false));
        let blocker = block_a_worker_with_queued_tasks(&rt, 10, release.clone(), spawned.clone());
        wait_until("the tasks spawned", || spawned.load(Ordering::Acquire));
        let metrics = rt.metrics();
        // One of the ten may sit in the run-next slot, which the depth
        // leaves out (as tokio's leaves out its LIFO slot).
        let depth = metrics.worker_local_queue_depth(0);
        assert!((9..=10).contains(&depth), "10 tasks queued, depth {depth}");
        assert!(metrics.worker_local_schedule_count(0) >= 9);
        release.store(true, Ordering::Release);
        rt.block_on(async {
            for task in blocker.await.expect("blocker") {
                task.await.expect("queued task");
            }
        });
        assert_eq!(metrics.worker_local_queue_depth(0), 0);
    });
}

#[test]
fn tasks_queued_behind_a_blocked_worker_are_stolen_and_counted() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = runtime(2);
        let release = Arc::new(AtomicBool::new(false));
        let spawned = Arc::new(AtomicBool::new(false));
        let blocker = block_a_worker_with_queued_tasks(&rt, 20, release.clone(), spawned.clone());
        let metrics = rt.metrics();
        // The queued tasks can only run if the other worker steals them.
        wait_until("the queued tasks stolen", || {
            spawned.load(Ordering::Acquire)
                && (0..2).map(|w| metrics.worker_steal_count(w)).sum::<u64>() >= 19
        });
        release.store(true, Ordering::Release);
        rt.block_on(async {
            for task in blocker.await.expect("blocker") {
                task.await.expect("queued task");
            }
        });
        // Tasks stolen, and the steals that took them (a steal takes up to
        // half a deque); `total_steals` counts steals.
        let stolen: u64 = (0..2).map(|w| metrics.worker_steal_count(w)).sum();
        let steals: u64 = (0..2).map(|w| metrics.worker_steal_operations(w)).sum();
        assert!(
            steals >= 1 && steals <= stolen,
            "{steals} steals of {stolen} tasks"
        );
        assert_eq!(steals, metrics.total_steals());
    });
}

#[test]
#[should_panic(expected = "out of range")]
fn a_worker_index_past_the_last_panics_as_on_tokio() {
    let rt = runtime(2);
    let _ = rt.metrics().worker_poll_count(2);
}

#[test]
fn debug_names_every_figure() {
    let rt = runtime(2);
    let printed = format!("{:?}", rt.metrics());
    for name in [
        "num_workers",
        "num_alive_tasks",
        "total_polls",
        "total_steals",
        "total_parks",
        "yields",
        "budget_forced_yields",
        "yield_queue_depth",
        "injector_depth",
        "scheduling_latency",
        "poll_duration",
        "yield_delay",
        "cpu_limit",
        "elastic_utilization_limit",
        "num_blocking_threads",
        "workers",
        "poll_count",
        "busy_duration",
    ] {
        assert!(printed.contains(name), "{name} missing from {printed}");
    }
}
