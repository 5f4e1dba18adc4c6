//! Integration tests of `task::AbortHandle`: from `JoinHandle::abort_handle`
//! and from `JoinSet`'s spawn methods; aborting one task of a set, a queued
//! `spawn_blocking` closure and a running `yield_if_busy()` loop; handles
//! that outlive their task, their `JoinHandle` and their runtime.

mod common;

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;

use brigade::task::{AbortHandle, JoinSet};
use brigade::{Builder, Runtime};
use common::{DropCounter, DropFlag, TIMEOUT, spin_until, wait_until, with_timeout};

fn runtime(workers: usize) -> Runtime {
    Builder::new().worker_threads(workers).build().unwrap()
}

fn flag() -> Arc<AtomicBool> {
    Arc::new(AtomicBool::new(false))
}

fn is_set(flag: &AtomicBool) -> bool {
    flag.load(Ordering::SeqCst)
}

/// A future that never finishes and sets `dropped` when dropped, whether
/// or not it was ever polled.
fn pending_until_dropped(dropped: Arc<AtomicBool>) -> impl Future<Output = ()> + Send {
    let guard = DropFlag(dropped);
    async move {
        let _guard = guard;
        std::future::pending::<()>().await
    }
}

#[test]
fn a_sets_abort_handle_cancels_that_task_only() {
    with_timeout(common::TIMEOUT_SECS, || {
        let rt = runtime(2);
        rt.block_on(async {
            let (first_dropped, second_dropped) = (flag(), flag());
            let mut set = JoinSet::new();
            let first = set.spawn(pending_until_dropped(first_dropped.clone()));
            let second = set.spawn(pending_until_dropped(second_dropped.clone()));
            assert!(!first.is_finished() && !second.is_finished());
            first.abort();
            let outcome = set.join_next().await.expect("a task is in the set");
            assert!(outcome.unwrap_err().is_cancelled());
            assert!(first.is_finished() && is_set(&first_dropped));
            assert!(!second.is_finished() && !is_set(&second_dropped));
            assert_eq!(set.len(), 1);
            second.abort();
            assert!(set.join_next().await.unwrap().unwrap_err().is_cancelled());
            assert!(second.is_finished() && set.is_empty());
        });
    });
}

#[test]
fn an_abort_handle_outlives_its_join_handle() {
    with_timeout(common::TIMEOUT_SECS, || {
        let rt = runtime(1);
        let metrics = rt.metrics();
        let drops = Arc::new(AtomicUsize::new(0));
        let task = {
            let guard = DropCounter(drops.clone());
            rt.spawn(async move {
                let _guard = guard;
                std::future::pending::<()>().await
            })
        };
        let abort = task.abort_handle();
        drop(task); // detached
        assert!(!abort.is_finished());
        abort.abort();
        wait_until("the aborted task's future is dropped", || {
            drops.load(Ordering::SeqCst) == 1
        });
        assert!(abort.is_finished());
        wait_until("the aborted task leaves the registry", || {
            metrics.num_alive_tasks() == 0
        });
        assert_eq!(
            metrics.attention_holds(),
            0,
            "the abort's hold was given back"
        );
        // Aborting again, or through a clone, does nothing more: the future
        // is not dropped twice, no hold is taken (and so none leaks: it
        // would be given back only by a drop that already happened), and
        // the worker goes on running tasks.
        abort.clone().abort();
        abort.abort();
        assert!(abort.is_finished());
        assert_eq!(
            metrics.attention_holds(),
            0,
            "a repeated abort leaked a hold"
        );
        assert_eq!(rt.block_on(rt.spawn(async { 7 })).unwrap(), 7);
        assert_eq!(drops.load(Ordering::SeqCst), 1, "dropped once");
        assert_eq!(metrics.num_alive_tasks(), 0);
    });
}

#[test]
fn a_finished_task_is_not_aborted() {
    with_timeout(common::TIMEOUT_SECS, || {
        let rt = runtime(1);
        let task = rt.spawn(async { 5 });
        let early = task.abort_handle();
        wait_until("the task finishes", || task.is_finished());
        early.abort();
        let late = task.abort_handle();
        late.abort();
        assert!(early.is_finished() && late.is_finished());
        assert_eq!(rt.block_on(task).unwrap(), 5);
    });
}

#[test]
fn a_queued_blocking_closure_is_aborted_before_it_runs() {
    with_timeout(common::TIMEOUT_SECS, || {
        let rt = Builder::new()
            .worker_threads(1)
            .max_blocking_threads(1)
            .build()
            .unwrap();
        let (release, released) = mpsc::channel::<()>();
        let ran = flag();
        rt.block_on(async {
            let mut set = JoinSet::new();
            // Occupies the only blocking thread until released.
            let busy = set.spawn_blocking(move || {
                released.recv_timeout(TIMEOUT).expect("released in time");
                1
            });
            let queued = {
                let ran = ran.clone();
                set.spawn_blocking(move || {
                    ran.store(true, Ordering::SeqCst);
                    2
                })
            };
            queued.abort();
            release.send(()).unwrap();
            let mut outcomes = Vec::new();
            while let Some(outcome) = set.join_next().await {
                outcomes.push(outcome.map_err(|error| error.is_cancelled()));
            }
            outcomes.sort();
            assert_eq!(outcomes, [Ok(1), Err(true)]);
            assert!(busy.is_finished() && queued.is_finished());
        });
        assert!(!is_set(&ran), "an aborted, queued closure ran");
    });
}

