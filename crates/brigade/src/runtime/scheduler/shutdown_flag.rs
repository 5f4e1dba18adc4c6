//! The shutdown flag, the tasks set aside to be dropped, and the drain of
//! the shared queues: the part of shutdown (`shutdown.rs`, steps 1, 5 and
//! 7) that the scheduler itself takes part in, since every push into a
//! shared queue checks the flag afterwards ([`ShutdownFlag`]'s protocol).

use crate::runtime::Shared;
use crate::sync::{AtomicBool, Mutex, Ordering, fence, lock};
use crate::task::Runnable;

/// The shutdown flag and the tasks set aside to be dropped.
///
/// ## The push-then-check protocol
/// The flag is set once (`SeqCst`, step 1) before the shutting-down thread
/// drains the shared queues (step 5 of `shutdown.rs`). Whoever pushes into a shared queue
/// (the injector, the yield queue, the admission queue) reads the flag
/// with [`is_set_after_push`](Self::is_set_after_push) *after* its push
/// and, if it is set, drains the queues itself. The push and the drain are
/// ordered by `SeqCst` fences or the queue's lock, so whichever of the two
/// comes second sees the other: no task is left in a queue that nobody will
/// drain (it would also keep the runtime's shared state alive through its
/// schedule closure).
pub(crate) struct ShutdownFlag {
    flag: AtomicBool,
    cancelled: Mutex<Cancelled>,
}

/// See [`ShutdownFlag::cancel_later`].
#[derive(Default)]
struct Cancelled {
    runnables: Vec<Runnable>,
    /// Set by the shutdown's final `drop_cancelled`: later tasks are
    /// dropped at once.
    closed: bool,
}

impl ShutdownFlag {
    pub(crate) fn new() -> Self {
        ShutdownFlag {
            flag: AtomicBool::new(false),
            cancelled: Mutex::new(Cancelled::default()),
        }
    }

    /// Whether shutdown has begun.
    #[cfg(not(loom))]
    pub(crate) fn is_set(&self) -> bool {
        self.flag.load(Ordering::Acquire)
    }

    /// Whether shutdown has begun: under loom a read-modify-write, which
    /// reads the latest value. The loops that poll the flag (the worker
    /// loop, `yield_if_busy()`'s slow path) rely on the flag becoming
    /// visible eventually, which every processor guarantees and loom does
    /// not model (it lets a load in a loop read a stale value for ever).
    /// Protocols that need more than that read the flag with
    /// [`is_set_after_push`](Self::is_set_after_push).
    #[cfg(loom)]
    pub(crate) fn is_set(&self) -> bool {
        self.flag.fetch_or(false, Ordering::Acquire)
    }

    /// Whether shutdown has begun, read after a push into a shared queue
    /// (see the protocol on the type).
    pub(crate) fn is_set_after_push(&self) -> bool {
        self.flag.load(Ordering::SeqCst)
    }

    /// Step 1: sets the flag.
    pub(crate) fn begin(&self) {
        // A swap rather than a store: the same `SeqCst` write, which loom
        // 0.7 also orders before the read-modify-writes of `is_set` under
        // loom (after a plain `SeqCst` store its models let such a read
        // miss the flag, even one that synchronised with this thread).
        self.flag.swap(true, Ordering::SeqCst);
    }

    /// Cancels a task after shutdown began: it will be dropped, never run.
    ///
    /// Not dropped here, though: this runs inside `Waker::wake` (through
    /// `schedule`), whose caller may hold a lock that the task's destructor
    /// takes too. h2 does exactly that: dropping one of its stream handles
    /// locks the connection's stream state and wakes the connection task;
    /// dropping that task on the spot locks the same mutex again and
    /// deadlocks the shutdown. So the task waits here until step 7 (`shutdown.rs`), which
    /// holds no lock while dropping. After that, tasks woken by threads
    /// outside the runtime are dropped at once, as there is nobody left to
    /// drop them.
    pub(crate) fn cancel_later(&self, runnable: Runnable) {
        let mut cancelled = lock(&self.cancelled);
        if cancelled.closed {
            drop(cancelled);
            drop(runnable);
        } else {
            cancelled.runnables.push(runnable);
        }
    }

    /// Step 7: drops the set-aside tasks, and any their destructors wake,
    /// until none is left; then closes the list.
    pub(crate) fn drop_cancelled(&self) {
        loop {
            let batch = {
                let mut cancelled = lock(&self.cancelled);
                if cancelled.runnables.is_empty() {
                    cancelled.closed = true;
                    return;
                }
                std::mem::take(&mut cancelled.runnables)
            };
            drop(batch);
        }
    }
}

/// Step 5: moves every task in the shared queues to the set-aside list.
/// Also called by a pusher that finds the flag set after its push.
pub(crate) fn drain_queues(shared: &Shared) {
    // Orders the flag's store (step 1, `shutdown.rs`) before the look at the queues, for
    // the shutting-down thread, as the pushers' fences do for them (see
    // `ShutdownFlag`), without relying on the queue's own fences.
    fence(Ordering::SeqCst);
    while let Some(runnable) = crate::sync::injector_pop(&shared.injector) {
        shared.shutdown.cancel_later(runnable);
    }
    // Deferred wake-ups: waking one schedules its task into a runtime that
    // is shutting down, which sets it aside. Background tasks are set
    // aside directly.
    shared
        .yield_queue
        .drain(|runnable| shared.shutdown.cancel_later(runnable));
    for runnable in shared.admission.take_waiting() {
        shared.shutdown.cancel_later(runnable);
    }
}
