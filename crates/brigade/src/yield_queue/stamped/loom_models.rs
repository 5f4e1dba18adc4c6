//! Model-checks the stamped queue's push and abort sweep with `loom`: run

//! with `RUSTFLAGS="--cfg loom" cargo test -p brigade --lib --release`.

use super::*;
use crate::sync::AtomicBool;
use loom::sync::Arc;
use loom::thread;

/// An abort (set the flag, then sweep) races with a park (push, looking
/// at the flag under the lock, then sweep if it was set): the aborted
/// entry never stays in the queue, and is taken out exactly once.
#[test]
fn an_abort_never_misses_an_entry_pushed_concurrently() {
    loom::model(|| {
        let queue = Arc::new(StampedQueue::<Arc<AtomicBool>>::new());
        let aborted = Arc::new(AtomicBool::new(false));
        let sweep = |queue: &StampedQueue<Arc<AtomicBool>>| {
            queue
                .take_where(|flag| {
                    if flag.load(Ordering::Acquire) {
                        Ok(())
                    } else {
                        Err(flag)
                    }
                })
                .len()
        };
        let aborter = {
            let (queue, aborted) = (queue.clone(), aborted.clone());
            thread::spawn(move || {
                aborted.store(true, Ordering::Release);
                sweep(&queue)
            })
        };
        let seen = queue.push(aborted.clone(), 1, |flag| flag.load(Ordering::Acquire));
        let mut evicted = if seen { sweep(&queue) } else { 0 };
        evicted += aborter.join().unwrap();
        assert_eq!(evicted, 1);
        assert!(queue.is_empty());
    });
}

/// A rotation (one worker's background task in, the oldest out) races
/// with another worker taking the only item: either the pop comes first
/// and the rotation, finding nothing to take, gives its item back
/// unpushed; or the rotation comes first and the pop takes the item it
/// put in. Every item comes out exactly once, and none is left.
#[test]
fn a_rotation_racing_a_pop_takes_each_item_once() {
    loom::model(|| {
        let queue = Arc::new(StampedQueue::<u32>::new());
        queue.push(1, 1, |_| ());
        let taker = {
            let queue = queue.clone();
            thread::spawn(move || queue.pop().map(|(item, _)| item))
        };
        let rotated = queue.rotate(2, 2, |_| (), Ok::<u32, u32>);
        let popped = taker.join().unwrap();
        let mut out = match rotated {
            Ok(((taken, _), ())) => vec![taken],
            Err(given_back) => vec![given_back],
        };
        out.extend(popped);
        out.sort_unstable();
        assert_eq!(out, [1, 2]);
        assert!(queue.is_empty() && queue.pop().is_none());
    });
}
