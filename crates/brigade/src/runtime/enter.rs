//! Entering a runtime's context: the thread's stack of entered runtimes,
//! [`Handle::enter`]'s [`EnterGuard`], and [`Handle::try_current`]'s
//! [`TryCurrentError`].
//!
//! ## The stack
//! Each thread keeps the runtimes it has entered, innermost last, and
//! `context::HANDLE` (what `spawn` and `Handle::current` read) mirrors the
//! innermost one. Two kinds of entry push onto it:
//! - **Scoped** ones (`context::with_handle`: a worker's loop, `block_on`,
//!   a blocking-pool thread, a thread hook), which run a closure and, when
//!   it returns or unwinds, remove their entry and every entry above it:
//!   entries pushed inside the closure and still there (guards leaked or
//!   moved out of it) go with it.
//! - **Guards** ([`EnterGuard`]), which push an entry with a fresh id and
//!   remove exactly that entry when dropped, wherever it is in the stack.
//!
//! So the current runtime is always that of the innermost entry still in
//! force, whatever order guards are dropped in: nothing can leave a runtime
//! current after its entry is gone. tokio's contract is kept on top: a
//! guard dropped while it is not the innermost entry, or after the scope it
//! was made in has ended, panics (unless the thread is already panicking),
//! after the stack has been put right.
//!
//! Everything here is thread-local; no other thread reads it.

use std::cell::{Cell, RefCell};
use std::fmt;
use std::marker::PhantomData;

use super::{Handle, Runtime, context};

/// One entered runtime.
struct Entry {
    /// Unique on this thread; what a guard finds its entry by.
    id: u64,
    handle: Handle,
}

crate::sync::scheduler_thread_local! {
    static ENTERED: RefCell<Vec<Entry>> = RefCell::new(Vec::new());
    static NEXT_ENTRY_ID: Cell<u64> = Cell::new(0);
}

/// A scoped entry's id: [`leave_scope`] cuts the stack back to below it.
pub(super) struct Mark(u64);

/// Pushes a scoped entry for `handle`; undo it with [`leave_scope`].
pub(super) fn enter_scope(handle: Handle) -> Mark {
    Mark(push(handle))
}

/// Removes the scoped entry `mark` and every entry pushed after it (and
/// still there). Found by id, not by position: a guard taken before the
/// scope and dropped inside it removed an entry below this one.
pub(super) fn leave_scope(mark: Mark) {
    let removed: Vec<Entry> = ENTERED.with(|entered| {
        let mut entered = entered.borrow_mut();
        match entered.iter().rposition(|entry| entry.id == mark.0) {
            Some(index) => entered.drain(index..).collect(),
            None => Vec::new(),
        }
    });
    mirror_innermost();
    // Dropped with no borrow held: dropping a handle can drop a runtime's
    // shared state, and with it tasks whose destructors may enter again.
    drop(removed);
}

/// Pushes an entry for `handle` and makes it current; returns its id.
fn push(handle: Handle) -> u64 {
    let id = NEXT_ENTRY_ID.with(|next| next.replace(next.get() + 1));
    ENTERED.with(|entered| entered.borrow_mut().push(Entry { id, handle }));
    mirror_innermost();
    id
}

/// What dropping a guard found.
enum Removed {
    /// Its entry was the innermost one.
    InOrder,
    /// Its entry was below others, or already gone with its scope.
    OutOfOrder,
}

/// Removes the entry `id`, wherever it is.
fn remove(id: u64) -> Removed {
    let (removed, in_order) = ENTERED.with(|entered| {
        let mut entered = entered.borrow_mut();
        match entered.iter().rposition(|entry| entry.id == id) {
            Some(index) => {
                let in_order = index + 1 == entered.len();
                (Some(entered.remove(index)), in_order)
            }
            None => (None, false),
        }
    });
    mirror_innermost();
    drop(removed);
    if in_order {
        Removed::InOrder
    } else {
        Removed::OutOfOrder
    }
}

/// Makes the innermost entry's runtime the current one (or none).
fn mirror_innermost() {
    let innermost =
        ENTERED.with(|entered| entered.borrow().last().map(|entry| entry.handle.clone()));
    drop(context::replace_current(innermost));
}

/// Whether this thread's context can still be read (it cannot while the
/// thread's locals are being destroyed).
fn context_alive() -> bool {
    ENTERED.try_with(|_| ()).is_ok()
}

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
        if !context_alive() {
            return;
        }
        if let Removed::OutOfOrder = remove(self.id)
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
            id: push(self.clone()),
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
        if !context_alive() {
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
