//! [`Builder`]: spawning a task with options.

use std::future::Future;
use std::panic::Location;

use super::{AbortHandle, JoinHandle, JoinSet, Origin, TaskClass};
use crate::runtime::{Handle, context};

/// Spawns a task with options, in the style of tokio's `task::Builder`: a
/// [`class`](Self::class) and a [`name`](Self::name).
///
/// [`spawn`](crate::spawn) is `Builder::new().spawn(..)`, and
/// [`spawn_elastic`](crate::spawn_elastic) is
/// `Builder::new().class(TaskClass::Elastic).spawn(..)`.
///
/// # Examples
///
/// A request handler that yields while it serves, and must never be treated
/// as background work:
///
/// ```
/// use brigade::task::{Builder, TaskClass};
///
/// let rt = brigade::Runtime::new()?;
/// let handle = rt.handle();
/// // From any thread, with `spawn_on`.
/// let reply = Builder::new()
///     .class(TaskClass::Foreground)
///     .spawn_on(
///         async {
///             for _chunk in 0..8 {
///                 brigade::yield_now().await;
///             }
///             "done"
///         },
///         handle,
///     );
/// assert_eq!(rt.block_on(reply).unwrap(), "done");
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Debug, Clone, Copy, Default)]
#[must_use = "a task Builder spawns nothing until `spawn` is called"]
pub struct Builder<'a> {
    class: TaskClass,
    name: Option<&'a str>,
}

impl<'a> Builder<'a> {
    /// Options for a plain [`spawn`](crate::spawn): class
    /// [`TaskClass::Auto`], no name.
    pub fn new() -> Self {
        Builder::default()
    }

    /// Names the task, as tokio's `Builder::name` does: tokio-console shows
    /// the name (feature `console`, see the crate docs), and brigade's
    /// events about the task carry it as `task.name` (a demotion to
    /// background, a panic calling tokio outside a tokio runtime).
    ///
    /// ```
    /// use brigade::task::Builder;
    ///
    /// brigade::Runtime::new()?.block_on(async {
    ///     let compaction = Builder::new()
    ///         .name("compaction")
    ///         .spawn(async { 7 });
    ///     assert_eq!(compaction.await.unwrap(), 7);
    /// });
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn name(mut self, name: &'a str) -> Self {
        self.name = Some(name);
        self
    }

    /// Where a task spawned by this builder comes from.
    fn origin(&self, location: &'static Location<'static>) -> Origin<'a> {
        Origin::task(location).named(self.name)
    }

    /// How the scheduler treats the task (see [`TaskClass`]).
    pub fn class(mut self, class: TaskClass) -> Self {
        self.class = class;
        self
    }

    /// Spawns the task on the current runtime.
    ///
    /// # Panics
    /// Outside a runtime context, like [`spawn`](crate::spawn). Use
    /// [`spawn_on`](Self::spawn_on) from other threads.
    #[track_caller]
    pub fn spawn<F>(self, future: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        let location = Location::caller();
        context::with_current("brigade::task::Builder::spawn", |handle| {
            handle
                .shared
                .spawn(future, self.origin(location), self.class)
        })
    }

    /// Spawns the task on the runtime of `handle`, from any thread.
    #[track_caller]
    pub fn spawn_on<F>(self, future: F, handle: &Handle) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        handle
            .shared
            .spawn(future, self.origin(Location::caller()), self.class)
    }

    /// Spawns the task on the current runtime and adds it to `set`, as
    /// [`JoinSet::spawn`] does; returns an [`AbortHandle`] for it.
    ///
    /// # Examples
    ///
    /// An accept loop that keeps its connections in a set and marks them as
    /// foreground, so that a connection serving a backlog of requests (which
    /// wakes its own task again and again) is never taken for background
    /// work:
    ///
    /// ```
    /// use brigade::task::{Builder, JoinSet, TaskClass};
    ///
    /// brigade::Runtime::new()?.block_on(async {
    ///     let mut connections = JoinSet::new();
    ///     for id in 0..4 {
    ///         Builder::new()
    ///             .class(TaskClass::Foreground)
    ///             .spawn_in(&mut connections, async move { id * 2 });
    ///     }
    ///     let mut served = connections.join_all().await;
    ///     served.sort();
    ///     assert_eq!(served, [0, 2, 4, 6]);
    /// });
    /// # Ok::<(), std::io::Error>(())
    /// ```
    ///
    /// # Panics
    /// Outside a runtime context, like [`JoinSet::spawn`].
    #[track_caller]
    pub fn spawn_in<F>(self, set: &mut JoinSet<F::Output>, future: F) -> AbortHandle
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        // `spawn` is `#[track_caller]` too: the task's location is the
        // caller's.
        set.insert(self.spawn(future))
    }
}
