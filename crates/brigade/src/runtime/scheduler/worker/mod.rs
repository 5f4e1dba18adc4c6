//! A worker thread: its run loop and where it looks for work. (On a
//! current-thread runtime the thread in `block_on` runs this loop, taking
//! turns with its future: `worker/block_on.rs`.)
//!
//! ## Where a worker looks, in order ([`Core::next_task`])
//! Rules B1 to B11 of the policy (`policy.rs`, with each rule's constant
//! and reason), one step each in `next_task`, top to bottom, each step
//! marked with its rule's number.
//!
//! Tasks woken while this worker dispatches events from its park wake
//! nobody: A6's first exception.
//!
//! Spare workers (`compensation/`, `worker/spare_threads.rs`) run this same loop
//! on a spare slot while a worker is stuck: F5 to F10 of the policy (when a
//! spare steps down, F9; where a worker ends its slot's cover, F7).
//!
//! Where a task woken or spawned on a worker goes is A1 to A6 of the
//! policy, decided in one place (`runtime/scheduler/placement.rs`) and carried out
//! by `worker/carry_out.rs`.
//!
//! A task spawned into the worker's empty deque announces itself only if
//! the spawning poll goes on (`worker/spawned.rs`). Stepping aside:
//! `worker/step_aside.rs` (whether a task does, and how it goes) and
//! `worker/yielded.rs` (how a worker takes it back). A busy
//! worker's check that an idle worker serves: `worker/serving_check.rs`.

pub(crate) mod block_on;
pub(crate) mod budget;
mod carry_out;
pub(crate) mod floor;
mod park_by_limit;
pub(crate) mod run_next;
mod run_task;
mod serving_check;
pub(crate) mod spare_threads;
mod spawned;
mod state;
mod steal;
pub(crate) mod step_aside;
mod yielded;

use std::sync::Arc;
use std::time::Duration;

use crate::sync::LocalQueue;
use crate::sync::deque::Steal;

use crate::driver::{Parker, PollPark, UnservedProbe, earliest};
use crate::epoch::epoch_of;
use crate::policy::{EVENT_INTERVAL, GLOBAL_QUEUE_INTERVAL};
use crate::runtime::handle::Handle;
use crate::runtime::scheduler::placement::WakeMode;
use crate::runtime::{Shared, context};

use crate::task::Runnable;

/// The state of one worker, owned by its thread's run loop and reachable
/// through [`with_current`] while the loop runs. Everything
/// mutable is in a `Cell`: only this thread touches it.
pub(crate) struct Core {
    index: usize,
    /// A spare slot's worker (see `runtime/compensation/`): it steps down, between
    /// two tasks, once it is surplus.
    is_spare: bool,
    shared: Arc<Shared>,
    local: LocalQueue<Runnable>,
    /// B1, B3 (`state.rs` groups the state by the rule it serves).
    ticks: state::Ticks,
    /// B8.
    search: state::Search,
    /// A4 to A6, B9.
    wakes: state::Wakes,
    /// A5, B4.
    run_next: state::RunNextUse,
    /// A3, B2, C4.
    turns: state::Turns,
    /// B2's floor turn: the background floor's account (`worker/floor.rs`).
    floor: floor::Floor,
    /// The once-per-epoch checks.
    epochs: state::Epochs,
    /// What the crowded-host check (C1) saw last.
    unserved: UnservedProbe,
    /// B11: the park's marks for the worker's metrics.
    parks: state::Parks,
    /// The poll running now.
    current_poll: state::CurrentPoll,
    /// On a current-thread runtime, the `block_on` future's state.
    main: state::Main,
}

/// Runs `f` with the worker `Core` running on this thread, if any: the
/// one `context::run_worker` set ([`Core::enter`]).
#[inline]
pub(crate) fn with_current<R>(f: impl FnOnce(Option<&Core>) -> R) -> R {
    context::with_worker(|worker| {
        f(worker.map(|worker| {
            debug_assert!((worker as &dyn std::any::Any).is::<Core>());
            // SAFETY: `Core` is the only type that implements
            // `context::Worker`, so the trait object points at a `Core`;
            // `with_worker` keeps it alive while `f` runs.
            unsafe { &*(worker as *const dyn context::Worker).cast::<Core>() }
        }))
    })
}

