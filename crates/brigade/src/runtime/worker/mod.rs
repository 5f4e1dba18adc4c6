//! A worker thread: its run loop and where it looks for work. (On a
//! current-thread runtime the thread in `block_on` runs this loop, taking
//! turns with its future: `worker/block_on.rs`.)
//!
//! ## Where a worker looks, in order ([`Core::next_task`])
//! The steps are B1 to B11 of the policy (`policy.rs`, which has each
//! rule's constant and reason; `docs/design.md` draws them): the driver
//! poll (B1), the rescue of an overdue yield queue (B2), the injector
//! first every [`GLOBAL_QUEUE_INTERVAL`] ticks or after a self-wake (B3),
//! the run-next slot (B4, `worker/run_next.rs`), the own deque (B5), the
//! injector (B6), the own shard of the yield queue without searching (B7,
//! [`Core::take_back_own_yielded`]), stealing (B8, `worker/steal.rs`), the
//! yield queue as a searcher (B9, `worker/yielded.rs`), an elastic idle
//! grant (B10), and the park (B11, [`Core::wait_for_work`]).
//!
//! Tasks woken while this worker dispatches events from inside the driver's
//! poll, where it parked, go to its deque without waking another worker: it is awake
//! and about to run them. Once back, it wakes one helper only if it has more
//! than one task queued.
//!
//! Spare workers (`compensation/`, `compensation/spare.rs`) run this same loop on a
//! spare slot while a worker is stuck; a spare steps down between two tasks
//! once it is surplus. A worker ends its slot's cover before it parks and
//! after an elastic poll (whose CPU charge depends on it); after a plain
//! poll the monitor ends it at its next sample, so plain polls pay nothing.
//!
//! Where a task woken or spawned on a worker goes is A4 to A6 of the
//! policy (`Shared::schedule_on_worker`, [`Core::push_local`],
//! [`Core::push_local_yielded`], `worker/spawned.rs`).
//!
//! A task spawned into the worker's empty deque announces itself only if
//! the spawning poll goes on (`worker/spawned.rs`). Stepping aside:
//! `worker/step_aside.rs` (whether a task does, and how it goes) and
//! `worker/yielded.rs` (how a worker takes it back). A busy
//! worker's check that an idle worker serves: `worker/unserved.rs`.

mod block_on;
pub(crate) mod run_next;
pub(crate) mod spares;
mod spawned;
mod steal;
pub(crate) mod step_aside;
mod unserved;
mod yielded;

use std::cell::{Cell, RefCell};
use std::sync::Arc;
use std::time::Duration;

use crate::sync::LocalQueue;
use crate::sync::deque::Steal;

use super::handle::Handle;
use super::{Shared, context};
use crate::admission::ElasticPoll;
use crate::driver::{EVENT_INTERVAL, Parker, PollPark, UnservedProbe, earliest};
use crate::epoch::{EpochGate, epoch_of};
use crate::policy::GLOBAL_QUEUE_INTERVAL;
use crate::task::task_ref::TaskRef;
use crate::task::{Runnable, TaskMeta};
use crate::yield_queue::rescue::Slice;

