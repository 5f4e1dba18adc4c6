//! Integration tests of `task::AbortHandle`: from `JoinHandle::abort_handle`
//! and from `JoinSet`'s spawn methods; aborting one task of a set, a queued
//! `spawn_blocking` closure and a running `yield_if_busy()` loop; handles
//! that outlive their task, their `JoinHandle` and their runtime.

mod common;

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;

use brigade::task::{AbortHandle, JoinSet};
use brigade::{Builder, Runtime};
use common::{DropFlag, TIMEOUT, wait_until, with_timeout};

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
        let dropped = flag();
        let task = rt.spawn(pending_until_dropped(dropped.clone()));
        let abort = task.abort_handle();
        drop(task); // detached
        assert!(!abort.is_finished());
        abort.abort();
        wait_until("the aborted task's future is dropped", || is_set(&dropped));
        assert!(abort.is_finished());
        // Aborting again, or through a clone, does nothing more.
        abort.clone().abort();
        abort.abort();
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
        let rt = runtime(2);
        let (started, started_rx) = mpsc::channel();
        let dropped = flag();
        let task = {
            let dropped = dropped.clone();
            rt.spawn(async move {
                let _guard = DropFlag(dropped);
                started.send(()).unwrap();
                loop {
                    brigade::yield_if_busy().await;
                }
            })
        };
        started_rx.recv_timeout(TIMEOUT).expect("the loop starts");
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
