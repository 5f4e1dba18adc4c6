//! Command-line flags of the mixed-load demo.

use std::path::PathBuf;

use std::time::Duration;

use super::VARIANTS;
use super::plan::{Case, demo_variants, plan};
use crate::flags::{parse_number, parse_positive, parse_positive_secs, walk_flags};

/// Usage text.
pub const HELP: &str = "\
usage: mixed_load [--all] [--bg B] [--unit-us U] [--secs S] [--workers W] [--neighbours N]
                  [--only NAME] [--out PATH] [--period-us P] [--rounds R] [--driver-thread]
                  [--cpu-limit C] [--pin-apart] [--serve ADDR_FILE --only VARIANT]
                  [--client ADDR]

Foreground request latency while background tasks keep every worker busy, brigade
against tokio. Without flags it runs three cases: the foreground alone (the idle
references), a quiet host and a crowded host, with brigade's yield_if_busy, brigade's
plain yield_now and tokio's yield_now after each background unit, and ends with a
verdict per case.

  --all         every variant (no_yield references, consume_budget, elastic, ...),
                not only the three above
  --bg B        background tasks (default 64)
  --unit-us U   µs of CPU work per background unit (default 100)
  --secs S      seconds per variant (default 4; fractions allowed)
  --workers W   worker threads (default: available parallelism)
  --neighbours N
                busy threads, in processes of their own, beside each variant of the
                crowded-host case (after its calibration); default 1, 0 leaves the
                case out
  --only NAME   run only variants whose name contains NAME, picked from all of them
                (e.g. brigade, tokio, idle, consume_budget; several, comma-separated:
                any of them)
  --out PATH    where to write the latency chart; the trade-off chart goes beside it
                (default: the repository's target/brigade-report/mixed_load.svg,
                whatever the current directory)
  --period-us P µs between foreground requests (default 1000)
  --rounds R    run the selected variants R times over, interleaved (default 1);
                latencies are pooled, background figures are the median round
  --driver-thread
                brigade with its fallback driver thread (Builder::driver_thread)
  --cpu-limit C run each variant's server inside a fresh cgroup with a quota of C
                CPUs, the client outside it (needs root and a cgroup v1 `cpu`
                controller; otherwise it says how to run it under systemd-run or
                docker and exits 1); each runtime sizes its workers as it would in
                such a container unless --workers is given, and each variant also
                reports the periods the kernel throttled and the background's CPUs
  --pin-apart   with --cpu-limit: the server's threads on CPU 0, the client on the
                other CPUs (a limit of at most 1 CPU on a small host, so the client
                does not take turns with the server on one core)
  --serve ADDR_FILE
                no client: start the one variant --only names (exactly) and its
                background, write the server's address to ADDR_FILE, run for
                --secs, then print \"background_cpus X\" (for a client in another
                process, such as scripts/cpu_limit_bench.sh's)
  --client ADDR no server: send the requests to ADDR for --secs, then print
                \"p50_ms X\" and \"p99_ms X\"";

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
    /// Run every variant, not only the demo's ([`DEMO_VARIANTS`](super::DEMO_VARIANTS)).
    pub all: bool,
    /// Run only variants whose name contains this (any of its
    /// comma-separated parts), picked from every variant.
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
    /// Busy neighbour processes crowding the host while each variant of the
    /// crowded-host case runs (`crate::neighbours`); 0 leaves the case out.
    pub neighbours: usize,
    /// Run each server inside a cgroup with this CPU quota (`crate::cgroup`).
    pub cpu_limit: Option<f64>,
    /// Whether `--workers` was given (under a CPU limit each runtime
    /// otherwise sizes itself as in a container).
    pub workers_set: bool,
    /// With a CPU limit: the server on CPU 0, the client on the others.
    pub pin_apart: bool,
    /// Serve one variant for a client in another process, writing the
    /// address here.
    pub serve: Option<PathBuf>,
    /// Be the client of a server in another process, at this address.
    pub client: Option<std::net::SocketAddr>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            background_tasks: 64,
            unit_us: 100,
            duration: Duration::from_secs(4),
            workers: crate::harness::available_cores(),
            all: false,
            only: None,
            driver_thread: false,
            period: Duration::from_millis(1),
            rounds: 1,
            neighbours: 1,
            cpu_limit: None,
            workers_set: false,
            pin_apart: false,
            serve: None,
            client: None,
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
        walk_flags(args, HELP, |flag, value| {
            match flag {
                "--bg" => config.background_tasks = parse_number(flag, &value()?)?,
                "--unit-us" => config.unit_us = parse_positive(flag, &value()?)?,
                "--workers" => {
                    config.workers = parse_positive(flag, &value()?)?;
                    config.workers_set = true;
                }
                "--cpu-limit" => config.cpu_limit = Some(parse_cpus(flag, &value()?)?),
                "--pin-apart" => config.pin_apart = true,
                "--serve" => config.serve = Some(PathBuf::from(value()?)),
                "--client" => {
                    let addr = value()?;
                    config.client = Some(
                        addr.parse()
                            .map_err(|_| format!("--client takes an address, got {addr:?}"))?,
                    );
                }
                "--secs" => config.duration = parse_positive_secs(flag, &value()?)?,
                "--all" => config.all = true,
                "--only" => config.only = Some(value()?),
                "--out" => config.out = PathBuf::from(value()?),
                "--driver-thread" => config.driver_thread = true,
                "--rounds" => config.rounds = parse_positive(flag, &value()?)?,
                "--neighbours" => config.neighbours = parse_number(flag, &value()?)?,
                "--period-us" => {
                    config.period = Duration::from_micros(parse_positive(flag, &value()?)?)
                }
                _ => return Ok(false),
            }
            Ok(true)
        })?;
        Ok(config)
    }

    /// Whether the variant `name` is selected by `--only`.
    pub fn selects(&self, name: &str) -> bool {
        self.only
            .as_deref()
            .is_none_or(|only| only.split(',').any(|part| name.contains(part)))
    }

    /// The cases to run ([`plan`]): the demo's variants, or with `--all` or
    /// `--only` every variant, as `--only` selects them.
    pub fn plan(&self) -> Vec<Case> {
        let pool = if self.all || self.only.is_some() {
            VARIANTS.to_vec()
        } else {
            demo_variants()
        };
        plan(&pool, self.neighbours, |name| self.selects(name))
    }
}

