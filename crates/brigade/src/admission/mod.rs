//! Elastic CPU admission: the backstop for background work whose yield
//! points are too far apart for [`yield_if_busy`](crate::yield_if_busy) to
//! protect foreground latency on its own.
//!
//! A task spawned with [`spawn_elastic`](crate::spawn_elastic) runs on
//! *grants* of CPU time ([`ElasticConfig::grant`], 10 ms by default).
//! Before a worker polls an elastic task that holds no grant, it asks the
//! token bucket for one: if tokens are left, the grant is taken from the
//! bucket and the task runs; otherwise the task waits in a FIFO admission
//! queue, off the workers, until the monitor thread sees tokens again. Each
//! poll's duration counts against the grant; once it is used up (checked
//! after each poll and in `yield_if_busy()`) the difference between grant
//! and use is settled with the bucket (a refund, or debt) and the next poll
//! needs a new admission.
//!
//! The bucket refills at `limit × workers` CPU-seconds per second, and holds
//! at most one second of that. The limit is set by the [`Controller`] from
//! the runtime's p99 scheduling latency, every sample period, on the monitor
//! thread (`runtime/threads/monitor.rs`).
//!
//! Tasks seen going longer than the latency target between yield points
//! are *coarse*: at most `workers − 1` of their polls run at once, so one
//! worker stays free for foreground work (`elastic_poll.rs` says why). A coarse
//! task with no free slot waits in the same queue, keeping its grant.
//!
//! A worker with nothing else to run does not wait for tokens: it takes the
//! first waiting task that is not coarse and runs it on an *idle grant*,
//! which no tokens pay for ([`Admission::take_for_idle_worker`];
//! [`ElasticConfig::use_idle_workers`] turns this off). That CPU would
//! otherwise go unused, and the task's `yield_if_busy()` hands the worker
//! back when foreground work turns up, so the foreground loses nothing to
//! it: the bucket bounds elastic work only where it competes with the
//! foreground. Coarse tasks never get idle grants.
//!
//! The mechanism lives in three files: this one (the token bucket and its
//! queue, and the monitor thread's two calls, [`Admission::wait_and_admit`]
//! and [`Admission::tick`]), `controller.rs` (the settings and the
//! controller) and `elastic_poll.rs` (the policy as a worker applies it, the coarse
//! slots, and the per-task state). The scheduler calls in only through
//! [`ElasticPoll`] (the worker loop and the yield path), those two monitor
//! calls, and [`Admission::take_waiting`] and [`Admission::wake_monitor`]
//! (shutdown).

mod controller;
mod elastic_poll;

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, AtomicUsize};
use std::time::{Duration, Instant};

use controller::Controller;
pub use controller::ElasticConfig;
use elastic_poll::CoarseSlots;
pub(crate) use elastic_poll::ElasticPoll;

use crate::sync::{Condvar, Mutex, MutexGuard, Ordering, lock, wait_timeout};
use crate::task::{ElasticState, Runnable, TaskMeta};

/// The admission state of a task that goes through admission: only elastic
/// tasks do (`Core::run_task`, `runtime/scheduler/worker/mod.rs`).
fn elastic(meta: &TaskMeta) -> &ElasticState {
    meta.elastic()
        .expect("only elastic tasks go through admission")
}

