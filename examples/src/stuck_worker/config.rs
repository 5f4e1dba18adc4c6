//! Command-line flags of the stuck-worker demo.

use std::time::Duration;

use crate::flags::{parse_positive, parse_positive_secs, walk_flags};

/// Usage text.
pub const HELP: &str = "\
usage: stuck_worker [--workers W] [--rounds R] [--stall-ms S] [--spawn-every-ms P]
                    [--echo-secs E] [--block-ms B] [--block-every-ms N] [--period-us Q]
                    [--threshold-ms T] [--driver-thread] [--quick]

Part 1, spawn latency under a full stall: W tasks each block their worker in
std::thread::sleep(S ms) while a plain thread spawns a task every P ms.
Part 2, echo latency under blocking calls by mistake: a client sends a 1-byte
request every Q µs to an echo server in the runtime, while one task per worker
blocks it for B ms every N ms.

  --workers W        worker threads (default 2)
  --rounds R         run every runtime R times over, the order rotated each
                     round; the tables give the median round (default 3)
  --stall-ms S       length of part 1's stall (default 2500)
  --spawn-every-ms P part 1: ms between spawns (default 2)
  --echo-secs E      part 2: seconds of requests per runtime (default 5;
                     fractions allowed)
  --block-ms B       part 2: length of each blocking call (default 200)
  --block-every-ms N part 2: ms from one blocking call to the next (default
                     1000; more than B)
  --period-us Q      part 2: µs between requests (default 1000)
  --threshold-ms T   the compensating brigade's compensation threshold
                     (Builder::compensation_threshold; default: brigade's
                     default, DEFAULT_COMPENSATION_THRESHOLD)
  --driver-thread    both brigade runtimes with their fallback driver thread
                     (Builder::driver_thread)
  --quick            a smoke run of about a second: S=150, E=0.15, B=30,
                     N=75, R=1 (flags given with it still apply)";

/// The demo's settings.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Worker threads of every runtime.
    pub workers: usize,
    /// How many times every runtime runs each part. Rounds, rather than
    /// one longer run, give a spread to take the median of on a noisy
    /// machine, and rotating the order keeps one runtime from always
    /// running first (on a machine that is just warming up or settling).
    pub rounds: usize,
    /// Part 1: how long every worker is blocked.
    pub stall: Duration,
    /// Part 1: time between two spawns.
    pub spawn_period: Duration,
    /// Part 2: how long the client sends requests, per runtime and round.
    pub echo_duration: Duration,
    /// Part 2: time between two requests.
    pub request_period: Duration,
    /// Part 2: length of each blocking call.
    pub block: Duration,
    /// Part 2: time from the start of one blocking call to the start of
    /// the next.
    pub block_every: Duration,
    /// brigade's fallback driver thread (`Builder::driver_thread`) on, or
    /// off (the default). Either way a stuck runtime notices I/O: without
    /// the thread, the monitor polls the driver itself before it decides
    /// that no work waits.
    pub driver_thread: bool,
    /// The compensating brigade's compensation threshold; `None`: brigade's
    /// default.
    pub threshold: Option<Duration>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            workers: 2,
            rounds: 3,
            stall: Duration::from_millis(2500),
            spawn_period: Duration::from_millis(2),
            echo_duration: Duration::from_secs(5),
            request_period: Duration::from_millis(1),
            block: Duration::from_millis(200),
            block_every: Duration::from_secs(1),
            driver_thread: false,
            threshold: None,
        }
    }
}

impl Config {
    /// The `--quick` settings: every part short, one round. The stall stays
    /// well past the default compensation threshold (5 ms) so that the
    /// compensation still has time to happen.
    pub fn quick() -> Config {
        Config {
            rounds: 1,
            stall: Duration::from_millis(150),
            echo_duration: Duration::from_millis(150),
            block: Duration::from_millis(30),
            block_every: Duration::from_millis(75),
            ..Config::default()
        }
    }