#[test]
fn an_abort_handle_stops_a_running_yield_if_busy_loop() {
    with_timeout(common::TIMEOUT_SECS, || {
        // No compensation: a spare could leave no worker idle.
        let rt = Builder::new()
            .worker_threads(2)
            .compensation_threshold(None)
            .build()
            .unwrap();
        let rounds = Arc::new(AtomicUsize::new(0));
        let dropped = flag();
        let task = {
            let (dropped, rounds) = (dropped.clone(), rounds.clone());
            rt.spawn(async move {
                let _guard = DropFlag(dropped);
                // The abort must land while `yield_if_busy()` takes its fast
                // path, which returns at once while another worker is idle
                // and never looks at the cancel flag. Right after the spawn
                // the other worker may still be searching, and the slow path
                // taken meanwhile would see the abort without any hold.
                let metrics = brigade::Handle::current().metrics();
                spin_until("the other worker is idle", || {
                    metrics.num_idle_workers() >= 1
                });
                loop {
                    rounds.fetch_add(1, Ordering::Relaxed);
                    brigade::yield_if_busy().await;
                }
            })
        };
        wait_until("the loop runs on its fast path", || {
            rounds.load(Ordering::Relaxed) > 10_000
        });
        assert_eq!(rt.metrics().yields(), 0, "the loop never gave way");
        let abort: AbortHandle = task.abort_handle();
        abort.abort();
        assert!(rt.block_on(task).unwrap_err().is_cancelled());
        assert!(is_set(&dropped) && abort.is_finished());
    });
}

#[test]
fn abort_handles_outlive_their_runtime() {
    with_timeout(common::TIMEOUT_SECS, || {
        let rt = runtime(1);
        let dropped = flag();
        let waiting = rt
            .spawn(pending_until_dropped(dropped.clone()))
            .abort_handle();
        let done = rt.spawn(async {}).abort_handle();
        let blocking = rt.spawn_blocking(|| 3).abort_handle();
        drop(rt);
        // Shutdown dropped every task's future.
        assert!(is_set(&dropped));
        for handle in [&waiting, &done, &blocking] {
            handle.abort();
            assert!(handle.is_finished(), "{handle:?}");
        }
    });
}

/// An abort of a `yield_if_busy()` loop that has given way and waits in the
/// yield queue for its turn: the worker that takes it from the queue drops
/// it instead of polling it, the handle reports the cancellation, and the
/// queue and the attention count are left empty.
///
/// One worker, no compensation, no starvation bound: the loop parks in the
/// yield queue as soon as a task spawned from outside waits in the
/// injector, and that task (which aborts the loop) runs before the yield
/// queue is looked at.
#[test]
fn an_abort_reaches_a_yield_if_busy_task_waiting_in_the_yield_queue() {
    with_timeout(common::TIMEOUT_SECS, || {
        let rt = Builder::new()
            .worker_threads(1)
            .compensation_threshold(None)
            .max_yield_delay(None)
            .build()
            .unwrap();
        let metrics = rt.metrics();
        let rounds = Arc::new(AtomicUsize::new(0));
        let dropped = flag();
        let looping = {
            let (dropped, rounds) = (dropped.clone(), rounds.clone());
            rt.spawn(async move {
                let _guard = DropFlag(dropped);
                loop {
                    rounds.fetch_add(1, Ordering::SeqCst);
                    brigade::yield_if_busy().await;
                }
            })
        };
        wait_until("the loop runs", || rounds.load(Ordering::SeqCst) > 0);
        let abort = looping.abort_handle();
        let aborter = {
            let (metrics, rounds) = (metrics.clone(), rounds.clone());
            rt.spawn(async move {
                // The only worker runs this, so the loop is not running: it
                // gave way to this task and waits in the yield queue.
                let depth = metrics.yield_queue_depth();
                let rounds_at_abort = rounds.load(Ordering::SeqCst);
                abort.abort();
                (depth, rounds_at_abort)
            })
        };
        let (depth, rounds_at_abort) = rt.block_on(aborter).unwrap();
        assert_eq!(depth, 1, "the loop was not in the yield queue");
        let error = rt.block_on(looping).unwrap_err();
        assert!(error.is_cancelled(), "{error}");
        assert!(is_set(&dropped));
        assert_eq!(
            rounds.load(Ordering::SeqCst),
            rounds_at_abort,
            "the aborted loop was polled again"
        );
        // The loop's deferred wake-up stays in the queue until the worker,
        // with nothing else to do, takes it back (a no-op for a finished
        // task); the handle can resolve before that.
        wait_until("the yield queue empties", || {
            metrics.yield_queue_depth() == 0
        });
        assert!(metrics.yield_queue_entries() >= 1);
        wait_until("the aborted task leaves the registry", || {
            metrics.num_alive_tasks() == 0
        });
        assert_eq!(metrics.attention_holds(), 0, "the abort's hold leaked");
    });
}
