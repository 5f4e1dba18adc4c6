//! Stepping aside, deciding and going: whether a running task gives way to
//! waiting work, and how it leaves. How it comes back is in `yielded.rs`;
//! the yield queue where it waits, with that queue's protocol, is in
//! `yield_queue/`.
//!
//! ## Decide
//! The rules are C1 to C5 of the policy (`policy.rs`, with each constant
//! and its reason), numbered as there: `yield_if_busy()`'s fast path
//! (`yield_if_busy.rs`) is C1, its slow path ([`slow_path`]) C2 to C5,
//! answering *continue*, *move to the back* or *step aside*
//! ([`Core::decide`] is C5). The self-wake of a background task
//! (`task/class.rs`) asks the same question from the schedule hook
//! ([`Core::background_turn`], A3 of the policy).
//!
//! ## Go
//! - **Move to the back**: the task wakes its own waker and returns
//!   `Pending`; the schedule hook puts it at the back of its worker's deque
//!   behind the waiting task, on the same warm worker. The task's
//!   `YieldState` remembers it (the sentinel), so a task that finds the
//!   deque still busy on its next visit steps aside instead of bouncing.
//! - **Step aside**: into the yield queue, separate from the injector and
//!   every deque: into its shard for the worker the task ran on.
//!   `yield_if_busy()` defers its waker there (`Core::defer_wake`,
//!   `Entry::Wake`) and returns `Pending` without waking anyone; nothing is
//!   left on the task for a later, unrelated wake to read. A background
//!   task's self-wake puts the scheduled task itself there
//!   ([`Core::step_aside_woken`], `Entry::Run`). A task keeps at most one
//!   entry (`YieldState`). Every push is followed by
//!   `Shared::after_shared_push`, as the queue's protocol asks.
//! - **Take turns**: a background task's self-wake, with nothing but other
//!   background tasks waiting in this worker's shard, after
//!   [`TURN_AFTER_SELF_WAKES`] of them ([`Core::take_turns`]): the task
//!   goes to the back of the shard and the shard's oldest background task
//!   comes out to run next, in one hold of the shard's lock, then
//!   `Shared::after_shared_push` as after any push.

use std::task::{Context, Poll, Waker};

use super::Core;
use crate::epoch::epoch_start;
use crate::policy::TURN_AFTER_SELF_WAKES;
use crate::runtime::scheduler::placement::BackgroundTurn;
use crate::runtime::{Shared, context};
use crate::task::{Runnable, TaskMeta};
use crate::yield_queue::{DeferredWake, Entry};

/// How much one self-wake of a background task that runs on adds to the
/// count compared with [`TURN_AFTER_SELF_WAKES`] (A3 of the policy).
///
/// Under loom, the whole threshold at once: a model's loops are two or
/// three units long, and 64 self-wakes per turn would multiply each
/// model's interleavings past what a run can explore. So a self-wake
/// there stands for 64, as a clock read there stands for an epoch
/// (`Shared::clock_nanos`): the models still take both branches of the
/// production rule, a self-wake that runs on and counts, then one that
/// finds the count reached and takes its turn, with the production
/// constant and the same reset.
#[cfg(not(loom))]
const SELF_WAKE_COUNTS: u32 = 1;
#[cfg(loom)]
const SELF_WAKE_COUNTS: u32 = TURN_AFTER_SELF_WAKES;

/// What the slow path decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Decision {
    Continue,
    MoveToBack,
    StepAside,
}

/// The fast path's amortised check (`yield_if_busy.rs`), when its clock back-off
/// says to read the clock: once per epoch, whether the idle worker it
/// trusted really serves (`Core::recheck_idle`). If it does not, this
/// worker has harvested the waiting I/O and timers itself, and the task
/// moves to the back of its deque so that the woken tasks run now, on this
/// CPU.
#[cold]
#[inline(never)]
pub(crate) fn fast_path_epoch_check(cx: &mut Context<'_>) -> Poll<()> {
    let in_task_poll = context::with_current_task(|task| task.is_some());
    let paced = in_task_poll && super::with_current(|core| core.is_some_and(Core::over_budget));
    if paced {
        // Under a CPU limit whose window is spent (E3): the slow path steps
        // the task aside, whatever worker is idle.
        return slow_path(cx);
    }
    let gave_way = super::with_current(|core| match core {
        Some(core) if in_task_poll && core.recheck_idle() => Some(core.give_way(cx)),
        _ => None,
    });
    gave_way.unwrap_or(Poll::Ready(()))
}

