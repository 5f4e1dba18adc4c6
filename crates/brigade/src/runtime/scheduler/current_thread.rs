//! The current-thread flavour ([`Builder::new_current_thread`]): a runtime
//! with one worker slot and no worker thread. The thread in `block_on`
//! takes the slot's deque and runs the worker loop itself, polling the
//! `block_on` future between turns of tasks (`worker/block_on.rs`), as
//! tokio's current-thread scheduler does.
//!
//! ## Who holds the worker
//! [`CurrentThread`] keeps the worker's deque while no `block_on` drives it.
//! A `block_on` takes it, builds the worker's `Core` around it, runs the
//! loop, and puts it back (waking the other `block_on` callers waiting for
//! it). Only one thread drives the worker at a time; another `block_on`
//! (from another thread) meanwhile polls its own future on its own thread,
//! and takes the worker when it is put back, as tokio's does.
//!
//! ## What differs from the multi-thread flavour
//! - Tasks run only while some thread is in `block_on`, on that thread.
//! - No spare workers (nothing to compensate for: `block_in_place` panics,
//!   as tokio's does on its current-thread runtime), no fallback driver
//!   thread. The monitor thread still runs elastic admission and the
//!   long-poll detector; admitted elastic tasks wait in the injector for
//!   the worker like any other.
//! - No run-next slot: tasks run in the order they were scheduled.
//!
//! [`Builder::new_current_thread`]: crate::Builder::new_current_thread

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use crate::runtime::Shared;
use crate::runtime::scheduler::worker::Core;
use crate::runtime::scheduler::worker::block_on::{MainSignal, SignalDone};
use crate::sync::thread;
use crate::sync::{LocalQueue, Mutex, lock};
use crate::task::Runnable;

/// The worker slot of a current-thread runtime (see the module docs).
pub(crate) struct CurrentThread {
    /// The worker's deque while no `block_on` drives it; `None` while one
    /// does.
    idle_core: Mutex<Option<LocalQueue<Runnable>>>,
    /// The `block_on` futures waiting for the worker, woken when it is put
    /// back.
    waiting: Mutex<Vec<Waker>>,
}

impl CurrentThread {
    pub(crate) fn new(local: LocalQueue<Runnable>) -> Self {
        CurrentThread {
            idle_core: Mutex::new(Some(local)),
            waiting: Mutex::new(Vec::new()),
        }
    }

    fn take_core(&self) -> Option<LocalQueue<Runnable>> {
        lock(&self.idle_core).take()
    }

    /// Puts the worker's deque back and wakes every `block_on` waiting for
    /// it (one takes it; the others wait again).
    fn put_core(&self, local: LocalQueue<Runnable>) {
        *lock(&self.idle_core) = Some(local);
        let waiting = std::mem::take(&mut *lock(&self.waiting));
        for waker in waiting {
            waker.wake();
        }
    }

    /// Shutdown's step 4 (`shutdown.rs`) for a worker no `block_on`
    /// drives: drops the tasks queued in its deque. One that a `block_on`
    /// drives drops them itself when it sees the shutdown flag.
    pub(crate) fn drop_idle_tasks(&self) {
        let Some(local) = self.take_core() else {
            return;
        };
        while let Some(runnable) = local.pop() {
            drop(runnable);
        }
        self.put_core(local);
    }
}

/// `Handle::block_on` on a current-thread runtime: drives the worker
/// (see the module docs) until `future` is ready. Runs inside the
/// `block_on` context (`context::run_block_on`).
pub(crate) fn block_on<F: Future>(shared: &Arc<Shared>, future: F) -> F::Output {
    let slot = shared
        .current_thread
        .as_ref()
        .expect("a current-thread runtime has a worker slot");
    let mut future = std::pin::pin!(future);
    let signal = Arc::new(MainSignal::new(shared.clone()));
    let _done = SignalDone(&signal);
    let waker = Waker::from(signal.clone());
    loop {
        if let Some(local) = slot.take_core() {
            match drive(shared, local, &signal, future.as_mut()) {
                Some(output) => return output,
                // Shut down: no task runs any more; the future may still
                // finish by itself.
                None => {
                    return poll_alone(shared, &signal, &waker, future, None)
                        .expect("without a slot to wait for, it polls until ready");
                }
            }
        }
        // Another thread drives the worker: wait for the future, or for
        // the worker to be put back (registered before the second look).
        lock(&slot.waiting).push(waker.clone());
        if let Some(output) = poll_alone(shared, &signal, &waker, future.as_mut(), Some(slot)) {
            return output;
        }
    }
}

/// Runs the worker loop on this thread with the worker's deque `local`,
/// then puts the deque back: its tasks wait for the next `block_on`, or,
/// after a shutdown, are dropped here, out of the worker's context, as a
/// worker thread drops its own (`Core::run`).
fn drive<F: Future>(
    shared: &Arc<Shared>,
    local: LocalQueue<Runnable>,
    signal: &Arc<MainSignal>,
    future: Pin<&mut F>,
) -> Option<F::Output> {
    struct PutBack<'a> {
        core: Option<Core>,
        shared: &'a Shared,
    }
    impl Drop for PutBack<'_> {
        fn drop(&mut self) {
            let Some(core) = self.core.take() else {
                return;
            };
            core.leave_block_on();
            let local = core.into_local();
            if self.shared.is_shutdown() {
                while let Some(runnable) = local.pop() {
                    drop(runnable);
                }
            }
            if let Some(slot) = &self.shared.current_thread {
                slot.put_core(local);
            }
        }
    }
    let core = Core::for_block_on(shared.clone(), local, signal.clone());
    shared.compensation.set_clock(
        0,
        crate::runtime::threads::thread_cpu::ThreadClock::current(),
    );
    let guard = PutBack {
        core: Some(core),
        shared,
    };
    let core = guard.core.as_ref().expect("just set");
    core.enter(|| core.drive_block_on(future))
}

/// Polls `future` on this thread, without the worker, parking the thread
/// between wakes; while it polls it holds the clock, as a multi-thread
/// `block_on` does (`runtime/mod.rs`'s `drive`). With `slot`, it returns
/// `None` once the worker is free for it to take; without, it runs until
/// the future is ready.
fn poll_alone<F: Future>(
    shared: &Shared,
    signal: &MainSignal,
    waker: &Waker,
    mut future: Pin<&mut F>,
    slot: Option<&CurrentThread>,
) -> Option<F::Output> {
    let clock = shared.driver.clock();
    let mut cx = Context::from_waker(waker);
    loop {
        if slot.is_some_and(|slot| lock(&slot.idle_core).is_some()) {
            return None;
        }
        clock.acquire_hold();
        let poll = future.as_mut().poll(&mut cx);
        shared.driver.release_hold();
        if let Poll::Ready(output) = poll {
            return Some(output);
        }
        while !signal.take_woken() {
            thread::park();
        }
    }
}
