//! Where a task goes when it becomes runnable: rules A1 to A6 of the
//! policy (`policy.rs`) as one decision, [`place`].
//!
//! Every spawn and every wake-up of a task of this runtime comes here,
//! through `Shared::schedule_on_worker` (on one of the runtime's workers)
//! or `Shared::schedule_off_workers` (anywhere else): a wake-up from
//! `task::task_host::schedule`, a spawn from `Shared::spawn`.
//!
//! What this decision does not cover, because no wake-up is scheduled
//! there: a task at a yield point that steps aside keeps its own waker
//! in the yield queue (C5, `Core::decide` and `Core::defer_wake` in
//! `worker/step_aside.rs`), and is placed here only when a worker takes it
//! back and wakes it (B2, B7, B9: `WakeMode::HandBack`); the run-next
//! slot's overflow (B4) moves a task that was placed already.
//! [`place`] answers with a [`Placement`]; the caller carries it out
//! (`Core::carry_out` on a worker, `Shared::schedule_off_workers` off
//! them) and does nothing else that
//! decides.
//!
//! [`place`] does no I/O and touches no atomic itself: it asks what it
//! needs through [`Situation`], in the order the rules need it, and asks
//! nothing it does not need. The order matters, because two answers
//! change state as they are given: classifying a wake counts it towards
//! the task's demotion (A2, `task/class.rs`), and a background task's
//! turn (A3, `Core::background_turn`) may read the clock and the driver.
//! The tests below drive [`place`] with a table of situations.

use crate::task::class::WakeClass;

/// What a background task's self-wake does (`Core::background_turn`, A3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BackgroundTurn {
    /// It is scheduled as usual, at the back of the deque.
    RunsOn,
    /// It steps aside into the yield queue: other work waits.
    StepsAside,
    /// It takes turns with the background tasks in its worker's shard of
    /// the yield queue (`Core::take_turns`).
    TakesTurns,
}

/// Why a task became runnable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Arrival {
    /// Just spawned.
    Spawned,
    /// Woken by anything but its own poll.
    Woken,
    /// Woken during its own poll (`yield_now`, a move to the back, the
    /// cooperative budget's yield, a deferred wake-up handed back).
    SelfWoken,
}

/// How a worker delivers wake-ups right now (`Core`'s wake mode).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WakeMode {
    /// To the worker's deque, notifying an idle worker: the usual case.
    Notify,
    /// To the worker's deque without a notification: the worker wakes
    /// tasks it will run itself (driver events dispatched while it parks,
    /// or served for an idle worker that does not run).
    Silent,
    /// Handed straight back: the worker delivers a yielded task's deferred
    /// wake-up in order to run the task next (`Core::take_back_yielded`,
    /// `Core::rescue_overdue`).
    HandBack,
}

/// What [`place`] needs to know, asked lazily and at most once each.
pub(crate) trait Situation {
    /// Whether the calling thread is one of this runtime's workers. The
    /// questions after [`classify`](Self::classify) are asked only if so.
    fn on_worker(&self) -> bool;
    /// Whether the runtime is shutting down.
    fn is_shutdown(&self) -> bool;
    /// A2: the wake's class, counted towards the task's demotion.
    fn classify(&self, self_wake: bool) -> WakeClass;
    /// C6: whether the cooperative budget made this poll yield; answering
    /// clears it.
    fn take_budget_yield(&self) -> bool;
    /// How the worker delivers wake-ups now.
    fn wake_mode(&self) -> WakeMode;
    /// A3: whether a background self-wake runs on, steps aside or takes
    /// turns.
    fn background_turn(&self) -> BackgroundTurn;
    /// A5: whether the task may go to the worker's run-next slot.
    fn may_run_next(&self) -> bool;
    /// Whether the worker's deque is empty.
    fn deque_is_empty(&self) -> bool;
    /// Whether the worker is a current-thread runtime's `block_on` thread.
    fn runs_block_on(&self) -> bool;
}

