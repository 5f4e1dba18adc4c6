//! Stealing: a searching worker takes half of a random victim's deque, or
//! the task in its run-next slot once that is open (`runtime/scheduler/run_next_slot.rs`),
//! or a batch of the injector's.

use super::Core;
use crate::sync::deque::Steal;
use crate::task::Runnable;

impl Core {
    /// Steals a task (and, from a deque, a batch behind it into this
    /// worker's deque), becoming a searcher first if the idle state allows
    /// one more (`idle.rs`); `None` if nothing was found or this worker may
    /// not search now.
    pub(super) fn steal(&self) -> Option<Runnable> {
        if !self.search.searching.get() {
            if !self.shared.idle.try_begin_search() {
                return None;
            }
            self.search.searching.set(true);
        }
        let stealers = self.shared.active_stealers();
        let run_next = self.shared.active_run_next();
        let start = self.next_random() as usize % stealers.len();
        // What a steal's batch added (for `worker_steal_count`): this
        // deque is empty as a worker searches, and only its owner pushes.
        let before = self.local.len();
        loop {
            let mut retry = false;
            for offset in 0..stealers.len() {
                let victim = (start + offset) % stealers.len();
                if victim == self.index {
                    continue;
                }
                let stolen = match stealers[victim].steal_batch_and_pop(&self.local) {
                    Steal::Success(runnable) => Some(runnable),
                    Steal::Retry => {
                        retry = true;
                        None
                    }
                    // A task its owner was to run next, opened because the
                    // owner's poll went on (`run_next_slot.rs`).
                    Steal::Empty => run_next[victim].steal(),
                };
                if let Some(runnable) = stolen {
                    let batch = self.local.len().saturating_sub(before) as u64;
                    self.shared
                        .metrics
                        .worker(self.index)
                        .count_steal(1 + batch);
                    return Some(runnable);
                }
            }
            // Work may have been injected while we were looking.
            match self.shared.injector.steal_batch_and_pop(&self.local) {
                Steal::Success(runnable) => return Some(runnable),
                Steal::Retry => retry = true,
                Steal::Empty => {}
            }
            if !retry {
                return None;
            }
        }
    }

    fn next_random(&self) -> u64 {
        let mut x = self.search.rng.get();
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.search.rng.set(x);
        x
    }
}
