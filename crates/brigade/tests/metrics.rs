//! Scheduling-latency sampling: dense enough for the elastic controller when
//! schedules are rare, off when disabled.

mod common;

use std::time::Duration;

use common::{TIMEOUT, with_timeout};

/// Spawns one empty task at a time, with `gap` between them, until the
/// scheduling-latency histogram has grown by `wanted` samples or `max_spawns`
/// tasks were spawned. Returns the number of samples taken.
fn samples_from_sparse_spawns(
    rt: &brigade::Runtime,
    wanted: u64,
    max_spawns: usize,
    gap: Duration,
) -> u64 {
    let before = rt.metrics().scheduling_latency().count();
    for _ in 0..max_spawns {
        rt.block_on(async {
            brigade::spawn(async {}).await.expect("empty task");
        });
        std::thread::sleep(gap);
        if rt.metrics().scheduling_latency().count() - before >= wanted {
            break;
        }
    }
    rt.metrics().scheduling_latency().count() - before
}

#[test]
fn rare_schedules_are_sampled_densely() {
    with_timeout(common::TIMEOUT_SECS, || {
        let rt = brigade::Builder::new()
            .worker_threads(2)
            .latency_sample_every(64)
            .build()
            .expect("runtime");
        // A few hundred schedules a second: at one in 64 the 600 spawns below
        // would give about 20 samples (each spawn is one or two schedules).
        // The monitor sees the low rate within a tick or two and samples
        // every schedule.
        let samples = samples_from_sparse_spawns(&rt, 200, 600, Duration::from_millis(2));
        assert!(samples >= 200, "only {samples} samples from 600 spawns");
        rt.shutdown_timeout(TIMEOUT);
    });
}

#[test]
fn sampling_off_records_nothing() {
    with_timeout(common::TIMEOUT_SECS, || {
        let rt = brigade::Builder::new()
            .worker_threads(2)
            .latency_sample_every(0)
            .build()
            .expect("runtime");
        let samples = samples_from_sparse_spawns(&rt, 1, 300, Duration::from_millis(1));
        assert_eq!(samples, 0);
        assert_eq!(rt.metrics().poll_duration().count(), 0);
        rt.shutdown_timeout(TIMEOUT);
    });
}
