//! Non-owning pointers into a task's allocation.
//!
//! [`TaskRef`] is how code outside a task holds on to its header: an
//! `AbortHandle`, a deferred wake-up in the yield queue, a worker settling
//! an elastic poll after `Runnable::run` consumed the `Runnable`. Its waker
//! keeps the allocation alive.
//!
//! [`SharedPtr`] is the pointer under it, and under the three references
//! that something else keeps alive: the header's pointer to its runtime
//! (`TaskMeta::host`: the schedule closure's `Arc`), and the harness's and
//! the `JoinHandle`'s pointers to the header (the future, and the
//! `async-task` handle). Each says at its one dereference what keeps the
//! pointee alive.

use std::ptr::NonNull;
use std::task::Waker;

use super::{Runnable, TaskMeta};

/// A non-owning pointer that is only ever turned into a shared reference.
///
/// It is `Send` and `Sync` when `T` is `Sync`: moving or sharing it across
/// threads moves or shares only the `&T` it may become. Whoever turns it
/// into a reference (`as_ref`, in an `unsafe` block) shows that the pointee
/// is alive for as long as the reference is used.
pub(crate) struct SharedPtr<T: ?Sized>(NonNull<T>);

// SAFETY: the pointer is only ever turned into a `&T` (see the type's
// docs), and `&T` is `Send` when `T` is `Sync`.
unsafe impl<T: ?Sized + Sync> Send for SharedPtr<T> {}
// SAFETY: as above: sharing a `SharedPtr` shares at most a `&T`.
unsafe impl<T: ?Sized + Sync> Sync for SharedPtr<T> {}

impl<T: ?Sized> SharedPtr<T> {
    pub(crate) fn new(pointee: &T) -> Self {
        SharedPtr(NonNull::from(pointee))
    }

    /// The raw pointer, for the caller to dereference under its own
    /// `// SAFETY:` argument.
    #[inline(always)]
    pub(crate) fn as_non_null(&self) -> NonNull<T> {
        self.0
    }
}

impl<T: ?Sized> Clone for SharedPtr<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T: ?Sized> Copy for SharedPtr<T> {}

/// A pointer to a task's header plus a waker of the same task, which keeps
/// the task allocation (and so the header) alive for as long as the
/// `TaskRef` exists. The waker may also be used to wake the task.
#[derive(Clone)]
pub(crate) struct TaskRef {
    header: SharedPtr<TaskMeta>,
    /// A waker of the task whose header `header` points at.
    keep_alive: Waker,
}

impl TaskRef {
    /// A reference to the task of `runnable`.
    pub(crate) fn of(runnable: &Runnable) -> Self {
        TaskRef::new(runnable.metadata(), runnable.waker())
    }

    /// A reference to the task whose header is `meta`. `own_waker` must be
    /// a waker of that same task (`async-task`'s, as handed to its poll or
    /// taken from its `Runnable`), not one made by a combinator.
    pub(crate) fn new(meta: &TaskMeta, own_waker: Waker) -> Self {
        TaskRef {
            header: SharedPtr::new(meta),
            keep_alive: own_waker,
        }
    }

    /// The task's header.
    #[inline]
    pub(crate) fn meta(&self) -> &TaskMeta {
        // SAFETY: `keep_alive` is a waker of this task (see `new`), and a
        // waker holds a reference to the task's allocation, which contains
        // the header; it lives as long as `self`, and so for the whole
        // borrow.
        unsafe { self.header.as_non_null().as_ref() }
    }

    /// Wakes the task, giving up the reference.
    pub(crate) fn wake(self) {
        self.keep_alive.wake();
    }
}
