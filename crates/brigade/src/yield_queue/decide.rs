//! Whether a running task steps aside, and how: the slow path of
//! `yield_if_busy()`, and the same question for a background task's
//! self-wake.
//!
//! ## The slow path, step by step ([`slow_path`])
//! 1. **Give way at once** if the runtime is shutting down or the task was
//!    aborted: the worker must see either (`runtime/shutdown.rs`).
//! 2. **Elastic tasks** (`spawn_elastic`; the fast path is always skipped
//!    for them): once the task's CPU grant is used up it gives way, so that
//!    its next poll goes back through admission (`admission/`); otherwise,
//!    with a worker idle, it continues (after the amortised I/O poll the
//!    fast path would have left to the idle worker).
//! 3. **Cheap checks**: the worker's own deque holds a task: move to the
//!    back of it and let that task run first, on this same warm worker. If
//!    this task already did so on its previous visit (the *sentinel*), two
//!    yielders may be bouncing off each other, so step aside instead. The
//!    injector holds a task: step aside.
//! 4. **Expensive checks, once per epoch** (`runtime/epoch.rs`): poll I/O
//!    and timers without blocking (once per epoch for the whole runtime;
//!    tasks it wakes land in this worker's deque: move to the back), look at
//!    every other worker's deque, and at the yield queue's head: if it is
//!    overdue (`rescue.rs`), step aside so that the yielders queued there
//!    get their turn.
//! 5. Otherwise **continue**.
//!
//! A task rescued from the yield queue holds a slice (`rescue.rs`) during
//! which it continues whatever waits.

use std::task::{Context, Poll};

use crate::runtime::context;
use crate::runtime::epoch::epoch_start;
use crate::runtime::worker::Core;
use crate::task::TaskMeta;

/// What the slow path decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Decision {
    Continue,
    MoveToBack,
    StepAside,
}

/// `yield_if_busy()` when its fast path found no worker idle (or attention
/// held): decides and carries out whether the task steps aside. Returns
/// `Pending` if it gave way.
#[inline(never)]
pub(crate) fn slow_path(cx: &mut Context<'_>) -> Poll<()> {
    // If the task goes on, its next stretch starts here; if it gives way,
    // the poll ends anyway.
    context::note_yield_point();
    context::with_current_worker(|core| {
        let Some(core) = core else {
            return Poll::Ready(());
        };
        context::with_current_task(|task| match task {
            Some((task, own)) => {
                let own_waker = cx.waker().will_wake(own);
                step_aside_or_continue(core, task, own_waker, cx)
            }
            None => Poll::Ready(()),
        })
    })
}

/// The slow path proper, on a worker polling `task`. `own_waker`: `cx`
/// carries the task's own waker (not one made by a combinator such as
/// `FuturesUnordered`, or by a nested executor).
fn step_aside_or_continue(
    core: &Core,
    task: &TaskMeta,
    own_waker: bool,
    cx: &mut Context<'_>,
) -> Poll<()> {
    let shared = core.shared();
    if shared.is_shutdown() || task.is_cancelled() {
        // Give way so that the worker sees the shutdown (the self-wake is
        // then cancelled), or pops the aborted task and drops it.
        return give_way(core, cx);
    }
    if let Some(elastic) = task.elastic() {
        // A stuck stretch that a spare covered has ended here; ending the
        // cover now settles how much of the poll was off the CPU. (For
        // other tasks the monitor ends it at its next sample.)
        core.end_cover();
        let now = shared.clock_nanos();
        if core.elastic.at_yield_point(&shared.admission, elastic, now) {
            // Back through admission on the next poll (see `admission`).
            return give_way(core, cx);
        }
        if shared.idle.num_idle() > 0 {
            // The fast path was skipped, so do its amortised I/O poll:
            // an idle worker may be asleep outside the driver.
            if core.yield_gate.is_new_epoch(|| shared.clock_nanos())
                && shared.driver.poll_for_epoch(core.yield_gate.epoch()) > 0
                && !core.local_is_empty()
            {
                return give_way(core, cx);
            }
            return Poll::Ready(());
        }
    } else if shared.idle.num_idle() > 0 {
        // Here only because an abort elsewhere holds attention: the fast
        // path's answer.
        return Poll::Ready(());
    }
    if core.slice.holds(task.id(), || shared.clock_nanos()) {
        // Rescued from the yield queue after starving (see `rescue.rs`):
        // runs on until its slice ends.
        return Poll::Ready(());
    }
    let sentinel = task.yield_state().replace_moved_to_back(false);
    match decide(core, sentinel) {
        Decision::Continue => Poll::Ready(()),
        Decision::MoveToBack => {
            task.yield_state().replace_moved_to_back(true);
            give_way(core, cx)
        }
        Decision::StepAside if own_waker => {
            shared.metrics.worker(core.index()).count_yield();
            super::defer_wake(core, task, cx.waker());
            Poll::Pending
        }
        // Any other waker is woken at once, as by `yield_now`: a nested
        // executor blocking this worker (`futures::executor::block_on` in
        // the task) would otherwise wait on a wake-up that only a free
        // worker delivers; through a combinator, the task goes to the back
        // of the deque.
        Decision::StepAside => give_way(core, cx),
    }
}