/// Where a task goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Placement {
    /// The runtime is shutting down: the task is cancelled by shutdown's
    /// drain (`ShutdownFlag::cancel_later`).
    CancelLater,
    /// A1: the injector, with a notification.
    Injector,
    /// A3: the worker's shard of the yield queue (steps aside).
    YieldQueue,
    /// A3: takes turns with the background tasks in the worker's shard.
    TakeTurns,
    /// A4 to A6: the worker's own queues.
    Here {
        /// Where among them.
        spot: Spot,
        /// A4: the worker's next tick looks at the injector first.
        injector_first: bool,
    },
}

/// Where among a worker's own queues.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Spot {
    /// A5: the run-next slot, telling nobody yet (a task it displaces goes
    /// to the back of the deque, with a notification).
    RunNext,
    /// A6: the back of the deque.
    Back(Notify),
    /// A current-thread runtime's self-wake: runs again at the next turn
    /// (`worker/block_on.rs`).
    BlockOnTurn,
    /// Handed straight back to the worker that delivered the wake-up, to
    /// run next.
    HandBack,
}

/// Whether a task put at the back of a deque is announced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Notify {
    /// An idle worker is told now.
    Now,
    /// Held back until the poll goes on (a spawn into an empty deque:
    /// `worker/spawned.rs`).
    Deferred,
    /// Nobody: this worker runs it itself.
    Never,
}

/// Rules A1 to A6: where a task that became runnable for `arrival` goes.
#[inline]
pub(crate) fn place(arrival: Arrival, situation: &impl Situation) -> Placement {
    let self_wake = arrival == Arrival::SelfWoken;
    if !situation.on_worker() {
        // A1. A wake off the workers is classified all the same.
        if situation.is_shutdown() {
            return Placement::CancelLater;
        }
        situation.classify(self_wake);
        return Placement::Injector;
    }
    if situation.is_shutdown() {
        return Placement::CancelLater;
    }
    let mode = situation.wake_mode();
    // C6's yield is the runtime's, not the task's: not classified (A2).
    if self_wake && situation.take_budget_yield() {
        return here(self_wake_spot(mode, situation), true);
    }
    let handing_back = mode == WakeMode::HandBack;
    // A2. A wake-up handed back is the task's own, deferred.
    let class = situation.classify(self_wake || handing_back);
    // A3. A handed-back task runs: the worker took it out of the yield
    // queue to run it.
    if matches!(class, WakeClass::Background | WakeClass::Demoted) && !handing_back {
        match situation.background_turn() {
            BackgroundTurn::RunsOn => {}
            BackgroundTurn::StepsAside => return Placement::YieldQueue,
            BackgroundTurn::TakesTurns => return Placement::TakeTurns,
        }
    }
    match arrival {
        // A4.
        Arrival::SelfWoken => here(self_wake_spot(mode, situation), true),
        // A5, A6: a spawn into an empty deque is announced later.
        Arrival::Spawned if mode == WakeMode::Notify => {
            let spot = if situation.may_run_next() {
                Spot::RunNext
            } else if situation.deque_is_empty() {
                Spot::Back(Notify::Deferred)
            } else {
                Spot::Back(Notify::Now)
            };
            here(spot, false)
        }
        Arrival::Spawned | Arrival::Woken => here(wake_spot(mode, situation), false),
    }
}

fn here(spot: Spot, injector_first: bool) -> Placement {
    Placement::Here {
        spot,
        injector_first,
    }
}

/// A4: a self-wake goes to the back of the deque (never the run-next
/// slot), or, on a current-thread runtime, to the next turn.
fn self_wake_spot(mode: WakeMode, situation: &impl Situation) -> Spot {
    match mode {
        WakeMode::Notify if situation.runs_block_on() => Spot::BlockOnTurn,
        WakeMode::Notify => Spot::Back(Notify::Now),
        mode => wake_spot(mode, situation),
    }
}

/// A5, A6: a task woken on this worker.
fn wake_spot(mode: WakeMode, situation: &impl Situation) -> Spot {
    match mode {
        WakeMode::Notify if situation.may_run_next() => Spot::RunNext,
        WakeMode::Notify => Spot::Back(Notify::Now),
        WakeMode::Silent => Spot::Back(Notify::Never),
        WakeMode::HandBack => Spot::HandBack,
    }
}

#[cfg(all(test, not(loom)))]
mod tests;
