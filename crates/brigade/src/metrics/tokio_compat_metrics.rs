//! Feature `tokio-compat`: what the runtime's tokio-compat threads did, as
//! tokio's own stable metrics report it (`runtime/threads/tokio_compat.rs`).

use std::time::Duration;

use super::RuntimeMetrics;

/// Feature `tokio-compat`: the work of a runtime's tokio-compat threads
/// (see [`Builder::tokio_compat_threads`](crate::Builder::tokio_compat_threads)),
/// from [`RuntimeMetrics::tokio_compat`].
///
/// These threads run `tokio::spawn`ed tasks and drive tokio's I/O and
/// timers, outside brigade's scheduler. What is here is what tokio's stable
/// metrics say; tokio counts polls and spawns only in builds with its
/// unstable features, so they are not here.
///
/// # Examples
///
/// ```
/// let rt = brigade::Builder::new().worker_threads(1).build()?;
/// rt.block_on(async {
///     // A tokio task, from a brigade task: it runs on a compat thread.
///     tokio::spawn(async { 6 * 7 }).await.unwrap();
/// });
/// let compat = rt.metrics().tokio_compat().expect("the feature is on");
/// assert_eq!(compat.num_threads(), 1);
/// println!("busy for {:?}", compat.total_busy_duration());
/// # Ok::<(), brigade::BuildError>(())
/// ```
#[cfg_attr(docsrs, doc(cfg(feature = "tokio-compat")))]
#[derive(Clone, Debug)]
pub struct TokioCompatMetrics {
    tokio: tokio::runtime::RuntimeMetrics,
}

impl TokioCompatMetrics {
    pub(crate) fn new(tokio: tokio::runtime::RuntimeMetrics) -> Self {
        TokioCompatMetrics { tokio }
    }

    /// Number of compat worker threads (tokio's blocking pool not counted).
    pub fn num_threads(&self) -> usize {
        self.tokio.num_workers()
    }

    /// `tokio::spawn`ed tasks alive right now (spawned and not yet dropped;
    /// brigade tasks that use tokio sockets or timers are not counted).
    pub fn num_alive_tasks(&self) -> usize {
        self.tokio.num_alive_tasks()
    }

    /// tokio tasks waiting in the compat runtime's shared queue right now.
    pub fn global_queue_depth(&self) -> usize {
        self.tokio.global_queue_depth()
    }

    /// Time the compat threads spent awake, summed over them: running
    /// `tokio::spawn`ed tasks and dispatching tokio's I/O and timer events
    /// (which wake brigade tasks that wait on tokio resources).
    #[cfg(target_has_atomic = "64")]
    pub fn total_busy_duration(&self) -> Duration {
        (0..self.num_threads())
            .map(|thread| self.tokio.worker_total_busy_duration(thread))
            .sum()
    }

    /// How many times the compat threads went to sleep for lack of work,
    /// summed over them.
    #[cfg(target_has_atomic = "64")]
    pub fn total_park_count(&self) -> u64 {
        (0..self.num_threads())
            .map(|thread| self.tokio.worker_park_count(thread))
            .sum()
    }
}

impl RuntimeMetrics {
    /// Feature `tokio-compat`: the work of the runtime's tokio-compat
    /// threads, or `None` if it was built with
    /// [`Builder::tokio_compat(false)`](crate::Builder::tokio_compat).
    #[cfg_attr(docsrs, doc(cfg(feature = "tokio-compat")))]
    pub fn tokio_compat(&self) -> Option<TokioCompatMetrics> {
        self.source.tokio_compat().map(TokioCompatMetrics::new)
    }
}
