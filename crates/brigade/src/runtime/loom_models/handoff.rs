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

/// Two workers: a task spawns one child into its empty deque, which wakes
/// nobody (`worker/spawned.rs`), and waits for it, while the other worker
/// searches or goes to sleep. The child runs exactly once, on its parent's
/// worker after the poll or stolen by the searcher, and nobody sleeps on
/// it: the held-back notification loses no task.
#[test]
fn a_child_spawned_without_a_notification_is_run_or_stolen() {
    check(2, || {
        let rt = runtime(2);
        let answer = rt.block_on(rt.spawn(async { crate::spawn(async { 6 * 7 }).await.unwrap() }));
        assert_eq!(answer.unwrap(), 42);
    });
}
