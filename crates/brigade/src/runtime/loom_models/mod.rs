//! loom models of the real scheduler: a whole `Runtime` (its worker loop,
//! `Core::next_task`, stealing and `stop_searching`, `Idle::wait_for_work`
//! and the driver park, the yield queue's hand-off, shutdown) runs on loom
//! threads, with loom's primitives (`sync/`), crossbeam's queues replaced
//! by stand-ins that keep their orderings and add no lock
//! (`sync/loom_deque.rs`), and a driver without I/O (`driver/model_driver.rs`).
//! Left out: the monitor thread (it works by the clock, which a model does
//! not have), I/O and timers, and `async-task`'s own atomics (`std`'s,
//! which loom cannot see: its task state machine is taken as correct).
//!
//! The models run the production policy (`policy.rs`), its constants
//! included. Where a constant counts time or events that a model cannot
//! afford, the model advances a test-only counter instead, with the reason
//! beside it: the runtime's clock moves one epoch per read
//! (`Shared::clock_nanos`), and the epoch gates read it at every call
//! (`epoch::calls_until_next_read`), so every gate opens and
//! `OWNER_GRACE_NANOS` (8 epochs) passes after 8 reads; and a background
//! self-wake that runs on counts as `TURN_AFTER_SELF_WAKES` of them
//! (`SELF_WAKE_COUNTS`, `worker/step_aside.rs`). One look is left out:
//! the injector's emptiness test before a take (`Core::take_from_injector`
//! says why).
//!
//! Run with `RUSTFLAGS="--cfg loom" cargo test -p brigade --lib --release`
//! (CI does). `LOOM_MAX_PREEMPTIONS` and the other loom variables apply.

mod current_thread;
mod elastic;
mod handoff;
mod shutdown;
mod stepping_aside;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};

use crate::{Builder, Runtime};

/// A builder of a runtime with `workers` workers and nothing that needs
/// the monitor: no long-poll detector, no compensation, no latency
/// sampling, no rescue.
fn builder(workers: usize) -> Builder {
    let mut builder = Builder::new();
    builder
        .worker_threads(workers)
        .long_poll_threshold(None)
        .compensation_threshold(None)
        .max_spare_workers(0)
        .latency_sample_every(0)
        .max_yield_delay(None);
    builder
}

/// A runtime from [`builder`].
fn runtime(workers: usize) -> Runtime {
    builder(workers)
        .build()
        .expect("build a runtime for a loom model")
}

/// The most loom operations one execution of a model may take.
const MAX_BRANCHES: usize = 20_000;

/// Runs `model` under loom with at most `preemptions` preemptions per
/// execution (or `LOOM_MAX_PREEMPTIONS` if set).
fn check(preemptions: usize, model: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    if builder.preemption_bound.is_none() {
        builder.preemption_bound = Some(preemptions);
    }
    // A runtime's start, run and shutdown take a few thousand loom
    // operations; loom's default bound (1,000) is for small protocols.
    builder.max_branches = MAX_BRANCHES;
    builder.check(model);
}

/// Spawns on `rt` two background tasks whose self-wakes reach a turn
/// through the worker's shard of the yield queue (`Core::take_turns`) on a
/// one-worker runtime, under the production policy (`policy.rs`, A3).
/// `second` waits at a gate first, then yields `yields` times. `first`
/// yields once with nothing else queued (a self-wake that runs on and
/// counts, as 64 do: `SELF_WAKE_COUNTS` in `step_aside.rs`), opens the
/// gate, and yields `yields` more times: its next self-wake steps aside
/// behind `second`, now in the deque, whose first self-wake then finds the
/// count reached and `first` in the shard, and takes its turn. Each task
/// holds one of `dropped`'s guards. Returns `(first, second)`.
fn spawn_turn_takers(
    rt: &Runtime,
    dropped: &DropCount,
    yields: usize,
) -> (crate::JoinHandle<()>, crate::JoinHandle<()>) {
    let gate = Gate::default();
    let background = || crate::task::Builder::new().class(crate::task::TaskClass::Background);
    let second = {
        let (gate, guard) = (gate.clone(), dropped.guard());
        background().spawn_on(
            async move {
                let _guard = guard;
                gate.wait().await;
                for _ in 0..yields {
                    crate::yield_now().await;
                }
            },
            rt.handle(),
        )
    };
    let guard = dropped.guard();
    let first = background().spawn_on(
        async move {
            let _guard = guard;
            crate::yield_now().await;
            gate.open();
            for _ in 0..yields {
                crate::yield_now().await;
            }
        },
        rt.handle(),
    );
    (first, second)
}

/// A gate between two tasks: [`wait`](Self::wait) is pending until
/// [`open`](Self::open).
#[derive(Clone, Default)]
struct Gate(Arc<crate::sync::Mutex<(bool, Option<std::task::Waker>)>>);

impl Gate {
    fn open(&self) {
        let waker = {
            let mut state = crate::sync::lock(&self.0);
            state.0 = true;
            state.1.take()
        };
        if let Some(waker) = waker {
            waker.wake();
        }
    }

    fn wait(&self) -> impl Future<Output = ()> + '_ {
        std::future::poll_fn(|cx| {
            let mut state = crate::sync::lock(&self.0);
            if state.0 {
                return Poll::Ready(());
            }
            state.1 = Some(cx.waker().clone());
            Poll::Pending
        })
    }
}

/// Counts how many of the futures it was put in have been dropped.
#[derive(Clone, Default)]
struct DropCount(Arc<AtomicUsize>);

impl DropCount {
    fn guard(&self) -> DropGuard {
        DropGuard(self.0.clone())
    }

    fn get(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
}

/// Bumps its `DropCount` when dropped.
struct DropGuard(Arc<AtomicUsize>);

impl Drop for DropGuard {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// A future that never completes and never wakes anyone.
struct Never;

impl Future for Never {
    type Output = ();

    fn poll(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<()> {
        Poll::Pending
    }
}
