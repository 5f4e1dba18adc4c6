//! What a task needs from the scheduler that runs it, and nothing more.
//!
//! Code under `task/` sees its runtime only through [`TaskHost`], which the
//! runtime's shared state implements (`runtime/scheduler/schedule.rs`): where a woken
//! task goes, the registry of live tasks, the attention holds an abort
//! takes, and the eviction of an aborted task from the yield queue. A
//! task's header holds its one reference to its host (`TaskMeta::host`),
//! and [`schedule`], the schedule function of spawned tasks, reaches the
//! host through it.

use async_task::ScheduleInfo;

use super::Runnable;
use super::registry::Registry;

/// The schedule function of spawned tasks (`WithInfo(schedule)`): hands
/// the woken task to the host in its header.
///
/// Why a function, not a closure that captures the host: `async-task` wraps
/// every call of a schedule function that captures state in a temporary
/// waker, to keep the task allocation (where that state lives) alive for
/// the call: an increment and a decrement of the task's reference count,
/// two atomic read-modify-writes per wake-up. A function captures nothing,
/// so `async-task` calls it directly, and it keeps the task alive itself
/// only where that can matter. The call may drop the last `Runnable` of a
/// task (a wake-up after shutdown cancels it), and with it the header's
/// reference to the host, perhaps the last one. On a thread that holds its
/// own reference to the host for as long as it runs (the host's workers:
/// [`TaskHost::schedule_if_held`]), that cannot free the host during the
/// call; anywhere else a waker of the task, taken before the call
/// ([`TaskHost::schedule`]) and dropped after it, keeps the task and so the
/// host alive.
pub(crate) fn schedule(runnable: Runnable, info: ScheduleInfo) {
    let host = runnable.metadata().host_ptr();
    // SAFETY: the host is alive now: the header holds an `Arc` of it and
    // `runnable` keeps the header alive. It stays alive until this
    // reference's last use, at the end of the calls below:
    // `schedule_if_held` takes the task only on a thread that holds its own
    // reference to the host, and otherwise gives it back untouched; then
    // `keep_alive` keeps the task, and so the header's `Arc`, alive until
    // after `schedule`.
    let host = unsafe { host.as_ref() };
    if let Err(runnable) = host.schedule_if_held(runnable, info) {
        let keep_alive = runnable.waker();
        host.schedule(runnable, info);
        drop(keep_alive);
    }
}

/// The scheduler as the task layer sees it.
pub(crate) trait TaskHost: Send + Sync {
    /// Takes a woken task of this host if the calling thread holds a
    /// reference of its own to the host for as long as it runs; otherwise
    /// gives it back untouched (called by [`schedule`] only).
    fn schedule_if_held(&self, runnable: Runnable, info: ScheduleInfo) -> Result<(), Runnable>;

    /// Takes a woken task of this host on any thread; the caller keeps the
    /// host alive for the call (called by [`schedule`] only).
    fn schedule(&self, runnable: Runnable, info: ScheduleInfo);

    /// The runtime's registry of live tasks (`registry.rs`).
    fn registry(&self) -> &Registry;

    /// Takes one attention hold (an abort: `cancel.rs`): until it is given
    /// back, every `yield_if_busy()` in the runtime takes its slow path.
    fn hold_attention(&self);

    /// Gives back one hold taken by [`hold_attention`](Self::hold_attention).
    fn release_attention(&self);

    /// Hands every aborted background task waiting in the yield queue to
    /// the workers, which drop it (after an abort has set the flag).
    fn evict_aborted(&self);
}
