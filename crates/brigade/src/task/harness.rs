//! The future every task actually runs: the user's future, with panics
//! caught (from `poll` and from its destructor), the task made current
//! while its future is polled (`current::poll_task`), and the task's
//! registry slot and cancel state settled when the harness is dropped.
//!
//! `async-task` drops a task's future inside an abort-on-panic guard, so a
//! destructor that panics would take the whole process down. The harness
//! therefore drops the user's future itself, inside `catch_unwind`: right
//! after it completes (a panic there becomes the task's panic), or when the
//! harness is dropped on cancellation (a panic there is logged; the task is
//! already reported as cancelled).

use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::task::{Context, Poll};

use super::task_ref::SharedPtr;
use super::{Panic, TaskMeta, coop, current};

pin_project_lite::pin_project! {
    /// Wraps a task's future. Its output is `Err(payload)` if the future
    /// panicked; dropping it (on completion, cancellation or shutdown)
    /// removes the task from the runtime's registry.
    pub(crate) struct Harness<F> {
        // `None` once completed (and dropped).
        #[pin]
        future: Option<F>,
        meta: MetaRef,
    }

    impl<F> PinnedDrop for Harness<F> {
        fn drop(this: Pin<&mut Self>) {
            let future = this.project().future;
            if catch_unwind(AssertUnwindSafe(|| drop_future(future))).is_err() {
                tracing::error!("a cancelled task's future panicked while being dropped; the panic was dropped");
            }
        }
    }
}

fn drop_future<F>(mut future: Pin<&mut Option<F>>) {
    future.set(None);
}

/// A pointer to the task's own header.
pub(crate) struct MetaRef(SharedPtr<TaskMeta>);

impl MetaRef {
    fn get(&self) -> &TaskMeta {
        // SAFETY: the header and the future live in the same `async-task`
        // allocation, and the allocation is freed only after the future (and
        // so this `MetaRef`) has been dropped.
        unsafe { self.0.as_non_null().as_ref() }
    }
}

impl Drop for MetaRef {
    /// Runs after the user's future has been dropped (it is declared after
    /// the future in `Harness`, and a completed future is dropped in `poll`).
    fn drop(&mut self) {
        let meta = self.get();
        meta.future_dropped();
        if let Some(key) = meta.registry_key() {
            meta.host().registry().remove(key, meta.id());
        }
    }
}

impl<F: Future> Harness<F> {
    /// `meta` must be the header of the task this harness is spawned into.
    pub(crate) fn new(future: F, meta: &TaskMeta) -> Self {
        Harness {
            future: Some(future),
            meta: MetaRef(SharedPtr::new(meta)),
        }
    }
}

impl<F: Future> Future for Harness<F> {
    type Output = Result<F::Output, Panic>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let meta = this.meta.get();
        meta.mirror_task_state();
        if meta.is_cancelled() {
            // Aborted after the worker checked the flag but before this poll
            // began: the abort's wake-up found the task still scheduled and
            // did nothing. Wake it again so it is rescheduled, and dropped
            // by the worker that pops it (see `TaskMeta::cancel`).
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        let mut future = this.future;
        let polled = meta.span().poll(cx.waker(), |waker| {
            let mut cx = Context::from_waker(waker);
            current::poll_task(meta, waker, || {
                // Each poll starts with a full cooperative budget (`coop.rs`).
                coop::with_full_budget(|| {
                    catch_unwind(AssertUnwindSafe(|| match future.as_mut().as_pin_mut() {
                        Some(future) => future.poll(&mut cx),
                        None => panic!("a brigade task was polled after it completed"),
                    }))
                })
            })
        });
        let output = match polled {
            Ok(Poll::Pending) => return Poll::Pending,
            Ok(Poll::Ready(output)) => Ok(output),
            Err(payload) => {
                super::tokio_hint::on_task_panic(meta, &payload);
                Err(payload)
            }
        };
        // Drop the finished future here, where a panicking destructor can be
        // caught and reported as the task's panic.
        match catch_unwind(AssertUnwindSafe(|| drop_future(future))) {
            Ok(()) => Poll::Ready(output),
            Err(payload) => Poll::Ready(Err(payload)),
        }
    }
}
