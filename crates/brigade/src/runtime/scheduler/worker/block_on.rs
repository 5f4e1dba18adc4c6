//! The current-thread flavour's loop: the thread in `block_on` is the
//! runtime's one worker (`runtime/scheduler/current_thread.rs` hands it the worker's
//! deque). It runs the worker loop of `worker/mod.rs` (`Core::next_task`,
//! `Core::run_task`, `Core::wait_for_work`), and between two turns of it
//! polls the `block_on` future, as tokio's current-thread scheduler does:
//!
//! 1. Poll the `block_on` future, first and then whenever its waker was
//!    woken ([`MainSignal`]); return if it is ready.
//! 2. Run queued tasks, up to [`CURRENT_THREAD_TASKS_PER_TURN`], in the order they were
//!    scheduled (no run-next slot: `worker/run_next.rs`). The turn ends
//!    early when no task is left, or when a task's `yield_if_busy()` gave
//!    way to the woken `block_on` future (`Core::yield_to_main`). A task
//!    that yields (wakes itself while it runs: `yield_now()`, a
//!    `yield_if_busy()` that gave way) waits out of the deque until the
//!    turn ends (`Core::deferred`), then goes to its back, last yielded
//!    first, as tokio defers such a wake-up: each yielding task runs once
//!    per turn, and a yielding body and a yielding task alternate. I/O
//!    and timers are polled without blocking as on any worker (every
//!    `EVENT_INTERVAL` ticks and once per epoch, in `Core::next_task`).
//! 3. If no task was left and the `block_on` future was not woken, wait
//!    for work (`Idle::wait_for_work`, which parks in the driver): its
//!    re-check after counting itself idle includes the future's wake flag.
//!
//! So a task spawned by the `block_on` future runs only once that future
//! returns `Pending`, and the future runs again only after the tasks
//! queued before it was woken have had their turn (or a turn's budget is
//! spent). Between two `block_on` calls nothing runs.
//!
//! ## No lost wake-up
//! Two things end the park: a task made runnable from another thread (a
//! remote spawn or wake pushes to the injector, then `Idle::notify_one`
//! finds this worker counted idle and unparks it, as for any worker: the
//! protocol of `idle.rs`), and a wake of the `block_on` future
//! ([`MainSignal`]'s protocol: flag first, then the worker's parker).
//!
//! [`MainSignal`]: crate::runtime::scheduler::current_thread::MainSignal

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

use super::Core;
use crate::policy::CURRENT_THREAD_TASKS_PER_TURN;
use crate::runtime::Shared;
use crate::sync::LocalQueue;
use crate::sync::thread::{self, Thread};
use crate::task::Runnable;

/// The waker of a current-thread `block_on` future.
///
/// ## Protocol
/// `wake` takes a hold on the runtime's clock, sets `woken`, and then
/// unparks the worker's parker (`Idle::unpark`, which interrupts the
/// driver's poll if the worker parks there) and the `block_on` thread
/// itself (for a `block_on` that waits for the worker, parked on its
/// thread). A wake that finds `woken` already set gives its hold back at
/// once. The `block_on` thread consumes the flag ([`take_woken`]) before
/// each poll of the future and then releases the wake's hold.
///
/// A wake on the `block_on` thread itself skips both unparks: that thread
/// is running, and every path from there to a park looks at `woken` first
/// (the loop, `wait_for_work`'s re-check; a driver park returns after the
/// harvest that dispatched the wake, without waiting again).
///
/// No wake is lost: the flag is set before either unpark. The worker reads
/// it after counting itself idle (`Core::wait_for_work`'s re-check) and
/// parks on its `Parker`, whose one-slot flag, set under its mutex, keeps
/// an unpark that comes before the park; every return from the park is
/// followed by a look at `woken` before the next park. The thread park
/// likewise keeps its token. The clock hold keeps a paused clock from
/// auto-advancing between the wake and the poll (`auto_advance.rs`).
///
/// Once `block_on` returns, `woken` stays set for good ([`done`]): a late
/// wake (a waker kept somewhere) releases its hold at once and unparks
/// nothing. `woken` is a `std` atomic even under loom, for the reason given
/// on `ThreadSignal` (`runtime/mod.rs`); the parkers are loom's.
///
/// [`take_woken`]: MainSignal::take_woken
/// [`done`]: MainSignal::done
pub(crate) struct MainSignal {
    woken: std::sync::atomic::AtomicBool,
    shared: Arc<Shared>,
    thread: Thread,
}

