//! Holds a woken watcher before it harvests, as a crowded host's kernel
//! would hold it off the CPU, so tests can check that busy workers serve
//! its work; and lengthens the watcher's relief (`Relief`), so that a test
//! fails where only the relief's end would bring the watcher back.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// Which wake-ups of the watcher are held.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Hold {
    /// None.
    Off,
    /// Those from the kernel only: I/O readiness or the timer's timeout
    /// (not an unpark through the wake pipe).
    KernelWakes,
    /// Every wake-up.
    AllWakes,
}

struct State {
    hold: Hold,
    held: bool,
}

/// See the module docs.
pub(crate) struct TestHooks {
    state: Mutex<State>,
    changed: Condvar,
    /// A relief's length in nanoseconds, if not the default (0).
    relief_length: AtomicU64,
    /// Waits the watcher began relieved.
    relieved_waits: AtomicU64,
}

impl Default for TestHooks {
    fn default() -> Self {
        TestHooks {
            state: Mutex::new(State {
                hold: Hold::Off,
                held: false,
            }),
            changed: Condvar::new(),
            relief_length: AtomicU64::new(0),
            relieved_waits: AtomicU64::new(0),
        }
    }
}

/// Lets a held watcher go when dropped, so that a failing test ends
/// (its runtime's shutdown waits for the watcher) instead of hanging.
pub(crate) struct Holding<'a>(&'a TestHooks);

impl Drop for Holding<'_> {
    fn drop(&mut self) {
        self.0.state.lock().unwrap().hold = Hold::Off;
        self.0.changed.notify_all();
    }
}

impl TestHooks {
    /// From now on, a watcher woken as `hold` says waits before it
    /// harvests, until the guard is dropped.
    pub(crate) fn hold(&self, hold: Hold) -> Holding<'_> {
        self.state.lock().unwrap().hold = hold;
        Holding(self)
    }

    /// Makes every relief from now on last `length`, so that a test
    /// fails, instead of passing late, where only the relief's end would
    /// bring the watcher back.
    pub(crate) fn set_relief_length(&self, length: Duration) {
        let nanos = u64::try_from(length.as_nanos()).unwrap_or(u64::MAX).max(1);
        self.relief_length.store(nanos, Ordering::Relaxed);
    }

    pub(super) fn relief_length(&self) -> Option<u64> {
        match self.relief_length.load(Ordering::Relaxed) {
            0 => None,
            length => Some(length),
        }
    }

    pub(super) fn count_relieved_wait(&self) {
        self.relieved_waits.fetch_add(1, Ordering::Relaxed);
    }

    /// How many waits the watcher began relieved.
    pub(crate) fn relieved_waits(&self) -> u64 {
        self.relieved_waits.load(Ordering::Relaxed)
    }

    /// Waits until a watcher is held; `false` after `timeout`.
    pub(crate) fn wait_held(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut state = self.state.lock().unwrap();
        while !state.held {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            state = self.changed.wait_timeout(state, left).unwrap().0;
        }
        true
    }

    /// The watcher's side, after its wait and before it harvests.
    /// `by_kernel`: events or its timeout woke it (an unpark may have
    /// too).
    pub(super) fn hold_watcher(&self, by_kernel: bool) {
        let mut state = self.state.lock().unwrap();
        let held = match state.hold {
            Hold::Off => false,
            Hold::KernelWakes => by_kernel,
            Hold::AllWakes => true,
        };
        if !held {
            return;
        }
        state.held = true;
        self.changed.notify_all();
        while state.hold != Hold::Off {
            state = self.changed.wait(state).unwrap();
        }
        state.held = false;
    }
}
