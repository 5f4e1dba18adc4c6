//! Integration tests of `yield_if_busy` and `yield_now`.
//!
//! The scheduling tests use one worker and build the queue state they need
//! step by step, so what they assert (who runs before whom) follows from the
//! scheduler's rules, not from how fast the machine is:
//! - a worker runs, in order: its own FIFO deque, the injector (tasks
//!   spawned from outside a worker), and only when both are empty the yield
//!   queue;
//! - `yield_if_busy()` with a task in the worker's own deque moves the caller
//!   to the back of that deque the first time, and parks it in the yield
//!   queue if it did so on its previous call too; with a task in the
//!   injector it parks it in the yield queue directly;
//! - a task spawned on a worker goes to that worker's deque.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::task::Poll;
use std::time::{Duration, Instant};

use brigade::{Builder, Handle, Runtime, RuntimeMetrics};
use common::{TIMEOUT, TIMEOUT_SECS, poll_once, spin_for, spin_until, wait_until, with_timeout};

/// How long a background task may loop before it gives up (a bound against
/// hangs, far above what any test needs).
const GIVE_UP_AFTER: Duration = Duration::from_secs(30);

/// Nothing that depends on time: no compensation (on a loaded host the OS
/// may take a worker off its CPU in the middle of a unit, and a spare
/// started in its place would run the queued tasks in another order, or run
/// the foreground task itself, so the background one never needs to give
/// way), and no starvation bound (a chain of tasks that takes longer than
/// it on a slow host would see the parked task rescued before it ends).
fn runtime(workers: usize) -> Runtime {
    Builder::new()
        .worker_threads(workers)
        .compensation_threshold(None)
        .max_yield_delay(None)
        .build()
        .unwrap()
}

#[test]
fn never_yields_while_another_worker_is_idle() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = runtime(2);
        let task = rt.spawn(async {
            let metrics = Handle::current().metrics();
            // The other worker may still be searching right after it was
            // woken for this task; wait until it has parked.
            spin_until("the other worker is idle", || {
                metrics.num_idle_workers() >= 1
            });
            // The fast path returns at once only while no attention hold
            // is out; a leaked one would send every call down the slow path,
            // which also does not yield here (nobody waits), so `yields()`
            // alone could not tell.
            assert_eq!(metrics.attention_holds(), 0, "a hold is out");
            for _ in 0..1_000_000 {
                brigade::yield_if_busy().await;
            }
        });
        rt.block_on(task).unwrap();
        assert_eq!(rt.metrics().yields(), 0);
        assert_eq!(rt.metrics().yield_queue_entries(), 0);
        assert_eq!(rt.metrics().attention_holds(), 0);
    });
}

#[test]
fn never_yields_when_nothing_else_is_waiting() {
    with_timeout(TIMEOUT_SECS, || {
        // One worker, one task: the worker is never idle, but nobody waits.
        let rt = runtime(1);
        let task = rt.spawn(async {
            for _ in 0..100_000 {
                brigade::yield_if_busy().await;
            }
        });
        rt.block_on(task).unwrap();
        assert_eq!(rt.metrics().yields(), 0);
    });
}

#[test]
fn a_foreground_task_waits_at_most_one_background_unit() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = runtime(1);
        let units = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let background = rt.spawn({
            let units = units.clone();
            let stop = stop.clone();
            async move {
                let give_up = Instant::now() + GIVE_UP_AFTER;
                while !stop.load(Ordering::SeqCst)
                    && units.load(Ordering::SeqCst) < 100_000
                    && Instant::now() < give_up
                {
                    spin_for(Duration::from_micros(50));
                    units.fetch_add(1, Ordering::SeqCst);
                    brigade::yield_if_busy().await;
                }
                units.load(Ordering::SeqCst)
            }
        });
        wait_until("the background task has done a few units", || {
            units.load(Ordering::SeqCst) >= 5
        });
        // Nothing was waiting so far: the background task never gave way.
        assert_eq!(rt.metrics().yields(), 0);

        let (seen_tx, seen_rx) = mpsc::channel();
        let foreground = rt.spawn({
            let units = units.clone();
            let stop = stop.clone();
            async move {
                seen_tx.send(units.load(Ordering::SeqCst)).unwrap();
                stop.store(true, Ordering::SeqCst);
            }
        });
        // Read after the spawn: the foreground task was queued by then.
        let after_spawn = units.load(Ordering::SeqCst);
        let seen = seen_rx
            .recv_timeout(TIMEOUT)
            .expect("the foreground task never ran");
        assert!(
            seen <= after_spawn + 2,
            "the foreground task started only after the background task had done \
             {seen} units; it was queued when {after_spawn} were done"
        );
        rt.block_on(foreground).unwrap();
        let finished = rt.block_on(background).unwrap();
        assert!(finished < 100_000);
        let metrics = rt.metrics();
        assert!(metrics.yields() >= 1);
        assert!(metrics.yield_queue_entries() >= 1);
        assert_eq!(metrics.yield_queue_depth(), 0);
    });
}

