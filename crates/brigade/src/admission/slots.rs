//! Coarse slots: how many polls of *coarse* elastic tasks may run at once.
//!
//! A task is coarse while it has been seen running longer than the latency
//! target between two yield points (see `ElasticState::note_long_stretch`
//! in `task_state.rs`).
//! `yield_if_busy` protects foreground latency only at yield points: an
//! elastic task that goes 5 ms between them holds its worker for 5 ms, and
//! when such polls occupy every worker, a foreground task that becomes
//! runnable waits for the first of them to end. The token bucket bounds the
//! CPU elastic work gets on average, not how many workers it holds at one
//! instant, so the controller could only find the right limit by
//! overshooting the target again and again. Capping coarse polls at
//! `workers − 1` (at least one) leaves a worker for the foreground whatever
//! the limit. Elastic tasks that yield often are not capped: `yield_if_busy`
//! already gets them out of the way, so they can still use every worker.
//!
//! ## Protocol
//! - A worker takes a slot ([`CoarseSlots::try_acquire`], a compare-and-swap
//!   below the cap, so racing workers never exceed it) before it polls a
//!   coarse task. If none is free the task is deferred to the admission
//!   queue under the admission mutex, keeping its grant, and the monitor is
//!   notified.
//! - After the poll the worker releases the slot, then locks the admission
//!   mutex to see whether tasks wait; if so it notifies the monitor after
//!   unlocking.
//! - The monitor looks at the slots and the queue with that mutex held and
//!   waits on the condvar. A release whose lock comes first is visible to
//!   the monitor's check; one whose lock comes later finds the task queued
//!   and notifies the waiting monitor. Either way no deferred task is left
//!   waiting for a slot that is free (modelled with loom below). Coarse
//!   polls are at least a latency target long, so one lock per poll is
//!   nothing.

use crate::sync::{AtomicUsize, Ordering};

/// The count of coarse polls in progress and its cap.
pub(crate) struct CoarseSlots {
    /// Coarse polls in progress. Only a count: the admission mutex orders
    /// it against the queue (see the module docs), so `Relaxed` is enough.
    running: AtomicUsize,
    cap: usize,
}

impl CoarseSlots {
    /// Slots for a runtime with `workers` workers: one fewer than the
    /// workers, and at least one.
    pub(crate) fn new(workers: usize) -> Self {
        CoarseSlots {
            running: AtomicUsize::new(0),
            cap: workers.saturating_sub(1).max(1),
        }
    }

    /// Takes a slot if one is free.
    pub(crate) fn try_acquire(&self) -> bool {
        let mut running = self.running.load(Ordering::Relaxed);
        while running < self.cap {
            match self.running.compare_exchange_weak(
                running,
                running + 1,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return true,
                Err(actual) => running = actual,
            }
        }
        false
    }

    /// Gives a slot back. The caller then checks the admission queue under
    /// its mutex (see the module docs).
    pub(crate) fn release(&self) {
        self.running.fetch_sub(1, Ordering::Relaxed);
    }

    /// Slots free now.
    #[cfg_attr(loom, allow(dead_code))] // The monitor thread uses it; loom models leave the monitor out.
    pub(crate) fn free(&self) -> usize {
        self.cap
            .saturating_sub(self.running.load(Ordering::Relaxed))
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn one_worker_fewer_than_the_workers_and_at_least_one() {
        for (workers, cap) in [(1, 1), (2, 1), (4, 3), (16, 15)] {
            let slots = CoarseSlots::new(workers);
            for _ in 0..cap {
                assert!(slots.try_acquire());
            }
            assert!(!slots.try_acquire(), "{workers} workers allow {cap}");
            assert_eq!(slots.free(), 0);
            slots.release();
            assert_eq!(slots.free(), 1);
            assert!(slots.try_acquire());
        }
    }
}

#[cfg(all(test, loom))]
mod loom_models {
    //! Model-checks the slot handoff with `loom`: run with
    //! `RUSTFLAGS="--cfg loom" cargo test -p brigade --lib --release`.
    use super::*;
    use crate::sync::{Condvar, Mutex, lock};
    use loom::sync::Arc;
    use loom::thread;

    #[derive(Default)]
    struct Queue {
        deferred: Option<u32>,
        /// The second task got a slot directly: nothing to admit.
        ran_directly: bool,
    }

    /// Two workers, one slot. Worker A polls a coarse task and releases the
    /// slot; worker B tries to poll another and defers it if the slot is
    /// taken. The monitor must end up admitting the deferred task: a lost
    /// wake-up leaves it waiting forever, which loom reports as a deadlock.
    /// Two workers taking the slot at once fails the assertion.
    #[test]
    fn release_races_with_deferral() {
        loom::model(|| {
            let slots = Arc::new(CoarseSlots::new(2));
            let state = Arc::new((Mutex::new(Queue::default()), Condvar::new()));
            assert!(slots.try_acquire(), "worker A's poll");
            let worker_a = {
                let (slots, state) = (slots.clone(), state.clone());
                thread::spawn(move || {
                    slots.release();
                    let waiting = lock(&state.0).deferred.is_some();
                    if waiting {
                        state.1.notify_one();
                    }
                })
            };
            let worker_b = {
                let (slots, state) = (slots.clone(), state.clone());
                thread::spawn(move || {
                    if slots.try_acquire() {
                        assert_eq!(slots.free(), 0, "one slot, one poll");
                        lock(&state.0).ran_directly = true;
                        slots.release();
                    } else {
                        lock(&state.0).deferred = Some(7);
                    }
                    state.1.notify_one();
                })
            };
            // The monitor.
            let mut queue = lock(&state.0);
            loop {
                if queue.ran_directly {
                    break;
                }
                if queue.deferred.is_some() && slots.free() > 0 {
                    assert_eq!(queue.deferred.take(), Some(7));
                    break;
                }
                queue = state.1.wait(queue).unwrap();
            }
            drop(queue);
            worker_a.join().unwrap();
            worker_b.join().unwrap();
        });
    }
}