/// `yield_if_busy()` when its fast path found no worker idle (or attention
/// held): decides and carries out whether the task steps aside. Returns
/// `Pending` if it gave way.
#[inline(never)]
pub(crate) fn slow_path(cx: &mut Context<'_>) -> Poll<()> {
    // If the task goes on, its next stretch starts here; if it gives way,
    // the poll ends anyway.
    context::note_yield_point();
    super::with_current(|core| {
        let Some(core) = core else {
            return off_a_worker(cx);
        };
        context::with_current_task(|task| match task {
            Some((task, own)) => {
                let own_waker = cx.waker().will_wake(own);
                core.step_aside_or_continue(task, own_waker, cx)
            }
            // The `block_on` future of a current-thread runtime, or none.
            None => core.main_yield_if_busy(cx).unwrap_or(Poll::Ready(())),
        })
    })
}

/// The slow path off a worker thread. Only a tokio-compat thread gets
/// here (its idle word reads "no worker idle"; every other thread's reads
/// "idle"): it has no brigade queue to step aside into, so it spends the
/// tokio task's budget instead (`tokio_compat.rs`).
fn off_a_worker(cx: &mut Context<'_>) -> Poll<()> {
    #[cfg(all(feature = "tokio-compat", not(loom)))]
    if context::on_compat_thread() {
        return crate::runtime::threads::tokio_compat::yield_point(cx);
    }
    let _ = cx;
    Poll::Ready(())
}

impl Core {
    /// The slow path proper, on this worker polling `task`. `own_waker`:
    /// `cx` carries the task's own waker (not one made by a combinator such
    /// as `FuturesUnordered`, or by a nested executor).
    fn step_aside_or_continue(
        &self,
        task: &TaskMeta,
        own_waker: bool,
        cx: &mut Context<'_>,
    ) -> Poll<()> {
        let shared = self.shared();
        if shared.is_shutdown() || task.is_cancelled() {
            // Give way so that the worker sees the shutdown (the self-wake is
            // then cancelled), or pops the aborted task and drops it.
            return self.give_way(cx);
        }
        if self.over_budget() {
            // E3: the CPU limit's window is spent: background waits in the
            // yield queue until it ends, whatever worker is idle.
            return self.step_aside(task, own_waker, cx);
        }
        if let Some(elastic) = task.elastic() {
            // A stuck stretch that a spare covered has ended here; ending the
            // cover now settles how much of the poll was off the CPU. (For
            // other tasks the monitor ends it at its next sample: F7, F8.)
            self.end_cover();
            let now = shared.clock_nanos();
            if self
                .current_poll
                .elastic
                .at_yield_point(&shared.admission, elastic, now)
            {
                // Back through admission on the next poll (see `admission`).
                return self.give_way(cx);
            }
            if shared.idle.num_idle() > 0 {
                // The fast path was skipped, so do its amortised I/O poll:
                // an idle worker may be asleep outside the driver.
                if self.epochs.yield_gate.is_new_epoch(|| shared.clock_nanos())
                    && self.poll_for_epoch(self.epochs.yield_gate.epoch()) > 0
                    && !self.local_is_empty()
                {
                    return self.give_way(cx);
                }
                return Poll::Ready(());
            }
        } else if shared.idle.num_idle() > 0 {
            // Here only because an abort elsewhere holds attention: the fast
            // path's answer.
            return Poll::Ready(());
        }
        if self.turns.slice.holds(task.id(), || shared.clock_nanos()) {
            // Rescued from the yield queue after starving (see `rescue.rs`):
            // runs on until its slice ends.
            return Poll::Ready(());
        }
        let sentinel = task.yield_state().replace_moved_to_back(false);
        match self.decide(sentinel) {
            Decision::Continue => Poll::Ready(()),
            Decision::MoveToBack => {
                task.yield_state().replace_moved_to_back(true);
                self.give_way(cx)
            }
            Decision::StepAside => self.step_aside(task, own_waker, cx),
        }
    }

