//! Spare worker threads: started when a worker is stuck (or in
//! `block_in_place`), stepping down when it is back. What decides when is
//! in `runtime/compensation/`; this file starts the threads and runs them.
//!
//! A spare thread runs the ordinary worker loop (`Core::run`) on its spare
//! slot until it is surplus, then rests for at most the keep-alive
//! (`Builder::thread_keep_alive`) in case another worker gets stuck, and
//! exits. Spare threads are counted in `Compensation` and waited for at
//! shutdown (step 4 in `shutdown.rs`).

use std::sync::Arc;

use crate::sync::LocalQueue;

use super::Shared;
use super::compensation::{AfterRest, Start};
use super::worker::Core;
use crate::sync::{Mutex, lock};
use crate::task::Runnable;

/// Starts as many spares as covered slots ask for, within the bound.
/// `reason` says why, for the `tracing` event.
pub(crate) fn start_spares(shared: &Arc<Shared>, reason: &dyn std::fmt::Display) {
    while let Some(start) = shared.compensation.start_spare() {
        let spare = match start {
            Start::Woken { slot } => slot,
            Start::Spawn { slot, local } => match spawn(shared, slot, local) {
                Ok(()) => slot,
                Err((local, error)) => {
                    shared.compensation.spawn_failed(slot, local);
                    tracing::error!(
                        target: "brigade::compensation",
                        %error,
                        "could not start a spare worker thread"
                    );
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

fn spawn(
    shared: &Arc<Shared>,
    slot: usize,
    local: LocalQueue<Runnable>,
) -> Result<(), (LocalQueue<Runnable>, std::io::Error)> {
    let config = &shared.config;
    let mut thread = std::thread::Builder::new().name(config.thread_name.clone());
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
fn run(shared: Arc<Shared>, slot: usize, mut local: LocalQueue<Runnable>) {
    struct Exited<'a>(&'a Shared);
    impl Drop for Exited<'_> {
        fn drop(&mut self) {
            self.0.compensation.thread_exited();
        }
    }
    let _exited = Exited(&shared);
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
