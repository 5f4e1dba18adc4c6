//! `JoinHandle` and `JoinError`.

use std::any::Any;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Mutex, PoisonError};
use std::task::{Context, Poll, Waker, ready};

use async_task::FallibleTask;

use super::task_ref::{SharedPtr, TaskRef};
use super::{AbortHandle, Id, Panic, TaskMeta};

/// An owned permission to await a spawned task's output, or to abort it.
///
/// Awaiting it yields `Ok(output)` once the task finishes, or a
/// [`JoinError`] if the task panicked or was cancelled (by
/// [`abort`](Self::abort) or by the runtime shutting down). Dropping the
/// handle *detaches* the task: it keeps running and its output is dropped.
///
/// # Examples
///
/// ```
/// let rt = brigade::Runtime::new()?;
/// let handle = rt.spawn(async { 6 * 7 });
/// assert_eq!(rt.block_on(handle).unwrap(), 42);
/// # Ok::<(), std::io::Error>(())
/// ```
pub struct JoinHandle<T> {
    /// `None` only while being dropped.
    task: Option<FallibleTask<Result<T, Panic>, TaskMeta>>,
    /// The task's header. Valid while `task` is held: the `FallibleTask`
    /// keeps the allocation the header lives in.
    meta: SharedPtr<TaskMeta>,
    /// For a `spawn_blocking` task, which is in no registry: a waker of it,
    /// for [`abort_handle`](Self::abort_handle) to keep it alive with.
    blocking_waker: Option<Waker>,
}

// `Send` when `T` is (through the `FallibleTask`). `Sync` whatever `T`:
// no `&self` method touches the output; `abort` and `is_finished` only use
// the header's atomics and `async-task`'s thread-safe state (a spawned
// task's output is `Send` anyway).

impl<T> Unpin for JoinHandle<T> {}

impl<T> JoinHandle<T> {
    pub(crate) fn new(task: async_task::Task<Result<T, Panic>, TaskMeta>) -> Self {
        let meta = SharedPtr::new(task.metadata());
        JoinHandle {
            task: Some(task.fallible()),
            meta,
            blocking_waker: None,
        }
    }

    /// The handle of a `spawn_blocking` task; `waker` is one of the task's.
    pub(crate) fn for_blocking(
        task: async_task::Task<Result<T, Panic>, TaskMeta>,
        waker: Waker,
    ) -> Self {
        let mut handle = JoinHandle::new(task);
        handle.blocking_waker = Some(waker);
        handle
    }

    /// An [`AbortHandle`] for the task: it can cancel the task without
    /// owning its output, and outlive this handle.
    ///
    /// # Examples
    ///
    /// ```
    /// let rt = brigade::Runtime::new()?;
    /// rt.block_on(async {
    ///     let task = brigade::spawn(std::future::pending::<()>());
    ///     let abort = task.abort_handle();
    ///     abort.abort();
    ///     assert!(task.await.unwrap_err().is_cancelled());
    /// });
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn abort_handle(&self) -> AbortHandle {
        let meta = self.meta();
        let waker = match meta.registry_key() {
            // `None` if the task's future is already gone.
            Some(key) => meta.host().registry().waker(key, meta.id()),
            None => self.blocking_waker.clone(),
        };
        // Both wakers are the task's own: the registry's and the blocking
        // task's come from its `Runnable`.
        AbortHandle::new(self.id(), waker.map(|waker| TaskRef::new(meta, waker)))
    }

    fn meta(&self) -> &TaskMeta {
        // SAFETY: see the `meta` field; `self.task` is held (it is taken
        // only in `drop`).
        unsafe { self.meta.as_non_null().as_ref() }
    }

    /// Cancels the task. If it is waiting, its future is dropped the next
    /// time a worker picks it up (it is woken for that); if it is running,
    /// after the current poll. A running loop that calls
    /// [`yield_if_busy`](crate::yield_if_busy) gives way at its next call,
    /// even while workers are idle (until the task is dropped, every
    /// `yield_if_busy()` in the runtime takes its slow path, a few
    /// nanoseconds more). Awaiting the handle then yields a
    /// [`JoinError`] for which [`is_cancelled`](JoinError::is_cancelled) is
    /// true, unless the task had already finished.
    ///
    /// A `spawn_blocking` closure that has already started cannot be
    /// cancelled; one still queued is dropped without running.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let rt = brigade::Runtime::new()?;
    /// rt.block_on(async {
    ///     let task = brigade::spawn(brigade::time::sleep(Duration::from_secs(60)));
    ///     task.abort();
    ///     let error = task.await.unwrap_err();
    ///     assert!(error.is_cancelled());
    /// });
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn abort(&self) {
        abort_task(self.meta());
    }

    /// Returns `true` once the task has finished (completed, panicked or
    /// been cancelled).
    pub fn is_finished(&self) -> bool {
        self.task.as_ref().is_none_or(FallibleTask::is_finished)
    }

    /// The task's [`Id`]: the same as [`task::id`](super::id) returns
    /// inside it.
    pub fn id(&self) -> Id {
        Id::from_raw(self.meta().id())
    }
}

