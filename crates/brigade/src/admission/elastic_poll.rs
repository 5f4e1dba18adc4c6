//! Elastic admission as a worker applies it, poll by poll: the worker's own
//! state for the poll it runs ([`ElasticPoll`]), the cap on coarse polls
//! running at once ([`CoarseSlots`]), and what admission keeps per task, in
//! its header ([`ElasticState`]).
//!
//! The worker loop and the yield path call the policy at three points, and
//! nowhere else touch elastic state:
//! - [`ElasticPoll::before_poll`]: admission (a grant, and a coarse slot for
//!   a coarse task), or the admission queue;
//! - [`ElasticPoll::at_yield_point`] (`yield_if_busy()`'s slow path, which
//!   every call in an elastic poll takes): whether the task must give way,
//!   its grant used up or the task just turned coarse;
//! - [`ElasticPoll::after_poll`]: charges the poll to the grant, settling a
//!   used-up grant with the bucket.
//!
//! Besides, a stretch that a spare worker covered while this thread was
//! blocked off the CPU (`runtime/compensation/`) is not charged:
//! [`ElasticPoll::not_charged`].
//!
//! ## Coarse tasks
//! A task is coarse while it has been seen running longer than the latency
//! target between two yield points (see [`ElasticState::note_long_stretch`]).
//! `yield_if_busy` protects foreground latency only at yield points: an
//! elastic task that goes 5 ms between them holds its worker for 5 ms, and
//! when such polls occupy every worker, a foreground task that becomes
//! runnable waits for the first of them to end. The token bucket bounds the
//! CPU elastic work gets on average, not how many workers it holds at one
//! instant, so the controller could only find the right limit by
//! overshooting the target again and again. Capping coarse polls at
//! `workers − 1` (at least one) leaves a worker for the foreground whatever
//! the limit. Elastic tasks that yield often are not capped: `yield_if_busy`
//! already gets them out of the way, so they can still use every worker.

use std::cell::Cell;
use std::time::Duration;

use super::Admission;
use crate::sync::{AtomicUsize, Ordering};
use crate::task::{ElasticState, Runnable};

/// One worker's state for the elastic poll it runs: the worker's own
/// (`Cell`s, one thread); the task's own state is [`ElasticState`].
pub(crate) struct ElasticPoll {
    /// When the poll started (runtime-clock ns).
    started: Cell<u64>,
    /// When the current stretch without a yield point began.
    stretch_started: Cell<u64>,
    /// The poll holds a coarse slot ([`CoarseSlots`]).
    holds_coarse_slot: Cell<bool>,
    /// Nanoseconds of the poll that a spare covered while this thread used
    /// no CPU: not charged to the grant.
    uncharged: Cell<u64>,
}

impl ElasticPoll {
    pub(crate) fn new() -> Self {
        ElasticPoll {
            started: Cell::new(0),
            stretch_started: Cell::new(0),
            holds_coarse_slot: Cell::new(false),
            uncharged: Cell::new(0),
        }
    }

    /// Admits the task for a poll starting at `now()`, or queues it for
    /// admission (`Err`): then the caller has pushed into a shared queue
    /// and must check for shutdown (see `ShutdownFlag`).
    pub(crate) fn before_poll(
        &self,
        admission: &Admission,
        runnable: Runnable,
        now: impl FnOnce() -> u64,
    ) -> Result<Runnable, ()> {
        let (runnable, coarse_slot) = admission.admit_or_enqueue(runnable)?;
        let now = now();
        self.started.set(now);
        self.stretch_started.set(now);
        self.holds_coarse_slot.set(coarse_slot);
        self.uncharged.set(0);
        Ok(runnable)
    }

    /// When the admitted poll started.
    pub(crate) fn started(&self) -> u64 {
        self.started.get()
    }

    /// At a yield point at `now`: whether the task must give way, so that
    /// its next poll goes back through admission (its grant is used up, or
    /// it has just turned coarse and must take a coarse slot).
    pub(crate) fn at_yield_point(
        &self,
        admission: &Admission,
        task: &ElasticState,
        now: u64,
    ) -> bool {
        self.end_stretch(admission, task, now);
        let charged = now
            .saturating_sub(self.started.get())
            .saturating_sub(self.uncharged.get());
        let used = task.grant_used().unwrap_or(0) + charged;
        used >= grant_nanos(admission) || (task.is_coarse() && !self.holds_coarse_slot.get())
    }

