//! Cooperative yielding: [`yield_now`] (always) and [`yield_if_busy`] (only
//! when another task is actually waiting for a worker).
//!
//! ## `yield_if_busy()`, step by step
//! 1. **Fast path** (inlined into the caller): if the runtime has an idle
//!    worker and nothing holds attention (see below), return. An idle
//!    worker picks up anything that is waiting, so there is nothing to step
//!    aside for. Off a worker thread the thread-local points at a constant
//!    that reads as "idle", so this is always one thread-local read, one
//!    atomic load, a subtract-and-compare and one branch. Before returning
//!    it tells the long-poll detector that the task reached a yield point
//!    (`context::note_yield_point`: one more thread-local read and a plain
//!    increment of the worker's own watch), so a loop that never needs to
//!    step aside is not reported as one long poll.
//! 2. **Cheap checks** (`slow_path`, never inlined):
//!    - the worker's own deque holds a task: move to the back of it and let
//!      that task run first, on this same warm worker. If this task already
//!      did so on its previous visit (the *sentinel*), two yielders may be
//!      bouncing off each other, so park in the yield queue instead;
//!    - the injector holds a task: park in the yield queue.
//! 3. **Expensive checks, amortised by time**: at most once per epoch of
//!    2^15 ns (≈ 33 µs) per worker, look at every other worker's deque
//!    (park in the yield queue if any holds a task); and once per epoch for
//!    the whole runtime (the first busy worker to see the epoch), poll I/O
//!    and timers without blocking (tasks that poll wakes land in this
//!    worker's deque: move to the back of it). Even the clock read is
//!    amortised ([`EpochGate`]).
//!
//! In an **elastic** task (`spawn_elastic`) the fast path is skipped (the
//! worker points the thread-local at a constant "no worker idle" for the
//! duration of the poll), and the slow path first checks the task's CPU
//! grant: once it is used up, the task gives way so that its next poll goes
//! back through admission; otherwise, with an idle worker, it continues.
//!
//! Parking in the yield queue means: push the poll's waker there as a
//! deferred wake-up (`yield_queue.rs`) and return `Pending` without waking
//! anyone. A worker wakes it, and runs the task, only when nothing else is
//! waiting. Only the task's own waker is deferred; a `yield_if_busy()`
//! polled with another (inside `FuturesUnordered`, or a nested executor)
//! wakes it at once instead, as `yield_now()` does, so that a nested
//! executor blocking the worker is never left waiting for a free worker.
//!
//! **Shutdown and abort.** While the runtime shuts down, or an aborted task
//! has not been dropped yet, the idle state word holds *attention*
//! (`runtime/idle.rs`) and the fast path always falls through. The slow
//! path then gives way if the runtime is shutting down or its own task was
//! aborted (and otherwise answers as the fast path would while a worker is
//! idle), so a `yield_if_busy()` loop cannot keep its worker from seeing
//! either.

use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use crate::runtime::context;
use crate::runtime::worker::Core;
use crate::task::TaskMeta;

/// Yields to the scheduler unconditionally: the task goes to the back of its
/// worker's queue and runs again after the tasks queued before it.
///
/// A task that does nothing but yield this way several times in a row is
/// taken for background work and *demoted* (see
/// [`TaskClass::Auto`](crate::task::TaskClass::Auto)): while other work
/// waits, it then steps aside into the yield queue, as after
/// [`yield_if_busy`], rather than queueing ahead of tasks woken after it;
/// demoted tasks take turns with each other at least every ≈ 33 µs. Its next
/// wake by I/O, a timer or another task promotes it back.
///
/// Prefer [`yield_if_busy`] in loops that do background work: it costs
/// nothing when nobody is waiting.
///
/// # Examples
///
/// ```
/// let rt = brigade::Runtime::new()?;
/// rt.block_on(async {
///     brigade::spawn(async {
///         for _ in 0..3 {
///             brigade::yield_now().await;
///         }
///     })
///     .await
///     .unwrap();
/// });
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn yield_now() -> YieldNow {
    YieldNow { yielded: false }
}

/// Future returned by [`yield_now`].
#[must_use = "futures do nothing unless you `.await` or poll them"]
#[derive(Debug)]
pub struct YieldNow {
    yielded: bool,
}

