//! Running one task taken from a queue: an aborted task is dropped, an
//! elastic one goes through admission first (C3 of the policy,
//! `policy.rs`), and the poll is timed, counted and shown to the long-poll
//! detector.

use super::Core;
use crate::runtime::context;
use crate::task::task_ref::TaskRef;
use crate::task::{Runnable, TaskMeta};

impl Core {
    /// Runs one task taken from a queue: drops it if it was aborted, sends
    /// an elastic task through admission first, and polls it.
    pub(super) fn run_task(&self, runnable: Runnable) {
        self.poll_or_drop(runnable);
        self.floor.poll_ended(|| self.shared.clock_nanos());
        // A child spawned into the empty deque without a notification is
        // the next task this worker takes (`worker/spawned.rs`).
        self.wakes.notify_deferred.set(false);
    }

    /// [`run_task`](Self::run_task) proper.
    fn poll_or_drop(&self, runnable: Runnable) {
        if runnable.metadata().is_cancelled() {
            // Dropping the runnable drops the future; the JoinHandle then
            // resolves as cancelled.
            drop(runnable);
            return;
        }
        // Taken first: a task that goes to wait for admission drops its
        // sample, since time spent throttled is not scheduling latency.
        let sampled_at = runnable.metadata().take_scheduled_at();
        if runnable.metadata().elastic().is_some() {
            if let Some(admitted) = self.admit_elastic(runnable) {
                self.poll_elastic(admitted, sampled_at);
            }
        } else {
            self.poll_plain(runnable, sampled_at);
        }
    }

    /// Elastic admission (`admission/elastic_poll.rs`): the task, if it may run
    /// now; `None` if it went to wait for admission.
    fn admit_elastic(&self, runnable: Runnable) -> Option<Runnable> {
        let shared = &self.shared;
        let now = || shared.clock_nanos();
        let fits_idle_worker = shared.admission.fits_idle_worker(runnable.metadata());
        match self
            .current_poll
            .elastic
            .before_poll(&shared.admission, runnable, now)
        {
            Ok(admitted) => Some(admitted),
            Err(()) => {
                // Queued for admission: a push into a shared queue (see
                // `ShutdownFlag`; the admission lock orders it with the
                // shutdown's drain).
                if shared.shutdown.is_set_after_push() {
                    crate::runtime::scheduler::shutdown_flag::drain_queues(shared);
                }
                // A sleeping worker may run it on an idle grant.
                if fits_idle_worker {
                    shared.idle.notify_one();
                }
                None
            }
        }
    }

    /// Polls a task that is not elastic. `sampled_at`: when it became
    /// runnable, if this schedule is sampled (its poll is then timed too).
    #[inline]
    fn poll_plain(&self, runnable: Runnable, sampled_at: Option<u64>) {
        let started = sampled_at.map(|_| self.shared.clock_nanos());
        self.begin_poll(runnable.metadata(), sampled_at, started);
        // `run` cannot unwind: the harness catches panics from the future's
        // `poll` and destructor. No `end_cover` here, to keep plain polls
        // free of it: the monitor ends a cover whose stretch ended at its
        // next sample (`Compensation::end_stale_covers`), and a worker that
        // parks ends its own.
        runnable.run();
        self.end_poll(sampled_at, started);
    }

    /// Polls an admitted elastic task with `yield_if_busy()`'s fast path
    /// off, then settles its CPU grant (`admission/elastic_poll.rs`).
    fn poll_elastic(&self, runnable: Runnable, sampled_at: Option<u64>) {
        let shared = &self.shared;
        let started = self.current_poll.elastic.started();
        self.floor.background_poll_starts(started);
        self.begin_poll(runnable.metadata(), sampled_at, Some(started));
        // Keeps the task allocation (and its header) alive after `run`.
        let task = TaskRef::of(&runnable);
        context::with_slow_path_forced(|| runnable.run());
        self.end_cover();
        let ended = shared.clock_nanos();
        if let Some(elastic) = task.meta().elastic() {
            self.current_poll
                .elastic
                .after_poll(&shared.admission, elastic, ended);
        }
        drop(task);
        self.end_poll(sampled_at, Some(started));
    }

    /// Before a poll: records the scheduling latency of a sampled schedule,
    /// counts the poll and shows it to the long-poll detector.
    #[inline]
    fn begin_poll(&self, meta: &TaskMeta, sampled_at: Option<u64>, started: Option<u64>) {
        let counters = self.shared.metrics.worker(self.index);
        if let (Some(at), Some(now)) = (sampled_at, started) {
            counters.scheduling_latency.record(now.saturating_sub(at));
        }
        self.current_poll.started.set(started.unwrap_or(0));
        self.current_poll.in_poll.set(true);
        self.current_poll.budget_yield.set(false);
        counters.count_poll();
        counters.poll_record.begin(meta.location());
    }

    /// After a poll: ends it for the long-poll detector and records the
    /// duration of a sampled one.
    #[inline]
    fn end_poll(&self, sampled_at: Option<u64>, started: Option<u64>) {
        self.current_poll.in_poll.set(false);
        // A mark its own wake did not take (`worker/budget.rs`).
        self.current_poll.budget_yield.set(false);
        let counters = self.shared.metrics.worker(self.index);
        counters.poll_record.end();
        if let (Some(_), Some(started)) = (sampled_at, started) {
            counters
                .poll_duration
                .record(self.shared.clock_nanos().saturating_sub(started));
        }
    }
}
