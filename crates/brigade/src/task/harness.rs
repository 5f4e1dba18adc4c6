//! The future every task actually runs: the user's future, with panics
//! caught and the task's registry slot released when it is dropped.

use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::ptr::NonNull;
use std::task::{Context, Poll};

use super::{Panic, TaskMeta};

pin_project_lite::pin_project! {
    /// Wraps a task's future. Its output is `Err(payload)` if the future
    /// panicked; dropping it (on completion, cancellation or shutdown)
    /// removes the task from the runtime's registry.
    pub(crate) struct Harness<F> {
        #[pin]
        future: F,
        meta: MetaRef,
    }
}

/// A pointer to the task's own header.
pub(crate) struct MetaRef(NonNull<TaskMeta>);

// SAFETY: it is only turned into a `&TaskMeta`, and `TaskMeta` is `Sync`.
unsafe impl Send for MetaRef {}

impl MetaRef {
    fn get(&self) -> &TaskMeta {
        // SAFETY: the header and the future live in the same `async-task`
        // allocation, and the allocation is freed only after the future (and
        // so this `MetaRef`) has been dropped.
        unsafe { self.0.as_ref() }
    }
}

impl Drop for MetaRef {
    fn drop(&mut self) {
        let meta = self.get();
        if let Some(key) = meta.registry_key() {
            meta.shared().registry.remove(key, meta.id());
        }
    }
}

impl<F: Future> Harness<F> {
    /// `meta` must be the header of the task this harness is spawned into.
    pub(crate) fn new(future: F, meta: &TaskMeta) -> Self {
        Harness {
            future,
            meta: MetaRef(NonNull::from(meta)),
        }
    }
}

impl<F: Future> Future for Harness<F> {
    type Output = Result<F::Output, Panic>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let future = self.project().future;
        match catch_unwind(AssertUnwindSafe(|| future.poll(cx))) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(output)) => Poll::Ready(Ok(output)),
            Err(payload) => Poll::Ready(Err(payload)),
        }
    }
}
