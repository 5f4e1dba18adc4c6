//! The schedule hook: where every spawn and wake-up of this runtime's
//! tasks enters the scheduler, on a worker ([`Shared::schedule_on_worker`])
//! or off the workers ([`Shared::schedule_off_workers`]). Both ask
//! `placement::place` where the task goes and carry out its answer; the
//! worker's side of that is `worker/carry_out.rs`. The task layer reaches
//! the two through [`TaskHost`], which [`Shared`] implements here.

use async_task::ScheduleInfo;

use crate::runtime::Shared;
use crate::runtime::scheduler::placement::BackgroundTurn;
use crate::runtime::scheduler::placement::{Arrival, Placement, Situation, WakeMode, place};
use crate::task::class::WakeClass;
use crate::task::registry::Registry;
use crate::task::task_host::TaskHost;
use crate::task::{Runnable, TaskMeta};

impl Shared {
    /// Places a task spawned or woken on one of this runtime's workers.
    /// Off the workers it gives the task back untouched, for
    /// [`schedule_off_workers`](Self::schedule_off_workers): one read of
    /// the thread's worker serves both the test and the placement (see
    /// `task::task_host::schedule`, which calls the two).
    #[inline]
    pub(crate) fn schedule_on_worker(
        &self,
        runnable: Runnable,
        arrival: Arrival,
    ) -> Result<(), Runnable> {
        let notify = crate::runtime::scheduler::worker::with_current(|core| match core {
            Some(core) if std::ptr::eq(&**core.shared(), self) => {
                if arrival == Arrival::Spawned {
                    // In the worker's own counters, not in one every
                    // worker writes.
                    self.metrics.worker(core.index()).count_spawn();
                }
                runnable.metadata().mirror_task_state();
                let placement = place(arrival, &core.situation(&runnable));
                Ok(core.carry_out(runnable, placement))
            }
            _ => Err(runnable),
        })?;
        if notify {
            self.idle.notify_one();
        }
        Ok(())
    }

    /// Places a task spawned or woken anywhere but on this runtime's
    /// workers (another thread, a timer or I/O harvested by a non-worker,
    /// another runtime's worker).
    pub(crate) fn schedule_off_workers(&self, runnable: Runnable, arrival: Arrival) {
        runnable.metadata().mirror_task_state();
        let situation = OffWorkers {
            shared: self,
            task: runnable.metadata(),
        };
        match place(arrival, &situation) {
            Placement::CancelLater => self.shutdown.cancel_later(runnable),
            Placement::Injector => self.push_injected(runnable),
            // Off the workers `place` answers only the two above (its
            // tests say so); the injector takes any task.
            Placement::YieldQueue | Placement::TakeTurns | Placement::Here { .. } => {
                self.push_injected(runnable)
            }
        }
    }

    /// A2: classifies a wake of `task` (`task/class.rs`), counting and
    /// reporting a demotion or promotion.
    #[inline]
    pub(crate) fn classify_wake(&self, task: &TaskMeta, self_wake: bool) -> WakeClass {
        let class = task.class_state().classify_wake(self_wake);
        match class {
            WakeClass::Demoted | WakeClass::Promoted => {
                self.metrics.count_class_change(class == WakeClass::Demoted);
                crate::task::class::report_change(class, task);
            }
            WakeClass::Foreground | WakeClass::Background => {}
        }
        class
    }
}

impl Arrival {
    /// A wake-up as `async-task` reports it.
    pub(crate) fn of_wake(info: async_task::ScheduleInfo) -> Arrival {
        if info.woken_while_running {
            Arrival::SelfWoken
        } else {
            Arrival::Woken
        }
    }
}

/// The situation off the workers: `place` asks only the first three
/// questions there (A1).
struct OffWorkers<'a> {
    shared: &'a Shared,
    task: &'a TaskMeta,
}

impl Situation for OffWorkers<'_> {
    fn on_worker(&self) -> bool {
        false
    }
    fn is_shutdown(&self) -> bool {
        self.shared.is_shutdown()
    }
    fn classify(&self, self_wake: bool) -> WakeClass {
        self.shared.classify_wake(self.task, self_wake)
    }
    // Never asked off the workers; the answers of a worker with nothing
    // special going on.
    fn take_budget_yield(&self) -> bool {
        false
    }
    fn wake_mode(&self) -> WakeMode {
        WakeMode::Notify
    }
    fn background_turn(&self) -> BackgroundTurn {
        BackgroundTurn::RunsOn
    }
    fn may_run_next(&self) -> bool {
        false
    }
    fn deque_is_empty(&self) -> bool {
        false
    }
    fn runs_block_on(&self) -> bool {
        false
    }
}

impl TaskHost for Shared {
    /// A worker of this runtime (a primary or a spare) holds the runtime's
    /// `Arc` in its `Core` for as long as its thread runs.
    fn schedule_if_held(&self, runnable: Runnable, info: ScheduleInfo) -> Result<(), Runnable> {
        self.schedule_on_worker(runnable, Arrival::of_wake(info))
    }

    fn schedule(&self, runnable: Runnable, info: ScheduleInfo) {
        self.schedule_off_workers(runnable, Arrival::of_wake(info));
    }

    fn registry(&self) -> &Registry {
        &self.registry
    }

    fn hold_attention(&self) {
        self.idle.attention().hold();
    }

    fn release_attention(&self) {
        self.idle.attention().release();
    }

    fn evict_aborted(&self) {
        Shared::evict_aborted(self);
    }
}
