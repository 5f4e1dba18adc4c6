//! Every live task of a runtime, so shutdown can reach the ones that sit in
//! no queue (pending on a channel, a timer, or nothing at all) and drop
//! their futures, and so `JoinHandle::abort` can wake a pending task.
//!
//! ## Protocol
//! The registry holds one `Waker` per live task, in a slab sharded by task
//! id to keep spawns on different threads off each other's locks.
//! - Spawn inserts the waker under the shard lock, unless the shard is
//!   closed, in which case the task is cancelled at once.
//! - The task's harness removes the entry when the future is dropped. The
//!   entry's id is checked so a reused slot is never removed by mistake.
//! - Shutdown closes every shard and collects clones of all wakers under the
//!   locks, then wakes them with no lock held: each wake reschedules its
//!   task into a runtime that is shutting down, whose schedule hook sets
//!   the `Runnable` aside (`ShutdownFlag::cancel_later`). The shutting-down
//!   thread drops the set-aside `Runnable`s later, holding no lock, and
//!   with each the future, whose harness then removes the entry (see
//!   `runtime/lifecycle/shutdown.rs`, steps 6 and 7).
//! - A removal may replace or trim a shard's slab after a burst (see
//!   `slab_shrink`), under the same lock; keys stay safe because a lookup
//!   checks the entry's task id.

use std::task::Waker;

use crossbeam_utils::CachePadded;
use slab::Slab;

use super::Runnable;
use crate::slab_shrink::SlabShrink;
use crate::sync::{Mutex, lock};

struct Shard {
    tasks: Slab<(u64, Waker)>,
    /// Gives `tasks`' memory back after a burst of tasks has finished.
    shrink: SlabShrink,
    closed: bool,
}

/// The live tasks of one runtime.
pub(crate) struct Registry {
    shards: Box<[CachePadded<Mutex<Shard>>]>,
    shard_mask: usize,
}

/// Bits of a registry key that hold the slot inside a shard; the rest hold
/// the shard index.
const SLOT_BITS: u32 = usize::BITS - 16;

impl Registry {
    /// A registry with enough shards that `num_workers` spawning threads
    /// rarely meet on one lock.
    pub(crate) fn new(num_workers: usize) -> Self {
        // Under loom, one shard: task ids come from a process-wide counter
        // that models running side by side share, so the shard a task lands
        // in (and the lock a model takes) would differ from one replay of a
        // schedule to the next, which loom cannot explore.
        let num_shards = if cfg!(loom) {
            1
        } else {
            (num_workers * 4).next_power_of_two().min(1 << 12)
        };
        Registry {
            shards: (0..num_shards)
                .map(|_| {
                    CachePadded::new(Mutex::new(Shard {
                        tasks: Slab::new(),
                        shrink: SlabShrink::new(),
                        closed: false,
                    }))
                })
                .collect(),
            shard_mask: num_shards - 1,
        }
    }

    /// Creates a task with `make` (passing it the registry key it will have)
    /// and registers it. If the registry is closed, `make` gets `None` and
    /// the task is not registered.
    pub(crate) fn register<T>(
        &self,
        id: u64,
        make: impl FnOnce(Option<usize>) -> (Runnable, T),
    ) -> (Runnable, T) {
        let shard_index = (id as usize) & self.shard_mask;
        let mut shard = lock(&self.shards[shard_index]);
        if shard.closed {
            drop(shard);
            return make(None);
        }
        let entry = shard.tasks.vacant_entry();
        let slot = entry.key();
        assert!(
            slot < 1 << SLOT_BITS,
            "too many live tasks in one registry shard"
        );
        let (runnable, task) = make(Some((shard_index << SLOT_BITS) | slot));
        entry.insert((id, runnable.waker()));
        (runnable, task)
    }

    /// Removes the entry `key` if it still belongs to task `id`.
    pub(crate) fn remove(&self, key: usize, id: u64) {
        let waker = {
            let mut guard = lock(&self.shards[key >> SLOT_BITS]);
            let shard = &mut *guard;
            let slot = key & ((1 << SLOT_BITS) - 1);
            match shard.tasks.get(slot) {
                Some((entry_id, _)) if *entry_id == id => {
                    let (_, waker) = shard.tasks.remove(slot);
                    shard.shrink.after_remove(&mut shard.tasks);
                    Some(waker)
                }
                _ => None,
            }
        };
        // Dropped outside the lock: dropping a waker can run task code paths.
        drop(waker);
    }

