//! The mixed-load experiment: foreground requests over loopback TCP while
//! background tasks keep every worker busy, on brigade and on tokio.
//!
//! - **Foreground**: a client on a plain OS thread (outside any runtime)
//!   sends a 1-byte request every millisecond (`--period-us`) to an echo server task in the
//!   runtime under test. Latency counts from when the request was due, so a
//!   stall shows up in full (open loop), but not the client's own sleep
//!   overshoot: a request is due at `max(scheduled time, previous reply)`.
//! - **Background**: `bg` tasks, each doing units of `unit_us` µs of CPU work
//!   (calibrated at start-up) in a loop, with a yield point after each unit.
//!
//! The demo runs cases ([`plan`]): the foreground alone, a quiet host and a
//! crowded one, each with its variants, and ends with a verdict per case
//! ([`format_verdict`]) and two charts ([`render_svg`],
//! [`render_tradeoff_svg`]).
//!
//! [`Scenario::start`] starts one runtime with its server and background
//! load; [`measure_open_loop`] drives the client. `benches/foreground_latency.rs`
//! reuses both.

use std::io;
use std::time::Duration;

use crate::neighbours::Neighbours;

mod chart;
mod config;
mod measure;
mod plan;
mod report;
mod server;
mod svg;
mod tradeoff;
mod variants;
mod verdict;
pub use crate::busy::{calibrate, spin};
pub use crate::harness::RuntimeKind;
pub use chart::render_svg;
pub use config::{Config, HELP};
pub use measure::{Client, ForegroundReport, measure_open_loop};
pub use plan::{Case, CaseKind, CaseResult, DEMO_VARIANTS, demo_variants, plan};
pub use report::{
    ELASTIC_NOTE, Outcome, format_micros, format_relative_throughput, format_table, median,
};
pub use server::{
    BackgroundReport, Running, Scenario, brigade_echo_server, start_echo_server, tokio_echo_server,
};
pub use svg::ChartInfo;
pub use tradeoff::render_tradeoff_svg;
pub use variants::{VARIANTS, Variant, YieldKind};
pub use verdict::{case_verdict, compare, format_ms, format_verdict, p99, rounds, verdict_heading};

/// Runs one variant with `config`'s settings; with it, on brigade, what its
/// metrics counted ([`BackgroundReport::brigade_metrics`]).
pub fn run_variant(
    config: &Config,
    variant: Variant,
    unit_iterations: u64,
) -> io::Result<(Outcome, Option<String>)> {
    let scenario = Scenario {
        variant,
        workers: config.workers,
        background_tasks: config.background_tasks,
        unit_iterations,
        driver_thread: config.driver_thread,
    };
    let running = scenario.start()?;
    // Let the background settle before measuring.
    std::thread::sleep(Duration::from_millis(100));
    let foreground = measure_open_loop(running.addr, config.duration, config.period)?;
    let background = running.stop();
    let elapsed = background.elapsed.as_secs_f64();
    let busy_time = background.units as f64 * config.unit_us as f64 * 1e-6;
    let background_share = busy_time / (elapsed * config.workers as f64);
    let background_rate = background.units as f64 * unit_iterations as f64 / elapsed;
    let outcome = Outcome {
        name: variant.name.to_owned(),
        foreground,
        background_shares: vec![background_share],
        background_rates: vec![background_rate],
    };
    Ok((outcome, background.brigade_metrics))
}

/// The line that opens the demo's output: what runs, on what.
pub fn describe(config: &Config) -> String {
    format!(
        "mixed_load: foreground latency while background tasks keep every worker busy\n  \
         {} on {} workers ({}-core host), a 1-byte request every {}, {:.1} s per variant{}",
        workload(config),
        config.workers,
        crate::harness::available_cores(),
        svg::format_period(config.period.as_micros() as u64),
        config.duration.as_secs_f64(),
        if config.driver_thread {
            ", brigade with its fallback driver thread"
        } else {
            ""
        },
    )
}

/// Why figures measured under scheduling `policy` (as `sched_getscheduler`
/// returns it) mean nothing, or `None` where they do. Under `SCHED_IDLE`
/// (`chrt -i`) a thread woken while the others spin waits for the next
/// scheduler tick: every busy variant's latency becomes a multiple of
/// the tick (4 ms at 250 Hz), whatever the runtime does.
pub fn policy_warning(policy: i32) -> Option<&'static str> {
    (policy == SCHED_IDLE).then_some(
        "warning: this process runs under SCHED_IDLE (chrt -i), where a woken thread waits \
         for the next scheduler tick while the others spin: the busy cases' latencies measure \
         the tick, not the runtimes. Run it with plain `nice` instead.",
    )
}

/// Linux's `SCHED_IDLE` (libc has it only on Linux).
const SCHED_IDLE: i32 = 5;

