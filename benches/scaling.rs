//! brigade and tokio side by side at 1, 2, 4, 8 and 16 worker threads: how
//! each scales, and whether brigade's yield queue becomes a bottleneck as
//! workers are added.
//!
//! At each worker count W, in interleaved rounds (the order of the two
//! runtimes alternating from round to round), on a fresh runtime each time:
//! - **tokio's suite**: `rt_compare`'s workloads
//!   (`brigade_examples::workloads::SuiteWorkload`), their task counts
//!   scaled by W / 4 and never below the suite's own, so the work grows with
//!   the workers instead of shrinking to noise; a warm-up iteration, then
//!   timed ones. Table: median time per iteration.
//! - **yield_heavy** (`brigade_examples::workloads::yield_heavy`): 2 × W
//!   background tasks of fixed numbers of ≈ 2 µs units, each unit followed
//!   by a tiny foreground spawn and the background yield point (brigade
//!   `yield_if_busy`, tokio `yield_now`), so that on brigade nearly every
//!   call goes through the yield queue. Table: median time for all the
//!   background work, background units/s, foreground tasks/s and, on
//!   brigade, the times per second a task gave way (`yields`) and was
//!   stepped aside into the yield queue (`yield_queue_entries`): the yield queue's
//!   traffic.
//! - **mixed_load**: `mixed_load`'s headline case scaled to W, with the
//!   `mixed_load` library's own code: B = 4 × W background tasks of 10 µs
//!   units (8 per 2 workers), a 1-byte request every 1 ms from a client
//!   thread, `brigade/yield_if_busy` against `tokio/yield_now`. Table: p99
//!   of the latencies pooled over the rounds, median background CPU share.
//!
//! Every table gives brigade / tokio per worker count. Counts above the
//! host's CPUs are skipped, and the bench says so.
//!
//! Settings: `SCALING_WORKERS=1,2` (the worker counts), `SCALING_ROUNDS`
//! (at least 3; default 5, 3 with `--quick`), `--quick` or
//! `SCALING_QUICK=1` (fewer iterations, smaller yield_heavy runs, 0.5 s
//! mixed_load runs instead of 2 s). Other arguments select workloads whose
//! name contains them. `BENCH_LATENCY_SAMPLE_EVERY` applies as in the other
//! benches. Without `--bench` (`cargo test --benches`) it runs nothing.
//!
//! ```text
//! cargo bench -p brigade-benches --bench scaling
//! SCALING_WORKERS=1,2 cargo bench -p brigade-benches --bench scaling -- --quick yield_heavy
//! ```

use std::time::{Duration, Instant};

use brigade_examples::busy::calibrate;
use brigade_examples::harness::{Brigade, Rt, RuntimeKind, Tokio, available_cores};
use brigade_examples::mixed_load::{self, Outcome, VARIANTS};
use brigade_examples::scaling::{
    DEFAULT_WORKER_COUNTS, SCALING_QUICK, SCALING_ROUNDS, SCALING_WORKERS, Table, WorkerCounts,
    format_duration, format_rate, format_ratio, median, parse_rounds, parse_worker_counts,
};
use brigade_examples::workloads::{SuiteWorkload, yield_heavy};

/// The yield-heavy workload's unit of background work, in µs.
const YIELD_HEAVY_UNIT_US: u64 = 2;
/// The headline case's unit of background work, in µs.
const HEADLINE_UNIT_US: u64 = 10;
/// The headline case's time between requests.
const HEADLINE_PERIOD: Duration = Duration::from_millis(1);
/// The names of the non-suite workloads, for selection.
const YIELD_HEAVY: &str = "yield_heavy";
const HEADLINE: &str = "mixed_load";

const USAGE: &str = "usage: scaling --bench [--quick] [WORKLOAD ...]
  (environment: SCALING_WORKERS=1,2,4  SCALING_ROUNDS=N  SCALING_QUICK=1)";

/// What to run, and how long.
struct Settings {
    workers: WorkerCounts,
    cores: usize,
    rounds: usize,
    quick: bool,
    filters: Vec<String>,
}

