//! A task's cancel state, and the attention hold that makes an abort reach
//! a task that is running a `yield_if_busy()` loop.
//!
//! ## Why a hold
//! `JoinHandle::abort` sets the flag and wakes the task. A task that is
//! waiting is rescheduled and dropped by the worker that pops it. A task
//! that is *running* is rescheduled only after its poll returns `Pending`,
//! and a loop whose only await is `yield_if_busy()` may never return
//! `Pending`: while a worker is idle the fast path lets it continue. So an
//! abort of a task that lives in the runtime's registry also takes an
//! attention hold on its runtime ([`TaskHost::hold_attention`];
//! `runtime/scheduler/attention.rs`): while any hold is out, `yield_if_busy()` takes its slow path, which gives way when
//! its task is cancelled. The hold is given back when the task's future is
//! dropped, by whichever thread drops it.
//!
//! ## Protocol
//! The state moves `LIVE → CANCELLED → DROPPED` or `LIVE → DROPPED`, never
//! back.
//! - `cancel`: takes a hold, *then* tries `LIVE → CANCELLED` (AcqRel); if
//!   the task was no longer live (already cancelled, or its future already
//!   dropped), gives the hold back at once.
//! - `future_dropped` (the harness, exactly once per task): swaps in
//!   `DROPPED` (AcqRel); if it replaced `CANCELLED`, gives back the hold
//!   that cancel took.
//!
//! Exactly one hold is out per `CANCELLED` state, and it is given back once.
//! The hold is taken before the CAS that publishes `CANCELLED` (Release),
//! and given back after the swap that reads it (Acquire), so the taking
//! happens before the giving back and the count never goes below zero,
//! whichever way the two race (modelled with loom below).

use super::task_host::TaskHost;
use crate::sync::{AtomicU8, Ordering};

const LIVE: u8 = 0;
const CANCELLED: u8 = 1;
const DROPPED: u8 = 2;

/// Whether a task was cancelled, and whether its future is gone.
pub(crate) struct CancelState(AtomicU8);

impl CancelState {
    pub(crate) fn new() -> Self {
        CancelState(AtomicU8::new(LIVE))
    }

    /// Cancels a task whose future has not been dropped yet. `host` is the
    /// runtime for tasks that take an attention hold (the same for every
    /// call on one task), `None` for those that do not. Returns whether this
    /// call cancelled the task.
    pub(crate) fn cancel(&self, host: Option<&dyn TaskHost>) -> bool {
        if self.0.load(Ordering::Acquire) != LIVE {
            return false;
        }
        if let Some(host) = host {
            host.hold_attention();
        }
        let cancelled = self
            .0
            .compare_exchange(LIVE, CANCELLED, Ordering::AcqRel, Ordering::Acquire)
            .is_ok();
        if !cancelled && let Some(host) = host {
            host.release_attention();
        }
        cancelled
    }

    /// Whether the task was cancelled (and its future not yet dropped).
    pub(crate) fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Acquire) == CANCELLED
    }

    /// Whether the task's future has been dropped.
    pub(crate) fn is_dropped(&self) -> bool {
        self.0.load(Ordering::Acquire) == DROPPED
    }

    /// The task's future has been dropped (by its harness, once). `host`
    /// as for [`cancel`](Self::cancel).
    pub(crate) fn future_dropped(&self, host: Option<&dyn TaskHost>) {
        if self.0.swap(DROPPED, Ordering::AcqRel) == CANCELLED
            && let Some(host) = host
        {
            host.release_attention();
        }
    }
}

/// A host with nothing but attention holds, counted in a state word as the
/// runtime counts them, for the unit tests and the loom model.
#[cfg(test)]
struct AttentionOnly {
    word: crate::sync::AtomicUsize,
    registry: super::registry::Registry,
}

#[cfg(test)]
impl AttentionOnly {
    fn new() -> Self {
        AttentionOnly {
            word: crate::sync::AtomicUsize::new(0),
            registry: super::registry::Registry::new(1),
        }
    }

    fn attention(&self) -> crate::runtime::scheduler::attention::Attention<'_> {
        crate::runtime::scheduler::attention::Attention::new(&self.word)
    }

    fn attention_held(&self) -> bool {
        self.attention().is_held()
    }
}

#[cfg(test)]
impl TaskHost for AttentionOnly {
    // The models and tests using this host schedule no task through it.
    fn schedule_if_held(
        &self,
        _: super::Runnable,
        _: async_task::ScheduleInfo,
    ) -> Result<(), super::Runnable> {
        unreachable!("AttentionOnly schedules no task");
    }

    fn schedule(&self, _: super::Runnable, _: async_task::ScheduleInfo) {
        unreachable!("AttentionOnly schedules no task");
    }

    fn registry(&self) -> &super::registry::Registry {
        &self.registry
    }

    fn hold_attention(&self) {
        self.attention().hold();
    }

    fn release_attention(&self) {
        self.attention().release();
    }

