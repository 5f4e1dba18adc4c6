//! Spare worker threads: starting one, and its life of serving (the
//! ordinary worker loop, `Core::run`, on a spare slot) and resting. The
//! slots' states and the bookkeeping are compensation's
//! (`compensation/spare_slots.rs`); the threads are here, beside the loop they
//! run, so that compensation does not depend on the worker loop. Called
//! from `Core::block_in_place` and, for the monitor's decision
//! (`compensation/decide.rs`), from `monitor.rs`.

use std::sync::Arc;

use super::Core;
use crate::runtime::Shared;
use crate::runtime::compensation::spare_slots::{AfterRest, Start};
use crate::sync::{LocalQueue, Mutex, lock};
use crate::task::Runnable;

/// Starts as many spares as covered slots ask for, within the bound.
/// `reason` says why, for the `tracing` event.
pub(crate) fn start_spares(shared: &Arc<Shared>, reason: &dyn std::fmt::Display) {
    while let Some(start) = shared.compensation.start_spare() {
        let spare = match start {
            Start::Woken { slot } => slot,
            Start::Spawn { slot, local } => match spawn(shared, slot, local) {
                Ok(()) => {
                    if shared.compensation.spawn_succeeded() {
                        tracing::info!(
                            target: "brigade::compensation",
                            "spare worker threads start again"
                        );
                    }
                    slot
                }
                Err((local, error)) => {
                    spawn_failed(shared, slot, local, &error);
                    return;
                }
            },
        };
        tracing::debug!(
            target: "brigade::compensation",
            spare,
            serving = shared.compensation.serving(),
            "spare worker {spare} serves: {reason}"
        );
    }
}

/// Gives the slot back and reports the failure: a warning for the first
/// of a spell, then a debug event per retry (the monitor retries at every
/// tick while a covered worker lacks its spare; the stuck worker stays
/// stuck meanwhile, and the other workers carry on).
fn spawn_failed(shared: &Shared, slot: usize, local: LocalQueue<Runnable>, error: &std::io::Error) {
    if shared.compensation.spawn_failed(slot, local) {
        tracing::warn!(
            target: "brigade::compensation",
            %error,
            "could not start a spare worker thread; a stuck worker stays without a stand-in \
             until one starts (retried at every monitor tick, reported once)"
        );
    } else {
        tracing::debug!(
            target: "brigade::compensation",
            %error,
            "could not start a spare worker thread (again)"
        );
    }
}

fn spawn(
    shared: &Arc<Shared>,
    slot: usize,
    local: LocalQueue<Runnable>,
) -> Result<(), (LocalQueue<Runnable>, std::io::Error)> {
    let config = &shared.config;
    let name = config.thread_names.spare(slot - shared.num_workers());
    let mut thread = std::thread::Builder::new().name(name);
    if let Some(size) = config.thread_stack_size {
        thread = thread.stack_size(size);
    }
    // The deque goes to the thread through this slot, so it can be taken
    // back if the thread does not start.
    let handover = Arc::new(Mutex::new(Some(local)));
    let spawned = {
        let shared = shared.clone();
        let handover = handover.clone();
        thread.spawn(move || {
            let local = lock(&handover).take();
            if let Some(local) = local {
                run(shared, slot, local);
            }
        })
    };
    match spawned {
        Ok(_) => Ok(()),
        Err(error) => {
            let local = lock(&handover)
                .take()
                .expect("a thread that did not start took its deque");
            Err((local, error))
        }
    }
}

/// A spare thread's body: serve, rest, serve again, until the keep-alive
/// runs out or the runtime shuts down.
fn run(shared: Arc<Shared>, slot: usize, local: LocalQueue<Runnable>) {
    #[cfg_attr(loom, allow(dead_code))] // The slot closes its stat file, which loom leaves out.
    struct Exited<'a>(&'a Shared, usize);
    impl Drop for Exited<'_> {
        fn drop(&mut self) {
            #[cfg(not(loom))]
            self.0.compensation.stat_files().close(self.1);
            self.0.compensation.thread_exited();
        }
    }
    // The file the monitor reads this thread's state from, held while the
    // thread lives (`stat_files.rs`).
    #[cfg(not(loom))]
    shared.compensation.stat_files().open_own(slot);
    let _exited = Exited(&shared, slot);
    // Between the thread hooks, so that shutdown waits for the stop hook.
    crate::runtime::threads::thread_hooks::run_thread(&shared, || serve(&shared, slot, local));
}

/// [`run`]'s loop, between the thread hooks.
fn serve(shared: &Arc<Shared>, slot: usize, mut local: LocalQueue<Runnable>) {
    loop {
        local = Core::new(slot, shared.clone(), local).run();
        if shared.is_shutdown() {
            shared.compensation.leave(slot, local);
            return;
        }
        let keep_alive = shared.config.spare_keep_alive;
        match shared.compensation.rest(slot, local, keep_alive) {
            AfterRest::Serve(again) => local = again,
            AfterRest::Exit => return,
        }
    }
}
