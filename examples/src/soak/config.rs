//! Command-line flags of the soak test.

use std::time::Duration;

/// Usage text.
pub const HELP: &str = "\
usage: soak [--minutes M] [--workers W] [--sample-secs S]

  --minutes M      how long to run (default 10; fractions allowed)
  --workers W      worker threads (default 2)
  --sample-secs S  seconds between progress lines (default 10)";

/// The soak's settings.
#[derive(Debug, PartialEq)]
pub struct Config {
    /// How long the load runs.
    pub duration: Duration,
    /// Worker threads of the runtime under test.
    pub workers: usize,
    /// Time between two progress lines.
    pub sample_every: Duration,
}

impl Config {
    /// Parses the flags (without the program name); `Err` holds the message
    /// to print, which is [`HELP`] itself for `--help`.
    pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Config, String> {
        let mut config = Config {
            duration: Duration::from_secs(600),
            workers: 2,
            sample_every: Duration::from_secs(10),
        };
        let mut args = args.into_iter();
        while let Some(flag) = args.next() {
            if flag == "--help" || flag == "-h" {
                return Err(HELP.to_owned());
            }
            let text = match flag.as_str() {
                "--minutes" | "--workers" | "--sample-secs" => args
                    .next()
                    .ok_or_else(|| format!("{flag} needs a value\n\n{HELP}"))?,
                _ => return Err(format!("unknown flag {flag:?}\n\n{HELP}")),
            };
            let seconds = |unit: f64| {
                let value = text.parse::<f64>().ok().filter(|value| *value > 0.0);
                value
                    .and_then(|value| Duration::try_from_secs_f64(value * unit).ok())
                    .ok_or_else(|| format!("{flag} must be a positive number, got {text:?}"))
            };
            match flag.as_str() {
                "--minutes" => config.duration = seconds(60.0)?,
                "--sample-secs" => config.sample_every = seconds(1.0)?,
                _ => match text.parse() {
                    Ok(workers @ 1..) => config.workers = workers,
                    _ => {
                        return Err(format!(
                            "--workers must be a whole number of at least 1, got {text:?}"
                        ));
                    }
                },
            }
        }
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Config, String> {
        Config::parse(args.iter().map(|arg| (*arg).to_owned()))
    }

    #[test]
    fn flags_set_the_config() {
        let config = parse(&["--minutes", "0.5", "--workers", "3", "--sample-secs", "2"]);
        let expected = Config {
            duration: Duration::from_secs(30),
            workers: 3,
            sample_every: Duration::from_secs(2),
        };
        assert_eq!(config, Ok(expected));
    }

    #[test]
    fn bad_flags_are_refused() {
        assert_eq!(parse(&["--help"]), Err(HELP.to_owned()));
        assert!(parse(&["--workers", "0"]).is_err());
        assert!(parse(&["--minutes", "-1"]).is_err());
        assert!(parse(&["--minutes"]).is_err());
        assert!(parse(&["--verbose"]).is_err());
    }
}
