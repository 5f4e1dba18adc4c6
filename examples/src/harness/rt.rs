//! [`Rt`]: the operations a runtime-agnostic workload needs, implemented
//! once for brigade ([`Brigade`]) and once for tokio ([`Tokio`]), so that
//! each workload is written once, generic over `R: Rt`, and instantiated
//! for both runtimes.

use std::fmt::Debug;
use std::future::Future;
use std::time::Duration;

use super::{RuntimeKind, latency_sample_every};

/// The operations the workloads need, implemented for both runtimes.
pub trait Rt: Sized + 'static {
    /// Which runtime this is.
    const KIND: RuntimeKind;
    /// The error a join handle resolves to when its task failed.
    type JoinError: Debug;
    /// The runtime's join handle.
    type JoinHandle<T: Send + 'static>: Future<Output = Result<T, Self::JoinError>> + Send + Unpin;

    /// A multi-thread runtime with `workers` worker threads (and a timer).
    /// Panics if the runtime cannot be built, as a bench cannot go on.
    fn build(workers: usize) -> Self;
    /// Runs `future` to completion on the calling thread.
    fn block_on<F: Future>(&self, future: F) -> F::Output;
    /// Spawns from outside the runtime, through its handle.
    fn spawn_remote<F>(&self, future: F) -> Self::JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static;
    /// Spawns from inside the runtime (a task or `block_on`).
    fn spawn<F>(future: F) -> Self::JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static;
    /// The runtime's unconditional yield.
    fn yield_now() -> impl Future<Output = ()> + Send;
    /// The runtime's sleep.
    fn sleep(duration: Duration) -> impl Future<Output = ()> + Send;
    /// The yield point after a unit of background work: brigade's
    /// `yield_if_busy`; on tokio, which has none that looks at the load, its
    /// closest equivalent, `yield_now` (as `mixed_load` and `http_import`
    /// compare them).
    fn background_yield() -> impl Future<Output = ()> + Send;
    /// The brigade runtime, for its metrics; `None` on tokio.
    fn as_brigade(&self) -> Option<&brigade::Runtime>;
}

/// brigade's runtime. [`Rt::build`] sets its scheduling-latency sampling
/// with [`latency_sample_every`]; a runtime built otherwise (other
/// settings) can be wrapped directly.
pub struct Brigade(pub brigade::Runtime);

impl Rt for Brigade {
    const KIND: RuntimeKind = RuntimeKind::Brigade;
    type JoinError = brigade::JoinError;
    type JoinHandle<T: Send + 'static> = brigade::JoinHandle<T>;

    fn build(workers: usize) -> Self {
        Brigade(
            brigade::Builder::new()
                .worker_threads(workers)
                .latency_sample_every(latency_sample_every())
                .build()
                .expect("build brigade runtime"),
        )
    }

    fn block_on<F: Future>(&self, future: F) -> F::Output {
        self.0.block_on(future)
    }

    fn spawn_remote<F>(&self, future: F) -> Self::JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.0.spawn(future)
    }

    fn spawn<F>(future: F) -> Self::JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        brigade::spawn(future)
    }

    fn yield_now() -> impl Future<Output = ()> + Send {
        brigade::yield_now()
    }

    fn sleep(duration: Duration) -> impl Future<Output = ()> + Send {
        brigade::time::sleep(duration)
    }

    fn background_yield() -> impl Future<Output = ()> + Send {
        brigade::yield_if_busy()
    }

    fn as_brigade(&self) -> Option<&brigade::Runtime> {
        Some(&self.0)
    }
}

/// tokio's multi-thread runtime. [`Rt::build`] enables its timer only; a
/// runtime built otherwise (e.g. with I/O) can be wrapped directly.
pub struct Tokio(pub tokio::runtime::Runtime);

impl Rt for Tokio {
    const KIND: RuntimeKind = RuntimeKind::Tokio;
    type JoinError = tokio::task::JoinError;
    type JoinHandle<T: Send + 'static> = tokio::task::JoinHandle<T>;

    fn build(workers: usize) -> Self {
        Tokio(
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(workers)
                .enable_time()
                .build()
                .expect("build tokio runtime"),
        )
    }

    fn block_on<F: Future>(&self, future: F) -> F::Output {
        self.0.block_on(future)
    }

    fn spawn_remote<F>(&self, future: F) -> Self::JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.0.spawn(future)
    }

    fn spawn<F>(future: F) -> Self::JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        tokio::spawn(future)
    }

    fn yield_now() -> impl Future<Output = ()> + Send {
        tokio::task::yield_now()
    }

    fn sleep(duration: Duration) -> impl Future<Output = ()> + Send {
        tokio::time::sleep(duration)
    }

    fn background_yield() -> impl Future<Output = ()> + Send {
        tokio::task::yield_now()
    }

    fn as_brigade(&self) -> Option<&brigade::Runtime> {
        None
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;

    use super::*;

    /// A task spawned from outside spawns one from inside, which yields
    /// and sleeps; the result comes back through both join handles. The
    /// runtime runs on a thread of its own, so that a hang fails the test
    /// after 10 s instead of blocking it.
    fn spawns_yields_and_sleeps<R: Rt>() {
        let (answer_tx, answer_rx) = mpsc::channel();
        std::thread::spawn(move || {
            let rt = R::build(2);
            let outer = rt.spawn_remote(async {
                let inner = R::spawn(async {
                    R::yield_now().await;
                    R::background_yield().await;
                    R::sleep(Duration::from_millis(1)).await;
                    7
                });
                inner.await.expect("inner task failed") * 6
            });
            let _ = answer_tx.send(rt.block_on(outer).expect("outer task failed"));
        });
        let answer = answer_rx.recv_timeout(Duration::from_secs(10));
        assert_eq!(answer, Ok(42), "{} did not finish", R::KIND);
    }

    #[test]
    fn brigade_runs_the_workload_operations() {
        spawns_yields_and_sleeps::<Brigade>();
        assert!(Brigade::build(1).as_brigade().is_some());
    }

    #[test]
    fn tokio_runs_the_workload_operations() {
        spawns_yields_and_sleeps::<Tokio>();
        assert!(Tokio::build(1).as_brigade().is_none());
    }
}
