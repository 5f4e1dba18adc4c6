//! Command-line flags of the `http_import` example.

use std::time::Duration;

use crate::flags::{parse_fraction, parse_port, parse_positive, parse_positive_secs, walk_flags};
use crate::harness::{RuntimeKind, available_cores};

/// Usage text.
pub const HELP: &str = "\
usage: http_import [--port P] [--workers W] [--import] [--no-yield] [--tasks N]
                   [--no-elastic] [--background-floor F] [--runtime brigade|tokio]
                   [--no-crowded-handoff] [--no-spread] [--http2] [--secs S]

  --port P      port to listen on at 127.0.0.1 (default 8080; 0 picks a free one)
  --workers W   worker threads (default: available parallelism)
  --import      run the CPU-bound import next to the server: --tasks tasks hashing
                batches of rows, with a yield point after each batch
                (brigade: spawn_elastic + yield_if_busy; tokio: spawn + yield_now)
  --no-yield    run the import without yield points (implies --import)
  --tasks N     import tasks (default: workers × 2)
  --no-elastic  brigade: spawn the import with spawn instead of spawn_elastic
  --background-floor F  brigade: the smallest share of each worker (0 to 1) the
                import keeps under any load (Builder::background_floor; default 0)
  --no-crowded-handoff  brigade: busy workers leave I/O to the idle worker woken
                for it, even when the kernel does not run it
                (Builder::crowded_host_handoff)
  --no-spread   brigade: leave two busy workers that the kernel put on one CPU
                where they are (Builder::spread_workers)
  --runtime R   brigade (default) or tokio: the same server and import on tokio
  --http2       serve HTTP/2 (prior knowledge, as `h2load` speaks it) instead of HTTP/1.1
  --secs S      stop after S seconds and print totals (default: run until Ctrl-C)";

/// Whether the import runs, and how it gives way to requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImportMode {
    /// No import: the server alone.
    Off,
    /// A yield point after each batch: `brigade::yield_if_busy()` in
    /// `spawn_elastic` tasks on brigade, `tokio::task::yield_now()` on tokio.
    Yielding,
    /// No yield points: each task loops until stopped.
    NoYield,
}

impl ImportMode {
    /// The yield point, for the start-up line.
    pub fn describe(self, runtime: RuntimeKind) -> &'static str {
        match (self, runtime) {
            (ImportMode::Off, _) => "off",
            (ImportMode::Yielding, RuntimeKind::Brigade) => "yield_if_busy after each batch",
            (ImportMode::Yielding, RuntimeKind::Tokio) => "yield_now after each batch",
            (ImportMode::NoYield, _) => "no yield points",
        }
    }
}

/// The example's settings.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Port at 127.0.0.1; 0 picks a free one.
    pub port: u16,
    /// Worker threads.
    pub workers: usize,
    /// The import's mode.
    pub import: ImportMode,
    /// Import tasks (`workers × 2` unless `--tasks` says otherwise).
    pub tasks: usize,
    /// brigade: spawn the import with `spawn_elastic` (the default) or
    /// with `spawn`.
    pub elastic: bool,
    /// brigade: the background floor (`Builder::background_floor`), the
    /// smallest share of each worker that the background keeps while it
    /// waits; 0 (the default): none. No effect on tokio.
    pub background_floor: f64,
    /// brigade: `Builder::crowded_host_handoff`. No effect on tokio.
    pub crowded_host_handoff: bool,
    /// brigade: `Builder::spread_workers`. No effect on tokio.
    pub spread_workers: bool,
    /// The runtime under test.
    pub runtime: RuntimeKind,
    /// Serve HTTP/2 (prior knowledge) instead of HTTP/1.1.
    pub http2: bool,
    /// How long to run; `None` runs until the process is stopped.
    pub duration: Option<Duration>,
}

impl Default for Config {
    fn default() -> Self {
        let workers = available_cores();
        Config {
            port: 8080,
            workers,
            import: ImportMode::Off,
            tasks: workers * 2,
            elastic: true,
            background_floor: 0.0,
            crowded_host_handoff: true,
            spread_workers: true,
            runtime: RuntimeKind::Brigade,
            http2: false,
            duration: None,
        }
    }
}

