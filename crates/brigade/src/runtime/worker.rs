//! A worker thread: its run loop and where it looks for work.
//!
//! ## Where a worker looks, in order ([`Core::next_task`])
//! 1. Every [`GLOBAL_QUEUE_INTERVAL`] ticks, the injector first, so tasks
//!    spawned from outside are never starved by a worker whose deque keeps
//!    refilling itself.
//! 2. Its own FIFO deque.
//! 3. The injector (taking a batch into the own deque).
//! 4. Stealing half of a random victim's deque (only while counted as
//!    searching; see `idle.rs`).
//! 5. The yield queue: tasks that stepped aside in `yield_if_busy()` run
//!    when, and only when, nothing else is waiting.
//! 6. Otherwise it parks (`Idle::park`), which re-checks every queue,
//!    the yield queue included, after counting itself idle. It sleeps inside
//!    the driver's poll if that is free, else on its own condvar.
//!
//! Besides, every [`EVENT_INTERVAL`] ticks, and at the first tick of every
//! ≈ 33 µs epoch that no other worker polled in yet, the worker polls I/O
//! and timers without blocking (if no other thread holds the driver); it always does so right before taking
//! from the yield queue, so network-woken foreground work beats yielded
//! background work.
//!
//! Tasks woken while this worker dispatches events from inside its own
//! driver park go to its deque without waking another worker: it is awake
//! and about to run them. Once back, it wakes one helper only if it has more
//! than one task queued.
//!
//! Spare workers (`compensation/`, `spare.rs`) run this same loop on a
//! spare slot while a worker is stuck; a spare steps down between two tasks
//! once it is surplus. A worker ends its slot's cover before it parks and
//! after an elastic poll (whose CPU charge depends on it); after a plain
//! poll the monitor ends it at its next sample, so plain polls pay nothing.
//!
//! A task woken on a worker goes to that worker's deque (see
//! `Shared::schedule`); the deque is FIFO, so a self-wake (`yield_now`,
//! `yield_if_busy` moving to the back) goes to the back, and makes the
//! worker look at the injector first on its next tick: a task that steps
//! aside steps aside for work spawned from outside too, not only for its
//! deque-mates.

use std::cell::Cell;
use std::ptr::NonNull;
use std::sync::Arc;

use crossbeam_deque::{Steal, Worker};

use super::driver::{DriverPark, EVENT_INTERVAL};
use super::{Handle, Shared, context};
use crate::coop::EpochGate;
use crate::task::{Runnable, TaskMeta};

/// How many ticks (tasks taken) between two forced looks at the injector.
///
/// 61, as in tokio: it bounds how long an injected task can wait behind a
/// self-refilling local deque to 61 polls, costs one failed injector check
/// per 61 polls when there is nothing to find, and, being prime, does not
/// fall into step with other periodic work in the loop.
pub(crate) const GLOBAL_QUEUE_INTERVAL: u32 = 61;

/// How long an idle worker that found the driver briefly busy sleeps before
/// trying to park in it again.
const DRIVER_RETRY: std::time::Duration = std::time::Duration::from_micros(200);

/// The state of one worker, owned by its thread's run loop and reachable
/// through `context::with_current_worker` while the loop runs. Everything
/// mutable is in a `Cell`: only this thread touches it.
pub(crate) struct Core {
    index: usize,
    /// A spare slot's worker (see `runtime/compensation/`): it steps down, between
    /// two tasks, once it is surplus.
    is_spare: bool,
    shared: Arc<Shared>,
    local: Worker<Runnable>,
    tick: Cell<u32>,
    /// Whether this worker is counted as searching in `Idle`.
    searching: Cell<bool>,
    /// Set by a self-wake: check the injector before the local deque on the
    /// next tick.
    injector_first: Cell<bool>,
    /// Set while this worker wakes tasks that it will run itself: while it
    /// is parked (dispatching driver events) and while it wakes a task from
    /// the yield queue. Tasks woken then go to its deque without a
    /// notification.
    wakes_for_itself: Cell<bool>,
    /// xorshift64 state for picking steal victims.
    rng: Cell<u64>,
    /// When the current poll started (runtime-clock ns), if timed.
    poll_started: Cell<u64>,
    /// Elastic polls: when the current stretch without a yield point began.
    stretch_started: Cell<u64>,
    /// The current poll holds a coarse slot (`admission/slots.rs`).
    holds_coarse_slot: Cell<bool>,
    /// Elastic polls: nanoseconds of the current poll that a spare covered
    /// while this thread used no CPU, not charged to the task's grant.
    uncharged: Cell<u64>,
    /// Inside `block_in_place` (a nested call runs its closure directly).
    in_block_in_place: Cell<bool>,
    /// `yield_if_busy()`'s clock amortisation.
    pub(crate) epoch_gate: EpochGate,
    /// The periodic driver poll's clock amortisation.
    driver_gate: EpochGate,
}

