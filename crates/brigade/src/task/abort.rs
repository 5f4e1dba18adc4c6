//! `AbortHandle`: the right to cancel a task, without its output.

use std::fmt;
use std::ptr::NonNull;
use std::task::Waker;

use super::TaskMeta;

/// An owned permission to cancel a task, without awaiting its output: what
/// [`JoinHandle::abort_handle`](crate::JoinHandle::abort_handle) and
/// [`JoinSet::spawn`](crate::task::JoinSet::spawn) return (tokio's name and
/// semantics). Cloning it, dropping it and keeping it past the task's end
/// or the runtime's are all fine.
///
/// # Examples
///
/// ```
/// use brigade::task::JoinSet;
///
/// let rt = brigade::Runtime::new()?;
/// rt.block_on(async {
///     let mut set = JoinSet::new();
///     let stuck = set.spawn(std::future::pending::<()>());
///     stuck.abort();
///     let outcome = set.join_next().await.unwrap();
///     assert!(outcome.unwrap_err().is_cancelled());
///     assert!(stuck.is_finished());
/// });
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Clone)]
pub struct AbortHandle {
    /// `None` once the task was known to be gone when the handle was made.
    task: Option<TaskRef>,
}

/// A reference to a task's allocation, and its header.
#[derive(Clone)]
struct TaskRef {
    /// A waker of the task, only to keep its allocation (and so the
    /// header) alive; never woken.
    _keep_alive: Waker,
    meta: NonNull<TaskMeta>,
}

// SAFETY: `Waker` is `Send + Sync`, and `meta` is only turned into a
// `&TaskMeta` (`TaskMeta` is `Sync`) while the waker keeps it alive.
unsafe impl Send for TaskRef {}
// SAFETY: as above.
unsafe impl Sync for TaskRef {}

impl AbortHandle {
    /// A handle to the task whose header is `meta`, kept alive by
    /// `keep_alive` (a waker of the same task); `None`: the task is gone.
    pub(crate) fn new(meta: &TaskMeta, keep_alive: Option<Waker>) -> Self {
        AbortHandle {
            task: keep_alive.map(|waker| TaskRef {
                _keep_alive: waker,
                meta: NonNull::from(meta),
            }),
        }
    }

    fn meta(&self) -> Option<&TaskMeta> {
        // SAFETY: see `TaskRef`: the waker it holds keeps the allocation
        // that contains the header.
        self.task.as_ref().map(|task| unsafe { task.meta.as_ref() })
    }

    /// Cancels the task, as [`JoinHandle::abort`](crate::JoinHandle::abort)
    /// does. Does nothing if it has finished.
    pub fn abort(&self) {
        if let Some(meta) = self.meta() {
            super::join::abort_task(meta);
        }
    }

    /// Returns `true` once the task has finished (completed, panicked or
    /// been cancelled): its future has been dropped.
    pub fn is_finished(&self) -> bool {
        self.meta().is_none_or(TaskMeta::future_is_dropped)
    }
}

impl fmt::Debug for AbortHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AbortHandle")
            .field("task", &self.meta().map(TaskMeta::id))
            .field("finished", &self.is_finished())
            .finish()
    }
}