impl Settings {
    /// From the command line (without the program name) and environment.
    fn parse(args: &[String]) -> Result<Settings, String> {
        let mut quick = std::env::var(SCALING_QUICK).is_ok_and(|value| value == "1");
        let mut filters = Vec::new();
        for arg in args {
            match arg.as_str() {
                "--bench" => {}
                "--quick" => quick = true,
                flag if flag.starts_with('-') => {
                    return Err(format!("unknown flag {flag:?}\n{USAGE}"));
                }
                filter => filters.push(filter.to_owned()),
            }
        }
        let counts = match std::env::var(SCALING_WORKERS) {
            Ok(text) => parse_worker_counts(&text)?,
            Err(_) => DEFAULT_WORKER_COUNTS.to_vec(),
        };
        let rounds = match std::env::var(SCALING_ROUNDS) {
            Ok(text) => parse_rounds(&text)?,
            Err(_) if quick => 3,
            Err(_) => 5,
        };
        let cores = available_cores();
        Ok(Settings {
            workers: WorkerCounts::cap(&counts, cores),
            cores,
            rounds,
            quick,
            filters,
        })
    }

    fn selects(&self, name: &str) -> bool {
        self.filters.is_empty() || self.filters.iter().any(|filter| name.contains(filter))
    }

    /// Timed iterations of a suite workload per round.
    fn suite_iterations(&self) -> usize {
        if self.quick { 2 } else { 5 }
    }

    /// Units per background task in yield_heavy (≈ 0.1 s a run at full
    /// speed, whatever the worker count: the tasks grow with the workers).
    fn yield_heavy_units(&self) -> u64 {
        if self.quick { 5_000 } else { 25_000 }
    }

    /// Length of one headline run.
    fn headline_duration(&self) -> Duration {
        if self.quick {
            Duration::from_millis(500)
        } else {
            Duration::from_secs(2)
        }
    }
}

/// Every measurement, kept until the tables are printed.
#[derive(Default)]
struct Results {
    suite: Vec<(usize, SuiteWorkload, RuntimeKind, Duration)>,
    yield_heavy: Vec<(usize, RuntimeKind, yield_heavy::Report)>,
    /// One outcome per worker count and runtime, its rounds merged.
    headline: Vec<(usize, RuntimeKind, Outcome)>,
}

/// The order of the two runtimes in round `round`: brigade first in even
/// rounds, tokio first in odd ones.
fn order(round: usize) -> [RuntimeKind; 2] {
    let [brigade, tokio] = RuntimeKind::ALL;
    if round.is_multiple_of(2) {
        [brigade, tokio]
    } else {
        [tokio, brigade]
    }
}

/// One round of a suite workload on a fresh `R`: a warm-up iteration, then
/// `iterations` timed ones.
fn suite_round<R: Rt>(workload: SuiteWorkload, workers: usize, iterations: usize) -> Vec<Duration> {
    let rt = R::build(workers);
    let count = workload.scaled_count(workers);
    let mut times = Vec::with_capacity(iterations);
    workload.run(&rt, workers, count, |iteration| {
        iteration();
        for _ in 0..iterations {
            let started = Instant::now();
            iteration();
            times.push(started.elapsed());
        }
    });
    times
}

/// One yield_heavy run on a fresh `R`.
fn yield_heavy_round<R: Rt>(
    workers: usize,
    units: u64,
    unit_iterations: u64,
) -> yield_heavy::Report {
    let rt = R::build(workers);
    yield_heavy::run(&rt, workers, units, unit_iterations)
}

/// One headline run: `mixed_load`'s variant for `kind`, B = 4 × workers.
fn headline_round(kind: RuntimeKind, workers: usize, duration: Duration) -> Outcome {
    let name = match kind {
        RuntimeKind::Brigade => "brigade/yield_if_busy",
        RuntimeKind::Tokio => "tokio/yield_now",
    };
    let variant = *VARIANTS
        .iter()
        .find(|variant| variant.name == name)
        .expect("mixed_load has the headline variants");
    let config = mixed_load::Config {
        background_tasks: 4 * workers,
        unit_us: HEADLINE_UNIT_US,
        duration,
        workers,
        period: HEADLINE_PERIOD,
        ..mixed_load::Config::default()
    };
    let unit_iterations = calibrate(HEADLINE_UNIT_US, workers);
    mixed_load::run_variant(&config, variant, unit_iterations)
        .unwrap_or_else(|error| panic!("mixed_load {name} on {workers} workers failed: {error}"))
        .0
}

