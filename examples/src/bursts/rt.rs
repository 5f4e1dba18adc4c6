//! What the burst cases need beyond [`Rt`]: the live task and timer counts,
//! aborting a join handle, telling a cancelled task's error; and [`Latch`],
//! which tells a thread outside the runtime that N tasks got somewhere.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::harness::{Brigade, Rt, Tokio};

/// [`Rt`] plus the counts and the cancellation the burst cases read.
pub trait BurstRt: Rt {
    /// Tasks alive now (spawned, not yet finished or cancelled).
    fn alive_tasks(&self) -> usize;
    /// Timers registered now, where the runtime counts them (brigade's
    /// `RuntimeMetrics::num_timers`; tokio has no such count).
    fn timers(&self) -> Option<usize>;
    /// Aborts the task behind `handle`.
    fn abort<T: Send + 'static>(handle: &Self::JoinHandle<T>);
    /// Whether the task behind `handle` has finished (so awaiting it does
    /// not wait).
    fn is_finished<T: Send + 'static>(handle: &Self::JoinHandle<T>) -> bool;
    /// Whether `error` says the task was cancelled.
    fn is_cancelled(error: &Self::JoinError) -> bool;
}

impl BurstRt for Brigade {
    fn alive_tasks(&self) -> usize {
        self.0.metrics().num_alive_tasks()
    }

    fn timers(&self) -> Option<usize> {
        Some(self.0.metrics().num_timers())
    }

    fn abort<T: Send + 'static>(handle: &Self::JoinHandle<T>) {
        handle.abort();
    }

    fn is_finished<T: Send + 'static>(handle: &Self::JoinHandle<T>) -> bool {
        handle.is_finished()
    }

    fn is_cancelled(error: &Self::JoinError) -> bool {
        error.is_cancelled()
    }
}

impl BurstRt for Tokio {
    fn alive_tasks(&self) -> usize {
        self.0.metrics().num_alive_tasks()
    }

    fn timers(&self) -> Option<usize> {
        None
    }

    fn abort<T: Send + 'static>(handle: &Self::JoinHandle<T>) {
        handle.abort();
    }

    fn is_finished<T: Send + 'static>(handle: &Self::JoinHandle<T>) -> bool {
        handle.is_finished()
    }

    fn is_cancelled(error: &Self::JoinError) -> bool {
        error.is_cancelled()
    }
}

/// Counts arrivals and wakes a waiting thread when `target` have arrived.
///
/// Protocol: arrivals add to `count` with one atomic add each (no lock, so
/// millions of tasks can arrive cheaply); only the arrival that brings the
/// count to `target` takes the mutex, sets `reached` and notifies. The
/// waiter checks `reached` under the same mutex, so the notification cannot
/// fall between its check and its wait.
pub struct Latch {
    target: usize,
    count: AtomicUsize,
    reached: Mutex<bool>,
    signal: Condvar,
}

impl Latch {
    /// A latch that opens after `target` arrivals (at once for 0).
    pub fn new(target: usize) -> Latch {
        Latch {
            target,
            count: AtomicUsize::new(0),
            reached: Mutex::new(target == 0),
            signal: Condvar::new(),
        }
    }

    /// Counts one arrival.
    pub fn arrive(&self) {
        if self.count.fetch_add(1, Ordering::AcqRel) + 1 == self.target {
            *self.reached.lock().unwrap_or_else(|e| e.into_inner()) = true;
            self.signal.notify_all();
        }
    }

    /// Arrivals so far.
    pub fn count(&self) -> usize {
        self.count.load(Ordering::Acquire)
    }

    /// Waits at most `limit` for the target; whether it was reached.
    pub fn wait(&self, limit: Duration) -> bool {
        let reached = self.reached.lock().unwrap_or_else(|e| e.into_inner());
        let (reached, _) = self
            .signal
            .wait_timeout_while(reached, limit, |reached| !*reached)
            .unwrap_or_else(|e| e.into_inner());
        *reached
    }
}

/// Checks `condition` every millisecond for at most `limit`; whether it
/// held. For counts that have no event to wait on (a runtime's metrics).
pub fn wait_until(limit: Duration, mut condition: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    loop {
        if condition() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    #[test]
    fn a_latch_opens_at_its_target_and_not_before() {
        let latch = Arc::new(Latch::new(3));
        latch.arrive();
        latch.arrive();
        assert!(!latch.wait(Duration::from_millis(10)));
        let last = latch.clone();
        std::thread::spawn(move || last.arrive());
        assert!(latch.wait(Duration::from_secs(10)));
        assert_eq!(latch.count(), 3);
        assert!(Latch::new(0).wait(Duration::ZERO));
    }
}
