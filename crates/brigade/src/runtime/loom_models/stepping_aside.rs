//! The yield queue's hand-off: a task that steps aside is taken back by a
//! worker that has nothing else to do, never lost, never run twice.
//!
//! Each model also checks that some of its executions did step a task
//! aside into the yield queue (`Coverage`): otherwise it would pass without
//! testing the hand-off at all.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::{check, runtime};
use crate::Runtime;

/// Counts the executions of a model that put something in the yield queue.
struct Coverage(AtomicUsize);

impl Coverage {
    const fn new() -> Self {
        Coverage(AtomicUsize::new(0))
    }

    /// Notes whether `rt`'s yield queue was used in this execution.
    fn note(&self, rt: &Runtime) {
        if rt.metrics().yield_queue_entries() > 0 {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Notes whether a background task of `rt` took its turn through its
    /// worker's shard (`Core::take_turns`) in this execution.
    fn note_turns(&self, rt: &Runtime) {
        if rt.handle().shared.turns_taken.load(Ordering::Relaxed) > 0 {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn assert_covered(&self) {
        assert!(
            self.0.load(Ordering::Relaxed) > 0,
            "no execution of the model reached the hand-off it is about"
        );
    }
}

/// One worker runs a `yield_if_busy()` loop while a task is spawned from
/// outside: when the loop sees the injector busy it steps aside into the
/// yield queue (a deferred wake-up), the worker runs the injected task,
/// then, with nothing else to do, takes the loop back from the yield queue.
/// Both finish.
#[test]
fn a_yielder_steps_aside_for_injected_work_and_comes_back() {
    static COVERAGE: Coverage = Coverage::new();
    check(2, || {
        let rt = runtime(1);
        let units = Arc::new(AtomicUsize::new(0));
        let looped = {
            let units = units.clone();
            rt.spawn(async move {
                for _ in 0..2 {
                    units.fetch_add(1, Ordering::SeqCst);
                    crate::yield_if_busy().await;
                }
            })
        };
        let injected = rt.spawn(async { 7 });
        assert_eq!(rt.block_on(injected).unwrap(), 7);
        rt.block_on(looped).unwrap();
        assert_eq!(units.load(Ordering::SeqCst), 2);
        COVERAGE.note(&rt);
    });
    COVERAGE.assert_covered();
}

/// Two workers: one steps a task aside into the yield queue (its own deque
/// holds a task twice in a row, the sentinel) while the other goes to
/// sleep: the push's `notify_one` and the sleeper's re-check of the yield
/// queue close the race (`idle.rs`), so the deferred wake-up is delivered
/// and the task completes.
#[test]
fn a_deferred_wake_up_is_not_lost_to_a_sleeping_worker() {
    static COVERAGE: Coverage = Coverage::new();
    check(2, || {
        let rt = runtime(2);
        let done = rt.block_on(rt.spawn(async {
            // A child on this worker's deque: the first `yield_if_busy()`
            // moves behind it; a second child, and the second call
            // (sentinel set, deque busy again unless the other worker stole
            // the child) steps aside.
            let first = crate::spawn(async {});
            crate::yield_if_busy().await;
            let second = crate::spawn(async {});
            crate::yield_if_busy().await;
            for child in [first, second] {
                child.await.unwrap();
            }
            true
        }));
        assert!(done.unwrap());
        COVERAGE.note(&rt);
    });
    COVERAGE.assert_covered();
}

/// A `yield_now()` loop is demoted to background after a few self-wakes;
/// its self-wakes then step aside into the yield queue as scheduled tasks
/// (`Entry::Run`) while other work waits. It still finishes, and so does
/// the work it stepped aside for.
#[test]
fn a_demoted_loop_takes_turns_through_the_yield_queue() {
    static COVERAGE: Coverage = Coverage::new();
    check(2, || {
        let rt = runtime(1);
        let looped = rt.spawn(async {
            for _ in 0..crate::task::class::DEMOTE_AFTER + 2 {
                crate::yield_now().await;
            }
        });
        let other = rt.spawn(async { "served" });
        assert_eq!(rt.block_on(other).unwrap(), "served");
        rt.block_on(looped).unwrap();
        COVERAGE.note(&rt);
    });
    COVERAGE.assert_covered();
}

/// Two background tasks on the only worker take turns through its shard of
/// the yield queue (`Core::take_turns`: one in, the other out, in one hold
/// of the lock, and the one taken out pushed to the worker's deque), while
/// a third task is spawned from outside and one of the two is aborted:
/// every task finishes or is dropped, exactly once. The two reach their
/// turn as under the production constants (`super::spawn_turn_takers`).
#[test]
fn background_tasks_take_turns_while_one_is_aborted() {
    static COVERAGE: Coverage = Coverage::new();
    check(2, || {
        let rt = runtime(1);
        let dropped = super::DropCount::default();
        let (kept, aborted) = super::spawn_turn_takers(&rt, &dropped, 1);
        let other = rt.spawn(async { "served" });
        aborted.abort();
        assert_eq!(rt.block_on(other).unwrap(), "served");
        rt.block_on(kept).unwrap();
        let outcome = rt.block_on(aborted);
        assert!(outcome.is_ok() || outcome.unwrap_err().is_cancelled());
        assert_eq!(dropped.get(), 2);
        COVERAGE.note_turns(&rt);
    });
    COVERAGE.assert_covered();
}