    /// A clone of the waker of the task at `key`, if it is still task `id`.
    pub(crate) fn waker(&self, key: usize, id: u64) -> Option<Waker> {
        let shard = lock(&self.shards[key >> SLOT_BITS]);
        match shard.tasks.get(key & ((1 << SLOT_BITS) - 1)) {
            Some((entry_id, waker)) if *entry_id == id => Some(waker.clone()),
            _ => None,
        }
    }

    /// Wakes the task at `key` if it is still task `id`.
    pub(crate) fn wake(&self, key: usize, id: u64) {
        let waker = {
            let shard = lock(&self.shards[key >> SLOT_BITS]);
            match shard.tasks.get(key & ((1 << SLOT_BITS) - 1)) {
                Some((entry_id, waker)) if *entry_id == id => Some(waker.clone()),
                _ => None,
            }
        };
        if let Some(waker) = waker {
            waker.wake();
        }
    }

    /// Closes the registry to new tasks and wakes every live one.
    pub(crate) fn close_and_wake_all(&self) {
        for shard in self.shards.iter() {
            let wakers: Vec<Waker> = {
                let mut shard = lock(shard);
                shard.closed = true;
                shard
                    .tasks
                    .iter()
                    .map(|(_, (_, waker))| waker.clone())
                    .collect()
            };
            wakers.into_iter().for_each(Waker::wake);
        }
    }

    /// Number of live tasks.
    pub(crate) fn len(&self) -> usize {
        self.shards
            .iter()
            .map(|shard| lock(shard).tasks.len())
            .sum()
    }

    /// Slots the shards hold, live or vacant.
    #[cfg(all(test, not(loom)))]
    fn capacity(&self) -> usize {
        self.shards
            .iter()
            .map(|shard| lock(shard).tasks.capacity())
            .sum()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use std::sync::{Arc, Mutex};
    use std::task::{Context, Poll, Waker};
    use std::time::{Duration, Instant};

    use crate::runtime::Builder;

    /// Holds tasks until opened. `None` once open, else the waiting wakers.
    struct Gate(Mutex<Option<Vec<Waker>>>);

    impl Default for Gate {
        fn default() -> Self {
            Gate(Mutex::new(Some(Vec::new())))
        }
    }

    impl Gate {
        fn poll_open(&self, cx: &mut Context<'_>) -> Poll<()> {
            match self.0.lock().unwrap().as_mut() {
                Some(waiting) => {
                    waiting.push(cx.waker().clone());
                    Poll::Pending
                }
                None => Poll::Ready(()),
            }
        }

        fn open(&self) {
            let waiting = self.0.lock().unwrap().take().unwrap_or_default();
            waiting.into_iter().for_each(Waker::wake);
        }
    }

    #[test]
    fn memory_returns_after_a_burst_of_tasks() {
        let runtime = Builder::new_multi_thread()
            .worker_threads(2)
            .build()
            .expect("runtime");
        // Every task waits at `gate` until all are spawned, so all are
        // registered at once.
        let gate = Arc::new(Gate::default());
        runtime.block_on(async {
            let handles: Vec<_> = (0..100_000)
                .map(|i| {
                    let gate = gate.clone();
                    crate::spawn(async move {
                        std::future::poll_fn(|cx| gate.poll_open(cx)).await;
                        i
                    })
                })
                .collect();
            gate.open();
            for (handle, i) in handles.into_iter().zip(0..) {
                assert_eq!(handle.await.expect("task"), i);
            }
        });
        let registry = &runtime.handle().shared.registry;
        // A task leaves the registry when its harness drops the future,
        // which may trail its output by a moment.
        let deadline = Instant::now() + Duration::from_secs(10);
        while registry.len() != 0 {
            assert!(Instant::now() < deadline, "tasks still registered");
            std::thread::yield_now();
        }
        assert!(
            registry.capacity() < 1_000,
            "registry keeps {} slots after the burst",
            registry.capacity()
        );
    }
}