    /// Steps the task aside into the yield queue, if `cx` carries its own
    /// waker (`own_waker`).
    fn step_aside(&self, task: &TaskMeta, own_waker: bool, cx: &mut Context<'_>) -> Poll<()> {
        if !own_waker {
            // Any other waker is woken at once, as by `yield_now`: a nested
            // executor blocking this worker (`futures::executor::block_on` in
            // the task) would otherwise wait on a wake-up that only a free
            // worker delivers; through a combinator, the task goes to the back
            // of the deque.
            return self.give_way(cx);
        }
        self.shared().metrics.worker(self.index()).count_yield();
        self.defer_wake(task, cx.waker());
        Poll::Pending
    }

    /// E3 of the policy: whether background work must step aside now, the
    /// CPU limit's window being spent (`cpu_limit/pacer.rs`). One load
    /// where there is no limit.
    #[inline]
    pub(crate) fn over_budget(&self) -> bool {
        let shared = self.shared();
        shared.cpu.pacer.has_limit()
            && shared
                .cpu
                .pacer
                .over_budget(shared.clock_nanos(), &**shared)
    }

    /// Whether the window's pacing holds background work back now (the
    /// worker loop's look: it reads the process's clock only through
    /// [`over_budget`](Self::over_budget)). One load while not paced.
    #[inline]
    pub(crate) fn is_paced(&self) -> bool {
        let shared = self.shared();
        shared
            .cpu
            .pacer
            .is_paced(|| shared.clock_nanos(), &**shared)
    }

    /// C5 of the policy (`policy.rs`). `moved_to_back_last_time` is the
    /// sentinel, already cleared by the caller.
    fn decide(&self, moved_to_back_last_time: bool) -> Decision {
        let shared = self.shared();
        if self.busy_on_current_thread() {
            // Current-thread: the `block_on` future, or a task that yielded
            // this turn, is ready to run (`worker/block_on.rs`).
            return Decision::MoveToBack;
        }
        if !self.local_is_empty() {
            return if moved_to_back_last_time {
                Decision::StepAside
            } else {
                Decision::MoveToBack
            };
        }
        if !shared.injector.is_empty() {
            return Decision::StepAside;
        }
        if !self.epochs.yield_gate.is_new_epoch(|| shared.clock_nanos()) {
            return Decision::Continue;
        }
        if self.poll_for_epoch(self.epochs.yield_gate.epoch()) > 0 && !self.local_is_empty() {
            return Decision::MoveToBack;
        }
        if !shared.injector.is_empty() || self.others_need_help() {
            return Decision::StepAside;
        }
        if let Some(head_at) = shared.yield_queue.head_at()
            && shared
                .yield_rescue
                .is_overdue(head_at, epoch_start(self.epochs.yield_gate.epoch()))
        {
            // Other yielders have waited in the yield queue for longer than
            // `max_yield_delay` while this one kept going: let them run.
            return Decision::StepAside;
        }
        Decision::Continue
    }

