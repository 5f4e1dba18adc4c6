//! The worker's side of placement (`runtime/scheduler/placement.rs`): its answers
//! to `place`'s questions, and how it carries out the answer.

use super::Core;
use crate::runtime::scheduler::placement::BackgroundTurn;
use crate::runtime::scheduler::placement::{Notify, Placement, Situation, Spot, WakeMode};
use crate::task::Runnable;
use crate::task::class::WakeClass;

/// A task to place, on the worker whose thread it became runnable on.
pub(crate) struct OnWorker<'a> {
    core: &'a Core,
    runnable: &'a Runnable,
}

impl Core {
    /// The situation `place` asks about, for `runnable` on this worker.
    #[inline]
    pub(crate) fn situation<'a>(&'a self, runnable: &'a Runnable) -> OnWorker<'a> {
        OnWorker {
            core: self,
            runnable,
        }
    }

    /// Carries out `placement` of `runnable`, a task of this worker's
    /// runtime. Returns whether an idle worker should be notified.
    #[inline]
    pub(crate) fn carry_out(&self, runnable: Runnable, placement: Placement) -> bool {
        match placement {
            Placement::CancelLater => {
                self.shared.shutdown.cancel_later(runnable);
                false
            }
            Placement::Injector => {
                self.shared.push_injected(runnable);
                false
            }
            Placement::YieldQueue => {
                self.step_aside_woken(runnable);
                false
            }
            Placement::TakeTurns => {
                self.take_turns(runnable);
                false
            }
            Placement::Here {
                spot,
                injector_first,
            } => {
                self.shared.maybe_sample(&runnable);
                if injector_first {
                    self.ticks.injector_first.set(true);
                }
                self.put_here(runnable, spot)
            }
        }
    }

    /// Puts `runnable` in `spot` of this worker's queues. Returns whether
    /// an idle worker should be notified.
    fn put_here(&self, runnable: Runnable, spot: Spot) -> bool {
        self.count_local_schedule();
        match spot {
            Spot::RunNext => self.put_run_next(runnable),
            Spot::Back(notify) => {
                self.local.push(runnable);
                match notify {
                    Notify::Now => true,
                    Notify::Deferred => {
                        self.wakes.notify_deferred.set(true);
                        false
                    }
                    Notify::Never => false,
                }
            }
            Spot::BlockOnTurn => {
                self.main.yielded_this_turn.borrow_mut().push(runnable);
                false
            }
            Spot::HandBack => {
                // One wake-up wakes one task; should another task land
                // here, it queues as usual.
                if let Some(other) = self.wakes.handed_back.replace(Some(runnable)) {
                    self.local.push(other);
                }
                false
            }
        }
    }

    /// Runs `f` with wake-ups on this thread delivered as `mode`, then
    /// restores the mode (the run loop's is [`WakeMode::Notify`]). The one
    /// place the mode is set: around the park (`Silent`: events dispatched
    /// there wake tasks this worker runs itself), around serving an idle
    /// worker's poll (`Silent`, `worker/serving_check.rs`), and around
    /// delivering a yielded task's deferred wake-up (`HandBack`,
    /// `worker/yielded.rs`).
    pub(super) fn with_wake_mode<R>(&self, mode: WakeMode, f: impl FnOnce() -> R) -> R {
        let outer = self.wakes.mode.replace(mode);
        let result = f();
        self.wakes.mode.set(outer);
        result
    }

    /// Counts a task pushed into this worker's own deque or run-next slot
    /// (`worker_local_schedule_count`): a store on its own cache line.
    #[inline]
    fn count_local_schedule(&self) {
        self.shared
            .metrics
            .worker(self.index)
            .count_local_schedule();
    }
}

impl Situation for OnWorker<'_> {
    fn on_worker(&self) -> bool {
        true
    }
    fn is_shutdown(&self) -> bool {
        self.core.shared.is_shutdown()
    }
    fn classify(&self, self_wake: bool) -> WakeClass {
        self.core
            .shared
            .classify_wake(self.runnable.metadata(), self_wake)
    }
    fn take_budget_yield(&self) -> bool {
        self.core.take_budget_yield()
    }
    fn wake_mode(&self) -> WakeMode {
        self.core.wakes.mode.get()
    }
    fn background_turn(&self) -> BackgroundTurn {
        self.core.background_turn(self.runnable.metadata())
    }
    fn may_run_next(&self) -> bool {
        self.core.may_run_next(self.runnable)
    }
    fn deque_is_empty(&self) -> bool {
        self.core.local.is_empty()
    }
    fn runs_block_on(&self) -> bool {
        self.core.main.block_on.is_some()
    }
}
