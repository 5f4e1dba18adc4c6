//! The flood demo: yielded background work under a foreground load that
//! never lets up, with and without the yield queue's starvation bound
//! (`Builder::max_yield_delay`).
//!
//! Foreground: `--fg` tasks, each spawning a child of `--child-us` µs of
//! busy work and awaiting it, in a loop: the workers' queues are never
//! empty. Background: `--bg` tasks of `--unit-us` µs units, each followed by
//! `yield_if_busy()` (or `yield_now()` with `--bg-yield now`). Without a
//! bound the yield queue, which runs only when nothing else waits, never
//! runs; with one, overdue background work is rescued within a share cap.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

use crate::busy::{calibrate, spin};
use crate::flags::{parse_number, parse_positive};

/// The usage text.
pub const HELP: &str = "\
usage: flood [--workers W] [--secs S] [--rounds R] [--fg F] [--child-us C]
             [--bg B] [--unit-us U] [--bg-yield if_busy|now] [--delays-ms LIST]

  --workers W        worker threads (default 2)
  --secs S           seconds per run (default 3)
  --rounds R         rounds, each running every variant once, interleaved (default 3)
  --fg F             foreground tasks spawning and awaiting children (default 4)
  --child-us C       busy work per child, in µs (default 20)
  --bg B             background tasks (default 2)
  --unit-us U        busy work per background unit, in µs (default 50)
  --bg-yield KIND    the yield point after each unit: if_busy (default) or now
  --delays-ms LIST   max_yield_delay values to compare, comma-separated,
                     `off` for none (default off,50)";

/// The yield point after each background unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BgYield {
    /// `brigade::yield_if_busy()`.
    IfBusy,
    /// `brigade::yield_now()` (the task is demoted to background).
    Now,
}

/// The demo's settings.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Worker threads.
    pub workers: usize,
    /// Length of each run.
    pub run_for: Duration,
    /// Rounds of all variants.
    pub rounds: usize,
    /// Foreground tasks.
    pub foreground: usize,
    /// Busy work per child, µs.
    pub child_us: u64,
    /// Background tasks.
    pub background: usize,
    /// Busy work per background unit, µs.
    pub unit_us: u64,
    /// The background's yield point.
    pub bg_yield: BgYield,
    /// The `max_yield_delay` of each variant.
    pub delays: Vec<Option<Duration>>,
}

impl Config {
    /// Parses the command line (without the program name). `Err` holds the
    /// message for the user; `--help` yields `Err(HELP)`.
    pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Config, String> {
        let mut config = Config {
            workers: 2,
            run_for: Duration::from_secs(3),
            rounds: 3,
            foreground: 4,
            child_us: 20,
            background: 2,
            unit_us: 50,
            bg_yield: BgYield::IfBusy,
            delays: vec![None, Some(brigade::DEFAULT_MAX_YIELD_DELAY)],
        };
        let mut args = args.into_iter();
        while let Some(flag) = args.next() {
            if flag == "--help" || flag == "-h" {
                return Err(HELP.to_owned());
            }
            let value = args
                .next()
                .ok_or_else(|| format!("{flag} needs a value\n\n{HELP}"))?;
            match flag.as_str() {
                "--workers" => config.workers = parse_positive(&flag, &value)?,
                "--secs" => config.run_for = Duration::from_secs(parse_positive(&flag, &value)?),
                "--rounds" => config.rounds = parse_positive(&flag, &value)?,
                "--fg" => config.foreground = parse_positive(&flag, &value)?,
                "--child-us" => config.child_us = parse_positive(&flag, &value)?,
                "--bg" => config.background = parse_number(&flag, &value)?,
                "--unit-us" => config.unit_us = parse_positive(&flag, &value)?,
                "--bg-yield" => {
                    config.bg_yield = match value.as_str() {
                        "if_busy" => BgYield::IfBusy,
                        "now" => BgYield::Now,
                        _ => {
                            return Err(format!(
                                "--bg-yield must be if_busy or now, got {value:?}"
                            ));
                        }
                    }
                }
                "--delays-ms" => config.delays = parse_delays(&value)?,
                _ => return Err(format!("unknown flag {flag:?}\n\n{HELP}")),
            }
        }
        Ok(config)
    }
}

fn parse_delays(list: &str) -> Result<Vec<Option<Duration>>, String> {
    list.split(',')
        .map(|item| match item {
            "off" => Ok(None),
            millis => parse_positive::<u64>("--delays-ms", millis)
                .map(|millis| Some(Duration::from_millis(millis))),
        })
        .collect()
}

/// What one run measured.
#[derive(Debug, Clone)]
pub struct Run {
    /// The `max_yield_delay` of the run.
    pub delay: Option<Duration>,
    /// Background units done during the run, × unit time, over the
    /// workers' time.
    pub bg_share: f64,
    /// `metrics().yield_delay().max()`, the final resume after the run
    /// included.
    pub yield_delay_max: Duration,
    /// `metrics().yield_queue_rescues()`.
    pub rescues: u64,
    /// Foreground children completed per second.
    pub fg_rate: f64,
    /// p99 of one foreground iteration (spawn a child, await it).
    pub fg_p99: Duration,
}

/// Runs every variant `config.rounds` times, interleaved, printing a line
/// per run.
pub fn run(config: &Config) -> std::io::Result<Vec<Run>> {
    let unit = calibrate(config.unit_us, config.workers);
    let child = calibrate(config.child_us, config.workers);
    let mut runs = Vec::new();
    for round in 1..=config.rounds {
        eprintln!("round {round} of {}", config.rounds);
        for &delay in &config.delays {
            let run = run_once(config, delay, unit, child)?;
            eprintln!(
                "  {:<24} bg share {:.4}  yield delay max {:>9.1?}  rescues {:>4}  fg {:>7.0}/s  fg p99 {:?}",
                variant_name(delay),
                run.bg_share,
                run.yield_delay_max,
                run.rescues,
                run.fg_rate,
                run.fg_p99
            );
            runs.push(run);
        }
    }
    Ok(runs)
}

