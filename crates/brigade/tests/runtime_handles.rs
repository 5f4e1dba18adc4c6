//! tokio's runtime names on brigade: `brigade::runtime::{Builder, Runtime,
//! Handle}`, the builder's flavors, `Handle::enter` and its guard (drop
//! order included), `Handle::try_current`'s error, `shutdown_background`.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use brigade::runtime::{Builder, Handle, Runtime, TryCurrentError};
use common::{DropCounter, TIMEOUT_SECS, expect_panic, with_timeout};

/// How many workers the runtime current on this thread has, if any.
fn current_workers() -> Option<usize> {
    Handle::try_current()
        .ok()
        .map(|handle| handle.metrics().num_workers())
}

fn runtime(workers: usize) -> Runtime {
    Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn tokio_builder_code_builds_the_runtime_it_asks_for() {
    with_timeout(TIMEOUT_SECS, || {
        let multi = Builder::new_multi_thread()
            .worker_threads(3)
            .thread_name("ported")
            .enable_io()
            .enable_time()
            .build()
            .unwrap();
        assert_eq!(multi.metrics().num_workers(), 3);
        // One worker, whatever `worker_threads` says (tokio ignores it too).
        let single = Builder::new_current_thread()
            .worker_threads(4)
            .enable_all()
            .build()
            .unwrap();
        assert_eq!(single.metrics().num_workers(), 1);
        let answer = single.block_on(async { brigade::spawn(async { 6 * 7 }).await.unwrap() });
        assert_eq!(answer, 42);
        // `brigade::Runtime` is the same type.
        let _same: &brigade::Runtime = &single;
    });
}

#[test]
fn worker_threads_has_no_effect_on_a_current_thread_builder() {
    // `worker_threads(0)` is an error on a multi-thread builder ...
    let error = Builder::new_multi_thread()
        .worker_threads(0)
        .build()
        .unwrap_err();
    assert!(error.to_string().contains("worker_threads"), "{error}");
    // ... and has no effect on a current-thread one.
    let rt = Builder::new_current_thread()
        .worker_threads(0)
        .build()
        .unwrap();
    assert_eq!(rt.metrics().num_workers(), 1);
}

#[test]
fn try_current_outside_a_runtime_says_why() {
    let error: TryCurrentError = Handle::try_current().unwrap_err();
    assert!(error.is_missing_context());
    assert!(!error.is_thread_local_destroyed());
    let message = error.to_string();
    assert!(message.contains("no brigade runtime"), "{message}");
    let _: &dyn std::error::Error = &error;
}

#[test]
fn enter_makes_the_runtime_current_until_the_guard_drops() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = runtime(2);
        assert_eq!(current_workers(), None);
        let guard = rt.handle().enter();
        assert_eq!(current_workers(), Some(2));
        // `spawn` finds it outside `block_on`, and the task runs.
        let task = brigade::spawn(async { brigade::task::id() });
        let id = task.id();
        assert_eq!(rt.block_on(task).unwrap(), id);
        // `block_on` inside the guard keeps the context when it returns.
        assert_eq!(current_workers(), Some(2));
        drop(guard);
        assert_eq!(current_workers(), None);
        let message = expect_panic(|| brigade::spawn(async {}));
        assert!(
            message.contains("outside of a brigade runtime"),
            "{message}"
        );
    });
}

#[test]
fn nested_guards_dropped_in_order_restore_each_runtime() {
    with_timeout(TIMEOUT_SECS, || {
        let one = runtime(1);
        let two = runtime(2);
        let outer = one.enter();
        {
            let _inner = two.handle().enter();
            assert_eq!(current_workers(), Some(2));
        }
        assert_eq!(current_workers(), Some(1));
        drop(outer);
        assert_eq!(current_workers(), None);
    });
}

#[test]
fn a_guard_dropped_out_of_order_panics_and_leaves_no_runtime_dangling() {
    with_timeout(TIMEOUT_SECS, || {
        let one = runtime(1);
        let two = runtime(2);
        let first = one.handle().enter();
        let second = two.handle().enter();
        // tokio's contract: dropping `first` before `second` panics ...
        let message = expect_panic(move || drop(first));
        assert!(message.contains("dropped out of order"), "{message}");
        // ... but the context is put right first: `one` is no longer
        // current, `two` still is, and dropping `second` leaves none.
        assert_eq!(current_workers(), Some(2));
        drop(second);
        assert_eq!(current_workers(), None);
        // Everything still works afterwards.
        let guard = one.enter();
        assert_eq!(current_workers(), Some(1));
        drop(guard);
        assert_eq!(current_workers(), None);
    });
}