impl context::Worker for Core {
    fn block_in_place(&self, f: &mut dyn FnMut()) {
        Core::block_in_place(self, f);
    }

    fn budget_work_waits(&self, local_set: Option<bool>) -> bool {
        Core::budget_work_waits(self, local_set)
    }

    fn budget_yield(&self, in_local_set: bool) {
        Core::budget_yield(self, in_local_set);
    }
}

impl Core {
    pub(crate) fn new(index: usize, shared: Arc<Shared>, local: LocalQueue<Runnable>) -> Self {
        Core {
            index,
            is_spare: shared.compensation.is_spare(index),
            floor: floor::Floor::new(shared.config.background_floor),
            shared,
            local,
            ticks: state::Ticks::new(),
            search: state::Search::new(index),
            wakes: state::Wakes::new(),
            run_next: state::RunNextUse::new(),
            turns: state::Turns::new(),
            epochs: state::Epochs::new(),
            unserved: UnservedProbe::default(),
            parks: state::Parks::default(),
            current_poll: state::CurrentPoll::new(),
            main: state::Main::default(),
        }
    }

    /// Runs `f` (the worker loop) with this thread made this worker
    /// (`context::run_worker`).
    pub(crate) fn enter<R>(&self, f: impl FnOnce() -> R) -> R {
        let shared = &self.shared;
        let record = &shared.metrics.worker(self.index).poll_record;
        context::run_worker(self, self.handle(), shared.idle.state_word(), record, f)
    }

    pub(crate) fn index(&self) -> usize {
        self.index
    }

