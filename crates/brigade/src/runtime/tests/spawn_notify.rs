//! A task spawned into a worker's empty deque wakes no idle worker: the
//! spawning worker runs it when the poll ends (`worker/spawned.rs`). These
//! tests hold the other half of that rule: when the poll does not end, the
//! child still reaches the idle worker, whether the parent reaches
//! `yield_if_busy()` (the fast path's idle check announces the child) or
//! never yields (the monitor does). Each parent spawns its child only once
//! the other worker sleeps in the driver, so no search can find the child
//! by chance, and waits for the child with a bound, so a child left in the
//! deque fails the test instead of hanging it. Nothing here measures time.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::{Builder, Handle, Runtime};

const BOUND: Duration = Duration::from_secs(20);

/// Two workers and no spares: only the idle worker can run the child while
/// the parent's poll goes on.
fn two_workers_without_spares(long_poll_threshold: Option<Duration>) -> Runtime {
    Builder::new()
        .worker_threads(2)
        .compensation_threshold(None)
        .max_spare_workers(0)
        .long_poll_threshold(long_poll_threshold)
        .build()
        .unwrap()
}

/// Whether the worker that is not running the caller sleeps in the
/// driver, past its last look for work.
fn the_other_worker_sleeps() -> bool {
    let shared = Handle::current().shared;
    shared.idle.num_idle() == 1 && shared.driver.has_worker_in_poll()
}

/// Runs `parent` (given a flag its child sets, and returning whether the
/// child ran within the bound) on a fresh runtime.
fn child_ran<F>(rt: Runtime, parent: impl FnOnce(Arc<AtomicBool>) -> F) -> bool
where
    F: Future<Output = bool> + Send + 'static,
{
    let flag = Arc::new(AtomicBool::new(false));
    let parent = rt.spawn(parent(flag));
    let ran = rt.block_on(parent).unwrap();
    drop(rt);
    ran
}

/// Spawns the child that sets `flag`.
fn spawn_child(flag: &Arc<AtomicBool>) {
    let flag = flag.clone();
    crate::spawn(async move { flag.store(true, Ordering::SeqCst) });
}

/// How the parent waits, before and after it spawns its child.
#[derive(Clone, Copy)]
enum ParentWaits {
    /// At `yield_if_busy()` calls: with a worker idle, each lets the parent
    /// go on, so its poll does not end.
    AtYieldPoints,
    /// Without a yield point: the thread yields to the OS, the poll goes on.
    WithoutYielding,
}

impl ParentWaits {
    async fn pause(self) {
        match self {
            ParentWaits::AtYieldPoints => crate::yield_if_busy().await,
            ParentWaits::WithoutYielding => std::thread::yield_now(),
        }
    }
}

/// The parent: once the other worker sleeps, spawns the child that sets
/// `flag`, then waits for it within the bound. Returns whether it ran.
async fn spawn_child_and_wait(flag: Arc<AtomicBool>, waits: ParentWaits) -> bool {
    let deadline = Instant::now() + BOUND;
    while !the_other_worker_sleeps() {
        assert!(Instant::now() < deadline, "the other worker never slept");
        waits.pause().await;
    }
    spawn_child(&flag);
    while !flag.load(Ordering::SeqCst) && Instant::now() < deadline {
        waits.pause().await;
    }
    flag.load(Ordering::SeqCst)
}

#[test]
fn a_child_of_a_yield_if_busy_loop_is_run_by_the_idle_worker() {
    let rt = two_workers_without_spares(None);
    let ran = child_ran(rt, |flag| {
        spawn_child_and_wait(flag, ParentWaits::AtYieldPoints)
    });
    assert!(
        ran,
        "the child waited behind a parent at yield points, with a worker idle"
    );
}

#[test]
fn a_child_of_a_poll_that_never_yields_is_run_by_the_idle_worker() {
    // The monitor watches the polls every half threshold.
    let rt = two_workers_without_spares(Some(Duration::from_millis(10)));
    let ran = child_ran(rt, |flag| {
        spawn_child_and_wait(flag, ParentWaits::WithoutYielding)
    });
    assert!(
        ran,
        "the child waited behind a parent that never yielded, with a worker idle"
    );
}

#[test]
fn a_chain_of_spawns_runs_every_link_once() {
    const LINKS: usize = 10_000;
    fn link(remaining: usize, ran: Arc<AtomicUsize>, done: mpsc::Sender<()>) {
        ran.fetch_add(1, Ordering::SeqCst);
        if remaining == 0 {
            done.send(()).unwrap();
        } else {
            crate::spawn(async move { link(remaining - 1, ran, done) });
        }
    }
    let rt = Builder::new().worker_threads(2).build().unwrap();
    let ran = Arc::new(AtomicUsize::new(0));
    let (done, last_link_ran) = mpsc::channel();
    {
        let ran = ran.clone();
        rt.spawn(async move { link(LINKS - 1, ran, done) });
    }
    last_link_ran
        .recv_timeout(BOUND)
        .expect("the chain of spawns stopped");
    drop(rt);
    assert_eq!(ran.load(Ordering::SeqCst), LINKS);
}
