//! A busy worker's check that the idle worker it trusts really serves: on
//! a crowded host the kernel may wake the worker watching the driver and
//! not run it for a scheduler tick (`driver/poll/mod.rs`, "the crowded-host
//! hand-off"). `yield_if_busy()`'s fast path (`recheck_idle`, about once per
//! epoch) and the worker's own epoch polls (`poll_for_epoch`) ask it.

use super::Core;
use crate::epoch::epoch_of;
use crate::runtime::scheduler::placement::WakeMode;

impl Core {
    /// The epoch poll of a busy worker (`Driver::poll_for_epoch`), or, while
    /// a worker watches the driver, the check that it serves
    /// ([`Self::serve_unserved`]). Returns how many tasks it woke.
    pub(super) fn poll_for_epoch(&self, epoch: u64) -> usize {
        if self.shared.driver.is_watched() {
            usize::from(self.serve_unserved(epoch))
        } else {
            self.shared.driver.poll_for_epoch(epoch)
        }
    }

    /// The fast path's amortised check, once its clock back-off says to
    /// read the clock (`context::note_fast_path_point`): first, a child the
    /// running poll spawned without a notification is announced (with a
    /// worker idle the fast path lets the poll go on, so nobody else would:
    /// `worker/spawned.rs`); then, at the first read of
    /// each epoch, whether work waits for an idle worker that has not run
    /// ([`Self::serve_unserved`]). Returns whether that left tasks in this
    /// worker's deque, for the running task to step aside for.
    pub(crate) fn recheck_idle(&self) -> bool {
        // A child its poll spawned without a word (`worker/spawned.rs`).
        self.flush_deferred_notify();
        // The back-off is re-armed at every read it asked for.
        let now = self.shared.clock_nanos();
        self.shared
            .metrics
            .worker(self.index)
            .poll_record
            .gate_read(now);
        if self.current_poll.in_block_in_place.get() {
            // A nested executor's poll: this thread is blocked for a while,
            // so it must not take work for its deque.
            return false;
        }
        let epoch = epoch_of(now);
        let new_epoch = self.epochs.idle_check_epoch.replace(epoch) != epoch;
        new_epoch && self.serve_unserved(epoch) && !self.local_is_empty()
    }

    /// Serves, on this worker, I/O and timers pending while the worker
    /// watching the driver has harvested nothing for `UNSERVED_EPOCHS`: the
    /// kernel has woken it but not run it (`Driver::harvest_if_unserved`):
    /// the woken tasks come to this worker's deque, without waking anyone:
    /// the idle worker that a notification would wake is the one the kernel
    /// does not run, and it would come late to steal work this worker is
    /// about to run (busy workers serve until it does instead: `Relief`).
    /// Returns whether it found any.
    ///
    /// Off (`Builder::crowded_host_handoff(false)`): never; the watcher
    /// serves whenever the kernel runs it.
    fn serve_unserved(&self, epoch: u64) -> bool {
        if !self.shared.config.crowded_host_handoff {
            return false;
        }
        let woken = self.with_wake_mode(WakeMode::Silent, || {
            self.shared
                .driver
                .harvest_if_unserved(&self.unserved, epoch, self.index)
        });
        if woken == 0 {
            return false;
        }
        self.shared.metrics.count_idle_not_serving();
        tracing::debug!(
            target: "brigade::driver",
            worker = self.index,
            woken,
            "idle worker not serving: a busy worker serves its I/O and timers"
        );
        true
    }
}