/// Where a task woken on a worker thread goes ([`Core::push_local`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum WakeMode {
    /// To the worker's deque, notifying an idle worker: the usual case.
    Notify,
    /// To the worker's deque without a notification: the worker wakes
    /// tasks it will run itself (driver events dispatched while it parks).
    Silent,
    /// Handed straight back: the worker delivers a yielded task's deferred
    /// wake-up in order to run the task next (`Core::take_back_yielded`,
    /// `Core::rescue_overdue`).
    HandBack,
}

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
    tick: Cell<u32>,
    /// Whether this worker is counted as searching in `Idle`.
    searching: Cell<bool>,
    /// Set by a self-wake: check the injector before the local deque on the
    /// next tick.
    injector_first: Cell<bool>,
    /// Where tasks woken on this thread go (see [`WakeMode`]).
    wake_mode: Cell<WakeMode>,
    /// The task a [`WakeMode::HandBack`] wake scheduled.
    handed_back: Cell<Option<Runnable>>,
    /// Whether this worker's run-next slot may hold a task: it put one
    /// there and has not taken the slot since (a stealer may have).
    run_next_full: Cell<bool>,
    /// How many tasks in a row this worker took from its run-next slot.
    run_next_streak: Cell<u32>,
    /// Whether a task's poll runs on this worker now.
    in_poll: Cell<bool>,
    /// A task spawned during the current poll went into this worker's
    /// empty deque without notifying an idle worker (`worker/spawned.rs`);
    /// cleared when the poll ends.
    notify_deferred: Cell<bool>,
    /// The rescued task that runs as if nothing waited (`yield_queue/rescue.rs`).
    slice: Slice,
    /// Self-wakes of background tasks this worker let run on since its
    /// background tasks last took turns (`worker/step_aside.rs`'s
    /// `TURN_AFTER_SELF_WAKES`).
    background_run: Cell<u32>,
    /// xorshift64 state for picking steal victims.
    rng: Cell<u64>,
    /// When the current poll started (runtime-clock ns), if timed.
    poll_started: Cell<u64>,
    /// The elastic policy's state for the current poll, if elastic.
    elastic: ElasticPoll,
    /// Inside `block_in_place` (a nested call runs its closure directly).
    in_block_in_place: Cell<bool>,
    /// The epochs of `yield_if_busy()`'s slow path and of background
    /// self-wakes (`worker/step_aside.rs`).
    yield_gate: EpochGate,
    /// The epochs of this loop: its driver poll and its rescue check.
    loop_gate: EpochGate,
    /// The epoch in which `take_back_yielded` last compared the yield
    /// queue's other shards with this worker's own (`YieldQueue::pop_for`).
    yield_queue_looked: Cell<u64>,
    /// The epoch in which `take_back_own_yielded` last found every other
    /// worker's deque empty.
    others_idle_in: Cell<u64>,
    /// Each other worker's poll-watch sequence number at this worker's
    /// previous look at its deque (`Core::others_need_help`).
    others_seen: RefCell<Vec<u64>>,
    /// The epoch of the fast path's last idle check (its counter is in the
    /// worker's `PollWatch`).
    idle_check_epoch: Cell<u64>,
    /// What this worker saw at its previous check that the driver is served.
    unserved: UnservedProbe,
    /// On a current-thread runtime, the signal of the `block_on` future
    /// this worker's loop also polls (`worker/block_on.rs`); `None` on a
    /// worker thread.
    block_on: Option<Arc<super::current_thread::MainSignal>>,
    /// A task's `yield_if_busy()` gave way to the woken `block_on` future:
    /// the loop polls that future before its next task.
    yield_to_main: Cell<bool>,
    /// On a current-thread runtime, the tasks that yielded during this
    /// turn of the loop, queued again when the turn ends
    /// (`worker/block_on.rs`).
    deferred: RefCell<Vec<Runnable>>,
}

/// Runs `f` with the worker `Core` running on this thread, if any: the
/// one `context::run_worker` set ([`Core::enter`]).
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
}

impl Core {
    pub(crate) fn new(index: usize, shared: Arc<Shared>, local: LocalQueue<Runnable>) -> Self {
        Core {
            index,
            is_spare: shared.compensation.is_spare(index),
            shared,
            local,
            tick: Cell::new(0),
            searching: Cell::new(false),
            injector_first: Cell::new(false),
            wake_mode: Cell::new(WakeMode::Notify),
            handed_back: Cell::new(None),
            run_next_full: Cell::new(false),
            run_next_streak: Cell::new(0),
            in_poll: Cell::new(false),
            notify_deferred: Cell::new(false),
            slice: Slice::new(),
            background_run: Cell::new(0),
            rng: Cell::new(
                0x9E37_79B9_7F4A_7C15 ^ (index as u64 + 1).wrapping_mul(0xD1B5_4A32_D192_ED03),
            ),
            poll_started: Cell::new(0),
            elastic: ElasticPoll::new(),
            in_block_in_place: Cell::new(false),
            yield_gate: EpochGate::new(),
            loop_gate: EpochGate::new(),
            yield_queue_looked: Cell::new(u64::MAX),
            others_idle_in: Cell::new(u64::MAX),
            others_seen: RefCell::new(Vec::new()),
            idle_check_epoch: Cell::new(u64::MAX),
            unserved: UnservedProbe::default(),
            block_on: None,
            yield_to_main: Cell::new(false),
            deferred: RefCell::new(Vec::new()),
        }
    }