/// [`policy_warning`] for this process.
fn own_policy_warning() -> Option<&'static str> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: sched_getscheduler only reads the policy of the calling
        // process (pid 0); it takes no pointers.
        let policy = unsafe { libc::sched_getscheduler(0) };
        policy_warning(policy)
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}

/// "64 background tasks × 100 µs units".
pub fn workload(config: &Config) -> String {
    format!(
        "{} background tasks × {} µs units",
        config.background_tasks, config.unit_us
    )
}

/// What the charts of a run with `config` say in their titles.
pub fn chart_info(config: &Config) -> ChartInfo {
    ChartInfo {
        workload: workload(config),
        workers: config.workers,
        cores: crate::harness::available_cores(),
        period_us: config.period.as_micros() as u64,
        rounds: config.rounds,
    }
}

/// Runs the demo: every case of [`Config::plan`], `rounds` times over,
/// interleaved.
pub fn run(config: &Config) -> io::Result<Vec<CaseResult>> {
    println!("{}", describe(config));
    if let Some(warning) = own_policy_warning() {
        println!("{warning}");
    }
    let mut results: Vec<CaseResult> = config
        .plan()
        .into_iter()
        .map(|case| CaseResult {
            case,
            outcomes: Vec::new(),
        })
        .collect();
    for round in 1..=config.rounds {
        if config.rounds > 1 {
            println!("round {round} of {}", config.rounds);
        }
        for result in &mut results {
            for index in 0..result.case.variants.len() {
                let outcome = run_in_case(config, &result.case, index)?;
                match result.outcomes.get_mut(index) {
                    Some(total) => total.merge(outcome),
                    None => result.outcomes.push(outcome),
                }
            }
        }
    }
    Ok(results)
}

/// Runs the `index`th variant of `case`, with the case's neighbours.
fn run_in_case(config: &Config, case: &Case, index: usize) -> io::Result<Outcome> {
    let variant = case.variants[index];
    // Calibrated per variant: the speed of a shared machine drifts.
    let unit_iterations = if variant.yield_kind == YieldKind::NoBackground {
        1
    } else {
        calibrate(config.unit_us, config.workers)
    };
    println!("  {}: running {} ...", case.label(), variant.name);
    // After the calibration, which measures an uncrowded unit.
    let neighbours = Neighbours::start(case.neighbours)?;
    let outcome = run_variant(config, variant, unit_iterations);
    drop(neighbours);
    let (outcome, metrics) = outcome?;
    if let Some(metrics) = metrics.filter(|_| config.all) {
        eprintln!("    {metrics}");
    }
    Ok(outcome)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::mixed_load::report::tests::outcome;

    /// What the charts' tests title their charts with.
    pub(crate) fn info() -> ChartInfo {
        ChartInfo {
            workload: "64 background tasks × 100 µs units".to_owned(),
            workers: 2,
            cores: 2,
            period_us: 1000,
            rounds: 1,
        }
    }

    /// Made-up results of every variant in the three cases, as `--all`
    /// gives them: the no_yield ones starved, the others spread over four
    /// decades, several at nearly the same point.
    pub(crate) fn every_variant_results() -> Vec<CaseResult> {
        let results: Vec<CaseResult> = plan(VARIANTS, 1, |_| true)
            .into_iter()
            .map(|case| {
                let crowded = case.kind == CaseKind::Crowded;
                let outcomes = case
                    .variants
                    .iter()
                    .enumerate()
                    .map(|(index, variant)| {
                        let starved = variant.yield_kind == YieldKind::NoYield;
                        let base = 100 + 20 * index as u64 + if crowded { 30 } else { 0 };
                        let tail = if variant.name.contains("consume_budget") {
                            400_000
                        } else {
                            base * 20
                        };
                        let latencies: Vec<u64> = (0..1000)
                            .map(|i| if i < 980 { base } else { tail })
                            .collect();
                        let share = if variant.yield_kind == YieldKind::NoBackground {
                            0.0
                        } else {
                            0.94 + 0.005 * index as f64
                        };
                        let latencies = if starved { &[][..] } else { &latencies[..] };
                        outcome(variant.name, latencies, starved, share)
                    })
                    .collect();
                CaseResult { case, outcomes }
            })
            .collect();
        assert_eq!(results.len(), 3);
        results
    }

    #[test]
    fn the_opening_line_names_the_workload_and_the_host() {
        let config = Config::default();
        let line = describe(&config);
        assert!(
            line.contains("64 background tasks × 100 µs units"),
            "{line}"
        );
        assert!(
            line.contains("-core host") && line.contains("4.0 s per variant"),
            "{line}"
        );
        assert_eq!(chart_info(&config).workload, workload(&config));
    }

    #[test]
    fn sched_idle_is_warned_of() {
        assert!(policy_warning(SCHED_IDLE).unwrap().contains("chrt -i"));
        assert_eq!(policy_warning(0), None, "SCHED_OTHER");
        #[cfg(target_os = "linux")]
        assert_eq!(SCHED_IDLE, libc::SCHED_IDLE);
    }
}
