//! Command-line flags of the `kv` example.

use std::path::PathBuf;
use std::time::Duration;

use super::snapshot::SnapshotSettings;
use crate::flags::{parse_fraction, parse_number, parse_port, parse_positive, walk_flags};
pub use crate::harness::RuntimeKind;

/// Usage text.
pub const HELP: &str = "\
usage: kv [--port P] [--workers W] [--runtime brigade|tokio] [--prefill N]
          [--value-size B] [--snapshot-every-ms MS] [--no-snapshot]
          [--snapshot-path FILE] [--elastic] [--background-floor F]
          [--no-crowded-handoff] [--no-spread] [--secs S] [--cpu-limit C]

  --port P              port to listen on at 127.0.0.1 (default 6379; 0 picks a free one)
  --workers W           worker threads (default: available parallelism)
  --cpu-limit C         run the server wholly inside a fresh cgroup with a quota of C
                        CPUs, its clients outside (root and a cgroup v1 `cpu` controller;
                        otherwise it says how to run under systemd-run or docker)
  --runtime R           brigade (default) or tokio: the same server and snapshot on tokio
  --prefill N           keys key:000000000000 .. to fill the map with (default 1000000)
  --value-size B        bytes per prefilled value (default 100)
  --snapshot-every-ms MS  pause between snapshots of the whole map (default 2000;
                        0 runs them back to back)
  --no-snapshot         no snapshot task
  --snapshot-path FILE  also write each snapshot to FILE
  --elastic             brigade: spawn the snapshot with spawn_elastic instead of spawn
  --background-floor F  brigade: the smallest share of each worker (0 to 1) the snapshot
                        keeps under any load (Builder::background_floor; default 0)
  --no-crowded-handoff  brigade: busy workers leave I/O to the idle worker woken for it,
                        even when the kernel does not run it (Builder::crowded_host_handoff)
  --no-spread           brigade: leave two busy workers that the kernel put on one CPU
                        where they are (Builder::spread_workers)
  --secs S              stop after S seconds and print totals (default or 0: run until killed)";

/// The example's settings.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Port at 127.0.0.1; 0 picks a free one.
    pub port: u16,
    /// Worker threads.
    pub workers: usize,
    /// The runtime under test.
    pub runtime: RuntimeKind,
    /// Keys to prefill.
    pub prefill: u64,
    /// Bytes per prefilled value.
    pub value_size: usize,
    /// The snapshot task's settings; `None` runs without one.
    pub snapshot: Option<SnapshotSettings>,
    /// brigade: spawn the snapshot with `spawn_elastic` rather than `spawn`.
    pub elastic: bool,
    /// brigade: the background floor (`Builder::background_floor`), the
    /// smallest share of each worker that the background keeps while it
    /// waits; 0 (the default): none. No effect on tokio.
    pub background_floor: f64,
    /// brigade: `Builder::crowded_host_handoff`. No effect on tokio.
    pub crowded_host_handoff: bool,
    /// brigade: `Builder::spread_workers`. No effect on tokio.
    pub spread_workers: bool,
    /// How long to run; `None` runs until the process is stopped.
    pub duration: Option<Duration>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            port: 6379,
            workers: std::thread::available_parallelism().map_or(1, |n| n.get()),
            runtime: RuntimeKind::Brigade,
            prefill: 1_000_000,
            value_size: 100,
            snapshot: Some(SnapshotSettings {
                every: Duration::from_millis(2000),
                path: None,
            }),
            elastic: false,
            background_floor: 0.0,
            crowded_host_handoff: true,
            spread_workers: true,
            duration: None,
        }
    }
}

