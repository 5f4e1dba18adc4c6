//! Spare workers: the spare slots' states (vacant, serving, resting), and
//! the bookkeeping that starts a spare and lets one step down or rest. The
//! threads themselves are in `runtime/scheduler/worker/spare_threads.rs`. When a spare is wanted (covers) and the protocol
//! that ties covers to spares are in `compensation/mod.rs`; which stuck
//! workers get one is in `compensation/decide.rs`.
//!
//! A spare thread runs the ordinary worker loop (`Core::run`) on its spare
//! slot until it is surplus, then rests for at most the keep-alive
//! (`Builder::thread_keep_alive`) in case another worker gets stuck, and
//! exits. Spare threads are counted here and waited for at shutdown (step
//! 4 in `shutdown.rs`).

use std::time::Duration;

use super::Compensation;
use crate::sync::{MutexGuard, Ordering, lock, wait_timeout, wait_until};

/// The state of one spare slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SlotState {
    /// No thread; the slot's deque is kept in [`SpareSlot::local`].
    Vacant,
    /// Its thread runs the worker loop.
    Serving,
    /// Its thread waits to serve again, for at most the keep-alive.
    Resting,
}

struct SpareSlot<D> {
    state: SlotState,
    /// The deque, while no thread holds it.
    local: Option<D>,
}

pub(super) struct Spares<D> {
    slots: Vec<SpareSlot<D>>,
    serving: usize,
    /// Spare threads alive (serving or resting).
    threads: usize,
    /// Set at shutdown: no spare starts any more, resting ones exit.
    closed: bool,
    /// A spell of failed thread starts is on: the last start of a spare
    /// thread failed (see [`Compensation::spawn_failed`]).
    failing: bool,
}

/// What [`Compensation::start_spare`] asks the caller to do.
pub(crate) enum Start<D> {
    /// A resting thread was woken to serve slot `slot`.
    Woken { slot: usize },
    /// Slot `slot` needs a new thread, which gets `local` as its deque.
    /// If the thread cannot be started, give both back with
    /// [`Compensation::spawn_failed`].
    Spawn { slot: usize, local: D },
}

/// What a resting spare thread does next ([`Compensation::rest`]).
pub(crate) enum AfterRest<D> {
    /// Serve again, with this deque.
    Serve(D),
    /// Exit: the keep-alive ran out or the runtime shut down (the deque was
    /// kept in the slot).
    Exit,
}

impl<D> Compensation<D> {
    /// F5 of the policy (`policy.rs`): starts one more spare if fewer serve
    /// than covered slots ask for
    /// (within the bound): wakes a resting thread, else hands a vacant slot
    /// to the caller to start a thread for. `None` if no spare is needed,
    /// none is left, or the runtime is shutting down.
    pub(crate) fn start_spare(&self) -> Option<Start<D>> {
        // Always under the lock, where `wanted` changes: a lock-free look
        // could miss a spare stepping down just now.
        let mut spares = lock(&self.spares);
        let wanted = self.wanted.load(Ordering::SeqCst).min(self.max_spares);
        if spares.closed || spares.serving >= wanted {
            return None;
        }
        let start = if let Some(index) = spares.position(SlotState::Resting) {
            spares.slots[index].state = SlotState::Serving;
            self.changed.notify_all();
            Start::Woken {
                slot: self.first_spare + index,
            }
        } else {
            let index = spares.position(SlotState::Vacant)?;
            let slot = &mut spares.slots[index];
            let local = slot.local.take()?;
            slot.state = SlotState::Serving;
            spares.threads += 1;
            Start::Spawn {
                slot: self.first_spare + index,
                local,
            }
        };
        self.set_serving(&mut spares, 1, true);
        self.started
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Some(start)
    }

    /// Gives back a slot whose thread could not be started. Returns whether
    /// this failure begins a spell of them (the first since a thread last
    /// started), which is worth one warning; the monitor retries at every
    /// tick, so the others are not.
    pub(crate) fn spawn_failed(&self, slot: usize, local: D) -> bool {
        let mut spares = lock(&self.spares);
        let first_of_spell = !std::mem::replace(&mut spares.failing, true);
        let spare = &mut spares.slots[slot - self.first_spare];
        spare.state = SlotState::Vacant;
        spare.local = Some(local);
        spares.threads -= 1;
        self.set_serving(&mut spares, 1, false);
        self.started
            .fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
        // `wait_exited` may be waiting for this thread.
        self.changed.notify_all();
        first_of_spell
    }