/// Cancels the task whose header is `meta` (`JoinHandle::abort`,
/// `AbortHandle::abort`): sets its flag, then wakes it so that a worker
/// drops it.
pub(crate) fn abort_task(meta: &TaskMeta) {
    meta.cancel();
    if let Some(key) = meta.registry_key() {
        let host = meta.host();
        host.registry().wake(key, meta.id());
        // A background task waiting in the yield queue is already
        // scheduled, so the wake-up does nothing for it.
        host.evict_aborted();
    }
}

impl<T> Future for JoinHandle<T> {
    type Output = Result<T, JoinError>;

    /// A result spends a unit of the task's cooperative budget
    /// (`task/coop.rs`), as every brigade resource does.
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let id = self.meta().id();
        let task = self.task.as_mut().expect("JoinHandle polled after drop");
        let outcome = ready!(super::coop::budgeted(cx, |cx| Pin::new(task).poll(cx)));
        Poll::Ready(match outcome {
            Some(Ok(output)) => Ok(output),
            Some(Err(payload)) => Err(JoinError::panic(id, payload)),
            None => Err(JoinError::cancelled(id)),
        })
    }
}

impl<T> Drop for JoinHandle<T> {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.detach();
        }
    }
}

impl<T> fmt::Debug for JoinHandle<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JoinHandle")
            .field("id", &self.meta().id())
            .field("finished", &self.is_finished())
            .finish()
    }
}

/// Why a task did not produce its output.
pub struct JoinError {
    task_id: u64,
    repr: Repr,
}

enum Repr {
    Cancelled,
    /// The payload, and its message when it was a string (read at
    /// construction so `Display` never touches the payload).
    Panic(SyncPanic, Option<String>),
}

/// A panic payload behind a `Mutex`, so the error that carries it can be
/// `Sync` (as `io::Error` requires) though the payload need not be. The
/// lock is never taken: the payload is only moved out by value
/// (`try_into_panic`). A `std` mutex: no scheduler protocol goes through it.
struct SyncPanic(Mutex<Panic>);

impl SyncPanic {
    fn new(payload: Panic) -> Self {
        SyncPanic(Mutex::new(payload))
    }

    fn into_inner(self) -> Panic {
        // Never poisoned (never locked); a poisoned mutex still holds it.
        self.0.into_inner().unwrap_or_else(PoisonError::into_inner)
    }
}

impl JoinError {
    fn cancelled(task_id: u64) -> Self {
        JoinError {
            task_id,
            repr: Repr::Cancelled,
        }
    }

    fn panic(task_id: u64, payload: Panic) -> Self {
        let message = super::tokio_hint::message_of(&payload).map(str::to_owned);
        JoinError {
            task_id,
            repr: Repr::Panic(SyncPanic::new(payload), message),
        }
    }

    /// The [`Id`] of the task that failed.
    pub fn id(&self) -> Id {
        Id::from_raw(self.task_id)
    }

    /// The task was cancelled: aborted, or dropped by runtime shutdown.
    pub fn is_cancelled(&self) -> bool {
        matches!(self.repr, Repr::Cancelled)
    }

    /// The task panicked.
    pub fn is_panic(&self) -> bool {
        matches!(self.repr, Repr::Panic(..))
    }

    /// The panic payload, for `std::panic::resume_unwind`.
    ///
    /// # Panics
    /// Panics if the error is not a panic; see [`try_into_panic`](Self::try_into_panic).
    pub fn into_panic(self) -> Box<dyn Any + Send + 'static> {
        self.try_into_panic()
            .expect("JoinError::into_panic called on a cancelled task; check is_panic() first")
    }

    /// The panic payload, or `Err(self)` if the task was cancelled.
    pub fn try_into_panic(self) -> Result<Box<dyn Any + Send + 'static>, JoinError> {
        match self.repr {
            Repr::Panic(payload, _) => Ok(payload.into_inner()),
            Repr::Cancelled => Err(self),
        }
    }
}

impl fmt::Display for JoinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.repr {
            Repr::Cancelled => write!(f, "task {} was cancelled", self.task_id),
            Repr::Panic(_, message) => match message {
                Some(message) => {
                    write!(f, "task {} panicked with message {message:?}", self.task_id)?;
                    // tokio called with no tokio runtime: one more line
                    // naming what replaces it (`tokio_hint.rs`).
                    match super::tokio_hint::for_message(message) {
                        Some(hint) => write!(f, "\n{hint}"),
                        None => Ok(()),
                    }
                }
                None => write!(f, "task {} panicked", self.task_id),
            },
        }
    }
}

impl fmt::Debug for JoinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.repr {
            Repr::Cancelled => write!(f, "JoinError::Cancelled({})", self.task_id),
            Repr::Panic(_, message) => match message {
                Some(message) => write!(f, "JoinError::Panic({}, {message:?})", self.task_id),
                None => write!(f, "JoinError::Panic({}, ..)", self.task_id),
            },
        }
    }
}

impl std::error::Error for JoinError {}

impl From<JoinError> for std::io::Error {
    fn from(error: JoinError) -> Self {
        std::io::Error::other(error)
    }
}

// Checked at compile time: the handles and the error cross threads.
const _: fn() = || {
    fn thread_safe<T: Send + Sync>() {}
    thread_safe::<JoinHandle<()>>();
    thread_safe::<AbortHandle>();
    thread_safe::<JoinError>();
};