    /// A3 of the policy (`policy.rs`): what the self-wake of a background
    /// task (`task/class.rs`) does, from the schedule hook on the worker that polled it: the same
    /// question as `yield_if_busy()`'s, with the same amortised checks
    /// ([`BackgroundTurn::StepsAside`] when work waits), and one more reason
    /// to give way: other background tasks wait in the yield queue, so
    /// background tasks that wake themselves take turns, in this worker's
    /// shard after [`TURN_AFTER_SELF_WAKES`] self-wakes
    /// ([`BackgroundTurn::TakesTurns`]), or anywhere at the next epoch if
    /// that comes first.
    pub(crate) fn background_turn(&self, task: &TaskMeta) -> BackgroundTurn {
        let shared = self.shared();
        if !task.is_cancelled() && !task.yield_state().has_entry() && self.over_budget() {
            // E3: the CPU limit's window is spent.
            return BackgroundTurn::StepsAside;
        }
        if shared.idle.num_idle() > 0 || task.is_cancelled() || task.yield_state().has_entry() {
            // An idle worker takes whatever waits; an aborted task must reach
            // the worker that drops it; and a task keeps at most one entry in
            // the yield queue (a `yield_if_busy()` that stepped aside left one,
            // and its wake-up will run the task again anyway).
            return BackgroundTurn::RunsOn;
        }
        if self.turns.slice.holds(task.id(), || shared.clock_nanos()) {
            return BackgroundTurn::RunsOn;
        }
        if !self.local_is_empty() || !shared.injector.is_empty() {
            return BackgroundTurn::StepsAside;
        }
        let run = self.turns.background_run.get();
        if run >= TURN_AFTER_SELF_WAKES && shared.yield_queue.has_entries_in(self.index()) {
            self.turns.background_run.set(0);
            return BackgroundTurn::TakesTurns;
        }
        let steps_aside = self.epochs.yield_gate.is_new_epoch(|| shared.clock_nanos())
            && (!shared.yield_queue.is_empty()
                || (self.poll_for_epoch(self.epochs.yield_gate.epoch()) > 0
                    && !self.local_is_empty())
                || self.others_need_help());
        if steps_aside {
            self.turns.background_run.set(0);
            BackgroundTurn::StepsAside
        } else {
            self.turns
                .background_run
                .set(run.saturating_add(SELF_WAKE_COUNTS));
            BackgroundTurn::RunsOn
        }
    }

    /// A woken background task's turn through this worker's shard of the
    /// yield queue, once [`background_turn`](Self::background_turn) said
    /// so: it goes to the back of the shard, and the shard's oldest
    /// background task comes out, in one hold of the shard's lock,
    /// followed by `Shared::after_shared_push` as any push is. This
    /// worker's deque is empty (else the task would have stepped aside), so
    /// the task taken out, pushed there, is the one it runs after the
    /// current poll, and no other worker needs notifying for it. If the
    /// shard's oldest entry is a deferred wake-up instead, the task steps
    /// aside, and the wake-up is delivered as usual (`yielded.rs`).
    pub(crate) fn take_turns(&self, runnable: Runnable) {
        let shared = self.shared();
        let now = shared.clock_nanos();
        match shared.yield_queue.take_turns(self.index(), runnable, now) {
            Ok((next, since, aborted)) => {
                let metrics = shared.metrics.worker(self.index());
                metrics.count_yield();
                metrics.yield_delay.record(now.saturating_sub(since));
                // Not `yield_rescue.note_served`: a turn takes from this
                // worker's shard only, without the once-per-epoch look at
                // the other shards' heads that a take-back makes, so it says
                // nothing of whether they are served (noting it would hold
                // off the rescue of an entry starving in a busy worker's
                // shard for as long as this worker's tasks take turns).
                #[cfg(loom)]
                shared
                    .turns_taken
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                // The queue's protocol, as after any push: a notification
                // (which finds nobody to wake, since the shard holds as many
                // entries as before, unless a worker went idle meanwhile)
                // and the look at the shutdown flag, which a task put back
                // after a shutdown's drain needs.
                shared.after_shared_push();
                if aborted {
                    shared.evict_aborted();
                }
                // As after a self-wake (A4, `placement::place`): the next
                // look goes to the injector first.
                self.ticks.injector_first.set(true);
                self.local.push(next);
            }
            Err(entry) => self.step_aside_entry(entry),
        }
    }

