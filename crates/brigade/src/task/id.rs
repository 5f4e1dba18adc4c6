//! [`Id`]: a task's identity, and [`id`] / [`try_id`]: the running task's.

use std::fmt;
use std::num::NonZeroU64;

use super::current;

/// A task's id: unique among all tasks of the process (every runtime's,
/// `spawn_blocking` closures' and [`LocalSet`](super::LocalSet) tasks'
/// included) for as long as the process runs; never reused.
///
/// It is the number the task got when it was spawned, from one counter
/// shared by every runtime, so ids grow in spawn order on one thread; that
/// is all their order says. [`JoinHandle::id`](super::JoinHandle::id),
/// [`AbortHandle::id`](super::AbortHandle::id),
/// [`JoinError::id`](super::JoinError::id) and, inside the task, [`id`]
/// return it; `Display` prints the number, as `tracing` events and
/// [`JoinError`](super::JoinError)'s message do.
///
/// # Examples
///
/// ```
/// let rt = brigade::Runtime::new()?;
/// rt.block_on(async {
///     let task = brigade::spawn(async { brigade::task::id() });
///     let id = task.id();
///     assert_eq!(task.await.unwrap(), id);
///     println!("task {id} finished");
/// });
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Id(NonZeroU64);

impl Id {
    /// The id of the task whose header holds `raw` (never 0: the counter
    /// starts at 1).
    pub(crate) fn from_raw(raw: u64) -> Id {
        Id(NonZeroU64::new(raw).expect("task ids start at 1"))
    }
}

impl fmt::Display for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

/// The id of the task being polled on this thread.
///
/// # Panics
/// Outside a task: in `block_on`'s own future, or on a thread that is not
/// polling one. See [`try_id`].
///
/// # Examples
///
/// ```
/// let rt = brigade::Runtime::new()?;
/// let (inside, outside) = rt.block_on(async {
///     let task = brigade::spawn(async { brigade::task::id() });
///     (task.id(), task.await.unwrap())
/// });
/// assert_eq!(inside, outside);
/// # Ok::<(), std::io::Error>(())
/// ```
#[track_caller]
pub fn id() -> Id {
    try_id().unwrap_or_else(|| {
        panic!(
            "brigade::task::id called outside of a task: call it from inside a spawned \
             task (`brigade::spawn`, `spawn_blocking`, `spawn_local`), or use \
             `brigade::task::try_id`, which returns `None` there"
        )
    })
}

/// The id of the task being polled on this thread, or `None` outside a
/// task (in `block_on`'s own future, or on a thread that polls none).
pub fn try_id() -> Option<Id> {
    current::with_current_task(|task| task.map(|(meta, _)| Id::from_raw(meta.id())))
}