#[test]
fn a_foreground_task_is_not_starved_by_two_busy_workers() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = runtime(2);
        let stop = Arc::new(AtomicBool::new(false));
        let units: Vec<Arc<AtomicU64>> = (0..2).map(|_| Arc::new(AtomicU64::new(0))).collect();
        let background: Vec<_> = units
            .iter()
            .map(|units| {
                let units = units.clone();
                let stop = stop.clone();
                rt.spawn(async move {
                    let give_up = Instant::now() + GIVE_UP_AFTER;
                    while !stop.load(Ordering::SeqCst) && Instant::now() < give_up {
                        spin_for(Duration::from_micros(50));
                        units.fetch_add(1, Ordering::SeqCst);
                        brigade::yield_if_busy().await;
                    }
                })
            })
            .collect();
        wait_until("both background tasks run", || {
            units.iter().all(|u| u.load(Ordering::SeqCst) >= 5)
                && rt.metrics().num_idle_workers() == 0
        });
        let (seen_tx, seen_rx) = mpsc::channel();
        let foreground = rt.spawn({
            let units = units.clone();
            let stop = stop.clone();
            async move {
                let seen: Vec<u64> = units.iter().map(|u| u.load(Ordering::SeqCst)).collect();
                seen_tx.send(seen).unwrap();
                stop.store(true, Ordering::SeqCst);
            }
        });
        let after_spawn: Vec<u64> = units.iter().map(|u| u.load(Ordering::SeqCst)).collect();
        let seen = seen_rx
            .recv_timeout(TIMEOUT)
            .expect("the foreground task never ran");
        // The first background task to reach `yield_if_busy` after the spawn
        // gives way; the other may go on meanwhile.
        assert!(
            seen.iter().zip(&after_spawn).any(|(s, a)| *s <= a + 2),
            "foreground started after units {seen:?}; it was queued at {after_spawn:?}"
        );
        rt.block_on(foreground).unwrap();
        for task in background {
            rt.block_on(task).unwrap();
        }
    });
}

/// Spawns link `n` of a chain of `len` tasks: each increments `counter`
/// and spawns the next, so until the last one the runtime always has a task
/// waiting in the deque of the worker that runs the chain.
fn spawn_chain_link(counter: Arc<AtomicUsize>, n: usize, len: usize) {
    brigade::spawn(async move {
        counter.fetch_add(1, Ordering::SeqCst);
        if n < len {
            spawn_chain_link(counter, n + 1, len);
        }
    });
}

/// What a yielding task saw each time it came back from a
/// `yield_if_busy().await` that gave way.
#[derive(Debug, Clone, Copy)]
struct Resume {
    /// The chain counter on resuming.
    chain: usize,
    /// Whether that yield parked the task in the yield queue (rather than
    /// moving it to the back of its worker's deque).
    parked: bool,
}

/// What [`yield_until_chain_ends`] observed.
struct Observed {
    /// Every resume after a `yield_if_busy()` that gave way.
    resumes: Vec<Resume>,
    /// Calls that did not give way although the chain had started and not
    /// ended, that is while its next link was waiting for the worker.
    misses: usize,
}

impl std::fmt::Debug for Observed {
    /// At most the first and last few resumes, so a failure stays readable.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let resumes = &self.resumes;
        write!(f, "{} resumes ", resumes.len())?;
        if resumes.len() <= 12 {
            write!(f, "{resumes:?}")?;
        } else {
            let (head, tail) = (&resumes[..8], &resumes[resumes.len() - 4..]);
            write!(f, "{head:?} .. {tail:?}")?;
        }
        write!(f, ", {} misses", self.misses)
    }
}