impl MainSignal {
    pub(crate) fn new(shared: Arc<Shared>) -> Self {
        MainSignal {
            woken: std::sync::atomic::AtomicBool::new(false),
            shared,
            thread: thread::current(),
        }
    }

    /// Whether the future was woken since its last poll.
    pub(crate) fn is_woken(&self) -> bool {
        self.woken.load(std::sync::atomic::Ordering::Acquire)
    }

    /// Consumes a wake-up, releasing its clock hold. Returns whether there
    /// was one.
    pub(crate) fn take_woken(&self) -> bool {
        let woken = self.woken.swap(false, std::sync::atomic::Ordering::Acquire);
        if woken {
            self.shared.driver.release_hold();
        }
        woken
    }

    /// `block_on` is over: later wakes do nothing (see the protocol).
    fn done(&self) {
        if self.woken.swap(true, std::sync::atomic::Ordering::AcqRel) {
            self.shared.driver.release_hold();
        }
    }
}

impl Wake for MainSignal {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.shared.driver.clock().acquire_hold();
        if self.woken.swap(true, std::sync::atomic::Ordering::AcqRel) {
            self.shared.driver.release_hold();
            return;
        }
        // A wake from the `block_on` thread itself (a task or the future
        // waking it, an event it dispatched) finds it running: it looks at
        // the flag before it parks again. Skipping the unparks spares the
        // parker's mutex on the common, same-thread wake.
        if thread::current().id() != self.thread.id() {
            self.shared.idle.unpark(0);
            self.thread.unpark();
        }
    }
}

/// Ends a [`MainSignal`] when `block_on` returns or unwinds.
pub(crate) struct SignalDone<'a>(pub(crate) &'a MainSignal);

impl Drop for SignalDone<'_> {
    fn drop(&mut self) {
        self.0.done();
    }
}

impl Core {
    /// The core of a current-thread runtime's one worker, run by the
    /// thread in `block_on`, which also polls the future of `signal`
    /// (`worker/block_on.rs`).
    pub(crate) fn for_block_on(
        shared: Arc<Shared>,
        local: LocalQueue<Runnable>,
        signal: Arc<MainSignal>,
    ) -> Self {
        let mut core = Core::new(0, shared, local);
        core.main.block_on = Some(signal);
        core
    }

    /// The worker's deque, once its loop is over.
    pub(crate) fn into_local(self) -> LocalQueue<Runnable> {
        self.local
    }

    /// The loop of the module docs, until `future` is ready (its output)
    /// or the runtime shuts down (`None`). Runs inside this thread's
    /// worker context (`Core::enter`).
    pub(crate) fn drive_block_on<F: Future>(&self, mut future: Pin<&mut F>) -> Option<F::Output> {
        let signal = self
            .main
            .block_on
            .clone()
            .expect("only a current-thread core drives a block_on future");
        let waker = Waker::from(signal.clone());
        let mut cx = Context::from_waker(&waker);
        let mut first = true;
        // The busy time of `worker_total_busy_duration` runs while the
        // thread is in `block_on`, less its parks.
        let counters = self.shared.metrics.worker(self.index);
        counters.busy.start(self.shared.clock_nanos());
        loop {
            if self.shared.is_shutdown() {
                return None;
            }
            if (std::mem::take(&mut first) || signal.take_woken())
                && let Poll::Ready(output) = crate::runtime::context::poll_main(&waker, || {
                    crate::task::coop::with_full_budget(|| future.as_mut().poll(&mut cx))
                })
            {
                return Some(output);
            }
            if self.run_turn() && !signal.is_woken() {
                self.wait_for_work();
            }
        }
    }

    /// After [`drive_block_on`](Self::drive_block_on) returned or unwound
    /// (the future panicked): a worker still counted as searching stops,
    /// or `Idle::notify_one` would take it for a searcher for good, and
    /// the next `block_on` would never be woken by a remote spawn.
    pub(crate) fn leave_block_on(&self) {
        let counters = self.shared.metrics.worker(self.index);
        counters.busy.stop(self.shared.clock_nanos());
        // Yielded tasks go back to the deque, which outlives this core.
        self.requeue_deferred();
        if self.search.searching.replace(false) {
            self.shared.idle.end_search();
        }
    }

