//! `Core`'s state, grouped by the mechanism that owns it, each group
//! labelled with the rules of the policy (`policy.rs`) it serves. Only the
//! worker's own thread touches any of it (hence `Cell`s).

use std::cell::{Cell, RefCell};
use std::panic::Location;
use std::sync::Arc;

use super::block_on::MainSignal;
use crate::admission::ElasticPoll;
use crate::epoch::EpochGate;
use crate::metrics::WorkerCounters;
use crate::runtime::scheduler::placement::WakeMode;
use crate::task::Runnable;
use crate::yield_queue::rescue::Slice;

/// B1, B3: the loop's tick count and the look at the injector first.
pub(super) struct Ticks {
    /// Tasks taken so far (wrapping).
    pub(super) count: Cell<u32>,
    /// Set by a self-wake (A4): check the injector before the local deque
    /// on the next tick.
    pub(super) injector_first: Cell<bool>,
}

/// B8: searching for work in other workers' deques.
pub(super) struct Search {
    /// Whether this worker is counted as searching in `Idle`.
    pub(super) searching: Cell<bool>,
    /// xorshift64 state for picking steal victims.
    pub(super) rng: Cell<u64>,
}

/// A4 to A6, B9: where tasks woken on this thread go, and the
/// notifications held back.
pub(super) struct Wakes {
    /// Where tasks woken on this thread go (see [`WakeMode`]).
    pub(super) mode: Cell<WakeMode>,
    /// The task a [`WakeMode::HandBack`] wake scheduled.
    pub(super) handed_back: Cell<Option<Runnable>>,
    /// A task spawned during the current poll went into this worker's
    /// empty deque, or its run-next slot, without notifying an idle worker
    /// (`worker/spawned.rs`); cleared when the poll ends.
    pub(super) notify_deferred: Cell<bool>,
}

/// A5, B4: this worker's use of its run-next slot (`worker/run_next.rs`).
pub(super) struct RunNextUse {
    /// Whether the slot may hold a task: this worker put one there and
    /// has not taken the slot since (a stealer may have).
    pub(super) full: Cell<bool>,
    /// How many tasks in a row this worker took from the slot.
    pub(super) streak: Cell<u32>,
}

/// A3, B2, C4: whose turn it is through the yield queue.
pub(super) struct Turns {
    /// Self-wakes of background tasks this worker let run on since its
    /// background tasks last took turns (`TURN_AFTER_SELF_WAKES`).
    pub(super) background_run: Cell<u32>,
    /// The rescued task that runs as if nothing waited (`yield_queue/rescue.rs`).
    pub(super) slice: Slice,
}

/// B1, B2, B7, B9, C1, C5: the checks done once per epoch, and what each
/// remembers of its last one.
pub(super) struct Epochs {
    /// The epochs of `yield_if_busy()`'s slow path and of background
    /// self-wakes (`worker/step_aside.rs`).
    pub(super) yield_gate: EpochGate,
    /// The epochs of this loop: its driver poll and its rescue check.
    pub(super) loop_gate: EpochGate,
    /// The epochs of the cooperative budget's driver poll (C6,
    /// `worker/budget.rs`): a gate of its own, so that it takes no epoch
    /// from the slow path's checks.
    pub(super) budget_gate: EpochGate,
    /// The epoch in which `take_back_yielded` last compared the yield
    /// queue's other shards with this worker's own (`YieldQueue::pop_for`).
    pub(super) yield_queue_looked: Cell<u64>,
    /// The epoch in which `take_back_own_yielded` last found no other worker
    /// needing help (`Core::others_need_help`; a lone task may be in a deque, B7).
    pub(super) others_idle_in: Cell<u64>,
    /// Each other worker's poll sequence number at this worker's
    /// previous look at its deque (`Core::others_need_help`).
    pub(super) others_seen: RefCell<Vec<u64>>,
    /// The epoch of the fast path's last idle check (its counter is in the
    /// worker's `PollRecord`).
    pub(super) idle_check_epoch: Cell<u64>,
}

