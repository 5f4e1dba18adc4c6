//! Either runtime as one value, for the examples that pick the runtime at
//! run time (`--runtime`, a variant) and serve with each runtime's own I/O
//! types: [`Runtime`], its [`Handle`], and the builders they start from.

use std::future::Future;
use std::time::Duration;

use super::RuntimeKind;

/// brigade's builder with `workers` worker threads and its other settings
/// at their defaults.
pub fn brigade_builder(workers: usize) -> brigade::Builder {
    let mut builder = brigade::Builder::new();
    builder.worker_threads(workers);
    builder
}

/// tokio's multi-thread builder with `workers` worker threads and every
/// driver (I/O and time) on, as the examples serving TCP need.
pub fn tokio_builder(workers: usize) -> tokio::runtime::Builder {
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    builder.worker_threads(workers).enable_all();
    builder
}

/// A runtime under test: brigade's or tokio's.
pub enum Runtime {
    /// brigade's multi-thread runtime.
    Brigade(brigade::Runtime),
    /// tokio's multi-thread runtime.
    Tokio(tokio::runtime::Runtime),
}

impl Runtime {
    /// Which runtime this is.
    pub fn kind(&self) -> RuntimeKind {
        match self {
            Runtime::Brigade(_) => RuntimeKind::Brigade,
            Runtime::Tokio(_) => RuntimeKind::Tokio,
        }
    }

    /// A handle to spawn onto the runtime from any thread.
    pub fn handle(&self) -> Handle {
        match self {
            Runtime::Brigade(rt) => Handle::Brigade(rt.handle().clone()),
            Runtime::Tokio(rt) => Handle::Tokio(rt.handle().clone()),
        }
    }

    /// The brigade runtime, for its metrics; `None` on tokio.
    pub fn as_brigade(&self) -> Option<&brigade::Runtime> {
        match self {
            Runtime::Brigade(rt) => Some(rt),
            Runtime::Tokio(_) => None,
        }
    }

    /// Shuts the runtime down, waiting at most `timeout` for tasks still
    /// running (stuck in a blocking call, say).
    pub fn shutdown(self, timeout: Duration) {
        match self {
            Runtime::Brigade(rt) => rt.shutdown_timeout(timeout),
            Runtime::Tokio(rt) => rt.shutdown_timeout(timeout),
        }
    }
}

/// A [`Runtime`]'s handle, to spawn from a thread outside it.
#[derive(Clone)]
pub enum Handle {
    /// brigade's handle.
    Brigade(brigade::Handle),
    /// tokio's handle.
    Tokio(tokio::runtime::Handle),
}

impl Handle {
    /// Spawns `task` and lets it run detached.
    pub fn spawn_detached(&self, task: impl Future<Output = ()> + Send + 'static) {
        match self {
            Handle::Brigade(handle) => drop(handle.spawn(task)),
            Handle::Tokio(handle) => drop(handle.spawn(task)),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;

    use super::*;

    fn build(kind: RuntimeKind) -> Runtime {
        match kind {
            RuntimeKind::Brigade => Runtime::Brigade(brigade_builder(2).build().unwrap()),
            RuntimeKind::Tokio => Runtime::Tokio(tokio_builder(2).build().unwrap()),
        }
    }

    #[test]
    fn either_runtime_runs_detached_tasks_and_shuts_down() {
        for kind in RuntimeKind::ALL {
            let runtime = build(kind);
            assert_eq!(runtime.kind(), kind);
            assert_eq!(runtime.as_brigade().is_some(), kind == RuntimeKind::Brigade);
            let (ran_tx, ran_rx) = mpsc::channel();
            let handle = runtime.handle();
            std::thread::spawn(move || {
                handle.spawn_detached(async move {
                    let _ = ran_tx.send(());
                });
            })
            .join()
            .unwrap();
            assert_eq!(
                ran_rx.recv_timeout(Duration::from_secs(10)),
                Ok(()),
                "{kind}: the task did not run"
            );
            runtime.shutdown(Duration::from_secs(5));
        }
    }
}