    /// A spare thread started: ends a spell of failures. Returns whether
    /// one was on.
    pub(crate) fn spawn_succeeded(&self) -> bool {
        std::mem::take(&mut lock(&self.spares).failing)
    }

    /// F9 of the policy (`policy.rs`): spare slot `slot` steps down if it
    /// is surplus: it stops serving and
    /// rests. Returns whether it did; the caller must then empty its deque
    /// and call [`rest`](Self::rest).
    pub(crate) fn try_step_down(&self, slot: usize) -> bool {
        if !self.is_surplus() {
            return false;
        }
        let mut spares = lock(&self.spares);
        if spares.serving <= self.wanted.load(Ordering::SeqCst) {
            return false;
        }
        spares.slots[slot - self.first_spare].state = SlotState::Resting;
        self.set_serving(&mut spares, 1, false);
        true
    }

    /// F10 of the policy (`policy.rs`): a spare thread whose worker loop
    /// ended (it stepped down, or the runtime is shutting down) waits, for
    /// at most `keep_alive`, to serve slot `slot` again. On
    /// [`AfterRest::Exit`] the thread must exit and then call
    /// [`thread_exited`](Self::thread_exited).
    pub(crate) fn rest(&self, slot: usize, local: D, keep_alive: Duration) -> AfterRest<D> {
        let index = slot - self.first_spare;
        let mut spares = lock(&self.spares);
        let mut waited = Duration::ZERO;
        loop {
            let state = spares.slots[index].state;
            if state == SlotState::Serving && !spares.closed {
                return AfterRest::Serve(local);
            }
            if spares.closed || waited >= keep_alive {
                if state == SlotState::Serving {
                    // Shutdown caught a serving spare.
                    self.set_serving(&mut spares, 1, false);
                }
                let spare = &mut spares.slots[index];
                spare.state = SlotState::Vacant;
                spare.local = Some(local);
                return AfterRest::Exit;
            }
            let started = std::time::Instant::now();
            spares = wait_timeout(&self.changed, spares, keep_alive - waited).0;
            waited += started.elapsed();
        }
    }

    /// A spare thread whose worker loop ended at shutdown gives its slot
    /// back; the thread must exit and then call
    /// [`thread_exited`](Self::thread_exited).
    pub(crate) fn leave(&self, slot: usize, local: D) {
        let mut spares = lock(&self.spares);
        let index = slot - self.first_spare;
        if spares.slots[index].state == SlotState::Serving {
            self.set_serving(&mut spares, 1, false);
        }
        let spare = &mut spares.slots[index];
        spare.state = SlotState::Vacant;
        spare.local = Some(local);
    }

    /// A spare thread exited (called by a guard as the thread ends, also if
    /// it unwinds).
    pub(crate) fn thread_exited(&self) {
        lock(&self.spares).threads -= 1;
        self.changed.notify_all();
    }

    /// Shutdown: no spare starts from now on, resting threads exit.
    pub(crate) fn close(&self) {
        lock(&self.spares).closed = true;
        self.changed.notify_all();
    }

    /// Waits until at most `own` spare threads are alive (`own`: 1 when
    /// the caller is a spare thread itself), until `deadline` if given.
    /// Returns `false` if the deadline passed first.
    pub(crate) fn wait_exited(&self, own: usize, deadline: Option<std::time::Instant>) -> bool {
        let spares = lock(&self.spares);
        let (_spares, timed_out) = wait_until(&self.changed, spares, deadline, |spares| {
            spares.threads <= own
        });
        !timed_out
    }

    /// Spares started so far.
    pub(crate) fn started(&self) -> u64 {
        self.started.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Spare threads alive, and how many of them rest.
    pub(crate) fn threads(&self) -> (usize, usize) {
        let spares = lock(&self.spares);
        (spares.threads, spares.threads - spares.serving)
    }

    fn set_serving(&self, spares: &mut MutexGuard<'_, Spares<D>>, by: usize, up: bool) {
        if up {
            spares.serving += by;
        } else {
            spares.serving -= by;
        }
        self.serving.store(spares.serving, Ordering::SeqCst);
    }
}

impl<D> Spares<D> {
    /// One vacant slot per deque in `locals`.
    pub(super) fn new(locals: Vec<D>) -> Self {
        Spares {
            slots: locals
                .into_iter()
                .map(|local| SpareSlot {
                    state: SlotState::Vacant,
                    local: Some(local),
                })
                .collect(),
            serving: 0,
            threads: 0,
            closed: false,
            failing: false,
        }
    }

    fn position(&self, state: SlotState) -> Option<usize> {
        self.slots.iter().position(|slot| slot.state == state)
    }
}
