//! Entering a runtime's context and finding the current one:
//! [`Handle::enter`]'s [`EnterGuard`], [`Handle::current`], and
//! [`Handle::try_current`]'s [`TryCurrentError`]. The thread's stack of
//! entered runtimes they work on is `context.rs`'s.

use std::fmt;
use std::marker::PhantomData;

use crate::runtime::context::{self, Removed};
use crate::runtime::{Handle, Runtime};

/// Makes a runtime current on this thread until dropped: returned by
/// [`Handle::enter`] and [`Runtime::enter`].
///
/// While it lives, [`spawn`](crate::spawn), [`Handle::current`], timers and
/// sockets use its runtime, as inside [`Runtime::block_on`] (but without
/// blocking: nothing is driven here; the runtime's workers run spawned
/// tasks). Unlike `block_on` it may be taken on a worker thread or inside
/// another runtime's context; the innermost entry wins.
///
/// # Drop order
/// Guards must be dropped in the reverse order of their creation, and
/// before the scope they were taken in ends (a `block_on`, a task's poll,
/// a `spawn_blocking` closure), as tokio requires. A guard dropped out of
/// order panics, as tokio's does (unless the thread is already panicking),
/// but first puts the thread's context right: its own entry is removed,
/// and the runtime current afterwards is that of the innermost entry still
/// alive. A guard moved out of the scope it was taken in lost its entry
/// when the scope ended, so dropping it later panics and changes nothing.
/// A leaked guard (`mem::forget`) keeps its runtime current until the
/// scope around it ends, or for the thread's life outside any scope.
///
/// Under feature `tokio-compat`, entering does not enter the runtime's
/// tokio context: tokio-based code finds it inside tasks, `block_on` and
/// `spawn_blocking` closures.
///
/// `!Send`: it must be dropped on the thread that entered.
#[must_use = "the runtime is current only until the guard is dropped"]
pub struct EnterGuard<'a> {
    id: u64,
    _handle: PhantomData<&'a Handle>,
    _not_send: PhantomData<*const ()>,
}

impl Drop for EnterGuard<'_> {
    fn drop(&mut self) {
        if !context::context_alive() {
            return;
        }
        if let Removed::OutOfOrder = context::remove(self.id)
            && !std::thread::panicking()
        {
            panic!(
                "`brigade::runtime::EnterGuard`s dropped out of order: guards returned by \
                 `Handle::enter` must be dropped in the reverse order of their creation, \
                 and before the `block_on`, task poll or closure they were taken in ends. \
                 This guard's runtime is no longer current; the thread's context is that \
                 of the entries still alive"
            );
        }
    }
}

impl fmt::Debug for EnterGuard<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EnterGuard").finish_non_exhaustive()
    }
}

impl Handle {
    /// The handle of the runtime this thread is in.
    ///
    /// # Panics
    /// Outside a runtime (not a worker, blocking-pool thread or `block_on`).
    /// See [`try_current`](Self::try_current).
    ///
    /// # Examples
    ///
    /// Hand the runtime to a plain thread that needs to spawn onto it:
    ///
    /// ```
    /// let rt = brigade::Runtime::new()?;
    /// let answer = rt.block_on(async {
    ///     let handle = brigade::Handle::current();
    ///     let thread = std::thread::spawn(move || handle.block_on(handle.spawn(async { 42 })));
    ///     brigade::spawn_blocking(move || thread.join().unwrap())
    ///         .await
    ///         .unwrap()
    /// });
    /// assert_eq!(answer.unwrap(), 42);
    /// assert!(brigade::Handle::try_current().is_err()); // outside again
    /// # Ok::<(), std::io::Error>(())
    /// ```
    #[track_caller]
    pub fn current() -> Handle {
        context::with_current("brigade::Handle::current", Handle::clone)
    }

    /// Makes this runtime the current one on this thread until the
    /// returned guard is dropped, so that [`spawn`](crate::spawn),
    /// [`Handle::current`], timers and sockets work outside a task (see
    /// [`EnterGuard`] for the drop-order rule).
    ///
    /// # Examples
    ///
    /// ```
    /// let rt = brigade::runtime::Runtime::new()?;
    /// let _guard = rt.handle().enter();
    /// // Outside `block_on`, yet `brigade::spawn` finds the runtime.
    /// let task = brigade::spawn(async { 2 + 2 });
    /// assert_eq!(rt.block_on(task).unwrap(), 4);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn enter(&self) -> EnterGuard<'_> {
        EnterGuard {
            id: context::push(self.clone()),
            _handle: PhantomData,
            _not_send: PhantomData,
        }
    }

    /// The handle of the runtime this thread is in, or an error saying why
    /// there is none.
    ///
    /// # Errors
    /// [`TryCurrentError`]: outside a runtime (not a worker, blocking-pool
    /// thread, `block_on` or [`enter`](Self::enter) guard), or while the
    /// thread's locals are being destroyed.
    ///
    /// # Examples
    ///
    /// ```
    /// use brigade::runtime::Handle;
    ///
    /// let error = Handle::try_current().unwrap_err();
    /// assert!(error.is_missing_context());
    /// let rt = brigade::Runtime::new()?;
    /// assert!(rt.block_on(async { Handle::try_current().is_ok() }));
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn try_current() -> Result<Handle, TryCurrentError> {
        if !context::context_alive() {
            return Err(TryCurrentError(Why::ThreadLocalDestroyed));
        }
        context::try_current().ok_or(TryCurrentError(Why::MissingContext))
    }
}

impl Runtime {
    /// Makes this runtime the current one on this thread until the returned
    /// guard is dropped. See [`Handle::enter`].
    pub fn enter(&self) -> EnterGuard<'_> {
        self.handle.enter()
    }
}

/// Why [`Handle::try_current`] found no runtime.
#[derive(Clone, PartialEq, Eq)]
pub struct TryCurrentError(Why);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Why {
    MissingContext,
    ThreadLocalDestroyed,
}

impl TryCurrentError {
    /// The thread is in no runtime's context.
    pub fn is_missing_context(&self) -> bool {
        self.0 == Why::MissingContext
    }

    /// The thread's locals (its runtime context among them) are being
    /// destroyed: the call came from another thread-local's destructor.
    pub fn is_thread_local_destroyed(&self) -> bool {
        self.0 == Why::ThreadLocalDestroyed
    }
}

impl fmt::Debug for TryCurrentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("TryCurrentError").field(&self.0).finish()
    }
}

impl fmt::Display for TryCurrentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Why::MissingContext => f.write_str(
                "there is no brigade runtime here: call this from a task, from inside \
                 `Runtime::block_on` or a `spawn_blocking` closure, or after \
                 `Handle::enter`",
            ),
            Why::ThreadLocalDestroyed => f.write_str(
                "the brigade runtime context cannot be read: this thread's locals are \
                 being destroyed",
            ),
        }
    }
}

impl std::error::Error for TryCurrentError {}
