//! One workload of tokio's scheduler benchmarks (`benches/rt_compare.rs`),
//! or the yield-heavy workload of `benches/scaling.rs`, on one runtime, a
//! fixed number of iterations, with no benchmark framework around it: the
//! program to run under `perf stat`, `perf record` or
//! `valgrind --tool=callgrind` when comparing the two runtimes, since its
//! work is the same from run to run (instruction counts can be compared).
//!
//! ```text
//! cargo build --release -p brigade-examples --example suite_once
//! valgrind --tool=callgrind target/release/examples/suite_once yield_many brigade 2 20
//! perf stat target/release/examples/suite_once ping_pong tokio 2 2000
//! SUITE_ONCE_UNIT_ITERATIONS=200 valgrind --tool=callgrind \
//!     target/release/examples/suite_once yield_heavy brigade 1 1
//! ```
//!
//! Arguments: workload (`spawn_many_local`, `yield_many`, `ping_pong`, ...:
//! the criterion group names, or `yield_heavy`), runtime (`brigade` or
//! `tokio`), workers, iterations. Prints the mean and median time of an
//! iteration.
//!
//! An iteration of `yield_heavy` is one run of
//! [`yield_heavy::run`]: 2 × workers background tasks of
//! [`YIELD_HEAVY_UNITS`] units of about 2 µs each (the size of
//! `benches/scaling.rs`'s `--quick` runs), the unit calibrated once before
//! the first iteration. `SUITE_ONCE_UNIT_ITERATIONS=N` sets the unit to `N`
//! spin iterations instead, so that a run under a profiler that slows the
//! clock (callgrind) does the same work every time.
//!
//! `SUITE_ONCE_SCALED=1` runs a suite workload at `benches/scaling.rs`'s
//! size (its count × workers / 4, never below the suite's own) instead of
//! the suite's, for profiles at many workers. On brigade the program also
//! prints the runtime's counters after the run (polls, steals, parks,
//! yields, yield-queue entries), to put beside a profile.

use std::time::{Duration, Instant};

use brigade_examples::busy::calibrate;
use brigade_examples::harness::{Brigade, Rt, RuntimeKind, Tokio};
use brigade_examples::workloads::{SuiteWorkload, yield_heavy};

