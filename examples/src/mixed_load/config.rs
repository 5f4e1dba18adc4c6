//! Command-line flags of the mixed-load demo.

use std::path::PathBuf;

use crate::flags::{parse_number, parse_positive};
use std::time::Duration;

/// Usage text.
pub const HELP: &str = "\
usage: mixed_load [--bg B] [--unit-us U] [--secs S] [--workers W] [--only NAME] [--out PATH]
                  [--period-us P] [--rounds R] [--driver-thread] [--neighbours N]

  --bg B        background tasks (default 8)
  --unit-us U   µs of CPU work per background unit (default 10)
  --secs S      seconds per variant (default 3; fractions allowed)
  --workers W   worker threads (default: available parallelism)
  --only NAME   run only variants whose name contains NAME (e.g. brigade, tokio, idle;
                several, comma-separated: any of them)
  --out PATH    where to write the SVG chart (default target/brigade-report/mixed_load.svg)
  --period-us P µs between foreground requests (default 1000)
  --rounds R    run the selected variants R times over, interleaved (default 1);
                latencies are pooled, background figures are the median round
  --driver-thread
                brigade with its fallback driver thread (Builder::driver_thread)
  --neighbours N
                crowd the host: N busy threads in processes of their own run beside
                each variant (after its calibration); default 0";

/// The demo's settings.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Background tasks.
    pub background_tasks: usize,
    /// µs of CPU work per background unit.
    pub unit_us: u64,
    /// Run time of each variant.
    pub duration: Duration,
    /// Worker threads.
    pub workers: usize,
    /// Run only variants whose name contains this.
    pub only: Option<String>,
    /// Where the SVG chart goes.
    pub out: PathBuf,
    /// brigade's fallback driver thread on, or off (the default).
    pub driver_thread: bool,
    /// Time between foreground requests.
    pub period: Duration,
    /// How many times the selected variants run, one after the other.
    /// Interleaving rounds, rather than running each variant longer, lets
    /// the background throughput of each round be compared with the same
    /// round's reference, run moments apart on a machine whose speed drifts.
    pub rounds: usize,
    /// Busy neighbour processes crowding the host while each variant runs
    /// (`crate::neighbours`).
    pub neighbours: usize,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            background_tasks: 8,
            unit_us: 10,
            duration: Duration::from_secs(3),
            workers: crate::harness::available_cores(),
            only: None,
            driver_thread: false,
            period: Duration::from_millis(1),
            rounds: 1,
            neighbours: 0,
            out: PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../target/brigade-report/mixed_load.svg"),
        }
    }
}

impl Config {
    /// Parses the flags (without the program name). `Err` holds a message
    /// for the user; `--help` yields `Err(HELP)`.
    pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Config, String> {
        let mut config = Config::default();
        let mut args = args.into_iter();
        while let Some(flag) = args.next() {
            if flag == "--help" || flag == "-h" {
                return Err(HELP.to_owned());
            }
            let mut value = || {
                args.next()
                    .ok_or_else(|| format!("{flag} needs a value\n\n{HELP}"))
            };
            match flag.as_str() {
                "--bg" => config.background_tasks = parse_number(&flag, &value()?)?,
                "--unit-us" => config.unit_us = parse_positive(&flag, &value()?)?,
                "--workers" => config.workers = parse_positive(&flag, &value()?)?,
                "--secs" => {
                    let text = value()?;
                    let secs: f64 = text
                        .parse()
                        .ok()
                        .filter(|secs: &f64| secs.is_finite() && *secs > 0.0)
                        .ok_or_else(|| {
                            format!("--secs must be a positive number of seconds, got {text:?}")
                        })?;
                    config.duration = Duration::from_secs_f64(secs);
                }
                "--only" => config.only = Some(value()?),
                "--out" => config.out = PathBuf::from(value()?),
                "--driver-thread" => config.driver_thread = true,
                "--rounds" => config.rounds = parse_positive(&flag, &value()?)?,
                "--neighbours" => config.neighbours = parse_number(&flag, &value()?)?,
                "--period-us" => {
                    config.period = Duration::from_micros(parse_positive(&flag, &value()?)?)
                }
                _ => return Err(format!("unknown flag {flag:?}\n\n{HELP}")),
            }
        }
        Ok(config)
    }

    /// Whether the variant `name` is selected by `--only`.
    pub fn selects(&self, name: &str) -> bool {
        self.only
            .as_deref()
            .is_none_or(|only| only.split(',').any(|part| name.contains(part)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Config, String> {
        Config::parse(args.iter().map(|arg| arg.to_string()))
    }

    #[test]
    fn defaults_and_every_flag() {
        let defaults = parse(&[]).unwrap();
        assert_eq!((defaults.background_tasks, defaults.unit_us), (8, 10));
        assert_eq!(defaults.duration, Duration::from_secs(3));
        let config = parse(&[
            "--bg",
            "64",
            "--unit-us",
            "100",
            "--secs",
            "0.5",
            "--workers",
            "4",
            "--only",
            "brigade",
            "--out",
            "x.svg",
            "--driver-thread",
            "--period-us",
            "10000",
            "--rounds",
            "3",
            "--neighbours",
            "2",
        ])
        .unwrap();
        assert_eq!(config.background_tasks, 64);
        assert_eq!(config.unit_us, 100);
        assert_eq!(config.duration, Duration::from_millis(500));
        assert_eq!(config.workers, 4);
        assert!(config.selects("brigade/yield_if_busy") && !config.selects("tokio/yield_now"));
        assert_eq!(config.out, PathBuf::from("x.svg"));
        assert!(!defaults.driver_thread && config.driver_thread);
        assert_eq!(defaults.period, Duration::from_millis(1));
        assert_eq!(config.period, Duration::from_millis(10));
        assert_eq!((defaults.rounds, config.rounds), (1, 3));
        assert_eq!((defaults.neighbours, config.neighbours), (0, 2));
    }

    #[test]
    fn bad_input_is_a_clear_error() {
        for (args, needle) in [
            (&["--bg"][..], "--bg needs a value"),
            (&["--bg", "many"][..], "--bg must be a whole number"),
            (&["--workers", "0"][..], "--workers must be at least 1"),
            (&["--secs", "-1"][..], "--secs must be a positive number"),
            (&["--rounds", "0"][..], "--rounds must be at least 1"),
            (&["--frobnicate"][..], "unknown flag"),
        ] {
            let error = parse(args).unwrap_err();
            assert!(error.contains(needle), "{args:?}: {error}");
        }
        assert_eq!(parse(&["--help"]).unwrap_err(), HELP);
    }
}