/// Calls `yield_if_busy()` in a loop (no other work) until the chain counter
/// reaches `len`, recording what each call did.
async fn yield_until_chain_ends(
    chain: Arc<AtomicUsize>,
    len: usize,
    metrics: RuntimeMetrics,
) -> Observed {
    let mut observed = Observed {
        resumes: Vec::new(),
        misses: 0,
    };
    let give_up = Instant::now() + GIVE_UP_AFTER;
    loop {
        let before = chain.load(Ordering::SeqCst);
        if before >= len {
            return observed;
        }
        assert!(Instant::now() < give_up, "gave up: {observed:?}");
        let (yields, parks) = (metrics.yields(), metrics.yield_queue_entries());
        brigade::yield_if_busy().await;
        if metrics.yields() > yields {
            observed.resumes.push(Resume {
                chain: chain.load(Ordering::SeqCst),
                parked: metrics.yield_queue_entries() > parks,
            });
        } else if before > 0 {
            observed.misses += 1;
        }
    }
}

#[test]
fn a_parked_task_waits_until_a_chain_of_local_tasks_ends() {
    const CHAIN: usize = 1_000;
    with_timeout(TIMEOUT_SECS, || {
        let rt = runtime(1);
        let chain = Arc::new(AtomicUsize::new(0));
        // A driver task spawns both on the worker: its deque then holds the
        // background task and its run-next slot the first link (which
        // displaced the background task there), and each link queues the
        // next, so a link is waiting whenever the background task runs: the
        // first few links run ahead of it from the slot. The driver returns
        // the background task's JoinHandle (on purpose, not awaited there).
        #[allow(clippy::async_yields_async)]
        let driver = rt.spawn({
            let chain = chain.clone();
            async move {
                let metrics = Handle::current().metrics();
                let background =
                    brigade::spawn(yield_until_chain_ends(chain.clone(), CHAIN, metrics));
                spawn_chain_link(chain, 1, CHAIN);
                background
            }
        });
        let background = rt.block_on(driver).unwrap();
        let observed = rt.block_on(background).unwrap();
        assert_eq!(chain.load(Ordering::SeqCst), CHAIN);
        let resumes = &observed.resumes;
        // Every call came while a link was waiting, so every call gave way.
        assert_eq!(observed.misses, 0, "{observed:?}");
        assert!(!resumes.is_empty(), "{observed:?}");
        // It first ran while the chain was under way.
        assert!(resumes[0].chain < CHAIN, "{observed:?}");

        let first_park = resumes
            .iter()
            .position(|resume| resume.parked)
            .unwrap_or_else(|| panic!("never stepped aside into the yield queue: {observed:?}"));
        // Once parked, it came back only after the whole chain had run.
        assert_eq!(resumes[first_park].chain, CHAIN, "{observed:?}");
        let metrics = rt.metrics();
        assert!(metrics.yields() >= 1);
        assert!(metrics.yield_queue_entries() >= 1);
        assert_eq!(metrics.yield_queue_depth(), 0);
    });
}

#[test]
fn a_parked_task_waits_until_a_chain_spawned_from_outside_ends() {
    const CHAIN: usize = 1_000;
    with_timeout(TIMEOUT_SECS, || {
        let rt = runtime(1);
        let chain = Arc::new(AtomicUsize::new(0));
        let started = Arc::new(AtomicBool::new(false));
        let background = rt.spawn({
            let chain = chain.clone();
            let started = started.clone();
            async move {
                started.store(true, Ordering::SeqCst);
                let metrics = Handle::current().metrics();
                yield_until_chain_ends(chain, CHAIN, metrics).await
            }
        });
        wait_until("the background task runs", || {
            started.load(Ordering::SeqCst)
        });
        // The first link goes through the injector (spawned from outside);
        // the rest through the worker's own deque.
        let chain_for_head = chain.clone();
        rt.handle().spawn(async move {
            chain_for_head.fetch_add(1, Ordering::SeqCst);
            spawn_chain_link(chain_for_head, 2, CHAIN);
        });
        let observed = rt.block_on(background).unwrap();
        assert_eq!(chain.load(Ordering::SeqCst), CHAIN);
        // With the first link in the injector, the background task parks in
        // the yield queue at once and resumes only after the whole chain.
        assert_eq!(observed.misses, 0, "{observed:?}");
        let first = observed
            .resumes
            .first()
            .unwrap_or_else(|| panic!("the background task never yielded: {observed:?}"));
        assert!(first.parked, "{observed:?}");
        assert_eq!(first.chain, CHAIN, "{observed:?}");
        assert!(rt.metrics().yield_queue_entries() >= 1);
    });
}