impl Config {
    /// Parses the flags (without the program name). `Err` holds a message
    /// for the user; `--help` yields `Err(HELP)`.
    pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Config, String> {
        let mut config = Config::default();
        let mut every = Duration::from_millis(2000);
        let (mut snapshot_on, mut path) = (true, None);
        walk_flags(args, HELP, |flag, value| {
            match flag {
                "--port" => config.port = parse_port(flag, &value()?)?,
                "--workers" => config.workers = parse_positive(flag, &value()?)?,
                "--runtime" => config.runtime = RuntimeKind::parse("--runtime", &value()?)?,
                "--prefill" => config.prefill = parse_number(flag, &value()?)?,
                "--value-size" => config.value_size = parse_number(flag, &value()?)?,
                "--snapshot-every-ms" => {
                    every = Duration::from_millis(parse_number(flag, &value()?)?)
                }
                "--no-snapshot" => snapshot_on = false,
                "--snapshot-path" => path = Some(PathBuf::from(value()?)),
                "--elastic" => config.elastic = true,
                "--background-floor" => config.background_floor = parse_fraction(flag, &value()?)?,
                "--no-crowded-handoff" => config.crowded_host_handoff = false,
                "--no-spread" => config.spread_workers = false,
                "--secs" => config.duration = parse_secs(&value()?)?,
                _ => return Ok(false),
            }
            Ok(true)
        })?;
        if !snapshot_on && path.is_some() {
            return Err("--snapshot-path and --no-snapshot contradict each other".to_owned());
        }
        if config.value_size > super::resp::MAX_BULK {
            return Err(format!(
                "--value-size must be at most {} bytes",
                super::resp::MAX_BULK
            ));
        }
        config.snapshot = snapshot_on.then_some(SnapshotSettings { every, path });
        Ok(config)
    }
}

/// `--secs`: a number of seconds; 0 means no limit (`None`).
fn parse_secs(text: &str) -> Result<Option<Duration>, String> {
    let secs: f64 = text
        .parse()
        .ok()
        .filter(|secs: &f64| *secs >= 0.0 && Duration::try_from_secs_f64(*secs).is_ok())
        .ok_or_else(|| format!("--secs must be a number of seconds, got {text:?}"))?;
    Ok((secs > 0.0).then(|| Duration::from_secs_f64(secs)))
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
        assert_eq!(config.port, 6379);
        assert_eq!(config.runtime, RuntimeKind::Brigade);
        assert_eq!((config.prefill, config.value_size), (1_000_000, 100));
        let snapshot = config.snapshot.unwrap();
        assert_eq!(snapshot.every, Duration::from_secs(2));
        assert_eq!(snapshot.path, None);
        assert!(!config.elastic);
        assert!(config.crowded_host_handoff);
        assert!(config.spread_workers);
        assert_eq!(config.duration, None);
    }

    #[test]
    fn every_flag() {
        let config = parse(&[
            "--port",
            "0",
            "--workers",
            "3",
            "--runtime",
            "tokio",
            "--prefill",
            "10",
            "--value-size",
            "7",
            "--snapshot-every-ms",
            "0",
            "--snapshot-path",
            "/tmp/kv.snap",
            "--elastic",
            "--secs",
            "1.5",
            "--background-floor",
            "0.25",
            "--no-crowded-handoff",
            "--no-spread",
        ])
        .unwrap();
        assert_eq!(
            config,
            Config {
                port: 0,
                workers: 3,
                runtime: RuntimeKind::Tokio,
                prefill: 10,
                value_size: 7,
                snapshot: Some(SnapshotSettings {
                    every: Duration::ZERO,
                    path: Some(PathBuf::from("/tmp/kv.snap")),
                }),
                elastic: true,
                background_floor: 0.25,
                crowded_host_handoff: false,
                spread_workers: false,
                duration: Some(Duration::from_millis(1500)),
            }
        );
        assert_eq!(parse(&["--no-snapshot"]).unwrap().snapshot, None);
        assert_eq!(parse(&["--prefill", "0"]).unwrap().prefill, 0);
        assert_eq!(parse(&["--secs", "0"]).unwrap().duration, None);
    }

    #[test]
    fn bad_input_is_a_clear_error() {
        for (args, needle) in [
            (&["--port"][..], "--port needs a value"),
            (&["--port", "65536"][..], "--port must be a port number"),
            (&["--workers", "0"][..], "--workers must be at least 1"),
            (&["--prefill", "-1"][..], "--prefill must be a whole number"),
            (&["--snapshot-every-ms", "x"][..], "must be a whole number"),
            (
                &["--runtime", "glommio"][..],
                "--runtime must be brigade or tokio",
            ),
            (&["--secs", "-1"][..], "--secs must be a number"),
            (
                &["--value-size", "999999999"][..],
                "--value-size must be at most",
            ),
            (&["--no-snapshot", "--snapshot-path", "x"][..], "contradict"),
            (&["--background-floor", "-0.5"][..], "must be a fraction"),
            (&["--frobnicate"][..], "unknown flag"),
        ] {
            let error = parse(args).unwrap_err();
            assert!(error.contains(needle), "{args:?}: {error}");
        }
        assert_eq!(parse(&["--help"]).unwrap_err(), HELP);
    }
}
