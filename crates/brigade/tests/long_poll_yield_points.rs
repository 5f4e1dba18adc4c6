//! The long-poll detector and yield points: loops that call
//! `yield_if_busy()` are not long polls even while they never give way.
//! Its own test binary, so its spinning workers do not preempt the 100 µs
//! polls that `long_poll.rs` expects to stay short.

mod common;

use std::time::{Duration, Instant};

use common::{TIMEOUT, TIMEOUT_SECS, with_timeout};

fn spin(duration: Duration) {
    let started = Instant::now();
    while started.elapsed() < duration {
        std::hint::spin_loop();
    }
}

/// A loop that calls `yield_if_busy()` after every unit runs as one long
/// poll while a worker is idle (nobody waits, so it never steps aside), and
/// an elastic one runs up to its grant per poll: neither is a long poll.
#[test]
fn loops_with_yield_points_are_not_long_polls() {
    // Each loop runs 300 ms in 100 µs units, well past the threshold; the
    // threshold is far above a unit, so an OS preemption on a loaded machine
    // does not make one unit look long.
    const THRESHOLD: Duration = Duration::from_millis(200);
    with_timeout(TIMEOUT_SECS, move || {
        let rt = brigade::Builder::new()
            .worker_threads(2)
            .long_poll_threshold(Some(THRESHOLD))
            .elastic(brigade::ElasticConfig {
                // One grant covers the whole elastic loop: a single poll.
                grant: Duration::from_secs(5),
                ..Default::default()
            })
            .build()
            .unwrap();
        let units = || async {
            for _ in 0..3000 {
                spin(Duration::from_micros(100));
                brigade::yield_if_busy().await;
            }
        };
        rt.block_on(rt.spawn(units())).unwrap();
        rt.block_on(rt.spawn_elastic(units())).unwrap();
        // Two detector intervals, so a stretch that ended last is seen.
        std::thread::sleep(2 * THRESHOLD);
        assert_eq!(rt.metrics().long_polls(), 0);
        rt.shutdown_timeout(TIMEOUT);
    });
}