#[test]
fn two_yielding_tasks_and_a_waiting_one_all_finish() {
    const UNITS: usize = 2_000;
    with_timeout(TIMEOUT_SECS, || {
        let rt = runtime(1);
        let progress: Vec<Arc<AtomicUsize>> =
            (0..2).map(|_| Arc::new(AtomicUsize::new(0))).collect();
        // All three start in the worker's deque, yielders first.
        let driver = rt.spawn({
            let progress = progress.clone();
            async move {
                let yielders: Vec<_> = progress
                    .iter()
                    .map(|progress| {
                        let progress = progress.clone();
                        brigade::spawn(async move {
                            for _ in 0..UNITS {
                                spin_for(Duration::from_micros(1));
                                progress.fetch_add(1, Ordering::SeqCst);
                                brigade::yield_if_busy().await;
                            }
                        })
                    })
                    .collect();
                let waiting = brigade::spawn({
                    let progress = progress.clone();
                    async move {
                        progress
                            .iter()
                            .map(|p| p.load(Ordering::SeqCst))
                            .collect::<Vec<_>>()
                    }
                });
                (yielders, waiting)
            }
        });
        let (yielders, waiting) = rt.block_on(driver).unwrap();
        let seen = rt.block_on(waiting).unwrap();
        for task in yielders {
            rt.block_on(task).unwrap();
        }
        assert!(progress.iter().all(|p| p.load(Ordering::SeqCst) == UNITS));
        // The waiting task ran after at most a unit or two of each yielder.
        assert!(seen.iter().all(|&units| units <= 2), "{seen:?}");
    });
}

#[test]
fn two_yielding_tasks_and_one_spawned_from_outside_all_finish() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = runtime(1);
        let third_ran = Arc::new(AtomicBool::new(false));
        let progress: Vec<Arc<AtomicUsize>> =
            (0..2).map(|_| Arc::new(AtomicUsize::new(0))).collect();
        let yielders: Vec<_> = progress
            .iter()
            .map(|progress| {
                let progress = progress.clone();
                let third_ran = third_ran.clone();
                rt.spawn(async move {
                    let give_up = Instant::now() + GIVE_UP_AFTER;
                    // Loop until the third task has run, then a little more.
                    let mut extra = 0;
                    while extra < 100 {
                        assert!(Instant::now() < give_up, "the third task never ran");
                        spin_for(Duration::from_micros(5));
                        progress.fetch_add(1, Ordering::SeqCst);
                        if third_ran.load(Ordering::SeqCst) {
                            extra += 1;
                        }
                        brigade::yield_if_busy().await;
                    }
                })
            })
            .collect();
        wait_until("both yielders have run", || {
            progress.iter().all(|p| p.load(Ordering::SeqCst) >= 1)
        });
        let third = rt.spawn({
            let third_ran = third_ran.clone();
            async move { third_ran.store(true, Ordering::SeqCst) }
        });
        rt.block_on(third).unwrap();
        for task in yielders {
            rt.block_on(task).unwrap();
        }
    });
}

