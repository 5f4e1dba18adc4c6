//! The thread hooks (`Builder::on_thread_start` / `on_thread_stop`, set in
//! `builder/tokio_names.rs`): user code run on every thread the runtime starts to run
//! tasks or closures on; and the park hooks (`on_thread_park` /
//! `on_thread_unpark`), run by a worker around each wait for work.
//!
//! Each such thread (a worker, a spare worker, a blocking-pool thread)
//! runs its body through [`run_thread`]: the start hook, the body, then the
//! stop hook, each hook with the runtime's context entered, as tokio does,
//! so `Handle::current()` works in them. The monitor thread and the
//! fallback driver thread run no user code and call no hook.
//!
//! A worker that finds no work calls the park hook, then waits for work
//! (`Core::wait_for_work`: the re-check of every queue, then the sleep),
//! then the unpark hook: the two always come in pairs, as tokio's, and, as
//! on tokio, the wait may end at the re-check without sleeping. The hooks
//! run on the worker, in its own context, before the re-check, so a task
//! the park hook spawns is seen there rather than left behind the sleep.
//! A current-thread runtime's worker (the thread in `block_on`) calls
//! them too; blocking-pool threads, which run no tasks, do not.
//!
//! A hook that panics is caught and logged (target `brigade::runtime`,
//! error level): the thread serves anyway, so a bad hook cannot take a
//! worker out of the pool and leave its tasks stranded.

use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use crate::runtime::handle::Handle;
use crate::runtime::{Shared, context};

/// A hook, shared by every thread that calls it.
pub(crate) type Hook = Arc<dyn Fn() + Send + Sync + 'static>;

/// The builder's thread hooks (in `SchedulerConfig` once built).
#[derive(Clone, Default)]
pub(crate) struct ThreadHooks {
    pub(crate) start: Option<Hook>,
    pub(crate) stop: Option<Hook>,
    pub(crate) park: Option<Hook>,
    pub(crate) unpark: Option<Hook>,
}

impl fmt::Debug for ThreadHooks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ThreadHooks")
            .field("start", &self.start.is_some())
            .field("stop", &self.stop.is_some())
            .field("park", &self.park.is_some())
            .field("unpark", &self.unpark.is_some())
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

/// Runs a worker's `wait` for work between the park and unpark hooks, on
/// the worker in its own context (see the module docs).
pub(crate) fn around_park<R>(shared: &Shared, wait: impl FnOnce() -> R) -> R {
    let hooks = &shared.config.thread_hooks;
    call_in_place(hooks.park.as_ref(), "on_thread_park");
    let output = wait();
    call_in_place(hooks.unpark.as_ref(), "on_thread_unpark");
    output
}

/// Calls `hook`, if set, in the thread's current context, catching a panic.
fn call_in_place(hook: Option<&Hook>, name: &str) {
    let Some(hook) = hook else {
        return;
    };
    if catch_unwind(AssertUnwindSafe(|| hook())).is_err() {
        panicked(name);
    }
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
        panicked(name);
    }
}

/// Logs the panic of hook `name`.
fn panicked(name: &str) {
    tracing::error!(
        target: "brigade::runtime",
        hook = name,
        "a thread hook panicked; the thread runs on"
    );
}