#[test]
fn a_guard_taken_before_block_on_and_dropped_inside_it_leaves_nothing_behind() {
    with_timeout(TIMEOUT_SECS, || {
        let one = runtime(1);
        let two = runtime(2);
        let guard = one.handle().enter();
        let message = two.block_on(async move {
            assert_eq!(current_workers(), Some(2));
            // Dropped inside `two`'s `block_on`: out of order.
            let message = expect_panic(move || drop(guard));
            assert_eq!(current_workers(), Some(2));
            message
        });
        assert!(message.contains("dropped out of order"), "{message}");
        // `one`'s entry went with the guard, `two`'s with its `block_on`.
        assert_eq!(current_workers(), None);
    });
}

#[test]
fn a_guard_moved_out_of_block_on_loses_its_entry_with_it() {
    with_timeout(TIMEOUT_SECS, || {
        let one = runtime(1);
        let two = runtime(2);
        let handle = two.handle();
        let escaped = one.block_on(async { handle.enter() });
        // `block_on` ended, taking the guard's entry with it: nothing stays
        // current ...
        assert_eq!(current_workers(), None);
        // ... and dropping the guard now is out of order.
        let message = expect_panic(move || drop(escaped));
        assert!(message.contains("dropped out of order"), "{message}");
        assert_eq!(current_workers(), None);
    });
}

#[test]
fn enter_on_a_worker_spawns_onto_the_entered_runtime() {
    with_timeout(TIMEOUT_SECS, || {
        let own = runtime(1);
        let other = runtime(3);
        let other_handle = other.handle().clone();
        let seen = own
            .block_on(own.spawn(async move {
                let inside = {
                    let _guard = other_handle.enter();
                    current_workers()
                };
                (inside, current_workers())
            }))
            .unwrap();
        // Entered: the other runtime; after the guard: the worker's own.
        assert_eq!(seen, (Some(3), Some(1)));
    });
}

#[test]
fn shutdown_background_drops_pending_tasks_without_waiting() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = Builder::new_current_thread().build().unwrap();
        let dropped = Arc::new(AtomicUsize::new(0));
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let counter = DropCounter(dropped.clone());
                rt.spawn(async move {
                    let _counter = counter;
                    std::future::pending::<()>().await
                })
            })
            .collect();
        rt.shutdown_background();
        assert_eq!(dropped.load(Ordering::SeqCst), 4);
        for handle in handles {
            let error = futures_lite::future::block_on(handle).unwrap_err();
            assert!(error.is_cancelled());
        }
    });
}

#[test]
fn runtime_flavor_says_which_builder_made_the_runtime() {
    use brigade::runtime::RuntimeFlavor;
    with_timeout(TIMEOUT_SECS, || {
        let multi = runtime(2);
        assert_eq!(multi.handle().runtime_flavor(), RuntimeFlavor::MultiThread);
        // From inside a task too, through `Handle::current`.
        let inside = multi.block_on(multi.spawn(async { Handle::current().runtime_flavor() }));
        assert_eq!(inside.unwrap(), RuntimeFlavor::MultiThread);
        let single = Builder::new_current_thread().build().unwrap();
        assert_eq!(
            single.block_on(async { Handle::current().runtime_flavor() }),
            RuntimeFlavor::CurrentThread
        );
    });
}

#[test]
fn every_runtime_has_its_own_id_and_every_handle_of_it_the_same() {
    use std::collections::HashSet;
    with_timeout(TIMEOUT_SECS, || {
        let runtimes: Vec<Runtime> = (0..4).map(|_| runtime(1)).collect();
        let ids: HashSet<_> = runtimes.iter().map(|rt| rt.handle().id()).collect();
        assert_eq!(ids.len(), runtimes.len(), "ids are unique");
        for rt in &runtimes {
            let id = rt.handle().id();
            assert_eq!(rt.handle().clone().id(), id);
            let inside = rt.block_on(rt.spawn(async { Handle::current().id() }));
            assert_eq!(inside.unwrap(), id);
            assert!(id.to_string().parse::<u64>().unwrap() > 0);
        }
        // Not reused once a runtime is gone.
        let gone: Vec<_> = runtimes.into_iter().map(|rt| rt.handle().id()).collect();
        let later = runtime(1).handle().id();
        assert!(!gone.contains(&later));
    });
}