    /// Runs `f` (the worker loop) with this thread made this worker
    /// (`context::run_worker`).
    pub(crate) fn enter<R>(&self, f: impl FnOnce() -> R) -> R {
        let shared = &self.shared;
        let watch = &shared.metrics.worker(self.index).watch;
        context::run_worker(self, self.handle(), shared.idle.state_word(), watch, f)
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
        self.local.is_empty() && !self.run_next_full.get()
    }

    /// Pushes a task woken on this worker: into its run-next slot if
    /// another task's poll woke it (`worker/run_next.rs`), else onto the
    /// back of its deque. Returns whether an idle worker should be notified
    /// (not while this one wakes tasks it will run itself).
    pub(crate) fn push_local(&self, runnable: Runnable) -> bool {
        match self.wake_mode.get() {
            WakeMode::Notify if self.may_run_next(&runnable) => self.put_run_next(runnable),
            WakeMode::Notify => {
                self.local.push(runnable);
                true
            }
            WakeMode::Silent => {
                self.local.push(runnable);
                false
            }
            WakeMode::HandBack => {
                // One wake-up wakes one task; should another task land
                // here, it queues as usual.
                if let Some(other) = self.handed_back.replace(Some(runnable)) {
                    self.local.push(other);
                }
                false
            }
        }
    }

    /// Pushes the task that just yielded onto the back of this worker's
    /// deque (never the run-next slot); the next tick looks at the
    /// injector first.
    pub(crate) fn push_local_yielded(&self, runnable: Runnable) -> bool {
        self.injector_first.set(true);
        match self.wake_mode.get() {
            WakeMode::Notify if self.block_on.is_some() => {
                // Current-thread: runs again next turn (`worker/block_on.rs`).
                self.deferred.borrow_mut().push(runnable);
                false
            }
            WakeMode::Notify => {
                self.local.push(runnable);
                true
            }
            _ => self.push_local(runnable),
        }
    }

