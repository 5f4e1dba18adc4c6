//! Shutdown with tasks still running or waiting: every worker stops, and
//! every future is dropped exactly once.

use super::{DropCount, Never, check, runtime};

/// Dropping the runtime races with a task that loops on `yield_if_busy()`
/// and with another that waits for ever: whatever the interleaving, both
/// futures are dropped exactly once (by a worker, or by shutdown's sweep)
/// and both workers exit (loom reports a deadlock if one never does).
///
/// The loop is bounded: loom cannot model an endless loop (nothing makes
/// it schedule the other threads fairly). That shutdown ends loops that
/// never end by themselves is tested with real threads
/// (`tests/shutdown_loops.rs`).
#[test]
fn shutdown_races_with_a_yielder_and_a_waiting_task() {
    check(2, || {
        let rt = runtime(2);
        let dropped = DropCount::default();
        let (yielder_guard, waiter_guard) = (dropped.guard(), dropped.guard());
        let yielder = rt.spawn(async move {
            let _guard = yielder_guard;
            for _ in 0..3 {
                crate::yield_if_busy().await;
            }
        });
        let waiter = rt.spawn(async move {
            let _guard = waiter_guard;
            Never.await
        });
        drop(rt);
        assert_eq!(dropped.get(), 2);
        drop((yielder, waiter));
    });
}

/// An abort races with the aborted task running a `yield_if_busy()` loop
/// on the only worker (so every call takes the slow path, which checks for
/// an abort): the task is dropped exactly once, and its handle resolves as
/// cancelled unless the loop had already finished. (Bounded for loom; the
/// endless case is tested with real threads in `tests/shutdown_loops.rs`.)
#[test]
fn an_abort_races_with_a_running_yielder() {
    check(2, || {
        let rt = runtime(1);
        let dropped = DropCount::default();
        let guard = dropped.guard();
        let yielder = rt.spawn(async move {
            let _guard = guard;
            for _ in 0..3 {
                crate::yield_if_busy().await;
            }
        });
        yielder.abort();
        let outcome = rt.block_on(yielder);
        assert!(outcome.is_ok() || outcome.unwrap_err().is_cancelled());
        assert_eq!(dropped.get(), 1);
    });
}

/// Dropping the runtime races with two background tasks that take turns
/// through their worker's shard of the yield queue (`Core::take_turns`:
/// one in, one out, under the shard's lock, then the push-then-check of
/// the shutdown flag): wherever the turn leaves each task (in the shard,
/// in the worker's deque, running), both futures are dropped exactly once
/// and the worker exits. (The drain that the look at the flag is for, of
/// a task put back after shutdown emptied the queues, needs a worker still
/// polling past a `shutdown_timeout` deadline, which a model cannot make.)
#[test]
fn shutdown_races_with_background_tasks_taking_turns() {
    check(2, || {
        let rt = runtime(1);
        let dropped = DropCount::default();
        let handles = super::spawn_turn_takers(&rt, &dropped, 2);
        drop(rt);
        assert_eq!(dropped.get(), 2);
        drop(handles);
    });
}
