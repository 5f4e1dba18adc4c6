//! Parsing of the examples' flags, with messages that name the flag.

use std::time::Duration;

/// Walks the flags (without the program name) for a `Config::parse`:
/// `--help` or `-h` ends the walk with `Err(help)`; every other flag goes
/// to `on_flag` with a way to take its value (which fails with a message
/// naming the flag when none follows). `on_flag` returns `Ok(false)` for a
/// flag it does not know, which ends the walk with an error naming it.
pub(crate) fn walk_flags(
    args: impl IntoIterator<Item = String>,
    help: &str,
    mut on_flag: impl FnMut(&str, &mut dyn FnMut() -> Result<String, String>) -> Result<bool, String>,
) -> Result<(), String> {
    let mut args = args.into_iter();
    while let Some(flag) = args.next() {
        if flag == "--help" || flag == "-h" {
            return Err(help.to_owned());
        }
        let mut value = || {
            args.next()
                .ok_or_else(|| format!("{flag} needs a value\n\n{help}"))
        };
        if !on_flag(&flag, &mut value)? {
            return Err(format!("unknown flag {flag:?}\n\n{help}"));
        }
    }
    Ok(())
}

/// Parses `text`, the value of `flag`, as a whole number.
pub(crate) fn parse_number<T: std::str::FromStr>(flag: &str, text: &str) -> Result<T, String> {
    text.parse()
        .map_err(|_| format!("{flag} must be a whole number, got {text:?}"))
}

/// Parses `text`, the value of `flag`, as a TCP port (0 picks a free one).
pub(crate) fn parse_port(flag: &str, text: &str) -> Result<u16, String> {
    text.parse()
        .map_err(|_| format!("{flag} must be a port number, got {text:?}"))
}

/// Parses `text`, the value of `flag`, as a whole number of at least 1.
pub(crate) fn parse_positive<T: std::str::FromStr + PartialOrd + Default>(
    flag: &str,
    text: &str,
) -> Result<T, String> {
    let value: T = parse_number(flag, text)?;
    if value <= T::default() {
        return Err(format!("{flag} must be at least 1, got {text:?}"));
    }
    Ok(value)
}

/// Parses `text`, the value of `flag`, as a fraction in `[0, 1]` (a
/// share of the CPU).
pub(crate) fn parse_fraction(flag: &str, text: &str) -> Result<f64, String> {
    text.parse()
        .ok()
        .filter(|share: &f64| (0.0..=1.0).contains(share))
        .ok_or_else(|| format!("{flag} must be a fraction from 0 to 1, got {text:?}"))
}

/// Parses `text`, the value of `flag`, as a number of seconds above 0 that
/// a `Duration` can hold (`1e300` is an error, not a panic).
pub(crate) fn parse_positive_secs(flag: &str, text: &str) -> Result<Duration, String> {
    text.parse()
        .ok()
        .filter(|secs: &f64| *secs > 0.0)
        .and_then(|secs| Duration::try_from_secs_f64(secs).ok())
        .ok_or_else(|| format!("{flag} must be a positive number of seconds, got {text:?}"))
}
