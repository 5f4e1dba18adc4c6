//! The hold a waker hands to a `block_on` thread (`ThreadSignal` in
//! `runtime/mod.rs`), model-checked: run with
//! `RUSTFLAGS="--cfg loom" cargo test -p brigade --lib --release`.

use super::*;
use crate::sync::thread;
use loom::sync::Arc;

/// A `block_on` thread polls (holding the clock), parks without its
/// hold, and is woken by another thread, which takes a hold for it;
/// meanwhile a decider reads the hold word twice. Whenever the two
/// reads show no hold and no hold taken between them, the `block_on`
/// thread must be neither awake nor notified: the auto-advance never
/// fires while it has work. And every hold is given back.
#[test]
fn a_wake_hands_its_hold_to_the_block_on_thread() {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(3);
    builder.check(|| {
        let clock = Arc::new(Clock::new(Instant::now()));
        let notified = Arc::new(AtomicBool::new(false));
        let awake = Arc::new(AtomicBool::new(false));
        let blocked = {
            let (clock, notified, awake) = (clock.clone(), notified.clone(), awake.clone());
            thread::spawn(move || {
                clock.acquire_hold();
                awake.store(true, Ordering::SeqCst);
                // Polled: pending. Park until the wake-up arrives.
                while !notified.swap(false, Ordering::SeqCst) {
                    awake.store(false, Ordering::SeqCst);
                    clock.release_hold();
                    thread::park();
                    clock.acquire_hold();
                    awake.store(true, Ordering::SeqCst);
                }
                clock.release_hold(); // the wake-up's hold
                // Polled again: ready.
                awake.store(false, Ordering::SeqCst);
                clock.release_hold();
            })
        };
        let waker = {
            let (clock, notified) = (clock.clone(), notified.clone());
            let target = blocked.thread().clone();
            thread::spawn(move || {
                clock.acquire_hold();
                if notified.swap(true, Ordering::SeqCst) {
                    clock.release_hold();
                } else {
                    target.unpark();
                }
            })
        };
        let before = clock.holds_word();
        let has_work = awake.load(Ordering::SeqCst) || notified.load(Ordering::SeqCst);
        let after = clock.holds_word();
        if holds_unchanged_and_free(before, after) {
            assert!(!has_work, "no hold seen while the block_on thread had work");
        }
        waker.join().unwrap();
        blocked.join().unwrap();
        assert_eq!(
            clock.holds_word() & COUNT_MASK,
            0,
            "a hold was not given back"
        );
    });
}
