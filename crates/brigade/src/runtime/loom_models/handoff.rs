//! Handing work to workers: a task pushed from outside reaches a worker that
//! is going to sleep (no lost wake-up), and a worker's deque is drained by
//! stealing when its owner is busy.

use super::{check, runtime};

/// A spawn from outside the runtime (the injector) races with the only
/// worker going to sleep in the driver's poll: `Idle::wait_for_work`'s
/// re-check or `notify_one`'s unpark (through the driver's wake-up) must
/// catch it, or `block_on` would wait for ever (loom reports the deadlock).
#[test]
fn a_remote_spawn_reaches_a_worker_going_to_sleep() {
    check(2, || {
        let rt = runtime(1);
        let answer = rt.block_on(rt.spawn(async { 6 * 7 }));
        assert_eq!(answer.unwrap(), 42);
    });
}

/// Two workers: a task spawns two children onto its own deque and waits
/// for both; the other worker, searching, may steal either (or wake up too
/// late and find nothing). Both children run exactly once, and the last
/// searcher's conditional wake-up (`Core::stop_searching`) leaves no task
/// behind.
#[test]
fn children_on_a_busy_workers_deque_are_run_or_stolen() {
    check(2, || {
        let rt = runtime(2);
        let total = rt.block_on(rt.spawn(async {
            let first = crate::spawn(async { 1 });
            let second = crate::spawn(async { 2 });
            first.await.unwrap() + second.await.unwrap()
        }));
        assert_eq!(total.unwrap(), 3);
    });
}

/// Two workers: a task spawns one child into its worker's run-next slot,
/// which wakes nobody (`worker/run_next.rs`), and waits for it, while the
/// other worker searches or goes to sleep. The child runs exactly once, on
/// its parent's worker after the poll, and nobody sleeps on it: the
/// held-back notification loses no task.
#[test]
fn a_child_spawned_without_a_notification_is_run_or_stolen() {
    check(2, || {
        let rt = runtime(2);
        let answer = rt.block_on(rt.spawn(async { crate::spawn(async { 6 * 7 }).await.unwrap() }));
        assert_eq!(answer.unwrap(), 42);
    });
}

/// Two workers: a task spawns a child into its worker's run-next slot
/// (no notification), then its poll goes on until the child has run,
/// inside `block_in_place`. Entering it opens the slot and notifies
/// (`Core::flush_deferred_notify`); the other worker, searching or asleep,
/// must steal the child from the slot: the open's compare-exchange and the
/// notification's fence against the sleeper's fence and re-check
/// (`runtime/scheduler/run_next_slot.rs`). A lost hand-off leaves the parent spinning,
/// which loom reports.
#[test]
fn a_child_in_the_run_next_slot_is_stolen_while_its_parent_blocks() {
    check(2, || {
        let rt = runtime(2);
        let ran = loom::sync::Arc::new(loom::sync::atomic::AtomicBool::new(false));
        let answer = rt.block_on(rt.spawn(async move {
            let child = {
                let ran = ran.clone();
                crate::spawn(async move {
                    ran.store(true, loom::sync::atomic::Ordering::SeqCst);
                    6 * 7
                })
            };
            crate::task::block_in_place(|| {
                while !ran.load(loom::sync::atomic::Ordering::SeqCst) {
                    loom::thread::yield_now();
                }
            });
            child.await.unwrap()
        }));
        assert_eq!(answer.unwrap(), 42);
    });
}