/// The name of the variant with this `max_yield_delay`.
pub fn variant_name(delay: Option<Duration>) -> String {
    match delay {
        None => "max_yield_delay=off".to_owned(),
        Some(delay) => format!("max_yield_delay={}ms", delay.as_millis()),
    }
}

fn run_once(
    config: &Config,
    delay: Option<Duration>,
    unit: u64,
    child: u64,
) -> std::io::Result<Run> {
    let rt = brigade::Builder::new()
        .worker_threads(config.workers)
        .max_yield_delay(delay)
        .build()?;
    let stop = Arc::new(AtomicBool::new(false));
    let units = Arc::new(AtomicU64::new(0));
    let background: Vec<_> = (0..config.background)
        .map(|_| {
            rt.spawn(background_task(
                stop.clone(),
                units.clone(),
                unit,
                config.bg_yield,
            ))
        })
        .collect();
    let foreground: Vec<_> = (0..config.foreground)
        .map(|_| rt.spawn(foreground_task(stop.clone(), child)))
        .collect();
    std::thread::sleep(config.run_for);
    stop.store(true, Ordering::Relaxed);
    let units_done = units.load(Ordering::Relaxed);
    let mut iterations = new_histogram();
    let mut children = 0;
    rt.block_on(async {
        for task in foreground {
            let histogram = task.await.expect("foreground task panicked");
            children += histogram.len();
            iterations
                .add(histogram)
                .expect("histograms of the same range");
        }
        for task in background {
            task.await.expect("background task panicked");
        }
    });
    let metrics = rt.metrics();
    let secs = config.run_for.as_secs_f64();
    let run = Run {
        delay,
        bg_share: units_done as f64 * config.unit_us as f64 / (secs * 1e6 * config.workers as f64),
        yield_delay_max: metrics.yield_delay().max(),
        rescues: metrics.yield_queue_rescues(),
        fg_rate: children as f64 / secs,
        fg_p99: Duration::from_nanos(iterations.value_at_quantile(0.99)),
    };
    rt.shutdown_timeout(Duration::from_secs(5));
    Ok(run)
}

async fn background_task(
    stop: Arc<AtomicBool>,
    units: Arc<AtomicU64>,
    unit: u64,
    bg_yield: BgYield,
) {
    while !stop.load(Ordering::Relaxed) {
        std::hint::black_box(spin(unit));
        units.fetch_add(1, Ordering::Relaxed);
        match bg_yield {
            BgYield::IfBusy => brigade::yield_if_busy().await,
            BgYield::Now => brigade::yield_now().await,
        }
    }
}

/// Spawns and awaits children until `stop`; returns the iteration times.
async fn foreground_task(stop: Arc<AtomicBool>, child: u64) -> Histogram<u64> {
    let mut iterations = new_histogram();
    while !stop.load(Ordering::Relaxed) {
        let started = Instant::now();
        brigade::spawn(async move { std::hint::black_box(spin(child)) })
            .await
            .expect("child panicked");
        iterations.saturating_record(started.elapsed().as_nanos() as u64);
    }
    iterations
}

/// Nanoseconds from 1 ns to 60 s, 3 significant digits.
fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 60_000_000_000, 3).expect("valid histogram bounds")
}

/// A markdown table of the median run of each variant.
pub fn format_table(config: &Config, runs: &[Run]) -> String {
    let mut table = String::from(
        "| max_yield_delay | bg share | yield delay max | rescues | fg children/s | fg iteration p99 |\n|---|---|---|---|---|---|\n",
    );
    for &delay in &config.delays {
        let mut of_variant: Vec<&Run> = runs.iter().filter(|run| run.delay == delay).collect();
        if of_variant.is_empty() {
            continue;
        }
        of_variant.sort_by(|a, b| a.bg_share.total_cmp(&b.bg_share));
        let median = of_variant[of_variant.len() / 2];
        table.push_str(&format!(
            "| {} | {:.4} | {:.1?} | {} | {:.0} | {:.1?} |\n",
            delay.map_or("off".to_owned(), |delay| format!(
                "{} ms",
                delay.as_millis()
            )),
            median.bg_share,
            median.yield_delay_max,
            median.rescues,
            median.fg_rate,
            median.fg_p99
        ));
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Config, String> {
        Config::parse(args.iter().map(|arg| arg.to_string()))
    }

    #[test]
    fn flags_set_the_config_and_bad_values_are_named() {
        let config = parse(&[
            "--delays-ms",
            "off,25,100",
            "--bg-yield",
            "now",
            "--fg",
            "8",
        ])
        .unwrap();
        assert_eq!(
            config.delays,
            vec![
                None,
                Some(Duration::from_millis(25)),
                Some(Duration::from_millis(100))
            ]
        );
        assert_eq!((config.bg_yield, config.foreground), (BgYield::Now, 8));
        assert!(
            parse(&["--delays-ms", "0"])
                .unwrap_err()
                .contains("--delays-ms")
        );
        assert!(
            parse(&["--bg-yield", "never"])
                .unwrap_err()
                .contains("--bg-yield")
        );
        assert!(parse(&["--fg"]).unwrap_err().contains("needs a value"));
        assert_eq!(parse(&["--help"]).unwrap_err(), HELP);
    }
}