    /// Runs one turn of tasks (step 2), then queues again the tasks that
    /// yielded during it. Returns `true` if it found no task left (and none
    /// yielded).
    fn run_turn(&self) -> bool {
        let found_none = self.run_tasks();
        let requeued = self.requeue_deferred();
        found_none && !requeued
    }

    /// Queues the tasks that yielded during this turn at the back of the
    /// deque. Returns whether there were any.
    ///
    /// Last yielded, first queued: the order tokio's current-thread
    /// scheduler wakes its deferred tasks in (it pops them off a stack), so
    /// that tasks taking turns with `yield_now()` interleave as they did on
    /// tokio (two yielding tasks `a`, `b`: `a b`, then `b a`, then `a b`).
    fn requeue_deferred(&self) -> bool {
        let mut deferred = self.main.yielded_this_turn.borrow_mut();
        if deferred.is_empty() {
            return false;
        }
        for runnable in deferred.drain(..).rev() {
            self.local.push(runnable);
        }
        true
    }

    /// The tasks of a turn, until none is left, the budget is spent, a task
    /// gave way to the `block_on` future, or shutdown. Returns `true` if it
    /// found no task left.
    fn run_tasks(&self) -> bool {
        for _ in 0..CURRENT_THREAD_TASKS_PER_TURN {
            if self.shared.is_shutdown() {
                return false;
            }
            let Some(runnable) = self.next_task() else {
                return true;
            };
            self.stop_searching();
            self.run_task(runnable);
            if self.main.yield_to_main.replace(false) {
                return false;
            }
        }
        false
    }

    /// Whether the `block_on` future this loop polls was woken: work for
    /// this worker, which therefore must not park (`Core::wait_for_work`),
    /// and the "busy" a task's `yield_if_busy()` gives way to. Always
    /// `false` on a worker thread.
    #[inline]
    pub(crate) fn main_is_woken(&self) -> bool {
        self.main
            .block_on
            .as_ref()
            .is_some_and(|signal| signal.is_woken())
    }

    /// Whether a task's `yield_if_busy()` on a current-thread core gives
    /// way, beside the checks of every worker: to the `block_on` future, if
    /// woken (the loop then ends its turn after this task), or to a task
    /// that yielded earlier in this turn (it waits for the next turn, out
    /// of the deque). Always `false` on a worker thread.
    pub(super) fn busy_on_current_thread(&self) -> bool {
        if self.main.block_on.is_none() {
            return false;
        }
        if self.main_is_woken() {
            self.main.yield_to_main.set(true);
            return true;
        }
        self.yielded_this_turn()
    }

    /// Whether a task yielded earlier in this turn of a current-thread
    /// core (it waits for the next turn, out of the deque): what the
    /// `block_on` future itself, and the `LocalSet` it drives, give way
    /// to. Always `false` on a worker thread.
    pub(super) fn yielded_this_turn(&self) -> bool {
        !self.main.yielded_this_turn.borrow().is_empty()
    }

    /// `yield_if_busy()` in the `block_on` future itself: busy when a task
    /// waits in this worker's deque or in the injector (then the future
    /// wakes itself and the waiting tasks run first). `None` off a
    /// current-thread core.
    pub(crate) fn main_yield_if_busy(&self, cx: &mut Context<'_>) -> Option<Poll<()>> {
        self.main.block_on.as_ref()?;
        if self.local_is_empty() && self.shared.injector.is_empty() {
            return Some(Poll::Ready(()));
        }
        self.shared.metrics.worker(self.index).count_yield();
        cx.waker().wake_by_ref();
        Some(Poll::Pending)
    }
}

/// `block_in_place` on a current-thread runtime: there is no other worker
/// to take this one's place, so, as tokio does, it panics.
#[cold]
#[track_caller]
pub(super) fn block_in_place_on_current_thread() -> ! {
    panic!(
        "`brigade::task::block_in_place` cannot be called on a current-thread runtime: its \
         one thread runs every task, so blocking it would stall them all. Use \
         `brigade::spawn_blocking`, or a multi-thread runtime"
    )
}
