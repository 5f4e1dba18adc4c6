//! Command-line flags shared by `axum_service` and `grpc_service`.

use std::net::{SocketAddr, ToSocketAddrs};
use std::time::Duration;

use crate::flags::{parse_fraction, parse_number, parse_positive, walk_flags};
use crate::harness::RuntimeKind;

/// The flags' usage text, after the program's own first line.
pub const FLAGS: &str = "\
flags:
  --runtime R             brigade or tokio (default brigade)
  --addr A                where to listen (default 127.0.0.1:PORT above; port 0 picks a
                          free one)
  --workers N             worker threads (default 2)
  --bulk N                bulk re-index tasks beside the service (default 2 × workers;
                          0 = none)
  --no-elastic            brigade: spawn the bulk tasks with spawn; the default is
                          spawn_elastic, whose CPU share shrinks while requests wait
  --background-floor F    brigade: the smallest share of each worker (0 to 1) the bulk
                          tasks keep under any load (Builder::background_floor; default 0)
  --keys N                keys key:000000000000 .. prefilled (default 100000)
  --secs S                stop after S seconds and print a summary (default 0 = run
                          until killed)

Each second it prints requests/s and bulk units/s; the summary adds
off_worker, the requests whose handler ran on a thread other than the
runtime's workers (0 when every handler runs on brigade's workers)";

/// A service example's settings.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Which runtime serves.
    pub runtime: RuntimeKind,
    /// Where to listen.
    pub addr: SocketAddr,
    /// Worker threads.
    pub workers: usize,
    /// Bulk re-index tasks (0: no bulk job).
    pub bulk: usize,
    /// brigade: spawn the bulk tasks with `spawn_elastic` (the default),
    /// whose CPU the runtime's controller bounds by the scheduling latency,
    /// or with `spawn` (`--no-elastic`). No effect on tokio.
    pub elastic: bool,
    /// brigade: the background floor (`Builder::background_floor`), the
    /// smallest share of each worker that the background keeps while it
    /// waits; 0 (the default): none. No effect on tokio.
    pub background_floor: f64,
    /// Keys prefilled.
    pub keys: u64,
    /// How long to run; `None`: until killed.
    pub duration: Option<Duration>,
}

impl Config {
    /// The defaults, listening on 127.0.0.1:`port`.
    pub fn with_port(port: u16) -> Config {
        Config {
            runtime: RuntimeKind::Brigade,
            addr: SocketAddr::from(([127, 0, 0, 1], port)),
            workers: 2,
            bulk: 4,
            elastic: true,
            background_floor: 0.0,
            keys: 100_000,
            duration: None,
        }
    }

    /// Parses the flags (without the program name) over the defaults of
    /// [`Config::with_port`]`(port)`. `Err` holds a message for the user;
    /// `--help` yields `Err(help)`.
    pub fn parse(
        args: impl IntoIterator<Item = String>,
        port: u16,
        help: &str,
    ) -> Result<Config, String> {
        let mut config = Config::with_port(port);
        let mut bulk = None;
        walk_flags(args, help, |flag, value| {
            match flag {
                "--runtime" => config.runtime = RuntimeKind::parse(flag, &value()?)?,
                "--addr" => config.addr = parse_addr(&value()?)?,
                "--workers" => config.workers = parse_positive(flag, &value()?)?,
                "--bulk" => bulk = Some(parse_number(flag, &value()?)?),
                "--no-elastic" => config.elastic = false,
                "--background-floor" => config.background_floor = parse_fraction(flag, &value()?)?,
                "--keys" => config.keys = parse_positive(flag, &value()?)?,
                "--secs" => config.duration = parse_secs(flag, &value()?)?,
                _ => return Ok(false),
            }
            Ok(true)
        })?;
        config.bulk = bulk.unwrap_or(2 * config.workers);
        Ok(config)
    }
}

/// `--addr`: `HOST:PORT`, resolved now so that a typo is reported at once.
fn parse_addr(text: &str) -> Result<SocketAddr, String> {
    let error = |why: String| format!("--addr must be HOST:PORT, got {text:?}: {why}");
    text.to_socket_addrs()
        .map_err(|e| error(e.to_string()))?
        .next()
        .ok_or_else(|| error("it resolves to no address".to_owned()))
}

/// `--secs`: 0 for no end, else a positive number of seconds.
fn parse_secs(flag: &str, text: &str) -> Result<Option<Duration>, String> {
    let secs: f64 = text
        .parse()
        .ok()
        .filter(|secs: &f64| *secs >= 0.0)
        .ok_or_else(|| format!("{flag} must be a number of seconds (0 = no end), got {text:?}"))?;
    if secs == 0.0 {
        return Ok(None);
    }
    Duration::try_from_secs_f64(secs)
        .map(Some)
        .map_err(|_| format!("{flag} is too large: {text:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Config, String> {
        Config::parse(args.iter().map(|arg| arg.to_string()), 3000, "HELP")
    }

    #[test]
    fn defaults_and_every_flag() {
        assert_eq!(parse(&[]).unwrap(), Config::with_port(3000));
        let config = parse(&[
            "--runtime",
            "tokio",
            "--addr",
            "127.0.0.1:0",
            "--workers",
            "3",
            "--keys",
            "10",
            "--secs",
            "2.5",
            "--no-elastic",
            "--background-floor",
            "0.5",
        ])
        .unwrap();
        assert_eq!(
            config,
            Config {
                runtime: RuntimeKind::Tokio,
                addr: SocketAddr::from(([127, 0, 0, 1], 0)),
                workers: 3,
                bulk: 6,
                elastic: false,
                background_floor: 0.5,
                keys: 10,
                duration: Some(Duration::from_millis(2500)),
            }
        );
        assert_eq!(parse(&["--bulk", "0"]).unwrap().bulk, 0);
        assert_eq!(parse(&["--secs", "0"]).unwrap().duration, None);
    }

    #[test]
    fn bad_input_is_a_clear_error() {
        for (args, needle) in [
            (
                &["--runtime", "async-std"][..],
                "--runtime must be brigade or tokio",
            ),
            (&["--workers", "0"][..], "--workers must be at least 1"),
            (&["--bulk", "-1"][..], "--bulk must be a whole number"),
            (&["--keys", "0"][..], "--keys must be at least 1"),
            (&["--secs", "-1"][..], "--secs must be a number of seconds"),
            (&["--secs", "1e300"][..], "--secs is too large"),
            (&["--background-floor", "2"][..], "must be a fraction"),
            (&["--addr", "nowhere"][..], "--addr must be HOST:PORT"),
            (&["--secs"][..], "--secs needs a value"),
            (&["--frobnicate"][..], "unknown flag"),
        ] {
            let error = parse(args).unwrap_err();
            assert!(error.contains(needle), "{args:?}: {error}");
        }
        assert_eq!(parse(&["--help"]).unwrap_err(), "HELP");
    }
}
