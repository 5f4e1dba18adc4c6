//! The waker a task is polled with while tokio-console traces it (feature
//! `console`): it wakes the task's own waker and reports each wake, and
//! the wakers the future keeps, as events on the task's span
//! (`task/span.rs` lists what the console reads).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Wake, Waker};

/// The target `console-subscriber` takes waker events from.
const TARGET: &str = "tokio::task::waker";

/// One poll's traced waker, shared by all its clones.
///
/// The protocol, and why the console's counts add up without a hook on
/// `clone` (std's `Wake` has none): all clones of one poll's waker count
/// as one waker. [`poll_with`] holds a reference through the poll; if
/// others are left when the poll ends, the future kept the waker, and it
/// reports one `waker.clone` (and sets `counted`). The last reference to go
/// reports that waker's end: `waker.wake` if it went in a `wake` (which
/// sets `woke_last` first), else `waker.drop`; a wake through any other
/// reference is a `waker.wake_by_ref`. A clone dropped (or woken) during
/// the poll, or concurrently with the check at its end, either is seen by
/// the check (counted, and its end reported) or is not (neither), so each
/// reported clone has exactly one reported end.
///
/// Orderings: `counted` is written by the polling thread before it drops
/// its reference and read in `Drop`, which runs after every reference has
/// gone (the `Arc`'s release decrement and acquire fence order the two);
/// `woke_last` is written and read by the thread holding the last
/// reference. Relaxed suffices for both.
struct SpanWaker {
    task: Waker,
    span_id: u64,
    counted: AtomicBool,
    woke_last: AtomicBool,
}

fn report(op: &'static str, span_id: u64) {
    tracing::trace!(target: TARGET, op, task.id = span_id);
}

/// Runs `f` with a waker that wakes `task` and reports to the span
/// `span_id`.
pub(super) fn poll_with<R>(span_id: u64, task: &Waker, f: impl FnOnce(&Waker) -> R) -> R {
    let own = Arc::new(SpanWaker {
        task: task.clone(),
        span_id,
        counted: AtomicBool::new(false),
        woke_last: AtomicBool::new(false),
    });
    let traced = Waker::from(own.clone());
    let output = f(&traced);
    drop(traced);
    if Arc::strong_count(&own) > 1 {
        own.counted.store(true, Ordering::Relaxed);
        report("waker.clone", span_id);
    }
    output
}

impl Wake for SpanWaker {
    fn wake(self: Arc<Self>) {
        // Only the holder of the last reference can see a count of one:
        // nobody else is left to clone it meanwhile.
        if Arc::strong_count(&self) == 1 && self.counted.load(Ordering::Relaxed) {
            self.woke_last.store(true, Ordering::Relaxed);
            report("waker.wake", self.span_id);
        } else {
            report("waker.wake_by_ref", self.span_id);
        }
        self.task.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        report("waker.wake_by_ref", self.span_id);
        self.task.wake_by_ref();
    }
}

impl Drop for SpanWaker {
    fn drop(&mut self) {
        if *self.counted.get_mut() && !*self.woke_last.get_mut() {
            report("waker.drop", self.span_id);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::sync::atomic::AtomicU64;
    use std::sync::{Arc, Mutex};
    use std::task::{Wake, Waker};

    use tracing::Dispatch;
    use tracing::field::{Field, Visit};
    use tracing_subscriber::Layer;
    use tracing_subscriber::layer::{Context, SubscriberExt};

    /// Counts the waker events by `op`.
    #[derive(Clone, Default)]
    struct Ops(Arc<Mutex<HashMap<String, i64>>>);

    impl Ops {
        fn count(&self, op: &str) -> i64 {
            self.0.lock().unwrap().get(op).copied().unwrap_or(0)
        }

        /// Wakers the console would count as alive.
        fn live(&self) -> i64 {
            self.count("waker.clone") - self.count("waker.drop") - self.count("waker.wake")
        }

        fn wakes(&self) -> i64 {
            self.count("waker.wake") + self.count("waker.wake_by_ref")
        }
    }

    struct OpField(Option<String>);

    impl Visit for OpField {
        fn record_str(&mut self, field: &Field, value: &str) {
            if field.name() == "op" {
                self.0 = Some(value.to_owned());
            }
        }
        fn record_debug(&mut self, _: &Field, _: &dyn std::fmt::Debug) {}
    }

    impl<S: tracing::Subscriber> Layer<S> for Ops {
        fn on_event(&self, event: &tracing::Event<'_>, _: Context<'_, S>) {
            let mut op = OpField(None);
            event.record(&mut op);
            if let Some(op) = op.0 {
                *self.0.lock().unwrap().entry(op).or_default() += 1;
            }
        }
    }

    /// The task's own waker: counts its wakes.
    #[derive(Default)]
    struct Task(AtomicU64);

    impl Wake for Task {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    }

    fn traced(ops: &Ops) -> Dispatch {
        Dispatch::new(tracing_subscriber::registry().with(ops.clone()))
    }

    #[test]
    fn a_waker_kept_past_the_poll_is_one_clone_with_one_end_whichever_thread_ends_it() {
        for round in 0..200 {
            let ops = Ops::default();
            let task = Arc::new(Task::default());
            let task_waker = Waker::from(task.clone());
            let dispatch = traced(&ops);
            let (kept, also_kept) = tracing::dispatcher::with_default(&dispatch, || {
                super::poll_with(7, &task_waker, |waker| {
                    waker.wake_by_ref();
                    (waker.clone(), waker.clone())
                })
            });
            let waker = std::thread::spawn({
                let dispatch = dispatch.clone();
                move || tracing::dispatcher::with_default(&dispatch, || kept.wake())
            });
            let dropper = std::thread::spawn(move || {
                tracing::dispatcher::with_default(&dispatch, || {
                    also_kept.wake_by_ref();
                    drop(also_kept)
                })
            });
            waker.join().unwrap();
            dropper.join().unwrap();
            assert_eq!(ops.count("waker.clone"), 1, "round {round}");
            assert_eq!(ops.live(), 0, "round {round}");
            assert_eq!(ops.wakes(), 3, "round {round}");
            assert_eq!(task.0.load(std::sync::atomic::Ordering::Relaxed), 3);
        }
    }

    #[test]
    fn a_waker_not_kept_reports_only_its_wakes() {
        let ops = Ops::default();
        let task = Arc::new(Task::default());
        let task_waker = Waker::from(task.clone());
        tracing::dispatcher::with_default(&traced(&ops), || {
            super::poll_with(7, &task_waker, |waker| {
                // A clone woken by value while the poll still holds its
                // reference: not the last, so a wake_by_ref.
                let clone = waker.clone();
                clone.wake();
                waker.wake_by_ref();
            })
        });
        assert_eq!(ops.count("waker.clone"), 0);
        assert_eq!(ops.live(), 0);
        assert_eq!(ops.wakes(), 2);
        assert_eq!(task.0.load(std::sync::atomic::Ordering::Relaxed), 2);
    }
}
