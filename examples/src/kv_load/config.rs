//! Command-line flags of the `kv_load` example.

use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::time::Duration;

use crate::flags::{parse_number, parse_positive, parse_positive_secs, walk_flags};

/// Usage text.
pub const HELP: &str = "\
usage: kv_load [--addr HOST:PORT] [--rate R] [--connections C] [--secs S]
               [--keys N] [--ratio SET:GET] [--value-size B] [--threads T]
               [--drain-secs S] [--http | --http-kv] [--json] [--slow-log FILE [--slow-ms MS]]

An open-loop RESP (or, with --http or --http-kv, HTTP/1.1) load: requests go out at a fixed rate whatever the
server's answers, and each request's latency runs from the time it was due
to be sent (not the time it went out) to its reply.

  --addr HOST:PORT   the server (default 127.0.0.1:6379, kv's default)
  --rate R           requests/s over all connections (default 20000)
  --connections C    connections, each sending R/C requests/s, staggered (default 20)
  --secs S           how long to send (default 5)
  --keys N           keys key:000000000000 .. picked at random (default 1000000,
                     kv's default prefill, so every GET hits)
  --ratio SET:GET    SETs and GETs per cycle on each connection (default 1:1)
  --value-size B     bytes per SET value (default 3, as redis-benchmark)
  --threads T        client threads, the connections split among them (default 1)
  --drain-secs S     after the last send, how long to wait for replies (default 5)
  --http             send HTTP/1.1 `GET /` instead (keep-alive, pipelined while
                     replies lag), e.g. to http_import (--addr 127.0.0.1:8080); a
                     200 is an answer, any other status an error; --keys,
                     --ratio and --value-size do not apply
  --http-kv          send HTTP/1.1 `PUT /kv/KEY` (JSON body {\"value\":\"xx..\"}, --value-size
                     x's) and `GET /kv/KEY` per --ratio instead, keep-alive and pipelined
                     while replies lag, e.g. to axum_service (--addr 127.0.0.1:3000
                     --keys 100000, its default prefill); a 200 is an answer, a 404 to a
                     GET a miss, any other status an error
  --json             print the summary as one JSON object
  --slow-log FILE    write each request slower than --slow-ms (default 0.5) to
                     FILE, one line \"DUE_NS REPLY_NS\" in CLOCK_MONOTONIC
                     nanoseconds, the clock of `perf record -k CLOCK_MONOTONIC`,
                     to line slow requests up with a trace of the server
                     (scripts/tail_episodes.py)";

/// The load's settings.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// The server.
    pub addr: SocketAddr,
    /// Requests per second over all connections.
    pub rate: u64,
    /// Connections to the server.
    pub connections: usize,
    /// How long to send.
    pub duration: Duration,
    /// Keys to pick from: `key:000000000000` ..
    pub keys: u64,
    /// SETs, then GETs, per cycle on each connection.
    pub ratio: (u32, u32),
    /// Bytes per SET value.
    pub value_size: usize,
    /// Client threads.
    pub threads: usize,
    /// How long to wait for the replies after the last send.
    pub drain: Duration,
    /// Send HTTP/1.1 `GET /` instead of RESP commands.
    pub http: bool,
    /// Send HTTP/1.1 `PUT /kv/KEY` and `GET /kv/KEY` instead of RESP
    /// commands (`--http-kv`).
    pub http_kv: bool,
    /// Print the summary as JSON.
    pub json: bool,
    /// Where to write the slow requests (`--slow-log`), if anywhere.
    pub slow_log: Option<PathBuf>,
    /// What counts as slow for `slow_log`.
    pub slow_threshold: Duration,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            addr: SocketAddr::from(([127, 0, 0, 1], 6379)),
            rate: 20_000,
            connections: 20,
            duration: Duration::from_secs(5),
            keys: 1_000_000,
            ratio: (1, 1),
            value_size: 3,
            threads: 1,
            drain: Duration::from_secs(5),
            http: false,
            http_kv: false,
            json: false,
            slow_log: None,
            slow_threshold: Duration::from_micros(500),
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
                "--addr" => config.addr = parse_addr(&value()?)?,
                "--rate" => config.rate = parse_positive(flag, &value()?)?,
                "--connections" => config.connections = parse_positive(flag, &value()?)?,
                "--secs" => config.duration = parse_positive_secs(flag, &value()?)?,
                "--keys" => config.keys = parse_positive(flag, &value()?)?,
                "--ratio" => config.ratio = parse_ratio(&value()?)?,
                "--value-size" => config.value_size = parse_number(flag, &value()?)?,
                "--threads" => config.threads = parse_positive(flag, &value()?)?,
                "--drain-secs" => config.drain = parse_positive_secs(flag, &value()?)?,
                "--http" => config.http = true,
                "--http-kv" => config.http_kv = true,
                "--json" => config.json = true,
                "--slow-log" => config.slow_log = Some(PathBuf::from(value()?)),
                "--slow-ms" => config.slow_threshold = parse_ms(flag, &value()?)?,
                _ => return Ok(false),
            }
            Ok(true)
        })?;
        if config.threads > config.connections {
            return Err(format!(
                "--threads ({}) must be at most --connections ({})",
                config.threads, config.connections
            ));
        }
        if config.http && config.http_kv {
            return Err("--http and --http-kv are two different loads: pick one".to_owned());
        }
        if config.value_size > crate::kv::resp::MAX_BULK {
            return Err(format!(
                "--value-size must be at most {} bytes",
                crate::kv::resp::MAX_BULK
            ));
        }
        Ok(config)
    }

    /// Requests in the whole run: `rate` × `duration`, rounded.
    pub fn planned(&self) -> u64 {
        (self.rate as f64 * self.duration.as_secs_f64()).round() as u64
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

/// A non-negative number of milliseconds.
fn parse_ms(flag: &str, text: &str) -> Result<Duration, String> {
    text.parse()
        .ok()
        .filter(|ms: &f64| *ms >= 0.0)
        .and_then(|ms| Duration::try_from_secs_f64(ms / 1000.0).ok())
        .ok_or_else(|| format!("{flag} must be a number of milliseconds (0 or more), got {text:?}"))
}

/// `--ratio SET:GET`: two whole numbers, not both 0.
fn parse_ratio(text: &str) -> Result<(u32, u32), String> {
    let error = || format!("--ratio must be SET:GET, e.g. 1:1 or 1:9, got {text:?}");
    let (sets, gets) = text.split_once(':').ok_or_else(error)?;
    let ratio = (
        sets.parse().map_err(|_| error())?,
        gets.parse().map_err(|_| error())?,
    );
    if ratio == (0, 0) {
        return Err("--ratio must not be 0:0".to_owned());
    }
    Ok(ratio)
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
        assert_eq!(config, Config::default());
        assert_eq!(config.addr.port(), 6379);
        assert_eq!(config.planned(), 100_000);
    }

    #[test]
    fn every_flag() {
        let config = parse(&[
            "--addr",
            "127.0.0.1:7000",
            "--rate",
            "50000",
            "--connections",
            "8",
            "--secs",
            "1.5",
            "--keys",
            "10",
            "--ratio",
            "1:9",
            "--value-size",
            "0",
            "--threads",
            "2",
            "--drain-secs",
            "0.5",
            "--http",
            "--json",
            "--slow-log",
            "/tmp/slow.txt",
            "--slow-ms",
            "0.25",
        ])
        .unwrap();
        assert_eq!(
            config,
            Config {
                addr: SocketAddr::from(([127, 0, 0, 1], 7000)),
                rate: 50_000,
                connections: 8,
                duration: Duration::from_millis(1500),
                keys: 10,
                ratio: (1, 9),
                value_size: 0,
                threads: 2,
                drain: Duration::from_millis(500),
                http: true,
                http_kv: false,
                json: true,
                slow_log: Some(PathBuf::from("/tmp/slow.txt")),
                slow_threshold: Duration::from_micros(250),
            }
        );
        assert_eq!(config.planned(), 75_000);
        assert_eq!(parse(&["--ratio", "0:1"]).unwrap().ratio, (0, 1));
        assert!(parse(&["--http-kv"]).unwrap().http_kv);
    }

    #[test]
    fn bad_input_is_a_clear_error() {
        for (args, needle) in [
            (&["--rate"][..], "--rate needs a value"),
            (&["--rate", "0"][..], "--rate must be at least 1"),
            (&["--rate", "fast"][..], "--rate must be a whole number"),
            (
                &["--connections", "0"][..],
                "--connections must be at least 1",
            ),
            (&["--secs", "0"][..], "--secs must be a positive number"),
            (&["--secs", "-1"][..], "--secs must be a positive number"),
            (&["--keys", "0"][..], "--keys must be at least 1"),
            (&["--ratio", "1"][..], "--ratio must be SET:GET"),
            (&["--ratio", "a:1"][..], "--ratio must be SET:GET"),
            (&["--ratio", "0:0"][..], "must not be 0:0"),
            (
                &["--slow-ms", "-1"][..],
                "--slow-ms must be a number of milliseconds",
            ),
            (&["--slow-log"][..], "--slow-log needs a value"),
            (
                &["--slow-ms", "1e300"][..],
                "--slow-ms must be a number of milliseconds",
            ),
            (&["--secs", "1e300"][..], "--secs must be a positive number"),
            (&["--secs", "NaN"][..], "--secs must be a positive number"),
            (&["--addr", "nowhere"][..], "--addr must be HOST:PORT"),
            (
                &["--addr", "127.0.0.1:99999"][..],
                "--addr must be HOST:PORT",
            ),
            (&["--value-size", "999999999"][..], "at most"),
            (&["--connections", "2", "--threads", "3"][..], "at most"),
            (&["--frobnicate"][..], "unknown flag"),
            (&["--http", "--http-kv"][..], "pick one"),
        ] {
            let error = parse(args).unwrap_err();
            assert!(error.contains(needle), "{args:?}: {error}");
        }
        assert_eq!(parse(&["--help"]).unwrap_err(), HELP);
    }
}
