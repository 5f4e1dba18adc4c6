//! Model-checks the park/wake protocol with `loom`: run with
//! `RUSTFLAGS="--cfg loom" cargo test -p brigade --lib --release`.

use super::*;
use crate::sync::{Injector, injector_pop};
use crate::yield_queue::stamped::StampedQueue;
use loom::sync::Arc;
use loom::thread;

/// A worker parks while another thread pushes into the yield queue and
/// notifies: the worker must get the task (no lost task, no missed
/// wake). The queue is the yield queue's own storage, whose emptiness
/// check reads a relaxed atomic without its lock, so only the park
/// protocol's fences order it with the push.
#[test]
fn park_races_with_yield_queue_push() {
    loom::model(|| {
        let idle = Arc::new(Idle::new(1, 1, Box::new(|| {})));
        let yield_queue = Arc::new(StampedQueue::new());
        let pusher = {
            let (idle, yield_queue) = (idle.clone(), yield_queue.clone());
            thread::spawn(move || {
                yield_queue.push(7, 1, |_| ());
                idle.notify_one();
            })
        };
        let mut searching = false;
        let got = loop {
            if let Some((task, _)) = yield_queue.pop() {
                break task;
            }
            searching = idle.wait_for_work(
                0,
                searching,
                || !yield_queue.is_empty(),
                Parker::park,
                || false,
            );
        };
        assert_eq!(got, 7);
        pusher.join().unwrap();
    });
}

/// A driver hand-off (a wake without a claim) races with a push and its
/// notification: the sleeper takes the task whichever wake reaches it
/// first, nothing deadlocks, and once it has the task it is counted as
/// neither idle nor searching.
#[test]
fn driver_hand_off_races_with_a_push() {
    loom::model(|| {
        let idle = Arc::new(Idle::new(2, 2, Box::new(|| {})));
        let queue = Arc::new(Injector::new());
        let handing_off = {
            let (idle, queue) = (idle.clone(), queue.clone());
            thread::spawn(move || {
                idle.hand_off_driver();
                queue.push(7);
                idle.notify_one();
            })
        };
        let mut searching = false;
        let got = loop {
            if let Some(task) = injector_pop(&queue) {
                break task;
            }
            searching =
                idle.wait_for_work(0, searching, || !queue.is_empty(), Parker::park, || false);
        };
        if searching {
            idle.end_search();
        }
        assert_eq!(got, 7);
        handing_off.join().unwrap();
        assert_eq!((idle.num_idle(), searching_count(&idle)), (0, 0));
    });
}

fn searching_count(idle: &Idle) -> usize {
    searching(idle.state.load(Ordering::SeqCst))
}

// The worker loop itself (`Core::next_task`, `stop_searching`, this
// protocol, shutdown) is modelled on the real code in
// `runtime/loom_models/`.
