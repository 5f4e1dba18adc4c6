//! C6 of the policy (`policy.rs`): what a worker answers when the running
//! poll has spent its cooperative budget (`task/coop.rs`), and how the
//! yield it forces is scheduled.
//!
//! ## The answer
//! Yield if work waits for this worker, with the checks of
//! `yield_if_busy()`'s slow path (`step_aside.rs`) that concern this
//! worker: the runtime shuts down or the task was aborted; on a
//! current-thread runtime, the `block_on` future was woken or a task
//! yielded this turn; a task waits in this worker's deque or run-next slot,
//! or in the injector; and, once per epoch (the slow path's gate), the
//! epoch's driver poll found a due timer or I/O and woke a task here.
//! A `LocalSet`'s own queued tasks count too (the set says so:
//! `task/local.rs`). Other workers' deques are not looked at: their own tasks' budgets serve
//! them. An idle worker does not change the answer either: a task waiting
//! *here* waits for this worker whatever the others do.
//!
//! ## The yield
//! The resource wakes the task and returns `Pending`; the self-wake reaches
//! the schedule hook after the poll (`Shared::schedule_on`), which sees
//! [`Core::take_budget_yield`] and puts the task at the back of this
//! worker's deque (A4's place, never the run-next slot), with the injector
//! looked at first, and without classifying the wake (A2): the yield is
//! the runtime's, so it neither counts towards demotion nor steps a
//! background task aside into the yield queue. The flag is set only during
//! a task's poll and cleared at the start of every poll, so it can only
//! mark that task's own wake (a self-wake is scheduled right after the poll
//! that woke it, on the thread that ran it).

use std::collections::HashSet;
use std::panic::Location;
use std::sync::Mutex;

use super::Core;
use crate::runtime::context;

impl Core {
    /// The running poll spent its budget (`context::Worker::budget_spent`):
    /// whether work waits for this worker, and if so, marks the task's
    /// coming self-wake as the budget's yield and counts it.
    pub(crate) fn budget_spent(&self, local_set_waits: bool) -> bool {
        let shared = &self.shared;
        if !shared.config.coop_budget || self.current_poll.in_block_in_place.get() {
            // Off (tests only); or a nested executor's poll, whose thread
            // has handed its place to a spare.
            return false;
        }
        let task = context::with_current_task(|task| {
            task.map(|(meta, _)| (meta.location(), meta.is_cancelled()))
        });
        let waits = local_set_waits
            || task.is_some_and(|(_, cancelled)| cancelled)
            || shared.is_shutdown()
            || self.busy_on_current_thread()
            || !self.local_is_empty()
            || !shared.injector.is_empty()
            || (self.epochs.yield_gate.is_new_epoch(|| shared.clock_nanos())
                && self.poll_for_epoch(self.epochs.yield_gate.epoch()) > 0
                && !self.local_is_empty());
        if !waits {
            return false;
        }
        shared
            .metrics
            .worker(self.index())
            .count_budget_forced_yield();
        if let Some((location, _)) = task {
            self.current_poll.budget_yield.set(true);
            if shared.budget_reports.is_first(location) {
                report_first(location);
            }
        }
        true
    }

    /// Whether the self-wake being scheduled is the budget's yield (see
    /// the module docs); clears the mark.
    #[inline]
    pub(crate) fn take_budget_yield(&self) -> bool {
        self.current_poll.budget_yield.replace(false)
    }
}

/// The spawn locations whose tasks have been made to yield by the budget,
/// for the one `tracing` event per location.
#[derive(Default)]
pub(crate) struct BudgetReports {
    seen: Mutex<HashSet<&'static Location<'static>>>,
}

impl BudgetReports {
    /// Whether this is the first forced yield of a task spawned at
    /// `location`. A lock on the slow path only: a forced yield already
    /// costs a reschedule.
    fn is_first(&self, location: &'static Location<'static>) -> bool {
        let mut seen = self
            .seen
            .lock()
            .unwrap_or_else(|poison| poison.into_inner());
        seen.insert(location)
    }
}

#[cold]
fn report_first(location: &'static Location<'static>) {
    tracing::debug!(
        target: "brigade::coop",
        spawned_at = %location,
        "cooperative budget spent while work waits: the task yields (reported once per spawn location)"
    );
}