    /// Whether another worker's deque holds work that its owner is not
    /// getting to (once per epoch, from the amortised checks): a backlog
    /// (two tasks or more), or a task while the owner has made no progress
    /// since this worker's previous look (its poll record's sequence number,
    /// which every poll and yield point moves, has not changed). One task
    /// in the deque of a worker that is running is the task it runs next:
    /// a request the kernel woke it for, say. Stepping aside for that one
    /// only moved this worker's background task through the yield queue
    /// for nothing (`kv` with the snapshot on, at a fixed request rate:
    /// docs/decisions.md#kv-open-loop). Also whether a worker with yielded
    /// work of its own searches the other deques instead of taking it back
    /// (`Core::take_back_own_yielded`).
    pub(super) fn others_need_help(&self) -> bool {
        let shared = self.shared();
        let mut seen = self.epochs.others_seen.borrow_mut();
        let stealers = shared.active_stealers();
        if seen.len() < stealers.len() {
            seen.resize(stealers.len(), u64::MAX);
        }
        for (index, stealer) in stealers.iter().enumerate() {
            if index == self.index() {
                continue;
            }
            if shared.run_next[index].has_open() {
                // Its owner's poll went on past a task it was to run next.
                return true;
            }
            let queued = stealer.len();
            if queued > 0
                && needs_help(queued, &mut seen[index], || {
                    shared.metrics.worker(index).poll_record.seq()
                })
            {
                return true;
            }
        }
        false
    }

    /// Wakes the task (the schedule hook puts it at the back of the local
    /// deque) and reports the yield.
    fn give_way(&self, cx: &mut Context<'_>) -> Poll<()> {
        self.shared().metrics.worker(self.index()).count_yield();
        cx.waker().wake_by_ref();
        Poll::Pending
    }

    /// Steps a task aside in `yield_if_busy()`: its waker, the task's own,
    /// goes to the yield queue, to be woken when a worker runs out of other
    /// work. A task that already has an entry keeps it (see `YieldState`).
    fn defer_wake(&self, task: &TaskMeta, waker: &Waker) {
        if !task.yield_state().enter_queue() {
            return;
        }
        let shared = self.shared();
        let at = shared.clock_nanos();
        // A deferred wake-up of an aborted task is harmless: the abort wakes
        // the task itself.
        let entry = Entry::Wake(DeferredWake::new(task, waker.clone()));
        let _ = shared.yield_queue.push(self.index(), entry, at);
        shared.after_shared_push();
    }

    /// Steps a woken background task aside (from the schedule hook on this
    /// worker, once [`background_turn`](Self::background_turn)
    /// said so): the scheduled task itself goes to the yield queue.
    pub(crate) fn step_aside_woken(&self, runnable: Runnable) {
        self.step_aside_entry(Entry::Run(runnable));
    }

    /// [`step_aside_woken`](Self::step_aside_woken), for the task's entry.
    fn step_aside_entry(&self, entry: Entry) {
        let shared = self.shared();
        shared.metrics.worker(self.index()).count_yield();
        let at = shared.clock_nanos();
        let aborted = shared.yield_queue.push(self.index(), entry, at);
        shared.after_shared_push();
        if aborted {
            // Aborted between the look in `background_turn` and the
            // push: the abort's own sweep may have come first.
            shared.evict_aborted();
        }
    }
}

impl Shared {
    /// Hands every aborted background task waiting in the yield queue to
    /// the workers, which drop it. Called by `JoinHandle::abort` after it
    /// sets the flag, and by a pusher that finds the flag set after its push
    /// (see `YieldQueue`'s protocol).
    pub(crate) fn evict_aborted(&self) {
        for runnable in self.yield_queue.take_aborted() {
            self.push_injected(runnable);
        }
    }
}

/// The rule of `Core::others_need_help` for one other worker whose deque
/// holds `queued` tasks (at least one): a backlog, or no progress since the
/// previous look. `seen` holds the owner's poll sequence number at
/// that look and is updated to `seq()`.
fn needs_help(queued: usize, seen: &mut u64, seq: impl FnOnce() -> u64) -> bool {
    let seq = seq();
    let stalled = std::mem::replace(seen, seq) == seq;
    queued >= 2 || stalled
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::needs_help;

    #[test]
    fn one_task_waits_for_its_running_owner_a_backlog_or_a_stalled_owner_does_not() {
        let mut seen = u64::MAX;
        // First look at an owner running (sequence 5): its next task.
        assert!(!needs_help(1, &mut seen, || 5));
        // It moved on since (7): still its own to run.
        assert!(!needs_help(1, &mut seen, || 7));
        // No progress since the previous look: help.
        assert!(needs_help(1, &mut seen, || 7));
        // A backlog: help, whatever the owner does.
        assert!(needs_help(2, &mut seen, || 9));
    }
}