/// Elastic admission of one runtime: the token bucket, the admission queue
/// and the coarse slots.
///
/// ## Protocol
/// All bucket and queue state is under one mutex; it is touched once per
/// grant (≈ 10 ms of CPU), not per poll. Workers enqueue and notify
/// `changed`; the monitor thread waits on `changed` (with the time of the
/// next tick or refill as timeout: [`wait_and_admit`](Self::wait_and_admit))
/// and moves admitted tasks to the injector. How the coarse slots are
/// handed back is on [`CoarseSlots`].
pub(crate) struct Admission {
    config: ElasticConfig,
    state: Mutex<State>,
    /// Signals the monitor thread: a task started waiting, a coarse slot
    /// was given back while tasks wait, or shutdown.
    changed: Condvar,
    coarse_slots: CoarseSlots,
    /// Statistics readable without the lock.
    waiting: AtomicUsize,
    limit_bits: AtomicU64,
    cpu_time_nanos: AtomicU64,
    /// Grants given to idle workers ([`take_for_idle_worker`](Self::take_for_idle_worker)).
    idle_grants: AtomicU64,
    /// Tasks the monitor took out of the queue and has not yet pushed into
    /// the injector: raised under the lock as they leave the queue, lowered
    /// after the push ([`handed_over`](Self::handed_over)), so
    /// [`is_holding`](Self::is_holding) never misses one in between.
    /// `SeqCst`: the auto-advance reads it after the queue (under the lock)
    /// and before the injector, and the monitor lowers it only after its
    /// push; in the single order of these operations a task is always seen
    /// in one of the three places.
    handing_over: AtomicUsize,
}

/// What one wait of the monitor thread admitted
/// ([`Admission::wait_and_admit`]).
#[cfg_attr(loom, allow(dead_code))] // The monitor thread uses it; loom models leave the monitor out.
pub(crate) struct Admitted {
    /// When the wait ended and admission was decided.
    pub(crate) at: Instant,
    /// The admitted tasks, in order, for the injector (aborted ones among
    /// them, which the worker that pops them drops).
    pub(crate) tasks: Vec<Runnable>,
    /// When tokens are back, if the first task left waits for tokens.
    pub(crate) refill_at: Option<Instant>,
}

/// What [`Admission`]'s mutex guards.
struct State {
    /// CPU nanoseconds available; negative is debt.
    tokens: f64,
    refilled_at: Instant,
    /// When debt was last forgiven (or the bucket last found out of debt).
    debt_checked_at: Instant,
    /// Refill rate in force, in CPU nanoseconds per second: the limit times
    /// the workers' CPU ([`refill_rate`]). The bucket holds at most one
    /// second of it.
    rate: f64,
    queue: VecDeque<Runnable>,
    /// Ticked by the monitor thread only ([`Admission::tick`]).
    controller: Controller,
}

/// Refill rate in CPU nanoseconds per second for utilization `limit` of
/// `capacity` CPUs: the runtime's workers, or its CPU limit if lower
/// (E3 of the policy; the monitor passes it at each tick, so that it is
/// stored once).
fn refill_rate(limit: f64, capacity: f64) -> f64 {
    limit * capacity * 1e9
}

impl State {
    /// The most tokens the bucket holds: one second's refill.
    fn burst(&self) -> f64 {
        self.rate
    }
}

impl Admission {
    pub(crate) fn new(config: ElasticConfig, num_workers: usize) -> Self {
        let now = Instant::now();
        let limit = config.min_utilization;
        let rate = refill_rate(limit, num_workers as f64);
        let admission = Admission {
            state: Mutex::new(State {
                tokens: 0.0,
                refilled_at: now,
                debt_checked_at: now,
                rate,
                queue: VecDeque::new(),
                controller: Controller::new(config.clone()),
            }),
            changed: Condvar::new(),
            coarse_slots: CoarseSlots::new(num_workers),
            waiting: AtomicUsize::new(0),
            limit_bits: AtomicU64::new(limit.to_bits()),
            cpu_time_nanos: AtomicU64::new(0),
            idle_grants: AtomicU64::new(0),
            handing_over: AtomicUsize::new(0),
            config,
        };
        {
            let mut state = lock(&admission.state);
            state.tokens = state.burst();
        }
        admission
    }

    pub(crate) fn config(&self) -> &ElasticConfig {
        &self.config
    }

    fn grant_nanos(&self) -> f64 {
        self.config.grant.as_nanos() as f64
    }

