//! Model-checks the hand-off with `loom`: run with
//! `RUSTFLAGS="--cfg loom" cargo test -p brigade --lib --release`.
//! The deques are `Injector`s (under loom, the lock-free stand-ins of
//! `sync/loom_deque.rs`); the bookkeeping, the idle protocol and their
//! wake-ups are the real code. The whole worker loop is modelled in
//! `runtime/loom_models/`.

use super::spare_slots::Start;
use super::*;
use crate::runtime::scheduler::idle::Idle;
use crate::sync::{AtomicUsize, Injector, injector_pop};
use loom::sync::Arc;
use loom::thread;

/// Worker 0 is stuck with two tasks in its deque; the monitor covers it
/// and a spare (slot 1) takes over, stealing the tasks; the stuck poll
/// returns while the spare runs, and worker 0 takes what is left. The
/// spare, surplus, steps down, handing back any task it holds. Every
/// task runs exactly once, the spare never sleeps through its step-down
/// (loom reports a deadlock if it does), and the counts end at zero.
#[test]
fn a_spare_takes_over_and_steps_down() {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(3);
    builder.check(|| {
        let compensation = Arc::new(Compensation::new(1, vec![()]));
        let idle = Arc::new(Idle::new(1, 2, Box::new(|| {})));
        let stuck_deque = Arc::new(Injector::new());
        let injector = Arc::new(Injector::new());
        let runs = Arc::new([AtomicUsize::new(0), AtomicUsize::new(0)]);
        stuck_deque.push(0);
        stuck_deque.push(1);
        // The monitor covers the stuck worker and starts a spare.
        assert!(compensation.cover(0, BLOCK_IN_PLACE, 0, None));
        let Some(Start::Spawn { slot: 1, local: () }) = compensation.start_spare() else {
            panic!("expected a spare to start");
        };
        let spare = {
            let (compensation, idle) = (compensation.clone(), idle.clone());
            let (stuck_deque, injector, runs) =
                (stuck_deque.clone(), injector.clone(), runs.clone());
            thread::spawn(move || {
                let mut searching = false;
                loop {
                    if compensation.try_step_down(1) {
                        // Nothing held between tasks here; a real
                        // spare moves its deque to the injector now.
                        return;
                    }
                    let task = injector_pop(&stuck_deque).or_else(|| injector_pop(&injector));
                    if let Some(task) = task {
                        if searching {
                            idle.end_search();
                            searching = false;
                        }
                        runs[task].fetch_add(1, Ordering::SeqCst);
                        continue;
                    }
                    searching = idle.wait_for_work(
                        1,
                        searching,
                        || {
                            !stuck_deque.is_empty()
                                || !injector.is_empty()
                                || compensation.is_surplus()
                        },
                        crate::driver::Parker::park,
                        || false,
                    );
                }
            })
        };
        // The stuck poll returns: the worker ends its cover, wakes a
        // sleeping spare, and runs what the spare left in its deque.
        if compensation.uncover(0).is_some() {
            idle.notify_spare(1);
        }
        while let Some(task) = injector_pop(&stuck_deque) {
            runs[task].fetch_add(1, Ordering::SeqCst);
        }
        spare.join().unwrap();
        while let Some(task) = injector_pop(&injector) {
            runs[task].fetch_add(1, Ordering::SeqCst);
        }
        for count in runs.iter() {
            assert_eq!(count.load(Ordering::SeqCst), 1);
        }
        assert_eq!(compensation.serving(), 0);
        assert_eq!(compensation.wanted(), 0);
    });
}

/// The monitor covers worker 0 on a stale sample, just as its poll
/// ends and it parks: the cover is taken back by the monitor or seen by
/// the parking worker, never left behind (which would keep a spare
/// serving for a worker that sleeps).
#[test]
fn a_late_cover_does_not_outlive_the_poll() {
    loom::model(|| {
        let compensation = Arc::new(Compensation::new(1, vec![()]));
        let idle = Arc::new(Idle::new(1, 2, Box::new(|| {})));
        let seq = Arc::new(AtomicUsize::new(1)); // a poll runs
        let monitor = {
            let (compensation, seq) = (compensation.clone(), seq.clone());
            thread::spawn(move || {
                compensation.cover_running(0, 1, || seq.load(Ordering::Acquire) as u64, 0, None)
            })
        };
        // The worker: the poll ends, it finds nothing to do and parks;
        // `has_work` runs after the park fence, as in `Core::park`.
        seq.store(2, Ordering::Release);
        let covered_at_park = std::cell::Cell::new(false);
        idle.wait_for_work(
            0,
            false,
            || {
                covered_at_park.set(compensation.is_covered(0));
                true // do not sleep: the model ends here
            },
            |_| unreachable!("has work"),
            || false,
        );
        if covered_at_park.get() {
            assert!(compensation.uncover(0).is_some() || !compensation.is_covered(0));
        }
        monitor.join().unwrap();
        assert!(!compensation.is_covered(0), "a late cover was left behind");
        assert_eq!(compensation.wanted(), 0);
    });
}

/// A spare steps down as one cover ends and another begins: whatever the
/// interleaving, the new cover is not left without a spare (the decisions
/// are taken under the lock where `wanted` changes).
#[test]
fn stepping_down_never_leaves_a_new_cover_without_a_spare() {
    loom::model(|| {
        let compensation = Arc::new(Compensation::new(2, vec![(), ()]));
        assert!(compensation.cover(0, 1, 0, None));
        let Some(Start::Spawn { slot: spare, .. }) = compensation.start_spare() else {
            panic!("expected a spare to start");
        };
        let ending = {
            let compensation = compensation.clone();
            thread::spawn(move || {
                let _ = compensation.uncover(0);
            })
        };
        let beginning = {
            let compensation = compensation.clone();
            thread::spawn(move || {
                assert!(compensation.cover_for_block_in_place(1, 0, None));
                compensation.start_spare().is_some()
            })
        };
        let stepped_down = compensation.try_step_down(spare);
        ending.join().unwrap();
        let started = beginning.join().unwrap();
        assert_eq!(compensation.wanted(), 1);
        // No cover without a spare: either the spare stayed for the new
        // cover, or it stepped down and the new cover started another (or
        // woke it again).
        assert!(compensation.serving() >= 1, "the new cover has no spare");
        assert!(!stepped_down || started);
        // A spare started while the old cover was still counted is surplus
        // now, and steps down at its next look.
        if compensation.serving() == 2 {
            assert!(compensation.try_step_down(spare) || compensation.try_step_down(spare + 1));
        }
        assert_eq!(compensation.serving(), 1);
    });
}
