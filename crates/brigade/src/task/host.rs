//! What a task needs from the scheduler that runs it, and nothing more.
//!
//! Code under `task/` sees its runtime only through [`TaskHost`], which the
//! runtime's shared state implements (`runtime/task_host.rs`): the
//! registry of live tasks, the attention holds an abort takes, and the
//! eviction of an aborted task from the yield queue. A task's header points
//! at its host without owning it (see `TaskMeta::host`).

use super::registry::Registry;

/// The scheduler as the task layer sees it.
pub(crate) trait TaskHost: Send + Sync {
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