    fn evict_aborted(&self) {}
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn a_cancel_holds_attention_until_the_future_is_dropped() {
        let host = AttentionOnly::new();
        let state = CancelState::new();
        assert!(state.cancel(Some(&host)));
        assert!(state.is_cancelled());
        assert!(host.attention_held());
        // A second abort changes nothing.
        assert!(!state.cancel(Some(&host)));
        state.future_dropped(Some(&host));
        assert!(!host.attention_held());
        assert!(!state.is_cancelled());
    }

    #[test]
    fn a_cancel_after_the_future_is_gone_takes_no_hold() {
        let host = AttentionOnly::new();
        let state = CancelState::new();
        state.future_dropped(Some(&host));
        assert!(!state.cancel(Some(&host)));
        assert!(!host.attention_held());
    }

    /// Every kind of abort on a real runtime gives its hold back once the
    /// task is gone: a finished task, a task pending forever, a task whose
    /// future panics when dropped, a running `spawn_blocking` closure, an
    /// elastic task, and a task spawned (and cancelled) after shutdown
    /// began, where only shutdown's own hold stays. Each task is aborted
    /// once it is known to be running (it says so), and the whole body is
    /// bounded, so a lost wake-up fails the test instead of hanging it.
    #[test]
    fn aborts_on_a_runtime_give_every_hold_back() {
        let (done, finished) = std::sync::mpsc::channel();
        let body = std::thread::spawn(move || {
            aborts_on_a_runtime();
            done.send(()).unwrap();
        });
        match finished.recv_timeout(BOUND) {
            Ok(()) => body.join().unwrap(),
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                std::panic::resume_unwind(body.join().unwrap_err())
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                panic!("the aborts did not finish within {BOUND:?}: something hangs")
            }
        }
    }

    /// Bound on each wait in these tests: only a hang comes near it.
    const BOUND: std::time::Duration = std::time::Duration::from_secs(60);

    fn aborts_on_a_runtime() {
        use std::sync::mpsc;

        struct PanicsOnDrop;
        impl Drop for PanicsOnDrop {
            fn drop(&mut self) {
                panic!("dropped");
            }
        }

        let rt = crate::Builder::new().worker_threads(2).build().unwrap();
        let shared = rt.handle().shared.clone();
        let holds = || shared.idle.attention().holds();
        rt.block_on(async {
            let (finishing, finished_rx) = mpsc::channel();
            let finished = crate::spawn(async move {
                finishing.send(()).unwrap();
                1
            });
            finished_rx.recv_timeout(BOUND).unwrap();
            let deadline = std::time::Instant::now() + BOUND;
            while !finished.is_finished() {
                assert!(std::time::Instant::now() < deadline, "never finished");
                crate::yield_now().await;
            }
            finished.abort();
            finished.abort();
            assert_eq!(finished.await.unwrap(), 1);
            assert_eq!(holds(), 0);

            let pending = crate::spawn(std::future::pending::<()>());
            pending.abort();
            assert!(pending.await.unwrap_err().is_cancelled());
            assert_eq!(holds(), 0);

            let (polled, was_polled) = mpsc::channel();
            let panics_on_drop = crate::spawn(async move {
                let _guard = PanicsOnDrop;
                polled.send(()).unwrap();
                std::future::pending::<()>().await;
            });
            was_polled.recv_timeout(BOUND).unwrap();
            panics_on_drop.abort();
            assert!(panics_on_drop.await.unwrap_err().is_cancelled());
            assert_eq!(holds(), 0);

            let (started, running) = mpsc::channel();
            let (release, released) = mpsc::channel::<()>();
            let blocking = crate::spawn_blocking(move || {
                started.send(()).unwrap();
                let _ = released.recv_timeout(BOUND);
            });
            running.recv_timeout(BOUND).unwrap();
            blocking.abort();
            assert_eq!(holds(), 0, "blocking tasks take no hold");
            release.send(()).unwrap();
            let _ = blocking.await;

            let (looping, is_looping) = mpsc::channel();
            let elastic = crate::spawn_elastic(async move {
                looping.send(()).unwrap();
                loop {
                    crate::yield_if_busy().await;
                }
            });
            is_looping.recv_timeout(BOUND).unwrap();
            elastic.abort();
            assert!(elastic.await.unwrap_err().is_cancelled());
            assert_eq!(holds(), 0);
        });
        let handle = rt.handle().clone();
        drop(rt);
        assert_eq!(holds(), 1, "shutdown's own hold");
        let late = handle.spawn(std::future::pending::<()>());
        late.abort();
        assert_eq!(holds(), 1);
    }

    #[test]
    fn tasks_without_a_hold_only_set_the_flag() {
        let host = AttentionOnly::new();
        let state = CancelState::new();
        assert!(state.cancel(None));
        assert!(state.is_cancelled());
        assert!(!host.attention_held());
        state.future_dropped(None);
    }
}

#[cfg(all(test, loom))]
mod loom_models;