    fn refill(&self, state: &mut State, now: Instant) {
        let elapsed = now
            .saturating_duration_since(state.refilled_at)
            .as_secs_f64();
        let burst = state.burst();
        state.tokens = (state.tokens + state.rate * elapsed).min(burst);
        state.refilled_at = now;
        if state.tokens >= 0.0 {
            state.debt_checked_at = now;
        } else if now.saturating_duration_since(state.debt_checked_at)
            >= crate::policy::FORGIVE_DEBT_EVERY
        {
            state.tokens = 0.0;
            state.debt_checked_at = now;
        }
    }

    /// A worker asks to poll an elastic task. `Ok` carries the task and
    /// whether it took a coarse slot (give it back with
    /// [`end_coarse_poll`](Self::end_coarse_poll) after the poll). On `Err`
    /// the task has been queued, keeping any grant it holds, and the
    /// monitor told.
    pub(crate) fn admit_or_enqueue(&self, runnable: Runnable) -> Result<(Runnable, bool), ()> {
        let task = elastic(runnable.metadata());
        let coarse = task.is_coarse();
        if coarse && !self.coarse_slots.try_acquire() {
            self.enqueue(lock(&self.state), runnable);
            return Err(());
        }
        if task.grant_used().is_some() {
            return Ok((runnable, coarse));
        }
        let mut state = lock(&self.state);
        self.refill(&mut state, Instant::now());
        // FIFO: nobody jumps the queue.
        if state.queue.is_empty() && state.tokens > 0.0 {
            state.tokens -= self.grant_nanos();
            elastic(runnable.metadata()).set_grant_used(Some(0));
            return Ok((runnable, coarse));
        }
        if coarse {
            self.coarse_slots.release();
        }
        self.enqueue(state, runnable);
        Err(())
    }

    fn enqueue(&self, mut state: MutexGuard<'_, State>, runnable: Runnable) {
        tracing::trace!(
            task = runnable.metadata().id(),
            grant = elastic(runnable.metadata()).grant_used().is_some(),
            "elastic task waits for admission"
        );
        state.queue.push_back(runnable);
        self.waiting.store(state.queue.len(), Ordering::Relaxed);
        drop(state);
        self.changed.notify_one();
    }

    /// Whether the elastic task `meta` may run on an idle worker's grant:
    /// the feature is on and the task is not coarse. (Its enqueuer wakes a
    /// sleeping worker for such a task.)
    pub(crate) fn fits_idle_worker(&self, meta: &TaskMeta) -> bool {
        self.config.use_idle_workers && !elastic(meta).is_coarse()
    }

    /// Whether a worker about to sleep should take a waiting task instead
    /// ([`take_for_idle_worker`](Self::take_for_idle_worker) would give it
    /// one). Reads `waiting` first, so a runtime without waiting elastic
    /// work pays one load. A worker that enqueued a task that fits calls
    /// `Idle::notify_one` after the push (`runtime/scheduler/worker/mod.rs`), and the
    /// sleeper calls this after the fence in `Idle::wait_for_work`: in the
    /// order of those two fences one of them sees the other (the race
    /// `runtime/scheduler/idle.rs` describes).
    pub(crate) fn has_work_for_idle_worker(&self) -> bool {
        self.config.use_idle_workers
            && self.waiting.load(Ordering::Relaxed) > 0
            && lock(&self.state)
                .queue
                .iter()
                .any(|runnable| self.fits_idle_worker(runnable.metadata()))
    }

    /// A worker with nothing else to run takes the first waiting task that
    /// is not coarse, on an idle grant (see the module docs). `None` if
    /// there is none, or if [`ElasticConfig::use_idle_workers`] is off.
    pub(crate) fn take_for_idle_worker(&self) -> Option<Runnable> {
        if !self.config.use_idle_workers || self.waiting.load(Ordering::Relaxed) == 0 {
            return None;
        }
        let mut state = lock(&self.state);
        let index = state
            .queue
            .iter()
            .position(|runnable| self.fits_idle_worker(runnable.metadata()))?;
        let runnable = state.queue.remove(index)?;
        self.waiting.store(state.queue.len(), Ordering::Relaxed);
        drop(state);
        let task = elastic(runnable.metadata());
        if task.grant_used().is_none() {
            task.start_idle_grant();
            self.idle_grants.fetch_add(1, Ordering::Relaxed);
        }
        Some(runnable)
    }

