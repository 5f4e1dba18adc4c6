//! [`Handle`], the scheduler's side of it: the type, and what spawns
//! through it. The scheduler (layer 3) and the tasks and resources below it
//! name this type; the facade (`runtime/mod.rs`, `enter.rs`) adds
//! `block_on`, `metrics` and `enter`.

use std::future::Future;
use std::panic::Location;
use std::sync::Arc;

use crate::runtime::Shared;
use crate::task::{JoinHandle, Origin, TaskClass};

/// A cheap, clonable reference to a runtime, usable from any thread to
/// spawn tasks or block on futures.
///
/// # Examples
///
/// ```
/// let rt = brigade::Runtime::new()?;
/// let handle = rt.handle().clone();
/// let from_thread = std::thread::spawn(move || handle.block_on(handle.spawn(async { 7 })))
///     .join()
///     .unwrap();
/// assert_eq!(from_thread.unwrap(), 7);
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Clone)]
pub struct Handle {
    pub(crate) shared: Arc<Shared>,
}

impl Handle {
    /// Spawns a task on this runtime. See [`spawn`](crate::spawn).
    #[track_caller]
    pub fn spawn<F>(&self, future: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.shared
            .spawn(future, Origin::task(Location::caller()), TaskClass::Auto)
    }

    /// Spawns an elastic task on this runtime. See [`spawn_elastic`](crate::spawn_elastic).
    #[track_caller]
    pub fn spawn_elastic<F>(&self, future: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.shared
            .spawn(future, Origin::task(Location::caller()), TaskClass::Elastic)
    }

    /// Runs a blocking closure on the blocking pool. See
    /// [`spawn_blocking`](crate::spawn_blocking).
    #[track_caller]
    pub fn spawn_blocking<F, R>(&self, f: F) -> JoinHandle<R>
    where
        F: FnOnce() -> R + Send + 'static,
        R: Send + 'static,
    {
        self.shared.spawn_blocking(f, Location::caller())
    }

    /// Runs `f` on the blocking pool as a *mandatory* task: if the runtime
    /// shuts down while `f` is still queued, the pool runs it rather than
    /// drop it (`runtime/threads/blocking.rs`), as tokio's does for file writes. For
    /// work whose loss would lose data the caller was told was taken. A
    /// call after the shutdown began is refused as any `spawn_blocking`
    /// is: the handle resolves as cancelled.
    #[track_caller]
    pub(crate) fn spawn_mandatory_blocking<F, R>(&self, f: F) -> JoinHandle<R>
    where
        F: FnOnce() -> R + Send + 'static,
        R: Send + 'static,
    {
        self.shared.spawn_mandatory_blocking(f, Location::caller())
    }

    /// Spawns `future` of `class` on this runtime, as spawned at
    /// `location`: for the free functions (`task/spawn.rs`), whose caller's
    /// location a closure would lose.
    pub(crate) fn spawn_at<F>(
        &self,
        future: F,
        location: &'static Location<'static>,
        class: TaskClass,
    ) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.shared.spawn(future, Origin::task(location), class)
    }

    /// Runs `f` on the blocking pool, as spawned at `location` (see
    /// [`spawn_at`](Self::spawn_at)).
    pub(crate) fn spawn_blocking_at<F, R>(
        &self,
        f: F,
        location: &'static Location<'static>,
    ) -> JoinHandle<R>
    where
        F: FnOnce() -> R + Send + 'static,
        R: Send + 'static,
    {
        self.shared.spawn_blocking(f, location)
    }
}

impl std::fmt::Debug for Handle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Handle")
            .field("workers", &self.shared.num_workers())
            .finish()
    }
}
