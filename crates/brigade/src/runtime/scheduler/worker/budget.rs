//! C6 of the policy (`policy.rs`): what a worker answers when the running
//! poll has spent its cooperative budget (`task/coop.rs`), and how the
//! yield it forces is scheduled.
//!
//! ## The answer ([`Core::budget_work_waits`])
//! C6's checks, in its order: work waits if the `LocalSet` running the
//! task has other tasks queued (the set says so: `task/local.rs`); it does
//! not inside `block_in_place` (a nested executor's poll, whose thread has
//! handed its place to a spare), nor while the task holds a rescue slice
//! (`yield_queue/rescue.rs`); it does if the runtime shuts down or the
//! task was aborted, if a task waits in this worker's deque or run-next
//! slot, or in the injector; on a current-thread runtime, if the
//! `block_on` future was woken (for a task) or a task yielded this turn;
//! and, once per epoch (a gate of the budget's own), if the epoch's driver
//! poll found a due timer or I/O and woke a task here. Other workers' deques are not looked at: their own tasks'
//! budgets serve them. An idle worker does not change the answer either:
//! a task waiting *here* waits for this worker whatever the others do.
//!
//! ## The yield ([`Core::budget_yield`])
//! The resource wakes the task's own waker and returns `Pending` (a
//! combinator's or a nested executor's waker never yields for the budget:
//! `task/coop.rs`). The self-wake reaches the schedule hook after the poll
//! (`placement::place`), which sees [`Core::take_budget_yield`] and
//! places the task as a task that yielded (A4: the back of this worker's
//! deque, never the run-next slot, with the injector looked at first; the
//! next turn on a current-thread runtime),
//! without classifying the wake (A2): the yield is the runtime's, so it
//! neither counts towards demotion nor steps a background task aside into
//! the yield queue.
//!
//! The mark is set only for a task of this worker's (not a `LocalSet`'s,
//! whose wake goes to its set) and is cleared when each poll begins and
//! ends, so the only wake that can take it is that task's own, scheduled
//! by `async-task` right after the poll, on the thread that ran it.

use std::collections::HashSet;
use std::panic::Location;
use std::sync::Mutex;

use super::Core;
use crate::runtime::context;

impl Core {
    /// Whether work waits for this worker, the running poll having spent
    /// its budget (the module docs); `local_set`: `Some(waits)` inside a
    /// `LocalSet`'s task.
    pub(crate) fn budget_work_waits(&self, local_set: Option<bool>) -> bool {
        let shared = &self.shared;
        if !shared.config.coop_budget {
            return false; // Off: tests only.
        }
        if local_set == Some(true) {
            return true;
        }
        if self.current_poll.in_block_in_place.get() {
            return false; // A nested executor's poll.
        }
        let task = context::with_current_task(|task| {
            task.map(|(meta, _)| (meta.id(), meta.is_cancelled()))
        });
        if let Some((id, _)) = task
            && self.turns.slice.holds(id, || shared.clock_nanos())
        {
            return false;
        }
        // The `block_on` future, or a task its `LocalSet` runs, is the one
        // the current-thread loop would give way to: it waits only for the
        // tasks that yielded.
        let in_main = task.is_none() || local_set.is_some();
        let current_thread_busy = if in_main {
            self.yielded_this_turn()
        } else {
            self.busy_on_current_thread()
        };
        task.is_some_and(|(_, cancelled)| cancelled)
            || shared.is_shutdown()
            || current_thread_busy
            || !self.local_is_empty()
            || !shared.injector.is_empty()
            || (self
                .epochs
                .budget_gate
                .is_new_epoch(|| shared.clock_nanos())
                && self.poll_for_epoch(self.epochs.budget_gate.epoch()) > 0
                && !self.local_is_empty())
    }

    /// The budget makes the running poll yield: counts it, marks a task of
    /// this worker's coming self-wake as the budget's, and reports its
    /// spawn location the first time.
    pub(crate) fn budget_yield(&self, in_local_set: bool) {
        let shared = &self.shared;
        shared
            .metrics
            .worker(self.index())
            .count_budget_forced_yield();
        let location = context::with_current_task(|task| task.map(|(meta, _)| meta.location()));
        let Some(location) = location else {
            return;
        };
        if !in_local_set {
            self.current_poll.budget_yield.set(true);
        }
        let last = self.current_poll.budget_reported.replace(Some(location));
        if last != Some(location) && shared.budget_reports.is_first(location) {
            report_first(location);
        }
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
    /// `location`. Taken only when a worker's forced yield comes from
    /// another location than its last one (`Core::budget_yield`).
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
