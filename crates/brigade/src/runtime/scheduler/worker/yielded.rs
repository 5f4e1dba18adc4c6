//! Taking back a task that stepped aside: a worker takes an entry out of
//! the yield queue when it has nothing else to do
//! ([`Core::take_back_yielded`]) or when the queue is overdue
//! ([`Core::rescue_overdue`]), and runs the task next.
//!
//! With nothing else to do, a worker takes the head of its own shard,
//! unless another shard's head has waited longer by more than an epoch (or
//! its own shard is empty): then the head that has waited longest anywhere,
//! except a lone entry that its own worker may still take back
//! (`YieldQueue::pop_for` and `may_take` say why). A rescue takes the head
//! that has waited longest anywhere.
//!
//! A deferred wake-up is delivered by the worker that took it, in a mode
//! that hands the woken task straight back to it (`WakeMode::HandBack`)
//! instead of queueing it, so the task runs on this worker at once. The
//! wake counts as the task's own, deferred (a self-wake, for its class).

use super::Core;
use crate::runtime::scheduler::placement::WakeMode;
use crate::task::Runnable;
use crate::yield_queue::{Entry, Waiting};

impl Core {
    /// B9 of the policy (`policy.rs`), from `Core::next_task`: takes back a task from the yield queue
    /// (see the module docs for which). A wake-up that brings no task (its
    /// task was woken, and run, already) is used up and the next one tried.
    /// `now`: the runtime clock read by the caller just before (one read
    /// per round trip through the queue instead of two).
    pub(super) fn take_back_yielded(&self, now: u64) -> Option<Runnable> {
        let shared = self.shared();
        // Other shards' heads are compared once per epoch (`pop_for`).
        let epoch = crate::epoch::epoch_of(now);
        let look_elsewhere = self.epochs.yield_queue_looked.replace(epoch) != epoch;
        while let Some(waiting) = shared
            .yield_queue
            .pop_for(self.index(), look_elsewhere, now)
        {
            let runnable = self.take_back(waiting, now);
            shared.yield_rescue.note_served(now);
            if runnable.is_some() {
                return runnable;
            }
        }
        None
    }

    /// B2 of the policy (`policy.rs`), at the first tick of an epoch: a
    /// task taken from the yield queue ahead of this worker's own deque, by
    /// a rescue of an overdue head ([`rescue_starving`](Self::rescue_starving))
    /// or else a turn of the background floor, if one is set and due
    /// (`worker/floor.rs`).
    pub(super) fn rescue_overdue(&self) -> Option<Runnable> {
        self.rescue_starving().or_else(|| self.floor_turn())
    }

    /// The starvation bound (`yield_queue/rescue.rs`): takes the head of the
    /// yield queue if it is overdue and this worker wins the rescue, and
    /// gives the task a slice.
    fn rescue_starving(&self) -> Option<Runnable> {
        let shared = self.shared();
        let head_at = shared.yield_queue.head_at()?;
        let now = shared.clock_nanos();
        if !shared.yield_rescue.try_claim(head_at, now) {
            return None;
        }
        let runnable = self.take_back(shared.yield_queue.pop_oldest()?, now)?;
        self.turns.slice.start(runnable.metadata().id(), now);
        tracing::trace!(
            target: "brigade::yield_queue",
            task = runnable.metadata().id(),
            waited_ms = now.saturating_sub(head_at) / 1_000_000,
            "overdue task rescued from the yield queue"
        );
        Some(runnable)
    }

    /// Takes a waiting task out for this worker to run, recording how long
    /// it waited until `now`; its poll is background time for the floor
    /// (`worker/floor.rs`).
    pub(super) fn take_back(&self, waiting: Waiting, now: u64) -> Option<Runnable> {
        let shared = self.shared();
        shared
            .metrics
            .worker(self.index())
            .yield_delay
            .record(now.saturating_sub(waiting.since));
        let runnable = match waiting.entry {
            Entry::Run(runnable) => Some(runnable),
            Entry::Wake(wake) => self.deliver_own_wake(|| wake.wake()),
        };
        if runnable.is_some() {
            self.floor.background_poll_starts(now);
        }
        runnable
    }

    /// Delivers a deferred wake-up of a task's own waker (`wake`) so that
    /// the woken task is handed straight back to this worker to run next
    /// ([`WakeMode::HandBack`]) rather than queued; `None` if the wake-up
    /// scheduled nothing (the task had been woken and run meanwhile).
    fn deliver_own_wake(&self, wake: impl FnOnce()) -> Option<Runnable> {
        self.with_wake_mode(WakeMode::HandBack, wake);
        self.wakes.handed_back.take()
    }
}