    /// After the poll, which ended at `ended`: gives back the coarse slot,
    /// and charges the poll to the grant; a used-up grant is settled with
    /// the token bucket and the next poll needs a new admission. (If
    /// another worker already picked the task up again, the two updates may
    /// interleave: the accounting is then off by one poll, never unsafe.)
    pub(crate) fn after_poll(&self, admission: &Admission, task: &ElasticState, ended: u64) {
        if self.holds_coarse_slot.replace(false) {
            admission.end_coarse_poll();
        }
        self.end_stretch(admission, task, ended);
        let poll_nanos = ended
            .saturating_sub(self.started.get())
            .saturating_sub(self.uncharged.get());
        admission.add_cpu_time(poll_nanos);
        let grant = grant_nanos(admission);
        let used = task.grant_used().unwrap_or(0).saturating_add(poll_nanos);
        if used >= grant {
            // An idle worker's grant came from no tokens, so it settles none.
            if !task.take_idle_grant() {
                admission.settle(Duration::from_nanos(used));
            }
            task.set_grant_used(None);
            task.end_stretch_grant(grant);
        } else {
            task.set_grant_used(Some(used));
        }
    }

    /// `nanos` of the current poll, up to `now`, were covered by a spare
    /// while this thread used no CPU: neither charged to the grant nor part
    /// of a long stretch.
    pub(crate) fn not_charged(&self, nanos: u64, now: u64) {
        self.uncharged
            .set(self.uncharged.get().saturating_add(nanos));
        self.stretch_started
            .set(self.stretch_started.get().saturating_add(nanos).min(now));
    }

    /// Ends the current stretch at `now` (a yield point or the end of the
    /// poll): a stretch longer than the latency target counts towards
    /// making the task coarse (see "Coarse tasks" in the module docs).
    fn end_stretch(&self, admission: &Admission, task: &ElasticState, now: u64) {
        let stretch = now.saturating_sub(self.stretch_started.replace(now));
        let config = admission.config();
        if stretch > config.target.as_nanos() as u64 {
            task.note_long_stretch(stretch, grant_nanos(admission));
        }
    }
}

fn grant_nanos(admission: &Admission) -> u64 {
    admission.config().grant.as_nanos() as u64
}

/// The count of coarse polls in progress and its cap (see "Coarse tasks" in
/// the module docs).
///
/// ## Protocol
/// - A worker takes a slot ([`try_acquire`](Self::try_acquire), a
///   compare-and-swap below the cap, so racing workers never exceed it)
///   before it polls a coarse task. If none is free the task is deferred to
///   the admission queue under the admission mutex, keeping its grant, and
///   the monitor is notified.
/// - After the poll the worker releases the slot, then locks the admission
///   mutex to see whether tasks wait; if so it notifies the monitor after
///   unlocking.
/// - The monitor looks at the slots and the queue with that mutex held and
///   waits on the condvar. A release whose lock comes first is visible to
///   the monitor's check; one whose lock comes later finds the task queued
///   and notifies the waiting monitor. Either way no deferred task is left
///   waiting for a slot that is free (modelled with loom below). Coarse
///   polls are at least a latency target long, so one lock per poll is
///   nothing.
pub(crate) struct CoarseSlots {
    /// Coarse polls in progress. Only a count: the admission mutex orders
    /// it against the queue (see the protocol above), so `Relaxed` is enough.
    running: AtomicUsize,
    cap: usize,
}

impl CoarseSlots {
    /// Slots for a runtime with `workers` workers: one fewer than the
    /// workers, and at least one.
    pub(crate) fn new(workers: usize) -> Self {
        CoarseSlots {
            running: AtomicUsize::new(0),
            cap: workers.saturating_sub(1).max(1),
        }
    }

    /// Takes a slot if one is free.
    pub(crate) fn try_acquire(&self) -> bool {
        let mut running = self.running.load(Ordering::Relaxed);
        while running < self.cap {
            match self.running.compare_exchange_weak(
                running,
                running + 1,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return true,
                Err(actual) => running = actual,
            }
        }
        false
    }

    /// Gives a slot back. The caller then checks the admission queue under
    /// its mutex (see the protocol above).
    pub(crate) fn release(&self) {
        self.running.fetch_sub(1, Ordering::Relaxed);
    }

    /// Slots free now.
    #[cfg_attr(loom, allow(dead_code))] // The monitor thread uses it; loom models leave the monitor out.
    pub(crate) fn free(&self) -> usize {
        self.cap
            .saturating_sub(self.running.load(Ordering::Relaxed))
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn one_worker_fewer_than_the_workers_and_at_least_one() {
        for (workers, cap) in [(1, 1), (2, 1), (4, 3), (16, 15)] {
            let slots = CoarseSlots::new(workers);
            for _ in 0..cap {
                assert!(slots.try_acquire());
            }
            assert!(!slots.try_acquire(), "{workers} workers allow {cap}");
            assert_eq!(slots.free(), 0);
            slots.release();
            assert_eq!(slots.free(), 1);
            assert!(slots.try_acquire());
        }
    }
}

#[cfg(all(test, loom))]
mod loom_models;
