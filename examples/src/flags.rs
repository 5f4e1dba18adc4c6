//! Parsing of the examples' numeric flags, with messages that name the flag.

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
