//! `Builder::on_thread_start` / `on_thread_stop`: user code run on every
//! thread the runtime starts to run tasks or closures on.
//!
//! Each such thread (a worker, a spare worker, a blocking-pool thread)
//! runs its body through [`run_thread`]: the start hook, the body, then the
//! stop hook, each hook with the runtime's context entered, as tokio does,
//! so `Handle::current()` works in them. The monitor thread and the
//! fallback driver thread run no user code and call no hook.
//!
//! A hook that panics is caught and logged (target `brigade::runtime`,
//! error level): the thread serves anyway, so a bad hook cannot take a
//! worker out of the pool and leave its tasks stranded.

use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use super::{Builder, Handle, Shared, context};

/// A hook, shared by every thread that calls it.
type Hook = Arc<dyn Fn() + Send + Sync + 'static>;

/// The builder's thread hooks (in `SchedulerConfig` once built).
#[derive(Clone, Default)]
pub(crate) struct ThreadHooks {
    start: Option<Hook>,
    stop: Option<Hook>,
}

impl fmt::Debug for ThreadHooks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ThreadHooks")
            .field("start", &self.start.is_some())
            .field("stop", &self.stop.is_some())
            .finish()
    }
}

/// Runs a runtime thread's `body` between its start and stop hooks.
pub(crate) fn run_thread<R>(shared: &Arc<Shared>, body: impl FnOnce() -> R) -> R {
    let hooks = &shared.config.thread_hooks;
    call(shared, hooks.start.as_ref(), "on_thread_start");
    let output = body();
    call(shared, hooks.stop.as_ref(), "on_thread_stop");
    output
}

/// Calls `hook`, if set, in `shared`'s context, catching a panic.
fn call(shared: &Arc<Shared>, hook: Option<&Hook>, name: &str) {
    let Some(hook) = hook else {
        return;
    };
    let handle = Handle {
        shared: shared.clone(),
    };
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        context::run_in_context(handle, || hook())
    }));
    if outcome.is_err() {
        tracing::error!(
            target: "brigade::runtime",
            hook = name,
            "a thread hook panicked; the thread runs on"
        );
    }
}

impl Builder {
    /// Runs `hook` on each thread the runtime starts, before it runs any
    /// task or closure: every worker, every spare worker (compensation,
    /// [`block_in_place`](crate::task::block_in_place)) and every
    /// blocking-pool thread (`spawn_blocking`), as tokio runs it on its
    /// workers and blocking threads. Use it to pin threads to CPUs or set
    /// up thread-locals. The runtime's context is entered while it runs
    /// ([`Handle::current`] works). A panic in the hook is logged and the
    /// thread serves anyway.
    ///
    /// Threads are started when the runtime is built (workers), on demand
    /// (spares, blocking threads) and again after an idle one exits
    /// ([`thread_keep_alive`](Self::thread_keep_alive)), so count on one
    /// call per thread, not a fixed number of calls.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    ///
    /// let started = Arc::new(AtomicUsize::new(0));
    /// let counter = started.clone();
    /// let rt = brigade::runtime::Builder::new_multi_thread()
    ///     .worker_threads(2)
    ///     .on_thread_start(move || {
    ///         counter.fetch_add(1, Ordering::SeqCst);
    ///     })
    ///     .build()?;
    /// // Each worker calls it as it starts; wait for the second one.
    /// rt.block_on(async {
    ///     while started.load(Ordering::SeqCst) < 2 {
    ///         brigade::time::sleep(std::time::Duration::from_millis(1)).await;
    ///     }
    /// });
    /// # Ok::<(), brigade::BuildError>(())
    /// ```
    pub fn on_thread_start<F>(&mut self, hook: F) -> &mut Self
    where
        F: Fn() + Send + Sync + 'static,
    {
        self.thread_hooks.start = Some(Arc::new(hook));
        self
    }

    /// Runs `hook` on each thread that [`on_thread_start`](Self::on_thread_start)
    /// ran on, as it stops: a worker at shutdown, a spare or blocking-pool
    /// thread when it exits after idling (or at shutdown). The runtime's
    /// context is entered while it runs; a panic in it is logged. A thread
    /// abandoned by [`Runtime::shutdown_timeout`](super::Runtime::shutdown_timeout)
    /// calls it when its poll or closure ends, if the process still runs.
    pub fn on_thread_stop<F>(&mut self, hook: F) -> &mut Self
    where
        F: Fn() + Send + Sync + 'static,
    {
        self.thread_hooks.stop = Some(Arc::new(hook));
        self
    }
}
