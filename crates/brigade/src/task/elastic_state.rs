//! A task's elastic admission state ([`ElasticState`]), kept in its header
//! inside its [`ClassState`](super::class::ClassState): what admission
//! (`admission/`) keeps per task.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// `grant_used` of a task that holds no grant.
const NO_GRANT: u64 = u64::MAX;

/// The elastic admission state of one task: its current grant and whether
/// it is coarse. Lives in the task's header, inside its
/// [`ClassState`](crate::task::class::ClassState).
///
/// Written by the worker polling the task (and by the monitor thread before
/// it re-queues an admitted task); the queue hand-off orders those writes
/// with the next poll's reads, so `Relaxed` is enough. Statistics-style
/// state that takes part in no park/wake protocol, hence `std` atomics.
pub(crate) struct ElasticState {
    /// CPU nanoseconds used of the current grant, or [`NO_GRANT`].
    grant_used: AtomicU64,
    /// Whether the task is coarse: its polls capped by the coarse slots
    /// (`CoarseSlots`, `admission/elastic_poll.rs`).
    coarse: AtomicBool,
    /// Nanoseconds of the current grant spent in stretches longer than the
    /// latency target.
    long_stretch_nanos: AtomicU64,
    /// The current grant was given by a worker with nothing else to run
    /// (`Admission::take_for_idle_worker`), not taken from the bucket.
    idle_grant: AtomicBool,
}

impl ElasticState {
    pub(crate) fn new() -> Self {
        ElasticState {
            grant_used: AtomicU64::new(NO_GRANT),
            coarse: AtomicBool::new(false),
            long_stretch_nanos: AtomicU64::new(0),
            idle_grant: AtomicBool::new(false),
        }
    }

    /// Starts a grant that no tokens paid for (an idle worker's).
    pub(crate) fn start_idle_grant(&self) {
        self.idle_grant.store(true, Ordering::Relaxed);
        self.set_grant_used(Some(0));
    }

    /// Whether the grant that ends now was an idle worker's; clears it.
    pub(crate) fn take_idle_grant(&self) -> bool {
        self.idle_grant.swap(false, Ordering::Relaxed)
    }

    /// CPU used of the current grant, or `None` without a grant.
    pub(crate) fn grant_used(&self) -> Option<u64> {
        let used = self.grant_used.load(Ordering::Relaxed);
        (used != NO_GRANT).then_some(used)
    }

    /// Sets the CPU used of the current grant: `Some(0)` starts one, `None`
    /// ends it.
    pub(crate) fn set_grant_used(&self, used: Option<u64>) {
        self.grant_used
            .store(used.unwrap_or(NO_GRANT), Ordering::Relaxed);
    }

    /// Whether the task counts as coarse: during this grant or the last
    /// one, more than half the grant went in stretches longer than the
    /// latency target between two yield points.
    pub(crate) fn is_coarse(&self) -> bool {
        self.coarse.load(Ordering::Relaxed)
    }

    /// Books a stretch between yield points that was longer than the
    /// latency target. Half the grant, not one stretch, makes a task
    /// coarse: a thread the OS takes off its CPU for a few milliseconds
    /// makes an occasional long stretch out of well-yielding work.
    pub(crate) fn note_long_stretch(&self, nanos: u64, grant_nanos: u64) {
        let total = self.long_stretch_nanos.load(Ordering::Relaxed) + nanos;
        self.long_stretch_nanos.store(total, Ordering::Relaxed);
        if total >= grant_nanos / 2 {
            self.coarse.store(true, Ordering::Relaxed);
        }
    }

    /// At the end of a grant: the task stays coarse only if this grant made
    /// it so, so a task that mends its ways is uncapped again after one
    /// clean grant.
    pub(crate) fn end_stretch_grant(&self, grant_nanos: u64) {
        let total = self.long_stretch_nanos.swap(0, Ordering::Relaxed);
        // `total > 0`: a grant under 2 ns would otherwise make every task
        // coarse.
        self.coarse
            .store(total > 0 && total >= grant_nanos / 2, Ordering::Relaxed);
    }
}