/// Steps 3 to 5 of the module docs. `moved_to_back_last_time` is the
/// sentinel, already cleared by the caller.
fn decide(core: &Core, moved_to_back_last_time: bool) -> Decision {
    let shared = core.shared();
    if !core.local_is_empty() {
        return if moved_to_back_last_time {
            Decision::StepAside
        } else {
            Decision::MoveToBack
        };
    }
    if !shared.injector.is_empty() {
        return Decision::StepAside;
    }
    if !core.yield_gate.is_new_epoch(|| shared.clock_nanos()) {
        return Decision::Continue;
    }
    if shared.driver.poll_for_epoch(core.yield_gate.epoch()) > 0 && !core.local_is_empty() {
        return Decision::MoveToBack;
    }
    if !shared.injector.is_empty() || shared.others_have_work(core.index()) {
        return Decision::StepAside;
    }
    if let Some(head_at) = shared.yield_queue.head_at()
        && shared
            .yield_rescue
            .is_overdue(head_at, epoch_start(core.yield_gate.epoch()))
    {
        // Other yielders have waited in the yield queue for longer than
        // `max_yield_delay` while this one kept going: let them run.
        return Decision::StepAside;
    }
    Decision::Continue
}

/// Whether the self-wake of a background task (`task/class.rs`) steps
/// aside into the yield queue, from the schedule hook on the worker that
/// polled it: the same question as `yield_if_busy()`'s, with the same
/// amortised checks, and one more reason to step aside, also checked once
/// per epoch: other tasks wait in the yield queue, so background tasks that
/// wake themselves take turns there at least once per epoch. (Taking turns
/// at every self-wake would cost a trip through the shared queue per yield;
/// the README's task-class section gives the cost measured on
/// `benches/rt_compare.rs`'s `yield_many`.)
pub(crate) fn background_steps_aside(core: &Core, task: &TaskMeta) -> bool {
    let shared = core.shared();
    if shared.idle.num_idle() > 0 || task.is_cancelled() || task.yield_state().has_entry() {
        // An idle worker takes whatever waits; an aborted task must reach
        // the worker that drops it; and a task keeps at most one entry in
        // the yield queue (a `yield_if_busy()` that stepped aside left one,
        // and its wake-up will run the task again anyway).
        return false;
    }
    if core.slice.holds(task.id(), || shared.clock_nanos()) {
        return false;
    }
    if !core.local_is_empty() || !shared.injector.is_empty() {
        return true;
    }
    core.yield_gate.is_new_epoch(|| shared.clock_nanos())
        && (!shared.yield_queue.is_empty()
            || (shared.driver.poll_for_epoch(core.yield_gate.epoch()) > 0
                && !core.local_is_empty())
            || shared.others_have_work(core.index()))
}

/// Wakes the task (the schedule hook puts it at the back of the local
/// deque) and reports the yield.
fn give_way(core: &Core, cx: &mut Context<'_>) -> Poll<()> {
    core.shared().metrics.worker(core.index()).count_yield();
    cx.waker().wake_by_ref();
    Poll::Pending
}