const USAGE: &str = "usage: suite_once WORKLOAD brigade|tokio WORKERS ITERATIONS
  (WORKLOAD: a criterion group of rt_compare, or yield_heavy;
   environment: SUITE_ONCE_UNIT_ITERATIONS=N fixes yield_heavy's unit)";

/// Units per background task in one `yield_heavy` iteration.
const YIELD_HEAVY_UNITS: u64 = 5_000;
/// `yield_heavy`'s unit of background work, in µs (as in `benches/scaling.rs`).
const YIELD_HEAVY_UNIT_US: u64 = 2;
/// Fixes `yield_heavy`'s unit, in spin iterations, instead of calibrating it.
const UNIT_ITERATIONS_VAR: &str = "SUITE_ONCE_UNIT_ITERATIONS";
/// Runs a suite workload at the scaling bench's size.
const SCALED_VAR: &str = "SUITE_ONCE_SCALED";

/// What to run: one of the suite's workloads, or `yield_heavy`.
#[derive(Debug, Clone, Copy)]
enum Workload {
    Suite(SuiteWorkload),
    YieldHeavy,
}

impl Workload {
    fn parse(name: &str) -> Result<Workload, String> {
        if name == "yield_heavy" {
            return Ok(Workload::YieldHeavy);
        }
        SuiteWorkload::ALL
            .into_iter()
            .find(|w| w.name() == name)
            .map(Workload::Suite)
            .ok_or_else(|| format!("unknown workload {name:?}"))
    }

    fn name(self) -> &'static str {
        match self {
            Workload::Suite(workload) => workload.name(),
            Workload::YieldHeavy => "yield_heavy",
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let parsed = parse(&args).and_then(|parsed| Ok((parsed, unit_iterations()?)));
    let ((workload, kind, workers, iterations), unit) = match parsed {
        Ok(parsed) => parsed,
        Err(message) => {
            eprintln!("{message}\n{USAGE}");
            std::process::exit(2);
        }
    };
    let times = match (workload, kind) {
        (Workload::Suite(w), RuntimeKind::Brigade) => run::<Brigade>(w, workers, iterations),
        (Workload::Suite(w), RuntimeKind::Tokio) => run::<Tokio>(w, workers, iterations),
        (Workload::YieldHeavy, RuntimeKind::Brigade) => {
            run_yield_heavy::<Brigade>(workers, iterations, unit)
        }
        (Workload::YieldHeavy, RuntimeKind::Tokio) => {
            run_yield_heavy::<Tokio>(workers, iterations, unit)
        }
    };
    report(workload, kind, workers, times);
}

fn parse(args: &[String]) -> Result<(Workload, RuntimeKind, usize, usize), String> {
    let [workload, runtime, workers, iterations] = args else {
        return Err(format!("expected 4 arguments, got {}", args.len()));
    };
    let workload = Workload::parse(workload)?;
    let kind = RuntimeKind::parse("the runtime", runtime)?;
    Ok((
        workload,
        kind,
        positive("WORKERS", workers)?,
        positive("ITERATIONS", iterations)?,
    ))
}

fn positive(name: &str, text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(format!("{name} must be a positive integer, got {text:?}")),
    }
}

/// `SUITE_ONCE_UNIT_ITERATIONS`, if set.
fn unit_iterations() -> Result<Option<u64>, String> {
    match std::env::var(UNIT_ITERATIONS_VAR) {
        Ok(text) => Ok(Some(positive(UNIT_ITERATIONS_VAR, &text)? as u64)),
        Err(_) => Ok(None),
    }
}

/// Runs `iterations` iterations of `workload` at the suite's size, timing
/// each.
fn run<R: Rt + Counters>(
    workload: SuiteWorkload,
    workers: usize,
    iterations: usize,
) -> Vec<Duration> {
    let rt = R::build(workers);
    let scaled = std::env::var(SCALED_VAR).is_ok_and(|value| value == "1");
    let count = if scaled {
        workload.scaled_count(workers)
    } else {
        workload.suite_count()
    };
    let mut times = Vec::with_capacity(iterations);
    workload.run(&rt, workers, count, |iteration| {
        for _ in 0..iterations {
            let start = Instant::now();
            iteration();
            times.push(start.elapsed());
        }
    });
    rt.print_counters();
    times
}

/// A runtime's own counters, printed after a run (brigade's metrics; tokio
/// has none of these in its stable API).
trait Counters {
    fn print_counters(&self) {}
}

impl Counters for Tokio {}

impl Counters for Brigade {
    fn print_counters(&self) {
        let metrics = self.0.metrics();
        println!(
            "brigade counters: polls {}, steals {}, parks {}, yields {}, \
             yield-queue entries {}, demotions {}",
            metrics.total_polls(),
            metrics.total_steals(),
            metrics.total_parks(),
            metrics.yields(),
            metrics.yield_queue_entries(),
            metrics.demotions()
        );
    }
}

/// Runs `iterations` runs of `yield_heavy` on one runtime, timing each; the
/// unit is `unit` spin iterations, or calibrated to 2 µs.
fn run_yield_heavy<R: Rt>(workers: usize, iterations: usize, unit: Option<u64>) -> Vec<Duration> {
    let unit = unit.unwrap_or_else(|| calibrate(YIELD_HEAVY_UNIT_US, workers));
    let rt = R::build(workers);
    (0..iterations)
        .map(|_| yield_heavy::run(&rt, workers, YIELD_HEAVY_UNITS, unit).elapsed)
        .collect()
}

fn report(workload: Workload, kind: RuntimeKind, workers: usize, mut times: Vec<Duration>) {
    times.sort();
    let mean = times.iter().sum::<Duration>() / times.len() as u32;
    println!(
        "{} on {kind}, {workers} workers, {} iterations: mean {:?}, median {:?}",
        workload.name(),
        times.len(),
        mean,
        times[times.len() / 2]
    );
}