impl Config {
    /// Parses the flags (without the program name). `Err` holds a message
    /// for the user; `--help` yields `Err(HELP)`.
    pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Config, String> {
        let mut config = Config::default();
        let mut tasks = None;
        walk_flags(args, HELP, |flag, value| {
            match flag {
                "--port" => config.port = parse_port(flag, &value()?)?,
                "--workers" => config.workers = parse_positive(flag, &value()?)?,
                "--tasks" => tasks = Some(parse_positive(flag, &value()?)?),
                "--import" => {
                    if config.import == ImportMode::Off {
                        config.import = ImportMode::Yielding;
                    }
                }
                "--no-yield" => config.import = ImportMode::NoYield,
                "--no-elastic" => config.elastic = false,
                "--background-floor" => config.background_floor = parse_fraction(flag, &value()?)?,
                "--no-crowded-handoff" => config.crowded_host_handoff = false,
                "--no-spread" => config.spread_workers = false,
                "--http2" => config.http2 = true,
                "--runtime" => config.runtime = RuntimeKind::parse(flag, &value()?)?,
                "--secs" => config.duration = Some(parse_positive_secs(flag, &value()?)?),
                _ => return Ok(false),
            }
            Ok(true)
        })?;
        config.tasks = tasks.unwrap_or(config.workers * 2);
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Config, String> {
        Config::parse(args.iter().map(|arg| arg.to_string()))
    }

    #[test]
    fn defaults() {
        let config = parse(&[]).unwrap();
        assert_eq!(config.port, 8080);
        assert_eq!(config.import, ImportMode::Off);
        assert_eq!(config.runtime, RuntimeKind::Brigade);
        assert_eq!(config.tasks, config.workers * 2);
        assert!(config.elastic);
        assert_eq!(config.duration, None);
    }

    #[test]
    fn every_flag() {
        let config = parse(&[
            "--port",
            "0",
            "--workers",
            "3",
            "--import",
            "--runtime",
            "tokio",
            "--http2",
            "--secs",
            "1.5",
            "--background-floor",
            "0.5",
            "--no-crowded-handoff",
            "--no-spread",
        ])
        .unwrap();
        assert_eq!(
            config,
            Config {
                port: 0,
                workers: 3,
                import: ImportMode::Yielding,
                tasks: 6,
                elastic: true,
                background_floor: 0.5,
                crowded_host_handoff: false,
                spread_workers: false,
                runtime: RuntimeKind::Tokio,
                http2: true,
                duration: Some(Duration::from_millis(1500)),
            }
        );
        let config = parse(&["--tasks", "5", "--workers", "2", "--no-elastic"]).unwrap();
        assert_eq!(
            (config.workers, config.tasks, config.elastic),
            (2, 5, false)
        );
    }

    #[test]
    fn no_yield_implies_import_in_any_order() {
        for args in [
            &["--no-yield"][..],
            &["--import", "--no-yield"],
            &["--no-yield", "--import"],
        ] {
            assert_eq!(parse(args).unwrap().import, ImportMode::NoYield, "{args:?}");
        }
    }

    #[test]
    fn bad_input_is_a_clear_error() {
        for (args, needle) in [
            (&["--port"][..], "--port needs a value"),
            (&["--port", "65536"][..], "--port must be a port number"),
            (&["--workers", "0"][..], "--workers must be at least 1"),
            (&["--tasks", "x"][..], "--tasks must be a whole number"),
            (
                &["--runtime", "async-std"][..],
                "--runtime must be brigade or tokio",
            ),
            (&["--secs", "0"][..], "--secs must be a positive number"),
            (
                &["--background-floor", "1.5"][..],
                "--background-floor must be a fraction from 0 to 1",
            ),
            (&["--frobnicate"][..], "unknown flag"),
        ] {
            let error = parse(args).unwrap_err();
            assert!(error.contains(needle), "{args:?}: {error}");
        }
        assert_eq!(parse(&["--help"]).unwrap_err(), HELP);
    }

    #[test]
    fn descriptions_name_the_yield_point() {
        assert_eq!(
            ImportMode::Yielding.describe(RuntimeKind::Brigade),
            "yield_if_busy after each batch"
        );
        assert_eq!(
            ImportMode::Yielding.describe(RuntimeKind::Tokio),
            "yield_now after each batch"
        );
        assert_eq!(
            ImportMode::NoYield.describe(RuntimeKind::Tokio),
            "no yield points"
        );
        assert_eq!(RuntimeKind::Tokio.name(), "tokio");
    }
}