impl Future for YieldNow {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.yielded {
            return Poll::Ready(());
        }
        self.yielded = true;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

/// Steps aside if, and only if, another task is waiting for a worker.
///
/// Call `yield_if_busy().await` between units of background work (loop
/// iterations, batches, rows) that do not hold locks. When the runtime has
/// an idle worker it completes at once at the cost of one atomic load. When
/// every worker is busy and work is waiting, the calling task moves behind
/// that work, and comes back as soon as a worker has nothing else to do, so
/// background work uses all spare CPU without delaying foreground tasks by
/// more than one unit.
///
/// Outside a brigade worker thread (inside `block_on`, on a blocking-pool
/// thread, on another runtime) it completes immediately.
///
/// # Examples
///
/// ```
/// let rt = brigade::Runtime::new()?;
/// let sum = rt.block_on(async {
///     brigade::spawn(async {
///         let mut sum = 0u64;
///         for row in 0..10_000u64 {
///             sum += row; // a unit of background work
///             brigade::yield_if_busy().await;
///         }
///         sum
///     })
///     .await
/// });
/// assert_eq!(sum.unwrap(), 49_995_000);
/// # Ok::<(), std::io::Error>(())
/// ```
#[inline]
pub fn yield_if_busy() -> YieldIfBusy {
    YieldIfBusy { yielded: false }
}

/// Future returned by [`yield_if_busy`].
#[must_use = "futures do nothing unless you `.await` or poll them"]
#[derive(Debug)]
pub struct YieldIfBusy {
    yielded: bool,
}

impl Future for YieldIfBusy {
    type Output = ();

    #[inline]
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.yielded {
            return Poll::Ready(());
        }
        if context::any_worker_idle() {
            context::note_yield_point();
            return Poll::Ready(());
        }
        let poll = slow_path(cx);
        self.yielded = poll.is_pending();
        poll
    }
}

/// What the slow path decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Decision {
    Continue,
    MoveToBack,
    ParkInYieldQueue,
}

#[inline(never)]
fn slow_path(cx: &mut Context<'_>) -> Poll<()> {
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
            if core.epoch_gate.should_scan(|| shared.clock_nanos())
                && shared.driver.poll_for_epoch(core.epoch_gate.epoch()) > 0
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
        // Rescued from the yield queue after starving (see
        // `runtime/yield_rescue.rs`): runs on until its slice ends.
        return Poll::Ready(());
    }
    match decide(core, task.replace_moved_to_back(false)) {
        Decision::Continue => Poll::Ready(()),
        Decision::MoveToBack => {
            task.replace_moved_to_back(true);
            give_way(core, cx)
        }
        Decision::ParkInYieldQueue if own_waker => {
            shared.metrics.worker(core.index()).count_yield();
            shared.park_yielded(task, cx.waker());
            Poll::Pending
        }
        // Any other waker is woken at once, as by `yield_now`: a nested
        // executor blocking this worker (`futures::executor::block_on` in
        // the task) would otherwise wait on a wake-up that only a free
        // worker delivers; through a combinator, the task goes to the back
        // of the deque.
        Decision::ParkInYieldQueue => give_way(core, cx),
    }
}

/// Steps 2 and 3 of the module docs. `moved_to_back_last_time` is the
/// sentinel, already cleared by the caller.
fn decide(core: &Core, moved_to_back_last_time: bool) -> Decision {
    let shared = core.shared();
    if !core.local_is_empty() {
        return if moved_to_back_last_time {
            Decision::ParkInYieldQueue
        } else {
            Decision::MoveToBack
        };
    }
    if !shared.injector.is_empty() {
        return Decision::ParkInYieldQueue;
    }
    if !core.epoch_gate.should_scan(|| shared.clock_nanos()) {
        return Decision::Continue;
    }
    if shared.driver.poll_for_epoch(core.epoch_gate.epoch()) > 0 && !core.local_is_empty() {
        return Decision::MoveToBack;
    }
    if !shared.injector.is_empty() || shared.others_have_work(core.index()) {
        return Decision::ParkInYieldQueue;
    }
    if let Some(head_at) = shared.yield_queue.head_at()
        && shared
            .yield_rescue
            .is_overdue(head_at, core.epoch_gate.epoch() << EPOCH_SHIFT)
    {
        // Other yielders have waited in the yield queue for longer than
        // `max_yield_delay` while this one kept going: let them run (see
        // `runtime/yield_rescue.rs`).
        return Decision::ParkInYieldQueue;
    }
    Decision::Continue
}