#[test]
fn yield_if_busy_outside_a_worker_completes_at_once() {
    // On a thread with no runtime at all.
    let mut future = brigade::yield_if_busy();
    assert!(poll_once(&mut future).is_ready());
    with_timeout(TIMEOUT_SECS, || {
        let rt = runtime(1);
        // Inside block_on (not a worker), even while the worker is busy.
        let (started_tx, started_rx) = mpsc::channel();
        let stop = Arc::new(AtomicBool::new(false));
        let busy = rt.spawn({
            let stop = stop.clone();
            async move {
                started_tx.send(()).unwrap();
                spin_until("the test is done", || stop.load(Ordering::SeqCst));
            }
        });
        started_rx.recv_timeout(TIMEOUT).unwrap();
        let queued = rt.spawn(async {});
        let in_block_on = rt.block_on(async {
            let mut future = brigade::yield_if_busy();
            let first = poll_once(&mut future);
            for _ in 0..1_000 {
                brigade::yield_if_busy().await;
            }
            first
        });
        assert_eq!(in_block_on, Poll::Ready(()));
        // On a blocking-pool thread.
        let in_blocking = rt
            .block_on(rt.spawn_blocking(|| {
                let mut future = brigade::yield_if_busy();
                poll_once(&mut future)
            }))
            .unwrap();
        assert_eq!(in_blocking, Poll::Ready(()));
        stop.store(true, Ordering::SeqCst);
        rt.block_on(busy).unwrap();
        rt.block_on(queued).unwrap();
        assert_eq!(rt.metrics().yields(), 0);
    });
}

#[test]
fn yield_now_in_a_task_runs_other_tasks_first() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = runtime(1);
        let other_ran = Arc::new(AtomicBool::new(false));
        let driver = rt.spawn({
            let other_ran = other_ran.clone();
            async move {
                let other = brigade::spawn({
                    let other_ran = other_ran.clone();
                    async move { other_ran.store(true, Ordering::SeqCst) }
                });
                // The spawned task waits in this worker's deque; yielding
                // lets it run before this task continues.
                assert!(!other_ran.load(Ordering::SeqCst));
                brigade::yield_now().await;
                let ran = other_ran.load(Ordering::SeqCst);
                other.await.unwrap();
                ran
            }
        });
        assert!(rt.block_on(driver).unwrap());
    });
}

#[test]
fn a_task_can_yield_now_ten_thousand_times() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = runtime(2);
        let polls_before = rt.metrics().total_polls();
        let task = rt.spawn(async {
            for _ in 0..10_000 {
                brigade::yield_now().await;
            }
            "done"
        });
        assert_eq!(rt.block_on(task).unwrap(), "done");
        let metrics = rt.metrics();
        assert!(metrics.total_polls() - polls_before >= 10_001);
        // yield_now is not yield_if_busy: it is not counted as giving way.
        assert_eq!(metrics.yields(), 0);
        // yield_now also works inside block_on.
        rt.block_on(async {
            for _ in 0..1_000 {
                brigade::yield_now().await;
            }
        });
    });
}

#[test]
fn yield_now_polls_pending_once_then_ready() {
    let mut future = brigade::yield_now();
    assert!(poll_once(&mut future).is_pending());
    assert!(poll_once(&mut future).is_ready());
}

/// Timers keep firing while a `yield_if_busy()` loop runs and the other
/// workers are idle: the loop's fast path (a worker is idle) never polls
/// the driver, so an idle worker must be in it. When the worker sleeping in
/// the driver is the one woken to run the loop, the monitor thread hands
/// the driver on to another sleeper. (Before, the others slept on their
/// condvars, nobody polled, and a sleep inside `block_on` never ended; seen
/// in about one run in ten.)
#[test]
fn timers_fire_while_a_yield_if_busy_loop_runs_beside_idle_workers() {
    for _ in 0..200 {
        with_timeout(TIMEOUT_SECS, || {
            let rt = runtime(3);
            // Wake workers, so that which one sleeps in the driver varies.
            rt.block_on(async {
                brigade::yield_now().await;
                brigade::spawn(brigade::yield_now()).await.unwrap();
            });
            let stop = Arc::new(AtomicBool::new(false));
            let handle = rt.handle().clone();
            let in_loop = stop.clone();
            // Spawned from outside: the injector's notification may wake
            // the worker that sleeps in the driver.
            let background = std::thread::spawn(move || {
                handle.spawn(async move {
                    while !in_loop.load(Ordering::Relaxed) {
                        std::hint::black_box(0u64);
                        brigade::yield_if_busy().await;
                    }
                })
            })
            .join()
            .unwrap();
            rt.block_on(async {
                brigade::time::sleep(Duration::from_millis(1)).await;
            });
            stop.store(true, Ordering::Relaxed);
            rt.block_on(background).unwrap();
        });
    }
}