    /// The worker loop, until shutdown or, for a spare, until it steps
    /// down. Returns the deque, empty.
    pub(crate) fn run(self) -> LocalQueue<Runnable> {
        let compensation = &self.shared.compensation;
        compensation.set_clock(self.index, super::thread_cpu::ThreadClock::current());
        let stepped_down = self.enter(|| {
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
        drop(self.take_run_next());
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
        self.elastic.not_charged(uncharged, now);
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
        if self.block_on.is_some() {
            block_on::block_in_place_on_current_thread();
        }
        if self.in_block_in_place.replace(true) {
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
                core.shared.metrics.worker(core.index).watch.flip();
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
            // Inline: a `format_args!` held in a `let` needs Rust 1.89.
            spares::start_spares(
                shared,
                &format_args!("worker {} is in block_in_place", self.index),
            );
        }
        // Not a long poll: the blocking is declared, so the stretch ends here.
        shared.metrics.worker(self.index).watch.flip();
        let _leave = LeaveBlockInPlace(self);
        f()
    }

    fn next_task(&self) -> Option<Runnable> {
        let tick = self.tick.get().wrapping_add(1);
        self.tick.set(tick);
        let new_epoch = self.loop_gate.is_new_epoch(|| self.shared.clock_nanos());
        // B1: the driver poll.
        if tick.is_multiple_of(EVENT_INTERVAL) {
            self.shared.driver.poll_nonblocking();
        } else if new_epoch {
            self.poll_for_epoch(self.loop_gate.epoch());
        }
        // B2: the rescue of an overdue yield queue.
        if new_epoch && let Some(runnable) = self.rescue_overdue() {
            return Some(runnable);
        }
        // B3: the injector first.
        let injector_first = self.injector_first.replace(false);
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
        if !self.searching.get()
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
        if !self.searching.get() {
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

    /// B7 of the policy (`policy.rs`): a worker that just ran a task takes
    /// back yielded work of its own shard without becoming a searcher, unless another worker's deque
    /// holds work its owner is not getting to (`Core::others_need_help`:
    /// a backlog, or a task while the owner made no progress since this
    /// worker's last look; a look that writes nothing). Becoming a searcher
    /// and ending the search are two `SeqCst` read-modify-writes on the
    /// state word that every worker and every `yield_if_busy()` reads
    /// (`runtime/idle.rs`), and paying them at every turn of a background
    /// task through the yield queue made that word's cache line the
    /// bottleneck as workers were added (`yield_many` at 16 workers, 7×
    /// tokio's time; docs/results.md's scaling table). The rest is as for
    /// a searcher: I/O looked at once per epoch first, and the queue's own
    /// order (`YieldQueue::pop_for`).
    ///
    /// Not "any task in another deque", as it was: a lone task in a busy
    /// worker's deque is the task that worker runs next (a demoted task it
    /// moved to the back, a request it was woken for), and taking it meant
    /// a search, a steal, and the stolen task's own yield-queue entry on
    /// this worker, while this worker's entries waited. At 16 workers that
    /// made 2.8 million steals in 30 iterations of `yield_many`, each task
    /// moving between workers about 100 times an iteration (2.7× tokio's
    /// time; 0.4× with this rule). The same rule decides whether a
    /// background task steps aside for other workers' work
    /// (`worker/step_aside.rs`), so the two now agree.
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
        if self.others_idle_in.get() != epoch {
            if self.others_need_help() {
                return None;
            }
            self.others_idle_in.set(epoch);
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
        // fence to find that out; `is_empty` is two loads (`yield_many` at
        // 1 and 2 workers: 7-8% less time). A push it misses is one the
        // steal could have missed as well: the search's own injector steal
        // and the re-check before parking (`idle.rs`) still look. Left out
        // under loom, where its two loads multiplied one model's
        // interleavings by five (stepping_aside's deferred wake-up: 117 s
        // to 550 s) and add nothing those later looks do not check.
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
        if self.searching.replace(false) && self.shared.idle.end_search() {
            crate::sync::fence(crate::sync::Ordering::SeqCst);
            if self.shared.has_waiting_work() {
                self.shared.idle.notify_one();
            }
        }
    }

    /// Runs one task taken from a queue: drops it if it was aborted, sends
    /// an elastic task through admission first, and polls it.
    fn run_task(&self, runnable: Runnable) {
        self.poll_or_drop(runnable);
        // A child spawned into the empty deque without a notification is
        // the next task this worker takes (`worker/spawned.rs`).
        self.notify_deferred.set(false);
    }

    /// [`run_task`](Self::run_task) proper.
    fn poll_or_drop(&self, runnable: Runnable) {
        if runnable.metadata().is_cancelled() {
            // Dropping the runnable drops the future; the JoinHandle then
            // resolves as cancelled.
            drop(runnable);
            return;
        }
        // Taken first: a task that goes to wait for admission drops its
        // sample, since time spent throttled is not scheduling latency.
        let sampled_at = runnable.metadata().take_scheduled_at();
        if runnable.metadata().elastic().is_some() {
            if let Some(admitted) = self.admit_elastic(runnable) {
                self.poll_elastic(admitted, sampled_at);
            }
        } else {
            self.poll_plain(runnable, sampled_at);
        }
    }

    /// Elastic admission (`admission/elastic_poll.rs`): the task, if it may run
    /// now; `None` if it went to wait for admission.
    fn admit_elastic(&self, runnable: Runnable) -> Option<Runnable> {
        let shared = &self.shared;
        let now = || shared.clock_nanos();
        let fits_idle_worker = shared.admission.fits_idle_worker(runnable.metadata());
        match self.elastic.before_poll(&shared.admission, runnable, now) {
            Ok(admitted) => Some(admitted),
            Err(()) => {
                // Queued for admission: a push into a shared queue (see
                // `ShutdownState`; the admission lock orders it with the
                // shutdown's drain).
                if shared.shutdown.is_set_after_push() {
                    super::shutdown_state::drain_queues(shared);
                }
                // A sleeping worker may run it on an idle grant.
                if fits_idle_worker {
                    shared.idle.notify_one();
                }
                None
            }
        }
    }

    /// Polls a task that is not elastic. `sampled_at`: when it became
    /// runnable, if this schedule is sampled (its poll is then timed too).
    #[inline]
    fn poll_plain(&self, runnable: Runnable, sampled_at: Option<u64>) {
        let started = sampled_at.map(|_| self.shared.clock_nanos());
        self.begin_poll(runnable.metadata(), sampled_at, started);
        // `run` cannot unwind: the harness catches panics from the future's
        // `poll` and destructor. No `end_cover` here, to keep plain polls
        // free of it: the monitor ends a cover whose stretch ended at its
        // next sample (`Compensation::end_stale_covers`), and a worker that
        // parks ends its own.
        runnable.run();
        self.end_poll(sampled_at, started);
    }

    /// Polls an admitted elastic task with `yield_if_busy()`'s fast path
    /// off, then settles its CPU grant (`admission/elastic_poll.rs`).
    fn poll_elastic(&self, runnable: Runnable, sampled_at: Option<u64>) {
        let shared = &self.shared;
        let started = self.elastic.started();
        self.begin_poll(runnable.metadata(), sampled_at, Some(started));
        // Keeps the task allocation (and its header) alive after `run`.
        let task = TaskRef::of(&runnable);
        context::with_slow_path_forced(|| runnable.run());
        self.end_cover();
        let ended = shared.clock_nanos();
        if let Some(elastic) = task.meta().elastic() {
            self.elastic.after_poll(&shared.admission, elastic, ended);
        }
        drop(task);
        self.end_poll(sampled_at, Some(started));
    }

    /// Before a poll: records the scheduling latency of a sampled schedule,
    /// counts the poll and shows it to the long-poll detector.
    #[inline]
    fn begin_poll(&self, meta: &TaskMeta, sampled_at: Option<u64>, started: Option<u64>) {
        let counters = self.shared.metrics.worker(self.index);
        if let (Some(at), Some(now)) = (sampled_at, started) {
            counters.scheduling_latency.record(now.saturating_sub(at));
        }
        self.poll_started.set(started.unwrap_or(0));
        self.in_poll.set(true);
        counters.count_poll();
        counters.watch.begin(meta.location());
    }

    /// After a poll: ends it for the long-poll detector and records the
    /// duration of a sampled one.
    #[inline]
    fn end_poll(&self, sampled_at: Option<u64>, started: Option<u64>) {
        self.in_poll.set(false);
        let counters = self.shared.metrics.worker(self.index);
        counters.watch.end();
        if let (Some(_), Some(started)) = (sampled_at, started) {
            counters
                .poll_duration
                .record(self.shared.clock_nanos().saturating_sub(started));
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

    /// B11 of the policy (`policy.rs`): counts this worker idle, re-checks
    /// every queue and parks (`Idle::wait_for_work`).
    fn wait_for_work(&self) {
        let shared = &self.shared;
        shared.metrics.worker(self.index).count_park();
        tracing::debug!(worker = self.index, "worker parking");
        // Ends a late cover (`runtime/compensation/`): a worker with nothing to
        // do is not stuck.
        self.end_cover();
        // A spare also wakes when it becomes surplus, to step down; and a
        // worker covered just now, after the fence in `Idle::wait_for_work`, does not
        // sleep with the cover (see `Compensation::cover_running`): it goes
        // round the loop and ends the cover here.
        let has_work = || {
            self.main_is_woken()
                || shared.has_waiting_work_for(self.index, || shared.clock_nanos())
                || shared.admission.has_work_for_idle_worker()
                || shared.is_shutdown()
                || shared.compensation.is_covered(self.index)
                || (self.is_spare && shared.compensation.is_surplus())
        };
        let sleep = |parker: &Parker| {
            let cap = self.owner_grace_left();
            let timeout = match self.park_in_driver(parker, cap) {
                PollPark::Parked => return,
                // Another worker watches the poll; wake for the next timer
                // in case it stops watching before then.
                PollPark::Occupied => earliest(self.occupied_timeout(), cap),
            };
            parker.park_timeout(timeout);
        };
        let has_local_work = || !self.local_is_empty();
        self.wake_mode.set(WakeMode::Silent);
        let searching = shared.idle.wait_for_work(
            self.index,
            self.searching.get(),
            has_work,
            sleep,
            has_local_work,
        );
        self.wake_mode.set(WakeMode::Notify);
        self.searching.set(searching);
        // Events dispatched during the park queued tasks here without a
        // notification; share any beyond the one this worker runs next.
        if self.local.len() > 1 {
            shared.idle.notify_one();
        }
        tracing::debug!(worker = self.index, "worker unparked");
    }
}