/// The poll running on this worker now.
pub(super) struct CurrentPoll {
    /// Whether a task's poll runs on this worker now.
    pub(super) in_poll: Cell<bool>,
    /// When the current poll started (runtime-clock ns), if timed.
    pub(super) started: Cell<u64>,
    /// Inside `block_in_place` (a nested call runs its closure directly).
    pub(super) in_block_in_place: Cell<bool>,
    /// The elastic policy's state for the current poll, if elastic (C3).
    pub(super) elastic: ElasticPoll,
    /// The poll's cooperative budget made it yield (C6): its self-wake is
    /// the budget's, not the task's (`worker/budget.rs`).
    pub(super) budget_yield: Cell<bool>,
    /// The spawn location of the last task the budget made yield here:
    /// the shared set of reported locations is looked at only for another.
    pub(super) budget_reported: Cell<Option<&'static Location<'static>>>,
}

/// On a current-thread runtime, the `block_on` future this worker's loop
/// also polls (`worker/block_on.rs`).
#[derive(Default)]
pub(super) struct Main {
    /// The signal of that future; `None` on a worker thread.
    pub(super) block_on: Option<Arc<MainSignal>>,
    /// A task's `yield_if_busy()` gave way to the woken `block_on` future:
    /// the loop polls that future before its next task.
    pub(super) yield_to_main: Cell<bool>,
    /// The tasks that yielded during this turn of the loop, queued again
    /// when the turn ends.
    pub(super) yielded_this_turn: RefCell<Vec<Runnable>>,
}

impl Ticks {
    pub(super) fn new() -> Self {
        Ticks {
            count: Cell::new(0),
            injector_first: Cell::new(false),
        }
    }
}

impl Search {
    /// A worker's search state; `index` seeds its victims' order.
    pub(super) fn new(index: usize) -> Self {
        Search {
            searching: Cell::new(false),
            rng: Cell::new(
                0x9E37_79B9_7F4A_7C15 ^ (index as u64 + 1).wrapping_mul(0xD1B5_4A32_D192_ED03),
            ),
        }
    }
}

impl Wakes {
    pub(super) fn new() -> Self {
        Wakes {
            mode: Cell::new(WakeMode::Notify),
            handed_back: Cell::new(None),
            notify_deferred: Cell::new(false),
        }
    }
}

impl RunNextUse {
    pub(super) fn new() -> Self {
        RunNextUse {
            full: Cell::new(false),
            streak: Cell::new(0),
        }
    }
}

impl Turns {
    pub(super) fn new() -> Self {
        Turns {
            background_run: Cell::new(0),
            slice: Slice::new(),
        }
    }
}

impl Epochs {
    pub(super) fn new() -> Self {
        Epochs {
            yield_gate: EpochGate::new(),
            loop_gate: EpochGate::new(),
            budget_gate: EpochGate::new(),
            yield_queue_looked: Cell::new(u64::MAX),
            others_idle_in: Cell::new(u64::MAX),
            others_seen: RefCell::new(Vec::new()),
            idle_check_epoch: Cell::new(u64::MAX),
        }
    }
}

impl CurrentPoll {
    pub(super) fn new() -> Self {
        CurrentPoll {
            in_poll: Cell::new(false),
            started: Cell::new(0),
            in_block_in_place: Cell::new(false),
            elastic: ElasticPoll::new(),
            budget_yield: Cell::new(false),
            budget_reported: Cell::new(None),
        }
    }
}

/// B11: what the worker's metrics keep across a park (`worker_noop_count`).
#[derive(Default)]
pub(super) struct Parks {
    /// The worker's poll count as it last unparked; `None` before its
    /// first park.
    polls_at_unpark: Cell<Option<u64>>,
}

impl Parks {
    /// The worker goes to sleep at `now`: counts the park, and a no-op if
    /// it polled nothing since it last woke.
    pub(super) fn parking(&self, counters: &WorkerCounters, now: u64) {
        let noop = self.polls_at_unpark.get() == Some(counters.polls());
        counters.count_park(now, noop);
    }

    /// The worker woke at `now`.
    pub(super) fn unparked(&self, counters: &WorkerCounters, now: u64) {
        counters.count_unpark(now);
        self.polls_at_unpark.set(Some(counters.polls()));
    }
}
