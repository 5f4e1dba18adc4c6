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
//! [`Scenario::start`] starts one runtime with its server and background
//! load; [`measure_open_loop`] drives the client. `benches/foreground_latency.rs`
//! reuses both.

use std::io;
use std::time::Duration;

use crate::neighbours::Neighbours;

mod chart;
mod config;
mod measure;
mod report;
mod server;
mod tradeoff;
mod variants;
pub use crate::busy::{calibrate, spin};
pub use crate::harness::RuntimeKind;
pub use chart::render_svg;
pub use config::{Config, HELP};
pub use measure::{Client, ForegroundReport, measure_open_loop};
pub use report::{Outcome, format_micros, format_relative_throughput, format_table, median};
pub use server::{
    BackgroundReport, Running, Scenario, brigade_echo_server, start_echo_server, tokio_echo_server,
};
pub use tradeoff::render_tradeoff_svg;
pub use variants::{VARIANTS, Variant, YieldKind};

/// Runs one variant with `config`'s settings.
pub fn run_variant(config: &Config, variant: Variant, unit_iterations: u64) -> io::Result<Outcome> {
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
    Ok(Outcome {
        name: variant.name.to_owned(),
        foreground,
        background_shares: vec![background_share],
        background_rates: vec![background_rate],
    })
}

/// Runs the demo: every selected variant, then the table and the chart.
pub fn run(config: &Config) -> io::Result<Vec<Outcome>> {
    println!(
        "mixed_load: {} workers, {} background tasks × {} µs units, {:.1} s per variant{}{}",
        config.workers,
        config.background_tasks,
        config.unit_us,
        config.duration.as_secs_f64(),
        if config.driver_thread {
            ", brigade with its fallback driver thread"
        } else {
            ""
        },
        match config.neighbours {
            0 => String::new(),
            count => format!(", {count} busy neighbour process(es)"),
        },
    );
    let selected: Vec<Variant> = VARIANTS
        .iter()
        .filter(|variant| config.selects(variant.name))
        .copied()
        .collect();
    let mut outcomes: Vec<Outcome> = Vec::new();
    for round in 1..=config.rounds {
        if config.rounds > 1 {
            println!("round {round} of {}", config.rounds);
        }
        for (index, variant) in selected.iter().enumerate() {
            // Calibrated per variant: the speed of a shared machine drifts.
            let unit_iterations = calibrate(config.unit_us, config.workers);
            println!(
                "running {} ({unit_iterations} iterations per unit) ...",
                variant.name
            );
            // After the calibration, which measures an uncrowded unit.
            let neighbours = Neighbours::start(config.neighbours)?;
            let outcome = run_variant(config, *variant, unit_iterations)?;
            drop(neighbours);
            match outcomes.get_mut(index) {
                Some(total) => total.merge(outcome),
                None => outcomes.push(outcome),
            }
        }
    }
    Ok(outcomes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smoke_runs_every_variant_end_to_end() {
        let config = Config {
            background_tasks: 2,
            unit_us: 10,
            duration: Duration::from_millis(200),
            workers: 2,
            only: None,
            driver_thread: false,
            period: Duration::from_millis(1),
            rounds: 1,
            neighbours: 0,
            out: std::env::temp_dir().join("brigade-mixed-load-smoke.svg"),
        };
        let outcomes = run(&config).unwrap();
        assert_eq!(outcomes.len(), VARIANTS.len());
        for outcome in &outcomes {
            assert!(outcome.foreground.sent > 0, "{} sent nothing", outcome.name);
        }
        // The variants that yield properly answer every request.
        for name in ["idle/brigade", "idle/tokio", "brigade/yield_if_busy"] {
            let outcome = outcomes
                .iter()
                .find(|outcome| outcome.name == name)
                .unwrap();
            assert!(!outcome.foreground.starved, "{name} starved");
            assert_eq!(
                outcome.foreground.latencies_us.len(),
                outcome.foreground.sent
            );
        }
    }
}
