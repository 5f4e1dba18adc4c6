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
//! thread (`runtime/monitor.rs`).
//!
//! Tasks seen going longer than the latency target between yield points
//! are *coarse*: at most `workers − 1` of their polls run at once, so one
//! worker stays free for foreground work (`slots.rs` says why). A coarse
//! task with no free slot waits in the same queue, keeping its grant.
//!
//! ## Protocol
//! All bucket and queue state is under one mutex; it is touched once per
//! grant (≈ 10 ms of CPU), not per poll. Workers enqueue and notify
//! `changed`; the monitor thread waits on `changed` (with the time of the
//! next tick or refill as timeout) and moves admitted tasks to the injector.

mod config;
mod controller;
mod poll;
mod slots;
mod task_state;

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, AtomicUsize};
use std::time::{Duration, Instant};

pub use config::ElasticConfig;
#[cfg_attr(loom, allow(unused_imports))]
// Used by the monitor thread, left out of loom models.
pub(crate) use controller::Controller;
pub(crate) use poll::ElasticPoll;
use slots::CoarseSlots;
pub(crate) use task_state::ElasticState;

use crate::sync::{Condvar, Mutex, MutexGuard, Ordering, lock};
use crate::task::{Runnable, TaskMeta};

/// The admission state of a task that goes through admission: only elastic
/// tasks do (`Core::run_task`).
fn elastic(meta: &TaskMeta) -> &ElasticState {
    meta.elastic()
        .expect("only elastic tasks go through admission")
}

/// Debt older than this is forgiven (the bucket is raised to empty), so a
/// burst of debt (say, one task that ran far past its grant) cannot block
/// elastic work indefinitely. CockroachDB refills its bucket to full at this
/// interval instead; measured with `examples/admission.rs` (case 2), that
/// let every elastic task run at once every 15 s and pushed the foreground
/// p99 from under the target to 4–7 ms for a whole window.
const FORGIVE_DEBT_EVERY: Duration = Duration::from_secs(15);

pub(crate) struct Admission {
    config: ElasticConfig,
    num_workers: usize,
    state: Mutex<State>,
    /// Signals the monitor thread: a task started waiting, a coarse slot
    /// was given back while tasks wait, or shutdown.
    pub(crate) changed: Condvar,
    coarse_slots: CoarseSlots,
    /// Statistics readable without the lock.
    waiting: AtomicUsize,
    limit_bits: AtomicU64,
    cpu_time_nanos: AtomicU64,
}

pub(crate) struct State {
    /// CPU nanoseconds available; negative is debt.
    tokens: f64,
    refilled_at: Instant,
    /// When debt was last forgiven (or the bucket last found out of debt).
    debt_checked_at: Instant,
    limit: f64,
    queue: VecDeque<Runnable>,
}

impl Admission {
    pub(crate) fn new(config: ElasticConfig, num_workers: usize) -> Self {
        let now = Instant::now();
        let limit = config.min_utilization;
        let admission = Admission {
            num_workers,
            state: Mutex::new(State {
                tokens: 0.0,
                refilled_at: now,
                debt_checked_at: now,
                limit,
                queue: VecDeque::new(),
            }),
            changed: Condvar::new(),
            coarse_slots: CoarseSlots::new(num_workers),
            waiting: AtomicUsize::new(0),
            limit_bits: AtomicU64::new(limit.to_bits()),
            cpu_time_nanos: AtomicU64::new(0),
            config,
        };
        lock(&admission.state).tokens = admission.burst(limit);
        admission
    }

    pub(crate) fn config(&self) -> &ElasticConfig {
        &self.config
    }

    /// Refill rate in CPU nanoseconds per second.
    fn rate(&self, limit: f64) -> f64 {
        limit * self.num_workers as f64 * 1e9
    }

    fn burst(&self, limit: f64) -> f64 {
        self.rate(limit)
    }

    fn grant_nanos(&self) -> f64 {
        self.config.grant.as_nanos() as f64
    }

    pub(crate) fn lock_state(&self) -> MutexGuard<'_, State> {
        lock(&self.state)
    }

    fn refill(&self, state: &mut State, now: Instant) {
        let elapsed = now
            .saturating_duration_since(state.refilled_at)
            .as_secs_f64();
        let burst = self.burst(state.limit);
        state.tokens = (state.tokens + self.rate(state.limit) * elapsed).min(burst);
        state.refilled_at = now;
        if state.tokens >= 0.0 {
            state.debt_checked_at = now;
        } else if now.saturating_duration_since(state.debt_checked_at) >= FORGIVE_DEBT_EVERY {
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

    /// Takes the tasks that can be admitted now (and any aborted ones), in
    /// order, and says how
    /// long until tokens are back if the first one left waits for tokens.
    /// A task without a grant takes one from the bucket; a coarse task also
    /// needs a free coarse slot (when it waits for one, the worker that
    /// frees it wakes the monitor, so no refill time is given). Called by
    /// the monitor with the state locked.
    #[cfg_attr(loom, allow(dead_code))] // The monitor thread uses it; loom models leave the monitor out.
    pub(crate) fn admit_waiting(
        &self,
        state: &mut State,
        now: Instant,
    ) -> (Vec<Runnable>, Option<Duration>) {
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
        self.waiting.store(state.queue.len(), Ordering::Relaxed);
        let refill_in = waits_for_tokens.then(|| {
            let seconds = (-state.tokens).max(0.0) / self.rate(state.limit);
            Duration::from_secs_f64(seconds).max(Duration::from_micros(100))
        });
        (admitted, refill_in)
    }

    /// Sets the utilization limit (monitor thread, state locked).
    #[cfg_attr(loom, allow(dead_code))] // The monitor thread uses it; loom models leave the monitor out.
    pub(crate) fn set_limit(&self, state: &mut State, limit: f64) {
        self.refill(state, Instant::now());
        state.limit = limit;
        self.limit_bits.store(limit.to_bits(), Ordering::Relaxed);
    }

    /// Takes every waiting task (shutdown sets them aside to be dropped
    /// where no lock is held: see `runtime/shutdown.rs`).
    pub(crate) fn take_waiting(&self) -> std::collections::VecDeque<Runnable> {
        let queue = std::mem::take(&mut lock(&self.state).queue);
        self.waiting.store(0, Ordering::Relaxed);
        self.changed.notify_all();
        queue
    }

    pub(crate) fn limit(&self) -> f64 {
        f64::from_bits(self.limit_bits.load(Ordering::Relaxed))
    }

    pub(crate) fn waiting(&self) -> usize {
        self.waiting.load(Ordering::Relaxed)
    }

    pub(crate) fn cpu_time(&self) -> Duration {
        Duration::from_nanos(self.cpu_time_nanos.load(Ordering::Relaxed))
    }
}
