//! Foreground TCP round-trip time while background tasks saturate every
//! worker, brigade and tokio side by side in one criterion group per unit
//! size.
//!
//! A client on a plain OS thread sends one byte to an echo server task in
//! the runtime under test and waits for the echo; criterion's `iter_custom`
//! times those round trips. The background is 2 × workers tasks doing
//! 10 µs (or 100 µs) units of CPU work with the variant's yield point after
//! each unit, as in `examples/mixed_load.rs` (which reports percentiles).
//! Worker threads: `BENCH_WORKERS`, else the available parallelism.
//! `BENCH_NEIGHBOURS=N` crowds the host with N busy neighbour processes
//! for the whole run (`brigade_examples::neighbours`).
//!
//! ```text
//! cargo bench -p brigade-benches --bench foreground_latency
//! BENCH_WORKERS=4 cargo bench -p brigade-benches --bench foreground_latency
//! BENCH_NEIGHBOURS=1 cargo bench -p brigade-benches --bench foreground_latency
//! ```

use std::time::{Duration, Instant};

use brigade_examples::busy::calibrate;
use brigade_examples::harness::{available_cores, bench_workers};
use brigade_examples::mixed_load::{Client, Scenario, VARIANTS};
use criterion::Criterion;

fn foreground_round_trip(c: &mut Criterion) {
    let workers = bench_workers(available_cores());
    for unit_us in [10u64, 100] {
        let unit_iterations = calibrate(unit_us, workers);
        let mut group = c.benchmark_group(format!("foreground_rtt_unit{unit_us}us"));
        for variant in VARIANTS
            .iter()
            .filter(|variant| variant.yield_kind.serves_foreground())
        {
            let scenario = Scenario {
                variant: *variant,
                workers,
                background_tasks: 2 * workers,
                unit_iterations,
                driver_thread: false,
            };
            let running = scenario.start().expect("start the runtime under test");
            let mut client =
                Client::connect(running.addr, Duration::from_secs(10)).expect("connect");
            group.bench_function(variant.name, |b| {
                b.iter_custom(|iters| {
                    let started = Instant::now();
                    for _ in 0..iters {
                        client
                            .round_trip()
                            .expect("the server did not answer within 10 s");
                    }
                    started.elapsed()
                })
            });
            drop(client);
            if let Some(metrics) = running.stop().brigade_metrics {
                eprintln!("  {metrics}");
            }
        }
        group.finish();
    }
}

fn main() {
    let _neighbours = brigade_examples::neighbours::bench_neighbours();
    // Defaults set here (not on the group) so command-line options override them.
    let mut criterion = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args();
    foreground_round_trip(&mut criterion);
    criterion.final_summary();
}
