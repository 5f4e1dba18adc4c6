//! Model-checks a park for the CPU limit against a raised limit with

//! `loom`: run with `RUSTFLAGS="--cfg loom" cargo test -p brigade --lib --release`.

use crate::driver::Parker;
use crate::sync::{AtomicUsize, Ordering};
use loom::sync::Arc;

/// The protocol of the module docs, as the monitor and a worker past the
/// limit run it: however the raise of the count and the worker's check
/// and park interleave, the worker ends its park (an unpark before the
/// park is kept by the parker), so it runs again.
#[test]
fn a_raised_limit_always_reaches_a_worker_parking_for_it() {
    loom::model(|| {
        let running = Arc::new(AtomicUsize::new(1));
        let parker = Arc::new(Parker::new());
        let monitor = {
            let (running, parker) = (running.clone(), parker.clone());
            loom::thread::spawn(move || {
                running.store(2, Ordering::Relaxed);
                parker.unpark();
            })
        };
        // Worker 1 (index 1: past a count of 1).
        while running.load(Ordering::Relaxed) <= 1 {
            parker.park();
        }
        monitor.join().unwrap();
    });
}
