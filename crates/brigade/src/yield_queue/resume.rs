//! How a task that stepped aside comes back: a worker takes the entry that
//! has waited longest, when it has nothing else to do ([`take_next`]) or
//! when the queue is overdue ([`rescue_overdue`]), and runs the task next.
//!
//! A deferred wake-up is delivered by the worker that took it, in a mode
//! that hands the woken task straight back to it (`Core::deliver_own_wake`)
//! instead of queueing it, so the task runs on this worker at once. The
//! wake counts as the task's own, deferred (a self-wake, for its class).

use crate::runtime::worker::Core;
use crate::task::Runnable;

use super::{Entry, Waiting};

/// Step 5 of `Core::next_task`: resumes the task that has waited longest in
/// this worker's shard of the yield queue, or else in another shard. A wake-up that brings no task (its task was woken, and
/// run, already) is used up and the next one tried.
pub(crate) fn take_next(core: &Core) -> Option<Runnable> {
    let shared = core.shared();
    while let Some(waiting) = shared.yield_queue.pop_for(core.index()) {
        let (runnable, now) = resume(core, waiting);
        shared.yield_rescue.note_served(now);
        if runnable.is_some() {
            return runnable;
        }
    }
    None
}

/// The starvation bound (`rescue.rs`), at the first tick of an epoch: takes
/// the head of the yield queue if it is overdue and this worker wins the
/// rescue, and gives the task a slice.
pub(crate) fn rescue_overdue(core: &Core) -> Option<Runnable> {
    let shared = core.shared();
    let head_at = shared.yield_queue.head_at()?;
    let now = shared.clock_nanos();
    if !shared.yield_rescue.try_claim(head_at, now) {
        return None;
    }
    let runnable = resume(core, shared.yield_queue.pop_oldest()?).0?;
    core.slice.start(runnable.metadata().id(), now);
    tracing::trace!(
        target: "brigade::yield_queue",
        task = runnable.metadata().id(),
        waited_ms = now.saturating_sub(head_at) / 1_000_000,
        "overdue task rescued from the yield queue"
    );
    Some(runnable)
}

/// Takes a waiting task out for `core` to run, recording how long it
/// waited (and returning the time now).
fn resume(core: &Core, waiting: Waiting) -> (Option<Runnable>, u64) {
    let shared = core.shared();
    let now = shared.clock_nanos();
    shared
        .metrics
        .worker(core.index())
        .yield_delay
        .record(now.saturating_sub(waiting.since));
    let runnable = match waiting.entry {
        Entry::Run(runnable) => Some(runnable),
        Entry::Wake(wake) => core.deliver_own_wake(|| wake.wake()),
    };
    (runnable, now)
}
