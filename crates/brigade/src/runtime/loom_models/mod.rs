//! loom models of the real scheduler: a whole `Runtime` (its worker loop,
//! `Core::next_task`, stealing and `stop_searching`, `Idle::wait_for_work`
//! and the driver park, the yield queue's hand-off, shutdown) runs on loom
//! threads, with loom's primitives (`sync/`), crossbeam's queues replaced
//! by stand-ins that keep their orderings and add no lock
//! (`sync/loom_deque.rs`), and a driver without I/O (`driver/loom.rs`).
//! Left out: the monitor thread (it works by the clock, which a model does
//! not have), I/O and timers, and `async-task`'s own atomics (`std`'s,
//! which loom cannot see: its task state machine is taken as correct).
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

/// Spawns on `rt` a background task (`TaskClass::Background`: its
/// self-wakes take the background path from the first) that yields
/// `yields` times, holding `guard` until it ends or is dropped.
fn spawn_background_loop(rt: &Runtime, guard: DropGuard, yields: usize) -> crate::JoinHandle<()> {
    crate::task::Builder::new()
        .class(crate::task::TaskClass::Background)
        .spawn_on(
            async move {
                let _guard = guard;
                for _ in 0..yields {
                    crate::yield_now().await;
                }
            },
            rt.handle(),
        )
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
