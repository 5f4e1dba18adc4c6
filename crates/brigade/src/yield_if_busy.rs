//! Cooperative yielding: [`yield_if_busy`] (only when another task is
//! actually waiting for a worker), with its inlined fast path, the entry to
//! the scheduler's slow path (C1 of the policy, `policy.rs`). Layer 3, with
//! the scheduler it enters. (`yield_now`, which always yields and needs no
//! scheduler, is in `task/yield_now.rs`.)
//!
//! ## The fast path
//! If the runtime has an idle worker and nothing holds attention, return:
//! an idle worker picks up anything that is waiting, so there is nothing to
//! step aside for. It is inlined into the caller: one thread-local read
//! (`context::may_skip_yield`: off a worker thread it points at a constant
//! that reads as "idle"), one atomic load, a subtract-and-compare and a
//! branch. Before returning it tells the long-poll detector that the task
//! reached a yield point (`context::note_yield_point`: one more
//! thread-local read and a few plain operations on the worker's own watch),
//! so a loop that never needs to step aside is not reported as one long
//! poll or compensated for as a stuck worker.
//!
//! ## Trust in an idle worker, checked once per epoch
//! On a crowded host (clients on the same machine, a CPU limit,
//! neighbours) an idle worker may be woken by the kernel yet not run for a
//! scheduler tick, and work would wait for it while this loop runs on. So
//! the same note (`context::note_fast_path_point`) counts calls as an epoch
//! gate does (`epoch.rs`): the fast path reads the clock at the call where
//! the next epoch should begin at the rate its calls come in (at least once
//! per 1024 calls), and at the first read of each epoch asks whether
//! I/O or a due timer is pending while the worker that watches the driver
//! has left it unharvested at checks `UNSERVED_EPOCHS` epochs apart
//! (C1 of the policy; `Core::recheck_idle`, `driver/poll/mod.rs`: "the crowded-host
//! hand-off"). If so, this worker harvests it, and the task moves to the
//! back of its deque so that the woken tasks run now, on this CPU. Tasks
//! woken from other threads need no check: a notification claims the idle
//! worker it wakes, which stops counting as idle at once (`idle.rs`).
//!
//! Otherwise it takes the slow path, which decides whether and how the task
//! steps aside: the scheduler owns that whole operation
//! (`runtime/scheduler/worker/step_aside.rs`: the decision and the going;
//! `runtime/scheduler/worker/yielded.rs`: how it comes back), and `yield_queue/`
//! holds the tasks that wait.
//!
//! In an **elastic** task (`spawn_elastic`) the fast path is always skipped
//! (the worker points the thread-local at a constant "no worker idle" for
//! the duration of the poll), so the slow path can check the task's CPU
//! grant.
//!
//! **Shutdown and abort.** While the runtime shuts down, or an aborted task
//! has not been dropped yet, the idle state word holds *attention*
//! (`runtime/scheduler/attention.rs`) and the fast path always falls through to the slow
//! path, which gives way if the runtime is shutting down or its own task
//! was aborted. So a `yield_if_busy()` loop cannot keep its worker from
//! seeing either.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use crate::runtime::context;
use crate::runtime::scheduler::worker::step_aside;

/// Steps aside if, and only if, another task is waiting for a worker.
///
/// Call `yield_if_busy().await` between units of background work (loop
/// iterations, batches, rows) that do not hold locks. When the runtime has
/// an idle worker it completes at once, in a few inlined instructions (one
/// thread-local read, one atomic load, a branch, and a note to the long-poll
/// detector that the task reached a yield point). When
/// every worker is busy and work is waiting, the calling task moves behind
/// that work, and comes back as soon as a worker has nothing else to do, so
/// background work uses all spare CPU without delaying foreground tasks by
/// more than one unit.
///
/// An idle worker is trusted to serve new work, but not blindly: on a
/// crowded host (a load generator on the same machine, a CPU limit,
/// neighbours) the kernel may wake it and yet not run it for a scheduler
/// tick. About once per epoch (≈ 33 µs) the call checks whether I/O or a due
/// timer is pending while such a worker has harvested nothing for that
/// long; if so, this worker serves
/// it, and the call steps aside for the tasks it woke
/// ([`RuntimeMetrics::idle_not_serving`](crate::RuntimeMetrics::idle_not_serving)
/// counts these).
///
/// Outside a brigade worker thread (inside a multi-thread runtime's
/// `block_on`, on a blocking-pool thread, on another runtime) it completes
/// immediately. On a current-thread runtime, whose thread in `block_on` is
/// its one worker, "busy" means another task, or the `block_on` future, is
/// ready to run: the body steps aside for queued tasks, and a task for
/// other tasks or for the woken body; with nothing else ready it completes
/// at once (see
/// [`Builder::new_current_thread`](crate::runtime::Builder::new_current_thread)). With feature
/// `tokio-compat`, in a `tokio::spawn`ed task (which runs on the runtime's
/// tokio-compat threads, outside brigade's queues) it spends a unit of the
/// task's tokio budget instead, and gives way to tokio's scheduler once the
/// budget of the poll is used up, so the other tokio tasks there get their
/// turn; it cannot give way to brigade's tasks, which run on other threads.
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
        if context::may_skip_yield() {
            if context::note_fast_path_point() {
                // Rarely: does the idle worker really serve? (`step_aside.rs`)
                let poll = step_aside::fast_path_epoch_check(cx);
                self.yielded = poll.is_pending();
                return poll;
            }
            return Poll::Ready(());
        }
        let poll = step_aside::slow_path(cx);
        self.yielded = poll.is_pending();
        poll
    }
}