/// Every selected workload at `workers`, `settings.rounds` times over.
fn measure(settings: &Settings, workers: usize, results: &mut Results) {
    for round in 0..settings.rounds {
        eprintln!(
            "scaling: {workers} workers, round {} of {}",
            round + 1,
            settings.rounds
        );
        for workload in SuiteWorkload::ALL {
            if !settings.selects(workload.name()) {
                continue;
            }
            for kind in order(round) {
                let iterations = settings.suite_iterations();
                let times = match kind {
                    RuntimeKind::Brigade => suite_round::<Brigade>(workload, workers, iterations),
                    RuntimeKind::Tokio => suite_round::<Tokio>(workload, workers, iterations),
                };
                results.suite.extend(
                    times
                        .into_iter()
                        .map(|time| (workers, workload, kind, time)),
                );
            }
        }
        if settings.selects(YIELD_HEAVY) {
            let unit_iterations = calibrate(YIELD_HEAVY_UNIT_US, workers);
            let units = settings.yield_heavy_units();
            for kind in order(round) {
                let report = match kind {
                    RuntimeKind::Brigade => {
                        yield_heavy_round::<Brigade>(workers, units, unit_iterations)
                    }
                    RuntimeKind::Tokio => {
                        yield_heavy_round::<Tokio>(workers, units, unit_iterations)
                    }
                };
                results.yield_heavy.push((workers, kind, report));
            }
        }
        if settings.selects(HEADLINE) {
            for kind in order(round) {
                let outcome = headline_round(kind, workers, settings.headline_duration());
                let pooled = results
                    .headline
                    .iter_mut()
                    .find(|(w, k, _)| *w == workers && *k == kind);
                match pooled {
                    Some((.., pooled)) => pooled.merge(outcome),
                    None => results.headline.push((workers, kind, outcome)),
                }
            }
        }
    }
}

/// One table per suite workload: median time per iteration.
fn suite_tables(settings: &Settings, results: &Results) -> Vec<Table> {
    let mut tables = Vec::new();
    for workload in SuiteWorkload::ALL {
        if !settings.selects(workload.name()) {
            continue;
        }
        let mut table = Table::new(
            format!(
                "{}: median time per iteration ({} × W / 4, at least {})",
                workload.name(),
                workload.suite_count(),
                workload.suite_count()
            ),
            &["workers", "brigade", "tokio", "brigade / tokio"],
        );
        for &workers in &settings.workers.run {
            let time = |kind| {
                let times: Vec<Duration> = results
                    .suite
                    .iter()
                    .filter(|&&(w, l, k, _)| w == workers && l == workload && k == kind)
                    .map(|&(.., time)| time)
                    .collect();
                (!times.is_empty()).then(|| median(&times))
            };
            let (Some(brigade), Some(tokio)) =
                (time(RuntimeKind::Brigade), time(RuntimeKind::Tokio))
            else {
                continue;
            };
            table.row(vec![
                workers.to_string(),
                format_duration(brigade),
                format_duration(tokio),
                format_ratio(brigade.as_secs_f64(), tokio.as_secs_f64()),
            ]);
        }
        tables.push(table);
    }
    tables
}

/// The yield_heavy table: medians over the rounds.
fn yield_heavy_table(settings: &Settings, results: &Results) -> Table {
    let mut table = Table::new(
        format!(
            "yield_heavy: 2 × W tasks × {} units of {YIELD_HEAVY_UNIT_US} µs, each unit followed \
             by a foreground spawn and yield_if_busy (brigade) / yield_now (tokio); medians",
            settings.yield_heavy_units()
        ),
        &[
            "workers",
            "brigade",
            "tokio",
            "brigade / tokio",
            "bg units/s brigade",
            "bg units/s tokio",
            "fg tasks/s brigade",
            "fg tasks/s tokio",
            "brigade gave way/s",
            "brigade yield-queue entries/s",
        ],
    );
    for &workers in &settings.workers.run {
        let reports = |kind| -> Vec<yield_heavy::Report> {
            results
                .yield_heavy
                .iter()
                .filter(|&&(w, k, _)| w == workers && k == kind)
                .map(|&(.., report)| report)
                .collect()
        };
        let (brigade, tokio) = (reports(RuntimeKind::Brigade), reports(RuntimeKind::Tokio));
        if brigade.is_empty() || tokio.is_empty() {
            continue;
        }
        let elapsed = |reports: &[yield_heavy::Report]| {
            median(&reports.iter().map(|r| r.elapsed).collect::<Vec<_>>())
        };
        let rate = |reports: &[yield_heavy::Report], of: fn(&yield_heavy::Report) -> f64| {
            format_rate(median(&reports.iter().map(of).collect::<Vec<_>>()))
        };
        let brigade_rate = |of: fn(&yield_heavy::Report) -> Option<f64>| {
            format_rate(median(&brigade.iter().filter_map(of).collect::<Vec<_>>()))
        };
        table.row(vec![
            workers.to_string(),
            format_duration(elapsed(&brigade)),
            format_duration(elapsed(&tokio)),
            format_ratio(
                elapsed(&brigade).as_secs_f64(),
                elapsed(&tokio).as_secs_f64(),
            ),
            rate(&brigade, yield_heavy::Report::units_per_sec),
            rate(&tokio, yield_heavy::Report::units_per_sec),
            rate(&brigade, yield_heavy::Report::foreground_per_sec),
            rate(&tokio, yield_heavy::Report::foreground_per_sec),
            brigade_rate(yield_heavy::Report::gave_way_per_sec),
            brigade_rate(yield_heavy::Report::entered_per_sec),
        ]);
    }
    table
}

