//! Loom models of the loom stand-ins for crossbeam's queues (`loom_deque.rs`).

use super::*;
use loom::thread;

/// An owner pushes while a thief steals: every task is taken exactly
/// once, and a published task is never missed by `is_empty`.
#[test]
fn a_thief_and_the_owner_take_each_task_once() {
    loom::model(|| {
        let owner = LocalQueue::new_fifo();
        let stealer = owner.stealer();
        owner.push(1);
        owner.push(2);
        let thief = thread::spawn(move || {
            let dest = LocalQueue::new_fifo();
            let mut got = Vec::new();
            loop {
                match stealer.steal_batch_and_pop(&dest) {
                    Steal::Success(task) => got.push(task),
                    Steal::Retry => continue,
                    Steal::Empty => break,
                }
            }
            while let Some(task) = dest.pop() {
                got.push(task);
            }
            got
        });
        let mut got: Vec<i32> = std::iter::from_fn(|| owner.pop()).collect();
        got.extend(thief.join().unwrap());
        got.sort();
        assert_eq!(got, [1, 2]);
    });
}

/// Two pushers and a taker on the injector: nothing lost or duplicated.
#[test]
fn the_injector_hands_each_task_to_one_taker() {
    loom::model(|| {
        let injector = Arc::new(Injector::new());
        let pushers: Vec<_> = (0..2)
            .map(|task| {
                let injector = injector.clone();
                thread::spawn(move || injector.push(task))
            })
            .collect();
        let dest = LocalQueue::new_fifo();
        let mut got = Vec::new();
        while got.len() < 2 {
            match injector.steal_batch_and_pop(&dest) {
                Steal::Success(task) => got.push(task),
                Steal::Empty | Steal::Retry => thread::yield_now(),
            }
            got.extend(std::iter::from_fn(|| dest.pop()));
        }
        for pusher in pushers {
            pusher.join().unwrap();
        }
        got.sort();
        assert_eq!(got, [0, 1]);
        assert!(injector.is_empty());
    });
}