    /// Gives back the coarse slot of a poll that has ended, and wakes the
    /// monitor if tasks wait (they may wait for this slot).
    pub(crate) fn end_coarse_poll(&self) {
        self.coarse_slots.release();
        let waiting = !lock(&self.state).queue.is_empty();
        if waiting {
            self.changed.notify_one();
        }
    }

    /// Settles a grant that was used for `used`: refunds what was left, or
    /// books the overrun as debt.
    pub(crate) fn settle(&self, used: Duration) {
        let mut state = lock(&self.state);
        state.tokens += self.grant_nanos() - used.as_nanos() as f64;
    }

    /// Counts elastic CPU time.
    pub(crate) fn add_cpu_time(&self, nanos: u64) {
        self.cpu_time_nanos.fetch_add(nanos, Ordering::Relaxed);
    }

    /// The monitor thread's wait (`runtime/threads/monitor.rs`): sleeps until
    /// `wake_at` or until `changed` is notified, then takes the tasks that
    /// can be admitted ([`admit_waiting`](Self::admit_waiting)); `None`
    /// once `is_shutdown()`. The flag is read under the lock before and
    /// after the wait, and shutdown notifies under it
    /// ([`wake_monitor`](Self::wake_monitor)), so the monitor cannot miss it.
    #[cfg_attr(loom, allow(dead_code))] // The monitor thread uses it; loom models leave the monitor out.
    pub(crate) fn wait_and_admit(
        &self,
        wake_at: Instant,
        is_shutdown: impl Fn() -> bool,
    ) -> Option<Admitted> {
        let mut state = lock(&self.state);
        if is_shutdown() {
            return None;
        }
        let timeout = wake_at.saturating_duration_since(Instant::now());
        if !timeout.is_zero() {
            state = wait_timeout(&self.changed, state, timeout).0;
        }
        if is_shutdown() {
            return None;
        }
        let now = Instant::now();
        let (tasks, refill_in) = self.admit_waiting(&mut state, now);
        Some(Admitted {
            at: now,
            tasks,
            refill_at: refill_in.map(|wait| now + wait),
        })
    }

    /// Wakes the monitor thread at shutdown. Under the lock: a monitor
    /// between its look at the shutdown flag and its wait holds it, so the
    /// notification cannot fall in between.
    pub(crate) fn wake_monitor(&self) {
        let _state = lock(&self.state);
        self.changed.notify_all();
    }

    /// Takes the tasks that can be admitted now (and any aborted ones), in
    /// order, and says how
    /// long until tokens are back if the first one left waits for tokens.
    /// A task without a grant takes one from the bucket; a coarse task also
    /// needs a free coarse slot (when it waits for one, the worker that
    /// frees it wakes the monitor, so no refill time is given). Called by
    /// the monitor with the state locked.
    #[cfg_attr(loom, allow(dead_code))] // The monitor thread uses it; loom models leave the monitor out.
    fn admit_waiting(&self, state: &mut State, now: Instant) -> (Vec<Runnable>, Option<Duration>) {
        self.refill(state, now);
        let mut admitted = Vec::new();
        // Aborted tasks leave at once, wherever they wait, taking neither
        // tokens nor a slot: the worker that pops them drops them. (An
        // abort's wake-up cannot move a task that is already queued here,
        // and until its future is dropped the abort holds attention, which
        // sends every `yield_if_busy()` down its slow path.)
        if state
            .queue
            .iter()
            .any(|runnable| runnable.metadata().is_cancelled())
        {
            let (cancelled, waiting): (VecDeque<_>, _) = std::mem::take(&mut state.queue)
                .into_iter()
                .partition(|runnable| runnable.metadata().is_cancelled());
            state.queue = waiting;
            admitted.extend(cancelled);
        }
        let mut free_slots = self.coarse_slots.free();
        let mut waits_for_tokens = false;
        while let Some(next) = state.queue.front() {
            let task = elastic(next.metadata());
            if task.is_coarse() {
                if free_slots == 0 {
                    break;
                }
                free_slots -= 1;
            }
            if task.grant_used().is_none() {
                if state.tokens <= 0.0 {
                    waits_for_tokens = true;
                    break;
                }
                state.tokens -= self.grant_nanos();
                task.set_grant_used(Some(0));
            }
            admitted.extend(state.queue.pop_front());
        }
        self.handing_over
            .fetch_add(admitted.len(), Ordering::SeqCst);
        self.waiting.store(state.queue.len(), Ordering::Relaxed);
        let refill_in = waits_for_tokens.then(|| {
            let seconds = (-state.tokens).max(0.0) / state.rate;
            Duration::from_secs_f64(seconds).max(Duration::from_micros(100))
        });
        (admitted, refill_in)
    }

