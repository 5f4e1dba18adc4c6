//! Model-checks the slot handoff with `loom`: run with
//! `RUSTFLAGS="--cfg loom" cargo test -p brigade --lib --release`.

use super::*;
use crate::sync::{Condvar, Mutex, lock};
use loom::sync::Arc;
use loom::thread;

#[derive(Default)]
struct Queue {
    deferred: Option<u32>,
    /// The second task got a slot directly: nothing to admit.
    ran_directly: bool,
}

/// Two workers, one slot. Worker A polls a coarse task and releases the
/// slot; worker B tries to poll another and defers it if the slot is
/// taken. The monitor must end up admitting the deferred task: a lost
/// wake-up leaves it waiting forever, which loom reports as a deadlock.
/// Two workers taking the slot at once fails the assertion.
#[test]
fn release_races_with_deferral() {
    loom::model(|| {
        let slots = Arc::new(CoarseSlots::new(2));
        let state = Arc::new((Mutex::new(Queue::default()), Condvar::new()));
        assert!(slots.try_acquire(), "worker A's poll");
        let worker_a = {
            let (slots, state) = (slots.clone(), state.clone());
            thread::spawn(move || {
                slots.release();
                let waiting = lock(&state.0).deferred.is_some();
                if waiting {
                    state.1.notify_one();
                }
            })
        };
        let worker_b = {
            let (slots, state) = (slots.clone(), state.clone());
            thread::spawn(move || {
                if slots.try_acquire() {
                    assert_eq!(slots.free(), 0, "one slot, one poll");
                    lock(&state.0).ran_directly = true;
                    slots.release();
                } else {
                    lock(&state.0).deferred = Some(7);
                }
                state.1.notify_one();
            })
        };
        // The monitor.
        let mut queue = lock(&state.0);
        loop {
            if queue.ran_directly {
                break;
            }
            if queue.deferred.is_some() && slots.free() > 0 {
                assert_eq!(queue.deferred.take(), Some(7));
                break;
            }
            queue = state.1.wait(queue).unwrap();
        }
        drop(queue);
        worker_a.join().unwrap();
        worker_b.join().unwrap();
    });
}
