//! The elastic policy, as a worker applies it to the poll it runs. The
//! worker loop and the yield path call it at three points, and nowhere else
//! touch elastic state:
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
//! The state here is the worker's own (`Cell`s, one thread); the task's own
//! state is [`ElasticState`], in its header.

use std::cell::Cell;
use std::time::Duration;

use super::{Admission, ElasticState};
use crate::task::Runnable;

/// One worker's state for the elastic poll it runs.
pub(crate) struct ElasticPoll {
    /// When the poll started (runtime-clock ns).
    started: Cell<u64>,
    /// When the current stretch without a yield point began.
    stretch_started: Cell<u64>,
    /// The poll holds a coarse slot (`slots.rs`).
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
    /// and must check for shutdown (see `ShutdownState`).
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
            admission.settle(Duration::from_nanos(used));
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
    /// making the task coarse (see `slots.rs`).
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