    /// One tick of the controller (monitor thread, every `sample_period`):
    /// feeds it the p99 scheduling latency over the last window and over the
    /// window's last fifth, and sets the limit it returns, a fraction of
    /// `capacity` CPUs (the workers, or the CPU limit if lower). Returns the
    /// new limit and whether
    /// elastic tasks were waiting.
    #[cfg_attr(loom, allow(dead_code))] // The monitor thread uses it; loom models leave the monitor out.
    pub(crate) fn tick(&self, p99: Duration, recent_p99: Duration, capacity: f64) -> (f64, bool) {
        let waiting = self.waiting() > 0;
        let mut state = lock(&self.state);
        let limit = state.controller.tick(p99, recent_p99, waiting);
        self.set_limit(&mut state, limit, capacity);
        (limit, waiting)
    }

    /// Sets the utilization limit (monitor thread, state locked).
    #[cfg_attr(loom, allow(dead_code))] // The monitor thread uses it; loom models leave the monitor out.
    fn set_limit(&self, state: &mut State, limit: f64, capacity: f64) {
        self.refill(state, Instant::now());
        state.rate = refill_rate(limit, capacity);
        self.limit_bits.store(limit.to_bits(), Ordering::Relaxed);
    }

    /// Takes every waiting task (shutdown sets them aside to be dropped
    /// where no lock is held: see `runtime/lifecycle/shutdown.rs`).
    pub(crate) fn take_waiting(&self) -> std::collections::VecDeque<Runnable> {
        let queue = std::mem::take(&mut lock(&self.state).queue);
        self.waiting.store(0, Ordering::Relaxed);
        self.changed.notify_all();
        queue
    }

    /// The monitor pushed `count` admitted tasks into the injector.
    #[cfg_attr(loom, allow(dead_code))] // The monitor thread uses it; loom models leave the monitor out.
    pub(crate) fn handed_over(&self, count: usize) {
        self.handing_over.fetch_sub(count, Ordering::SeqCst);
    }

    /// Whether admission holds a task: queued, or admitted and not yet in
    /// the injector (the paused clock's auto-advance waits for both).
    pub(crate) fn is_holding(&self) -> bool {
        let state = lock(&self.state);
        !state.queue.is_empty() || self.handing_over.load(Ordering::SeqCst) > 0
    }

    pub(crate) fn limit(&self) -> f64 {
        f64::from_bits(self.limit_bits.load(Ordering::Relaxed))
    }

    pub(crate) fn waiting(&self) -> usize {
        self.waiting.load(Ordering::Relaxed)
    }

    pub(crate) fn idle_grants(&self) -> u64 {
        self.idle_grants.load(Ordering::Relaxed)
    }

    pub(crate) fn cpu_time(&self) -> Duration {
        Duration::from_nanos(self.cpu_time_nanos.load(Ordering::Relaxed))
    }
}