impl Core {
    pub(crate) fn new(index: usize, shared: Arc<Shared>, local: Worker<Runnable>) -> Self {
        Core {
            index,
            is_spare: shared.compensation.is_spare(index),
            shared,
            local,
            tick: Cell::new(0),
            searching: Cell::new(false),
            injector_first: Cell::new(false),
            wakes_for_itself: Cell::new(false),
            rng: Cell::new(
                0x9E37_79B9_7F4A_7C15 ^ (index as u64 + 1).wrapping_mul(0xD1B5_4A32_D192_ED03),
            ),
            poll_started: Cell::new(0),
            stretch_started: Cell::new(0),
            holds_coarse_slot: Cell::new(false),
            uncharged: Cell::new(0),
            in_block_in_place: Cell::new(false),
            epoch_gate: EpochGate::new(),
            driver_gate: EpochGate::new(),
        }
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

    pub(crate) fn local_is_empty(&self) -> bool {
        self.local.is_empty()
    }

    /// Pushes a task onto the back of this worker's deque. Returns whether
    /// an idle worker should be notified (not while this one wakes tasks it
    /// will run itself).
    pub(crate) fn push_local(&self, runnable: Runnable) -> bool {
        self.local.push(runnable);
        !self.wakes_for_itself.get()
    }

    /// Pushes the task that just yielded onto the back of this worker's
    /// deque; the next tick looks at the injector first.
    pub(crate) fn push_local_yielded(&self, runnable: Runnable) -> bool {
        self.injector_first.set(true);
        self.push_local(runnable)
    }

    /// The worker loop, until shutdown or, for a spare, until it steps
    /// down. Returns the deque, empty.
    pub(crate) fn run(self) -> Worker<Runnable> {
        let compensation = &self.shared.compensation;
        compensation.set_clock(self.index, super::thread_cpu::ThreadClock::current());
        let stepped_down = context::run_worker(&self, || {
            tracing::debug!(worker = self.index, "worker started");
            self.work()
        });
        if stepped_down {
            self.end_cover();
            self.hand_back_tasks();
            tracing::debug!(worker = self.index, "spare worker stepped down");
            return self.local;
        }
        // Out of the worker's context (shutdown step 4 in `shutdown.rs`):
        // tasks woken while the local deque is dropped are set aside by
        // `schedule`, which sees the shutdown flag.
        while let Some(runnable) = self.local.pop() {
            drop(runnable);
        }
        if self.searching.get() {
            self.shared.idle.end_search();
        }
        self.end_cover();
        tracing::debug!(worker = self.index, "worker stopped");
        self.local
    }

    /// The loop proper, until shutdown or, for a spare, until it steps down
    /// (returns `true`).
    fn work(&self) -> bool {
        while !self.shared.is_shutdown() {
            if self.is_spare && self.shared.compensation.try_step_down(self.index) {
                return true;
            }
            match self.next_task() {
                Some(runnable) => {
                    self.stop_searching();
                    self.run_task(runnable);
                }
                None => self.park(),
            }
        }
        false
    }

    /// A spare that steps down: stops searching (waking another worker if
    /// it was the last searcher and work waits), then moves every task in
    /// its deque to the injector, so none waits on a worker that left.
    fn hand_back_tasks(&self) {
        self.stop_searching();
        while let Some(runnable) = self.local.pop() {
            self.shared.push_injected(runnable);
        }
    }

    /// Ends this slot's cover, if a spare covered it (see
    /// `runtime/compensation/`), and wakes a sleeping spare so that, if surplus,
    /// it steps down. One relaxed load when not covered.
    #[inline]
    pub(crate) fn end_cover(&self) {
        if let Some(ended) = self.shared.compensation.uncover(self.index) {
            self.cover_ended(ended);
        }
    }

    #[cold]
    fn cover_ended(&self, ended: super::compensation::CoverEnded) {
        let shared = &self.shared;
        let now = shared.clock_nanos();
        let uncharged = ended.uncharged(
            self.poll_started.get(),
            now,
            super::thread_cpu::own_cpu_nanos(),
        );
        self.uncharged
            .set(self.uncharged.get().saturating_add(uncharged));
        // Time blocked off the CPU does not make an elastic stretch long
        // (`note_stretch`) either.
        self.stretch_started.set(
            self.stretch_started
                .get()
                .saturating_add(uncharged)
                .min(now),
        );
        shared.idle.notify_spare(shared.compensation.first_spare());
        tracing::debug!(
            target: "brigade::compensation",
            worker = self.index,
            covered_ms = now.saturating_sub(ended.at_nanos) / 1_000_000,
            "worker is back from a covered stretch"
        );
    }

    /// `block_in_place`: runs `f` (which may block) in the current poll,
    /// with a spare worker serving in this worker's place meanwhile.
    pub(crate) fn block_in_place<R>(&self, f: impl FnOnce() -> R) -> R {
        if self.in_block_in_place.replace(true) {
            // Nested: the outer call has handed off already.
            return f();
        }
        struct Resume<'a>(&'a Core);
        impl Drop for Resume<'_> {
            fn drop(&mut self) {
                let core = self.0;
                core.shared.metrics.worker(core.index).watch.resume();
                core.end_cover();
                core.in_block_in_place.set(false);
            }
        }
        let shared = &self.shared;
        let compensation = &shared.compensation;
        if compensation.max_spares() > 0
            && compensation.cover_for_block_in_place(
                self.index,
                shared.clock_nanos(),
                super::thread_cpu::own_cpu_nanos(),
            )
        {
            tracing::debug!(
                target: "brigade::compensation",
                worker = self.index,
                "worker {} enters block_in_place; a spare worker takes its place",
                self.index
            );
            let reason = format_args!("worker {} is in block_in_place", self.index);
            super::spare::start_spares(shared, &reason);
        }
        // Not a long poll: the blocking is declared.
        shared.metrics.worker(self.index).watch.pause();
        let _resume = Resume(self);
        f()
    }

    fn next_task(&self) -> Option<Runnable> {
        let tick = self.tick.get().wrapping_add(1);
        self.tick.set(tick);
        if tick % EVENT_INTERVAL == 0 {
            self.shared.driver.poll_nonblocking();
        } else if self.driver_gate.should_scan(|| self.shared.clock_nanos()) {
            self.shared.driver.poll_for_epoch(self.driver_gate.epoch());
        }
        let injector_first = self.injector_first.replace(false);
        if (injector_first || tick % GLOBAL_QUEUE_INTERVAL == 0)
            && let Some(runnable) = self.take_from_injector()
        {
            return Some(runnable);
        }
        if let Some(runnable) = self.local.pop() {
            return Some(runnable);
        }
        if let Some(runnable) = self.take_from_injector() {
            return Some(runnable);
        }
        if let Some(runnable) = self.steal() {
            return Some(runnable);
        }
        // Only a worker that just searched everywhere (rather than one that
        // was throttled out of searching) may resume yielded work, and only
        // after a last look at I/O and timers.
        if !self.searching.get() || self.shared.yield_queue.is_empty() {
            return None;
        }
        if self.shared.driver.poll_nonblocking() > 0
            && let Some(runnable) = self.local.pop()
        {
            return Some(runnable);
        }
        self.take_from_yield_queue()
    }

    fn take_from_injector(&self) -> Option<Runnable> {
        loop {
            match self.shared.injector.steal_batch_and_pop(&self.local) {
                Steal::Success(runnable) => return Some(runnable),
                Steal::Empty => return None,
                Steal::Retry => std::hint::spin_loop(),
            }
        }
    }

    fn steal(&self) -> Option<Runnable> {
        if !self.searching.get() {
            if !self.shared.idle.try_begin_search() {
                return None;
            }
            self.searching.set(true);
        }
        let stealers = self.shared.active_stealers();
        let start = self.next_random() as usize % stealers.len();
        loop {
            let mut retry = false;
            for offset in 0..stealers.len() {
                let victim = (start + offset) % stealers.len();
                if victim == self.index {
                    continue;
                }
                match stealers[victim].steal_batch_and_pop(&self.local) {
                    Steal::Success(runnable) => {
                        self.shared.metrics.worker(self.index).count_steal();
                        return Some(runnable);
                    }
                    Steal::Retry => retry = true,
                    Steal::Empty => {}
                }
            }
            // Work may have been injected while we were looking.
            match self.shared.injector.steal_batch_and_pop(&self.local) {
                Steal::Success(runnable) => return Some(runnable),
                Steal::Retry => retry = true,
                Steal::Empty => {}
            }
            if !retry {
                return None;
            }
        }
    }

    fn next_random(&self) -> u64 {
        let mut x = self.rng.get();
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.rng.set(x);
        x
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
        if self.searching.replace(false) && self.shared.idle.end_search() {
            crate::sync::fence(crate::sync::Ordering::SeqCst);
            if self.shared.has_waiting_work() {
                self.shared.idle.notify_one();
            }
        }
    }

    fn run_task(&self, runnable: Runnable) {
        if runnable.metadata().is_cancelled() {
            // Dropping the runnable drops the future; the JoinHandle then
            // resolves as cancelled.
            drop(runnable);
            return;
        }
        let shared = &self.shared;
        // Taken first: a task that goes to wait for admission drops its
        // sample, since time spent throttled is not scheduling latency.
        let sampled_at = runnable.metadata().take_scheduled_at();
        let elastic = runnable.metadata().is_elastic();
        let (runnable, coarse_slot) = if elastic {
            match shared.admission.admit_or_enqueue(runnable) {
                Ok(admitted) => admitted,
                Err(()) => {
                    // Queued for admission: a push into a shared queue (see
                    // `ShutdownState`; the admission lock orders it with
                    // the shutdown's drain).
                    if shared.shutdown.is_set_after_push() {
                        super::shutdown::drain_queues(shared);
                    }
                    return;
                }
            }
        } else {
            (runnable, false)
        };
        let meta = runnable.metadata();
        let counters = shared.metrics.worker(self.index);
        let started = (sampled_at.is_some() || elastic).then(|| shared.clock_nanos());
        if let (Some(at), Some(now)) = (sampled_at, started) {
            counters.scheduling_latency.record(now.saturating_sub(at));
        }
        let meta_ptr = NonNull::from(meta);
        self.poll_started.set(started.unwrap_or(0));
        counters.count_poll();
        counters.watch.begin(meta.location());
        // `run` cannot unwind: the harness catches panics from the future's
        // `poll` and destructor.
        if elastic {
            // Read only on the elastic path (`coop::slow_path`), so plain
            // polls do not pay for setting them.
            self.stretch_started.set(started.unwrap_or(0));
            self.holds_coarse_slot.set(coarse_slot);
            self.uncharged.set(0);
            // Keeps the task allocation (and its header) alive after `run`.
            let keep_alive = runnable.waker();
            context::with_slow_path_forced(|| runnable.run());
            self.end_cover();
            let ended = shared.clock_nanos();
            if self.holds_coarse_slot.replace(false) {
                shared.admission.end_coarse_poll();
            }
            // SAFETY: `keep_alive` holds a reference to the task, so its
            // allocation, which contains the header, is not freed.
            let meta = unsafe { meta_ptr.as_ref() };
            self.note_stretch(meta, ended);
            let wall = ended.saturating_sub(started.unwrap_or(0));
            self.settle_elastic_poll(meta, wall.saturating_sub(self.uncharged.get()));
            drop(keep_alive);
        } else {
            // No `end_cover` here, to keep plain polls free of it: the
            // monitor ends a cover whose stretch ended at its next sample
            // (`Compensation::end_stale_covers`), and a worker that parks
            // ends its own.
            runnable.run();
        }
        counters.watch.end();
        if let (Some(_), Some(started)) = (sampled_at, started) {
            counters
                .poll_duration
                .record(shared.clock_nanos().saturating_sub(started));
        }
    }

    /// Charges an elastic task's poll to its grant; a used-up grant is
    /// settled with the token bucket and the next poll needs a new admission.
    /// (If another worker already picked the task up again, the two updates
    /// may interleave: the accounting is then off by one poll, never unsafe.)
    fn settle_elastic_poll(&self, meta: &TaskMeta, poll_nanos: u64) {
        let admission = &self.shared.admission;
        admission.add_cpu_time(poll_nanos);
        let used = meta.grant_used().unwrap_or(0).saturating_add(poll_nanos);
        if used >= admission.config().grant.as_nanos() as u64 {
            admission.settle(std::time::Duration::from_nanos(used));
            meta.set_grant_used(None);
            meta.end_stretch_grant(admission.config().grant.as_nanos() as u64);
        } else {
            meta.set_grant_used(Some(used));
        }
    }

    /// Ends the current stretch of an elastic poll at `now` (a yield point
    /// or the end of the poll): a stretch longer than the latency target
    /// marks the task coarse (see `admission/slots.rs`).
    pub(crate) fn note_stretch(&self, task: &TaskMeta, now: u64) {
        let stretch = now.saturating_sub(self.stretch_started.replace(now));
        let config = self.shared.admission.config();
        if stretch > config.target.as_nanos() as u64 {
            task.note_long_stretch(stretch, config.grant.as_nanos() as u64);
        }
    }

    /// Whether the current poll holds a coarse slot.
    pub(crate) fn holds_coarse_slot(&self) -> bool {
        self.holds_coarse_slot.get()
    }

    /// When the current poll started (runtime-clock ns; 0 if not timed).
    pub(crate) fn poll_started(&self) -> u64 {
        self.poll_started.get()
    }

    /// Nanoseconds of the current elastic poll not charged to its grant
    /// (covered by a spare while this thread used no CPU).
    pub(crate) fn uncharged(&self) -> u64 {
        self.uncharged.get()
    }

    /// Resumes the longest-parked task of the yield queue: wakes it (which
    /// schedules it onto this worker's deque, with no notification) and
    /// takes it, recording how long it waited. A wake-up that brings no
    /// task here (its task was woken already, or the waker is not a brigade
    /// task's) is used up and the next one tried.
    fn take_from_yield_queue(&self) -> Option<Runnable> {
        while let Some(yielded) = self.shared.yield_queue.pop() {
            let waited = self.shared.clock_nanos().saturating_sub(yielded.at());
            self.shared
                .metrics
                .worker(self.index)
                .yield_delay
                .record(waited);
            self.wakes_for_itself.set(true);
            yielded.wake();
            self.wakes_for_itself.set(false);
            if let Some(runnable) = self.local.pop() {
                return Some(runnable);
            }
        }
        None
    }

    fn park(&self) {
        let shared = &self.shared;
        shared.metrics.worker(self.index).count_park();
        tracing::debug!(worker = self.index, "worker parking");
        // Ends a late cover (`runtime/compensation/`): a worker with nothing to
        // do is not stuck.
        self.end_cover();
        // A spare also wakes when it becomes surplus, to step down; and a
        // worker covered just now, after the fence in `Idle::park`, does not
        // sleep with the cover (see `Compensation::cover_running`): it goes
        // round the loop and ends the cover here.
        let has_work = || {
            shared.has_waiting_work()
                || shared.is_shutdown()
                || shared.compensation.is_covered(self.index)
                || (self.is_spare && shared.compensation.is_surplus())
        };
        let sleep = |parker: &super::park::Parker| {
            let timeout = match shared.driver.park_worker(parker) {
                DriverPark::Parked => return,
                // Another worker sleeps in the poll; wake for the next timer
                // in case it stops polling before then.
                DriverPark::Occupied => shared.driver.time.time_to_next(),
                // Retry the driver soon (a spurious return is handled by
                // `Idle::park`).
                DriverPark::Busy => Some(DRIVER_RETRY),
            };
            parker.park_timeout(timeout);
        };
        let has_local_work = || !self.local.is_empty();
        self.wakes_for_itself.set(true);
        let searching = shared.idle.park(
            self.index,
            self.searching.get(),
            has_work,
            sleep,
            has_local_work,
        );
        self.wakes_for_itself.set(false);
        self.searching.set(searching);
        // Events dispatched during the park queued tasks here without a
        // notification; share any beyond the one this worker runs next.
        if self.local.len() > 1 {
            shared.idle.notify_one();
        }
        tracing::debug!(worker = self.index, "worker unparked");
    }
}