/// A CPU count: finite and positive.
fn parse_cpus(flag: &str, value: &str) -> Result<f64, String> {
    match value.parse::<f64>() {
        Ok(cpus) if cpus.is_finite() && cpus > 0.0 => Ok(cpus),
        _ => Err(format!(
            "{flag} takes a number of CPUs above 0, got {value:?}"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mixed_load::{CaseKind, DEMO_VARIANTS};

    #[test]
    fn a_cpu_limit_is_a_positive_number() {
        assert_eq!(parse(&["--cpu-limit", "0.5"]).unwrap().cpu_limit, Some(0.5));
        for bad in ["0", "-1", "lots", "inf"] {
            let error = parse(&["--cpu-limit", bad]).unwrap_err();
            assert!(error.contains("--cpu-limit"), "{error}");
        }
        assert!(!parse(&[]).unwrap().workers_set);
        assert!(parse(&["--workers", "1"]).unwrap().workers_set);
    }

    fn parse(args: &[&str]) -> Result<Config, String> {
        Config::parse(args.iter().map(|arg| arg.to_string()))
    }

    #[test]
    fn defaults_and_every_flag() {
        let defaults = parse(&[]).unwrap();
        assert_eq!((defaults.background_tasks, defaults.unit_us), (64, 100));
        assert_eq!(defaults.duration, Duration::from_secs(4));
        let config = parse(&[
            "--all",
            "--bg",
            "8",
            "--unit-us",
            "10",
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
        assert!(!defaults.all && config.all);
        assert_eq!(config.background_tasks, 8);
        assert_eq!(config.unit_us, 10);
        assert_eq!(config.duration, Duration::from_millis(500));
        assert_eq!(config.workers, 4);
        assert!(config.selects("brigade/yield_if_busy") && !config.selects("tokio/yield_now"));
        assert_eq!(config.out, PathBuf::from("x.svg"));
        assert!(!defaults.driver_thread && config.driver_thread);
        assert_eq!(defaults.period, Duration::from_millis(1));
        assert_eq!(config.period, Duration::from_millis(10));
        assert_eq!((defaults.rounds, config.rounds), (1, 3));
        assert_eq!((defaults.neighbours, config.neighbours), (1, 2));
    }

    fn planned(args: &[&str]) -> Vec<(CaseKind, Vec<&'static str>)> {
        let cases = parse(args).unwrap().plan();
        cases
            .into_iter()
            .map(|case| {
                let names = case.variants.iter().map(|variant| variant.name).collect();
                (case.kind, names)
            })
            .collect()
    }

    #[test]
    fn the_default_runs_three_cases_of_the_demo_variants() {
        let cases = planned(&[]);
        let kinds: Vec<CaseKind> = cases.iter().map(|(kind, _)| *kind).collect();
        assert_eq!(kinds, [CaseKind::Idle, CaseKind::Quiet, CaseKind::Crowded]);
        let every: usize = cases.iter().map(|(_, names)| names.len()).sum();
        assert_eq!(every, 2 + 3 + 3);
        for (_, names) in &cases {
            assert!(names.iter().all(|name| DEMO_VARIANTS.contains(name)));
        }
    }

    #[test]
    fn all_and_only_pick_from_every_variant() {
        let all = planned(&["--all", "--neighbours", "0"]);
        assert_eq!(all.len(), 2, "no crowded case without neighbours");
        assert_eq!(all[0].1.len() + all[1].1.len(), VARIANTS.len());
        // `--only` reaches variants outside the demo's without `--all`.
        let only = planned(&["--only", "consume_budget,idle/tokio"]);
        assert_eq!(
            only,
            [
                (CaseKind::Idle, vec!["idle/tokio"]),
                (CaseKind::Quiet, vec!["tokio/consume_budget"]),
                (CaseKind::Crowded, vec!["tokio/consume_budget"]),
            ]
        );
    }

    #[test]
    fn bad_input_is_a_clear_error() {
        for (args, needle) in [
            (&["--bg"][..], "--bg needs a value"),
            (&["--bg", "many"][..], "--bg must be a whole number"),
            (&["--workers", "0"][..], "--workers must be at least 1"),
            (&["--secs", "-1"][..], "--secs must be a positive number"),
            (&["--rounds", "0"][..], "--rounds must be at least 1"),
            (
                &["--neighbours", "-1"][..],
                "--neighbours must be a whole number",
            ),
            (&["--frobnicate"][..], "unknown flag"),
        ] {
            let error = parse(args).unwrap_err();
            assert!(error.contains(needle), "{args:?}: {error}");
        }
        assert_eq!(parse(&["--help"]).unwrap_err(), HELP);
    }
}