    /// Parses the flags (without the program name). `Err` holds a message
    /// for the user; `--help` yields `Err(HELP)`. `--quick` applies first
    /// wherever it stands, so the other flags refine it.
    pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Config, String> {
        let args: Vec<String> = args.into_iter().collect();
        let mut config = if args.iter().any(|arg| arg == "--quick") {
            Config::quick()
        } else {
            Config::default()
        };
        walk_flags(args, HELP, |flag, value| {
            let millis = |text: String| parse_positive(flag, &text).map(Duration::from_millis);
            match flag {
                "--quick" => {}
                "--driver-thread" => config.driver_thread = true,
                "--threshold-ms" => config.threshold = Some(millis(value()?)?),
                "--workers" => config.workers = parse_positive(flag, &value()?)?,
                "--rounds" => config.rounds = parse_positive(flag, &value()?)?,
                "--stall-ms" => config.stall = millis(value()?)?,
                "--spawn-every-ms" => config.spawn_period = millis(value()?)?,
                "--block-ms" => config.block = millis(value()?)?,
                "--block-every-ms" => config.block_every = millis(value()?)?,
                "--period-us" => {
                    config.request_period = Duration::from_micros(parse_positive(flag, &value()?)?)
                }
                "--echo-secs" => config.echo_duration = parse_positive_secs(flag, &value()?)?,
                _ => return Ok(false),
            }
            Ok(true)
        })?;
        // A blocking call as long as its period would block without end,
        // which is part 1's experiment, not this one's.
        if config.block >= config.block_every {
            return Err(format!(
                "--block-ms ({} ms) must be less than --block-every-ms ({} ms)",
                config.block.as_millis(),
                config.block_every.as_millis()
            ));
        }
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
    fn defaults_and_every_flag() {
        let defaults = parse(&[]).unwrap();
        assert_eq!(defaults, Config::default());
        assert_eq!((defaults.workers, defaults.rounds), (2, 3));
        assert_eq!(defaults.stall, Duration::from_millis(2500));
        assert_eq!(defaults.spawn_period, Duration::from_millis(2));
        assert_eq!(defaults.block, Duration::from_millis(200));
        assert_eq!(defaults.block_every, Duration::from_secs(1));
        let config = parse(&[
            "--workers",
            "1",
            "--rounds",
            "5",
            "--stall-ms",
            "1000",
            "--spawn-every-ms",
            "3",
            "--echo-secs",
            "0.5",
            "--block-ms",
            "50",
            "--block-every-ms",
            "400",
            "--period-us",
            "2000",
            "--driver-thread",
            "--threshold-ms",
            "2",
        ])
        .unwrap();
        assert_eq!(
            config,
            Config {
                workers: 1,
                rounds: 5,
                stall: Duration::from_secs(1),
                spawn_period: Duration::from_millis(3),
                echo_duration: Duration::from_millis(500),
                request_period: Duration::from_millis(2),
                block: Duration::from_millis(50),
                block_every: Duration::from_millis(400),
                driver_thread: true,
                threshold: Some(Duration::from_millis(2)),
            }
        );
    }

    #[test]
    fn quick_applies_first_wherever_it_stands() {
        assert_eq!(parse(&["--quick"]).unwrap(), Config::quick());
        let config = parse(&["--workers", "1", "--quick", "--rounds", "2"]).unwrap();
        assert_eq!((config.workers, config.rounds), (1, 2));
        assert_eq!(config.stall, Config::quick().stall);
        assert!(Config::quick().block < Config::quick().block_every);
    }

    #[test]
    fn bad_input_is_a_clear_error() {
        for (args, needle) in [
            (&["--workers"][..], "--workers needs a value"),
            (&["--workers", "0"][..], "--workers must be at least 1"),
            (
                &["--stall-ms", "soon"][..],
                "--stall-ms must be a whole number",
            ),
            (&["--rounds", "0"][..], "--rounds must be at least 1"),
            (&["--echo-secs", "0"][..], "--echo-secs must be a positive"),
            (
                &["--block-ms", "1000"][..],
                "must be less than --block-every-ms",
            ),
            (&["--frobnicate"][..], "unknown flag"),
        ] {
            let error = parse(args).unwrap_err();
            assert!(error.contains(needle), "{args:?}: {error}");
        }
        assert_eq!(parse(&["--help"]).unwrap_err(), HELP);
    }
}