/// Whether the self-wake of a background task (`task/class.rs`) steps
/// aside into the yield queue, from the schedule hook on the worker that
/// polled it: the same question as `yield_if_busy()`'s, with the same
/// amortised checks, and one more reason to step aside, also checked once
/// per epoch: other tasks wait in the yield queue, so background tasks that
/// wake themselves take turns there at least once per ≈ 33 µs epoch. (At
/// every self-wake would cost a trip through the shared queue per yield:
/// `benches/rt_compare.rs`'s `yield_many` ran 7–14× slower that way.)
pub(crate) fn background_steps_aside(core: &Core, task: &TaskMeta) -> bool {
    let shared = core.shared();
    if shared.idle.num_idle() > 0 || task.is_cancelled() || task.has_yield_queue_entry() {
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
    core.epoch_gate.should_scan(|| shared.clock_nanos())
        && (!shared.yield_queue.is_empty()
            || (shared.driver.poll_for_epoch(core.epoch_gate.epoch()) > 0
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

/// Bounds how often `yield_if_busy()` does its expensive checks: at most once
/// per epoch of 2^[`EPOCH_SHIFT`] ns per worker, reading the clock only on calls
/// 1, 3, 7, 15, … (2^k − 1) of a counter, which stays between 1023 and 2047
/// at high call rates, so the clock is then read once per 1024 calls. The
/// counter restarts whenever a new epoch is seen.
pub(crate) struct EpochGate {
    calls: Cell<u32>,
    epoch: Cell<u64>,
}

/// log2 of the epoch length in nanoseconds: 2^15 ns ≈ 33 µs.
///
/// CockroachDB's `runtime.Yield` uses 2^18 ns (≈ 262 µs). When every worker
/// is busy, this epoch is what bounds how late a network-woken task is
/// noticed, so it sets the foreground latency floor. The I/O poll is once
/// per epoch for the whole runtime (`Driver::poll_for_epoch`), the scan of
/// other workers' deques once per epoch per worker. Measured with
/// `mixed_load` (2 workers, 8 background tasks × 10 µs units):
/// - per-worker polls, 2^18 ns: 150–220 µs added to the idle p99;
/// - per-worker polls, 2^16 ns: p99 155–346 µs, p50 101–120 µs;
/// - one poll per runtime, 2^16 ns: p99 164–250 µs, p50 109–113 µs;
/// - one poll per runtime, 2^15 ns: p99 124–155 µs, p50 99–101 µs, with
///   background throughput about 1% lower than at 2^16 (0.941–0.955 against
///   0.945–0.964 of the CPU; within noise of each other).
///
/// The price is one `epoll_wait` per 33 µs per runtime while it is busy, and
/// one clock read per 33 µs per busy worker (or per 1024 calls).
pub(crate) const EPOCH_SHIFT: u32 = 15;

impl EpochGate {
    pub(crate) fn new() -> Self {
        EpochGate {
            calls: Cell::new(0),
            epoch: Cell::new(u64::MAX),
        }
    }

    /// The epoch seen by the last clock read.
    pub(crate) fn epoch(&self) -> u64 {
        self.epoch.get()
    }

    /// Counts one call; returns `true` when a new epoch has begun (and the
    /// expensive checks are due). `now_nanos` is called only when the clock
    /// is due to be read.
    pub(crate) fn should_scan(&self, now_nanos: impl FnOnce() -> u64) -> bool {
        let calls = self.calls.get() + 1;
        // Read the clock only when `calls` is 2^k - 1.
        if calls & (calls + 1) != 0 {
            self.calls.set(calls);
            return false;
        }
        let epoch = now_nanos() >> EPOCH_SHIFT;
        if epoch != self.epoch.get() {
            self.epoch.set(epoch);
            self.calls.set(0);
            return true;
        }
        self.calls.set(if calls == 2047 { 1023 } else { calls });
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_is_read_on_calls_two_to_the_k_minus_one() {
        let gate = EpochGate::new();
        let reads = Cell::new(Vec::new());
        for call in 1..=5000u32 {
            gate.should_scan(|| {
                let mut seen = reads.take();
                seen.push(call);
                reads.set(seen);
                // The epoch never changes after the first read.
                0
            });
        }
        let reads = reads.take();
        // The first read starts the epoch and resets the counter to 0.
        assert_eq!(
            &reads[..12],
            &[1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048]
        );
        // Afterwards the counter oscillates in 1023..=2047: one read per 1024 calls.
        assert!(
            reads
                .windows(2)
                .skip(11)
                .all(|pair| pair[1] - pair[0] == 1024),
            "{reads:?}"
        );
    }

    #[test]
    fn a_new_epoch_restarts_the_counter() {
        let gate = EpochGate::new();
        let now = Cell::new(0u64);
        assert!(gate.should_scan(|| now.get()));
        now.set(1 << EPOCH_SHIFT);
        // Next clock read is on the first call after the reset.
        assert!(gate.should_scan(|| now.get()));
        assert!(!gate.should_scan(|| now.get()));
        assert_eq!(gate.calls.get(), 1);
    }
}