    pub(crate) fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }

    pub(crate) fn handle(&self) -> Handle {
        Handle {
            shared: self.shared.clone(),
        }
    }

    /// Whether this worker has no task of its own waiting: its deque and
    /// its run-next slot are empty.
    pub(crate) fn local_is_empty(&self) -> bool {
        self.local.is_empty() && !self.run_next.full.get()
    }

    /// The worker loop, until shutdown or, for a spare, until it steps
    /// down. Returns the deque, empty.
    pub(crate) fn run(self) -> LocalQueue<Runnable> {
        let compensation = &self.shared.compensation;
        compensation.set_clock(
            self.index,
            crate::runtime::threads::thread_cpu::ThreadClock::current(),
        );
        let counters = self.shared.metrics.worker(self.index);
        counters.busy.start(self.shared.clock_nanos());
        let stepped_down = self.enter(|| {
            tracing::debug!(target: "brigade::runtime::worker", worker = self.index, "worker started");
            self.work()
        });
        counters.busy.stop(self.shared.clock_nanos());
        if stepped_down {
            self.end_cover();
            self.hand_back_tasks();
            tracing::debug!(target: "brigade::runtime::worker", worker = self.index, "spare worker stepped down");
            return self.local;
        }
        // Out of the worker's context (shutdown step 4 in `shutdown.rs`):
        // tasks woken while the local deque is dropped are set aside by
        // `schedule`, which sees the shutdown flag.
        drop(self.take_run_next());
        while let Some(runnable) = self.local.pop() {
            drop(runnable);
        }
        if self.search.searching.get() {
            self.shared.idle.end_search();
        }
        self.end_cover();
        tracing::debug!(target: "brigade::runtime::worker", worker = self.index, "worker stopped");
        self.local
    }

    /// The loop proper, until shutdown or, for a spare, until it steps down
    /// (returns `true`).
    fn work(&self) -> bool {
        while !self.shared.is_shutdown() {
            if self.is_spare && self.shared.compensation.try_step_down(self.index) {
                return true;
            }
            if self.parked_by_limit() {
                self.park_by_limit();
                continue;
            }
            match self.next_task() {
                Some(runnable) => {
                    self.stop_searching();
                    self.run_task(runnable);
                }
                None => self.wait_for_work(),
            }
        }
        false
    }

    /// A spare that steps down: stops searching (waking another worker if
    /// it was the last searcher and work waits), then moves every task in
    /// its deque to the injector, so none waits on a worker that left.
    fn hand_back_tasks(&self) {
        self.stop_searching();
        // A task between this deque and the injector is in neither: a
        // hold on the clock covers it (`auto_advance.rs`).
        self.shared.driver.clock().acquire_hold();
        if let Some(runnable) = self.take_run_next() {
            self.shared.push_injected(runnable);
        }
        while let Some(runnable) = self.local.pop() {
            self.shared.push_injected(runnable);
        }
        self.shared.driver.release_hold();
    }

    /// F7 of the policy (`policy.rs`): ends this slot's cover, if a spare
    /// covered it (`runtime/compensation/`), and wakes a sleeping spare so
    /// that, if surplus, it steps down (F9). One relaxed load when not
    /// covered.
    #[inline]
    pub(crate) fn end_cover(&self) {
        if let Some(ended) = self.shared.compensation.uncover(self.index) {
            self.cover_ended(ended);
        }
    }

    #[cold]
    fn cover_ended(&self, ended: crate::runtime::compensation::CoverEnded) {
        let shared = &self.shared;
        let now = shared.clock_nanos();
        let uncharged = ended.uncharged(
            self.current_poll.started.get(),
            now,
            crate::runtime::threads::thread_cpu::own_cpu_nanos(),
        );
        self.current_poll.elastic.not_charged(uncharged, now);
        shared.idle.notify_spare(shared.compensation.first_spare());
        tracing::debug!(
            target: "brigade::compensation",
            worker = self.index,
            covered_ms = now.saturating_sub(ended.at_nanos) / 1_000_000,
            "worker is back from a covered stretch"
        );
    }

    /// F6 of the policy (`policy.rs`): `block_in_place` runs `f` (which may
    /// block) in the current poll, with a spare worker serving in this
    /// worker's place meanwhile.
    pub(crate) fn block_in_place<R>(&self, f: impl FnOnce() -> R) -> R {
        if self.main.block_on.is_some() {
            block_on::block_in_place_on_current_thread();
        }
        if self.current_poll.in_block_in_place.replace(true) {
            // Nested: the outer call has handed off already.
            return f();
        }
        // A child spawned before would wait for the whole block.
        self.flush_deferred_notify();
        struct LeaveBlockInPlace<'a>(&'a Core);
        impl Drop for LeaveBlockInPlace<'_> {
            fn drop(&mut self) {
                let core = self.0;
                // A new stretch of the poll begins.
                core.shared.metrics.worker(core.index).poll_record.flip();
                core.end_cover();
                core.current_poll.in_block_in_place.set(false);
            }
        }
        let shared = &self.shared;
        let compensation = &shared.compensation;
        if compensation.max_spares() > 0
            && compensation.cover_for_block_in_place(
                self.index,
                shared.clock_nanos(),
                crate::runtime::threads::thread_cpu::own_cpu_nanos(),
            )
        {
            tracing::debug!(
                target: "brigade::compensation",
                worker = self.index,
                "worker {} enters block_in_place; a spare worker takes its place",
                self.index
            );
            // Inline: a `format_args!` held in a `let` needs Rust 1.89.
            spare_threads::start_spares(
                shared,
                &format_args!("worker {} is in block_in_place", self.index),
            );
        }
        // Not a long poll: the blocking is declared, so the stretch ends here.
        shared.metrics.worker(self.index).poll_record.flip();
        let _leave = LeaveBlockInPlace(self);
        f()
    }

    fn next_task(&self) -> Option<Runnable> {
        let tick = self.ticks.count.get().wrapping_add(1);
        self.ticks.count.set(tick);
        let new_epoch = self
            .epochs
            .loop_gate
            .is_new_epoch(|| self.shared.clock_nanos());
        // B1: the driver poll.
        if tick.is_multiple_of(EVENT_INTERVAL) {
            self.shared.driver.poll_nonblocking();
        } else if new_epoch {
            self.poll_for_epoch(self.epochs.loop_gate.epoch());
        }
        // E3: under a CPU limit whose window is spent, nothing of the
        // background's (B2, B7, B9, B10) until the window ends.
        let paced = self.is_paced();
        // B2: the rescue of an overdue yield queue, else the floor's turn.
        if new_epoch
            && !paced
            && let Some(runnable) = self.rescue_overdue()
        {
            return Some(runnable);
        }
        // B3: the injector first.
        let injector_first = self.ticks.injector_first.replace(false);
        if (injector_first || tick.is_multiple_of(GLOBAL_QUEUE_INTERVAL))
            && let Some(runnable) = self.take_from_injector()
        {
            return Some(runnable);
        }
        // B4: the run-next slot.
        if let Some(runnable) = self.next_from_run_next() {
            return Some(runnable);
        }
        // B5: the own deque.
        if let Some(runnable) = self.local.pop() {
            return Some(runnable);
        }
        // B6: the injector.
        if let Some(runnable) = self.take_from_injector() {
            return Some(runnable);
        }
        // B7: the own shard of the yield queue, without searching.
        if !self.search.searching.get()
            && !paced
            && let Some(runnable) = self.take_back_own_yielded()
        {
            return Some(runnable);
        }
        // B8: steal, as a searcher.
        if let Some(runnable) = self.steal() {
            return Some(runnable);
        }
        // B9: the yield queue. Only a worker that just searched everywhere (rather than one that
        // was throttled out of searching) may take back yielded work, and only
        // after a look at I/O and timers, unless some worker already looked
        // in this epoch: I/O is then noticed within an epoch, as when every
        // worker is busy, and background tasks that take turns through the
        // yield queue (`yield_now()` loops, demoted) do not pay an
        // `epoll_wait` per turn, a syscall per unit of their work.
        if !self.search.searching.get() || paced {
            return None;
        }
        if !self.shared.yield_queue.is_empty() {
            // One clock read serves the epoch and the take-back: a poll that
            // ran in between (at most one per epoch) is left out of the delay
            // the taken task is recorded to have waited.
            let now = self.shared.clock_nanos();
            if self.poll_for_epoch(epoch_of(now)) > 0
                && let Some(runnable) = self.local.pop()
            {
                return Some(runnable);
            }
            if let Some(runnable) = self.take_back_yielded(now) {
                return Some(runnable);
            }
        }
        // B10: elastic work waiting for tokens, on CPU nobody else wants
        // (`admission/mod.rs`). B11, the park, is the caller's.
        self.shared.admission.take_for_idle_worker()
    }

    /// B7 of the policy (`policy.rs`, with its reason).
    ///
    /// The look at the other deques reads a cache line per worker, which
    /// its owner writes at every push and pop; a look that found no help
    /// needed holds for the rest of its epoch, as the other checks of
    /// background work against other workers' queues do (`step_aside.rs`).
    fn take_back_own_yielded(&self) -> Option<Runnable> {
        let shared = &self.shared;
        if !shared.yield_queue.has_entries_in(self.index) {
            return None;
        }
        let now = shared.clock_nanos();
        let epoch = epoch_of(now);
        if self.epochs.others_idle_in.get() != epoch {
            if self.others_need_help() {
                return None;
            }
            self.epochs.others_idle_in.set(epoch);
        }
        if self.poll_for_epoch(epoch_of(now)) > 0
            && let Some(runnable) = self.local.pop()
        {
            return Some(runnable);
        }
        self.take_back_yielded(now)
    }

    fn take_from_injector(&self) -> Option<Runnable> {
        // Most looks find it empty (one after every self-wake, one every
        // `GLOBAL_QUEUE_INTERVAL` ticks). crossbeam's steal pays a `SeqCst`
        // fence to find that out; `is_empty` is two loads. A push it misses
        // is one the steal could have missed as well: the search's own
        // injector steal and the re-check before parking (`idle.rs`) still
        // look. Left out under loom, where its two loads multiply a model's
        // interleavings several times over and add nothing those later
        // looks do not check. (Figures:
        // docs/decisions.md#figures-from-comments.)
        #[cfg(not(loom))]
        if self.shared.injector.is_empty() {
            return None;
        }
        loop {
            match self.shared.injector.steal_batch_and_pop(&self.local) {
                Steal::Success(runnable) => return Some(runnable),
                Steal::Empty => return None,
                Steal::Retry => crate::sync::spin_loop(),
            }
        }
    }

    /// Called when a task was found: a searching worker stops searching and,
    /// if it was the last searcher and more work is still queued, wakes
    /// another (see `idle.rs`).
    ///
    /// Waking another only when work is visible halves the wake-ups per
    /// remote spawn (the woken worker would find nothing and park again).
    /// No wake-up is lost: `end_search` is a `SeqCst` RMW followed by a
    /// `SeqCst` fence before the queues are read, and a pusher fences between
    /// its push and its read of the searching count, so either this check
    /// sees the push or the pusher sees no searcher and wakes a worker itself.
    fn stop_searching(&self) {
        if self.search.searching.replace(false) && self.shared.idle.end_search() {
            crate::sync::fence(crate::sync::Ordering::SeqCst);
            if self.shared.has_waiting_work() {
                self.shared.idle.notify_one();
            }
        }
    }

    /// How long a worker going to sleep may sleep for the yield queue's
    /// sake: until the grace of another worker's lone entry ends, which it
    /// may take then (`YieldQueue::owner_grace_ends_for`), if one waits.
    /// Such an entry came with a notification (every push does), so this
    /// worker either sees it here or is unparked.
    fn owner_grace_left(&self) -> Option<Duration> {
        let ends = self.shared.yield_queue.owner_grace_ends_for(self.index)?;
        let now = self.shared.clock_nanos();
        Some(Duration::from_nanos(ends.saturating_sub(now)))
    }

    /// B11 of the policy (`policy.rs`): how long a worker that found the
    /// driver watched sleeps at most: until the next timer while the clock
    /// runs (the watcher may stop watching before then). With the clock paused it sleeps until woken, and first
    /// wakes the watcher: this worker is now idle, which may be what the
    /// auto-advance waits for.
    fn occupied_timeout(&self) -> Option<Duration> {
        let driver = &self.shared().driver;
        if driver.clock().is_paused() {
            driver.unpark_watcher();
            return None;
        }
        driver.time_to_next()
    }

    /// B11 of the policy (`policy.rs`): counts this worker idle, re-checks
    /// every queue and parks (`Idle::wait_for_work`).
    fn wait_for_work(&self) {
        let shared = &self.shared;
        tracing::debug!(target: "brigade::runtime::worker", worker = self.index, "worker parking");
        // Ends a late cover (`runtime/compensation/`): a worker with nothing to
        // do is not stuck.
        self.end_cover();
        // A spare also wakes when it becomes surplus, to step down; and a
        // worker covered just now, after the fence in `Idle::wait_for_work`, does not
        // sleep with the cover (see `Compensation::cover_running`): it goes
        // round the loop and ends the cover here.
        // E3: while paced, background work (the yield queue, elastic idle
        // grants) is no work: the worker sleeps until the window ends.
        let paced = self.is_paced();
        let has_work = || {
            self.main_is_woken()
                || (paced && shared.has_queued_tasks())
                || (!paced && shared.has_waiting_work_for(self.index, || shared.clock_nanos()))
                || (!paced && shared.admission.has_work_for_idle_worker())
                || shared.is_shutdown()
                || shared.compensation.is_covered(self.index)
                || (self.is_spare && shared.compensation.is_surplus())
        };
        let sleep = |parker: &Parker| {
            // One clock read serves the cap and the busy time's end; the
            // park's own end costs one more, off the poll path.
            let now = shared.clock_nanos();
            self.parks.parking(shared.metrics.worker(self.index), now);
            let cap = earliest(self.owner_grace_left(), shared.cpu.pacer.sleep_cap(now));
            match self.park_in_driver(parker, cap) {
                PollPark::Parked => {}
                // Another worker watches the poll; wake for the next timer
                // in case it stops watching before then.
                PollPark::Occupied => {
                    parker.park_timeout(earliest(self.occupied_timeout(), cap));
                }
            }
            self.parks
                .unparked(shared.metrics.worker(self.index), shared.clock_nanos());
        };
        let has_local_work = || !self.local_is_empty();
        // The park hooks (`Builder::on_thread_park`) go round the re-check
        // and the sleep: a task the park hook spawns is seen by the re-check.
        let searching = crate::runtime::threads::thread_hooks::around_park(shared, || {
            self.with_wake_mode(WakeMode::Silent, || {
                shared.idle.wait_for_work(
                    self.index,
                    self.search.searching.get(),
                    has_work,
                    sleep,
                    has_local_work,
                )
            })
        });
        self.search.searching.set(searching);
        // Events dispatched during the park queued tasks here without a
        // notification; share any beyond the one this worker runs next.
        if self.local.len() > 1 {
            shared.idle.notify_one();
        }
        tracing::debug!(target: "brigade::runtime::worker", worker = self.index, "worker unparked");
    }
}
