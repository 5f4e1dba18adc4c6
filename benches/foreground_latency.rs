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
use brigade_examples::harness::{
    available_cores, bench_workers, end_quietly_on_closed_pipe, exit_on_help,
};
use brigade_examples::mixed_load::{Client, Running, Scenario, VARIANTS, Variant};
use brigade_examples::neighbours::{Neighbours, bench_neighbours};
use criterion::Criterion;

/// What the benches of one variant measure against: its runtime with the
/// echo server and the background load running, and a connected client.
struct Measured {
    running: Running,
    client: Client,
}

impl Measured {
    /// Starts `variant` with `workers` workers and its background of
    /// `unit_us` µs units (calibrated once per unit size, in `spins`).
    fn start(variant: Variant, workers: usize, unit_us: u64, spins: &mut Option<u64>) -> Measured {
        let unit_iterations = *spins.get_or_insert_with(|| calibrate(unit_us, workers));
        let scenario = Scenario {
            variant,
            workers,
            background_tasks: 2 * workers,
            unit_iterations,
            driver_thread: false,
            limit_sized: None,
        };
        let running = scenario.start().expect("start the runtime under test");
        let client = Client::connect(running.addr, Duration::from_secs(10)).expect("connect");
        Measured { running, client }
    }

    fn stop(self) {
        drop(self.client);
        if let Some(metrics) = self.running.stop().brigade_metrics {
            eprintln!("  {metrics}");
        }
    }
}

/// Starts nothing until a benchmark runs: criterion calls a benchmark's
/// closure only when it measures it, never for `--list` or a filtered-out
/// benchmark, so the runtime, its background load, the calibration and the
/// neighbours all start inside it, on first use.
fn foreground_round_trip(c: &mut Criterion) {
    let workers = bench_workers(available_cores());
    let mut neighbours: Option<Neighbours> = None;
    for unit_us in [10u64, 100] {
        let mut spins = None;
        let mut group = c.benchmark_group(format!("foreground_rtt_unit{unit_us}us"));
        for variant in VARIANTS
            .iter()
            .filter(|variant| variant.yield_kind.serves_foreground())
        {
            let mut measured: Option<Measured> = None;
            group.bench_function(variant.name, |b| {
                neighbours.get_or_insert_with(bench_neighbours);
                let Measured { client, .. } = measured
                    .get_or_insert_with(|| Measured::start(*variant, workers, unit_us, &mut spins));
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
            if let Some(measured) = measured {
                measured.stop();
            }
        }
        group.finish();
    }
}

fn main() {
    end_quietly_on_closed_pipe();
    exit_on_help(
        "foreground_latency",
        "BENCH_WORKERS=N (default: the available CPUs), BENCH_NEIGHBOURS=N busy neighbour processes",
    );
    // Defaults set here (not on the group) so command-line options override them.
    let mut criterion = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args();
    foreground_round_trip(&mut criterion);
    criterion.final_summary();
}