/// The headline table: p99 pooled over the rounds, median background share.
fn headline_table(settings: &Settings, results: &Results) -> Table {
    let mut table = Table::new(
        format!(
            "mixed_load headline: B = 4 × W tasks × {HEADLINE_UNIT_US} µs units, a request every \
             {} ms, brigade/yield_if_busy against tokio/yield_now, {:.1} s a run",
            HEADLINE_PERIOD.as_millis(),
            settings.headline_duration().as_secs_f64()
        ),
        &[
            "workers",
            "B",
            "p99 brigade",
            "p99 tokio",
            "p99 brigade / tokio",
            "bg share brigade",
            "bg share tokio",
            "share brigade / tokio",
        ],
    );
    for &workers in &settings.workers.run {
        let pooled = |kind| -> Option<(u64, bool, f64)> {
            let (.., outcome) = results
                .headline
                .iter()
                .find(|(w, k, _)| *w == workers && *k == kind)?;
            let foreground = &outcome.foreground;
            Some((
                foreground.latencies_us.value_at_quantile(0.99),
                foreground.starved,
                outcome.background_share(),
            ))
        };
        let (Some(brigade), Some(tokio)) =
            (pooled(RuntimeKind::Brigade), pooled(RuntimeKind::Tokio))
        else {
            continue;
        };
        let p99 = |(p99, starved, _): (u64, bool, f64)| {
            if starved {
                "starved".to_owned()
            } else {
                mixed_load::format_micros(p99)
            }
        };
        table.row(vec![
            workers.to_string(),
            (4 * workers).to_string(),
            p99(brigade),
            p99(tokio),
            format_ratio(brigade.0 as f64, tokio.0 as f64),
            format!("{:.3}", brigade.2),
            format!("{:.3}", tokio.2),
            format_ratio(brigade.2, tokio.2),
        ]);
    }
    table
}

fn main() {
    brigade_examples::harness::end_quietly_on_closed_pipe();
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|arg| arg == "--help" || arg == "-h") {
        println!("{USAGE}");
        return;
    }
    if args.iter().any(|arg| arg == "--list") {
        for workload in SuiteWorkload::ALL {
            println!("scaling/{}: benchmark", workload.name());
        }
        println!("scaling/{YIELD_HEAVY}: benchmark\nscaling/{HEADLINE}: benchmark");
        return;
    }
    if !args.iter().any(|arg| arg == "--bench") {
        println!("scaling: runs only under `cargo bench` (--bench); nothing to test here");
        return;
    }
    let settings = Settings::parse(&args).unwrap_or_else(|message| {
        eprintln!("scaling: {message}");
        std::process::exit(2);
    });
    let counts: Vec<String> = settings.workers.run.iter().map(usize::to_string).collect();
    println!(
        "scaling: brigade and tokio at {} workers, {} interleaved rounds{}, {} CPUs available",
        counts.join(", "),
        settings.rounds,
        if settings.quick { " (quick)" } else { "" },
        settings.cores,
    );
    if let Some(note) = settings.workers.skipped_note(settings.cores) {
        println!("{note}");
    }
    let mut results = Results::default();
    for &workers in &settings.workers.run {
        measure(&settings, workers, &mut results);
    }
    let mut tables = suite_tables(&settings, &results);
    if settings.selects(YIELD_HEAVY) {
        tables.push(yield_heavy_table(&settings, &results));
    }
    if settings.selects(HEADLINE) {
        tables.push(headline_table(&settings, &results));
    }
    for table in tables {
        println!("\n{table}");
    }
    if let Some(note) = settings.workers.skipped_note(settings.cores) {
        println!("\n{note}");
    }
}
