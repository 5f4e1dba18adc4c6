//! Scheduling-latency sampling: dense enough for the elastic controller when
//! schedules are rare, off when disabled.

mod common;

use std::time::{Duration, Instant};

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
        // At most a few hundred schedules a second (one spawn, then a pause;
        // a slower host only makes them rarer): at one in 64, a batch of 100
        // spawns (each one or two schedules) gives about 2 samples. Once the
        // monitor has seen the low rate, it samples every schedule, and a
        // batch gives 100 or more. Waits for such a batch, however long the
        // monitor takes to get there (within the bound).
        const BATCH: usize = 100;
        let deadline = Instant::now() + TIMEOUT;
        let mut best = 0;
        loop {
            let samples =
                samples_from_sparse_spawns(&rt, u64::MAX, BATCH, Duration::from_millis(2));
            best = best.max(samples);
            if samples >= BATCH as u64 / 2 {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "sampling never became dense: at best {best} samples from {BATCH} spawns"
            );
        }
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
