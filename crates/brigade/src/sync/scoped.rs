//! [`Scoped`]: a thread-local pointer that is set only for the duration of
//! a closure and restored when the closure returns or unwinds, in the
//! style of tokio's `runtime::context::Scoped`. No guard is handed out, so
//! nothing can outlive what it points to, be leaked with `mem::forget`, or
//! be reordered past the end of its referent: a pointer read from a
//! `Scoped` is either its `'static` default or a reference passed to a
//! `set` whose frame is still on this thread's stack (the reset runs before
//! that frame returns), so the pointee is alive for as long as any closure
//! that reads it runs. The thread-locals of `runtime/context.rs` and
//! `task/current.rs` are `Scoped`.

use std::cell::Cell;

/// A thread-local pointer that is set only for the duration of a closure.
pub(crate) struct Scoped<T: 'static> {
    inner: Cell<*const T>,
}

impl<T: 'static> Scoped<T> {
    /// Unset: reads as `None`.
    pub(crate) const fn unset() -> Self {
        Scoped {
            inner: Cell::new(std::ptr::null()),
        }
    }

    /// Reads as `default` wherever it is not set.
    #[cfg(not(loom))]
    pub(crate) const fn with_default(default: &'static T) -> Self {
        Scoped {
            inner: Cell::new(default),
        }
    }

    /// Points at `value` while `f` runs, then restores the previous value,
    /// also when `f` unwinds.
    pub(crate) fn set<R>(&self, value: &T, f: impl FnOnce() -> R) -> R {
        struct Reset<'a, T> {
            cell: &'a Cell<*const T>,
            previous: *const T,
        }
        impl<T> Drop for Reset<'_, T> {
            fn drop(&mut self) {
                self.cell.set(self.previous);
            }
        }
        let _reset = Reset {
            previous: self.inner.replace(value),
            cell: &self.inner,
        };
        f()
    }

    /// Runs `f` with what the pointer points at, if it is set.
    pub(crate) fn with<R>(&self, f: impl FnOnce(Option<&T>) -> R) -> R {
        // SAFETY: the pointer is null, a `'static` default, or the `value`
        // of a `set` on this thread whose frame encloses this call (its
        // reset runs before that frame returns, and `f` returns before it),
        // so the pointee is alive for all of `f`.
        f(unsafe { self.inner.get().as_ref() })
    }

    /// The pointer itself: null, the default, or a `set`'s value (see
    /// [`with`](Self::with) for when its pointee is alive).
    #[cfg(not(loom))]
    #[inline(always)]
    pub(crate) fn as_ptr(&self) -> *const T {
        self.inner.get()
    }

    /// Points at `value` for the rest of the thread (no closure to scope
    /// it: tokio's thread hooks), which a `'static` referent makes safe.
    #[cfg(all(feature = "tokio-compat", not(loom)))]
    pub(crate) fn set_for_thread(&self, value: &'static T) {
        self.inner.set(value);
    }
}
