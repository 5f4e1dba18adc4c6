//! [`BrigadeExecutor`]: hyper's executor on brigade.

use std::future::Future;

/// A [`hyper::rt::Executor`] that spawns hyper's background futures (HTTP/2
/// connection and stream tasks) as brigade tasks.
///
/// Which runtime it spawns on:
/// - [`BrigadeExecutor::new`] (also `Default`) spawns on the **current**
///   runtime, the one of the thread that calls `execute`. hyper calls it
///   while a connection future is being polled, so when connections run on
///   brigade (inside a task or `block_on`) this is always their runtime, and
///   the executor can be built anywhere, even before the runtime exists.
///   Calling `execute` outside a brigade runtime panics, like
///   [`brigade::spawn`].
/// - [`BrigadeExecutor::with_handle`] (also `From<Handle>`) spawns on the
///   runtime of a stored [`brigade::Handle`], from any thread.
///
/// The tasks are ordinary (foreground) brigade tasks: request handling is
/// the latency-sensitive work that background tasks give way to. The
/// [`JoinHandle`](brigade::JoinHandle)s are dropped, which detaches the
/// tasks; hyper tracks their completion itself.
///
/// # Examples
///
/// ```
/// use brigade_hyper::BrigadeExecutor;
/// use hyper::rt::Executor;
///
/// let rt = brigade::Runtime::new()?;
/// let (done_tx, done_rx) = std::sync::mpsc::channel();
/// // A stored handle works from any thread, even outside the runtime.
/// BrigadeExecutor::with_handle(rt.handle().clone()).execute(async move {
///     done_tx.send("ran on brigade").unwrap();
/// });
/// assert_eq!(done_rx.recv().unwrap(), "ran on brigade");
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct BrigadeExecutor {
    handle: Option<brigade::Handle>,
}

impl BrigadeExecutor {
    /// An executor that spawns on whichever brigade runtime `execute` is
    /// called in.
    pub fn new() -> Self {
        BrigadeExecutor { handle: None }
    }

    /// An executor that spawns on `handle`'s runtime, from any thread.
    pub fn with_handle(handle: brigade::Handle) -> Self {
        BrigadeExecutor {
            handle: Some(handle),
        }
    }

    /// The stored handle, if this executor was built with one.
    pub fn handle(&self) -> Option<&brigade::Handle> {
        self.handle.as_ref()
    }
}

impl From<brigade::Handle> for BrigadeExecutor {
    fn from(handle: brigade::Handle) -> Self {
        BrigadeExecutor::with_handle(handle)
    }
}

impl<F> hyper::rt::Executor<F> for BrigadeExecutor
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    /// Spawns `future` as a detached brigade task.
    ///
    /// # Panics
    /// Without a stored handle, outside a brigade runtime.
    fn execute(&self, future: F) {
        match &self.handle {
            Some(handle) => drop(handle.spawn(future)),
            None => drop(brigade::spawn(future)),
        }
    }
}
