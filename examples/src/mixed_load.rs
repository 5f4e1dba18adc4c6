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
use std::time::{Duration, Instant};

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
        limit_sized: config.cpu_limit.filter(|_| !config.workers_set),
    };
    let cgroup = config.cpu_limit.map(limited_cgroup).transpose()?;
    let running = match &cgroup {
        Some(cgroup) if config.pin_apart => {
            let client: Vec<usize> = (1..crate::cgroup::online_cpus().max(2)).collect();
            cgroup.run_inside_on(&[0], &client, || scenario.start())??
        }
        Some(cgroup) => cgroup.run_inside(|| scenario.start())??,
        None => scenario.start()?,
    };
    // Let the background settle before measuring.
    std::thread::sleep(Duration::from_millis(100));
    let throttled_before = cgroup.as_ref().map(|cgroup| cgroup.throttling().0);
    let foreground = measure_open_loop(running.addr, config.duration, config.period)?;
    let throttled = cgroup
        .as_ref()
        .zip(throttled_before)
        .map(|(cgroup, before)| {
            (cgroup.throttling().0 - before) as f64 / config.duration.as_secs_f64()
        });
    let background = running.stop();
    drop(cgroup);
    if config.pin_apart {
        // Back on every CPU, for the next variant's calibration.
        crate::cgroup::pin_current_thread(&[])?;
    }
    let elapsed = background.elapsed.as_secs_f64();
    let busy_time = background.units as f64 * config.unit_us as f64 * 1e-6;
    // Of the workers' CPU, or of the CPU limit.
    let capacity = config.cpu_limit.unwrap_or(config.workers as f64);
    let background_share = busy_time / (elapsed * capacity);
    if let Some(throttled) = throttled {
        println!(
            "    {}: background {:.2} CPUs, {throttled:.1} throttled periods/s",
            variant.name,
            busy_time / elapsed
        );
    }
    let background_rate = background.units as f64 * unit_iterations as f64 / elapsed;
    let outcome = Outcome {
        name: variant.name.to_owned(),
        foreground,
        background_shares: vec![background_share],
        background_rates: vec![background_rate],
    };
    Ok((outcome, background.brigade_metrics))
}

/// `--client`: the foreground's requests to a server in another process;
/// prints their p50 and p99 in milliseconds.
pub fn client(config: &Config, addr: std::net::SocketAddr) -> io::Result<()> {
    let report = measure_open_loop(addr, config.duration, config.period)?;
    if report.starved {
        return Err(io::Error::other(
            "a request got no reply: the foreground starved",
        ));
    }
    for (name, quantile) in [("p50_ms", 0.5), ("p99_ms", 0.99)] {
        let micros = report.latencies_us.value_at_quantile(quantile);
        println!("{name} {:.3}", micros as f64 / 1000.0);
    }
    Ok(())
}

/// `--serve`: runs the variant `--only` names, with no client, for a
/// client in another process; prints the background's CPUs at the end.
pub fn serve(config: &Config, addr_file: &std::path::Path) -> io::Result<()> {
    let name = config.only.as_deref().unwrap_or_default();
    let variant = VARIANTS
        .iter()
        .copied()
        .find(|variant| variant.name == name)
        .ok_or_else(|| io::Error::other(format!("--serve needs --only VARIANT, got {name:?}")))?;
    let unit_iterations = calibrate(config.unit_us, config.workers);
    let scenario = Scenario {
        variant,
        workers: config.workers,
        background_tasks: config.background_tasks,
        unit_iterations,
        driver_thread: config.driver_thread,
        // Inside a container each runtime sizes itself: brigade from the
        // cgroup, tokio through `available_parallelism` (which reads the
        // quota of a process wholly inside one).
        limit_sized: (!config.workers_set).then(|| crate::harness::available_cores() as f64),
    };
    let running = scenario.start()?;
    std::fs::write(addr_file, running.addr.to_string())?;
    // A line a second, so that a client that ran longer than planned (a
    // slow server's requests are sent late) can stop the server at any
    // time and read the last one.
    let ends = Instant::now() + config.duration;
    while Instant::now() < ends {
        std::thread::sleep(Duration::from_secs(1).min(ends - Instant::now()));
        let busy_time = running.units_done() as f64 * config.unit_us as f64 * 1e-6;
        println!(
            "background_cpus {:.3}",
            busy_time / running.elapsed().as_secs_f64()
        );
    }
    running.stop();
    Ok(())
}

/// A fresh cgroup with a quota of `cpus` for one variant's server, or the
/// error that says how to run under a limit otherwise.
fn limited_cgroup(cpus: f64) -> io::Result<crate::cgroup::QuotaCgroup> {
    crate::cgroup::QuotaCgroup::create("mixed-load", cpus).map_err(|reason| {
        io::Error::other(format!(
            "--cpu-limit {cpus}: {reason}; {}",
            crate::cgroup::how_to_run_limited(
                cpus,
                "cargo run --release -p brigade-examples --example mixed_load"
            )
        ))
    })
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
