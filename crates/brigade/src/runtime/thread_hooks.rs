//! The thread hooks (`Builder::on_thread_start` / `on_thread_stop`, set in
//! `flavor.rs`): user code run on every thread the runtime starts to run
//! tasks or closures on.
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

use super::handle::Handle;
use super::{Shared, context};

/// A hook, shared by every thread that calls it.
pub(super) type Hook = Arc<dyn Fn() + Send + Sync + 'static>;

/// The builder's thread hooks (in `SchedulerConfig` once built).
#[derive(Clone, Default)]
pub(crate) struct ThreadHooks {
    pub(super) start: Option<Hook>,
    pub(super) stop: Option<Hook>,
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
