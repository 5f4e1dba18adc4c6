//! `AbortHandle`: the right to cancel a task, without its output.

use std::fmt;

use super::task_ref::TaskRef;
use super::{Id, TaskMeta};

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
    /// Kept apart from `task`, which may be gone.
    id: Id,
    /// `None` once the task was known to be gone when the handle was made.
    task: Option<TaskRef>,
}

impl AbortHandle {
    /// A handle to `task` (its waker is never woken: it only keeps the
    /// header alive); `None`: the task is gone.
    pub(crate) fn new(id: Id, task: Option<TaskRef>) -> Self {
        AbortHandle { id, task }
    }

    /// The task's [`Id`], as [`JoinHandle::id`](crate::JoinHandle::id)
    /// returns it.
    pub fn id(&self) -> Id {
        self.id
    }

    fn meta(&self) -> Option<&TaskMeta> {
        self.task.as_ref().map(TaskRef::meta)
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
            .field("id", &self.id)
            .field("finished", &self.is_finished())
            .finish()
    }
}
