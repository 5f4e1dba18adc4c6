//! The Redis protocol (RESP 2) as far as `kv` needs it: parsing requests
//! (arrays of bulk strings, as redis-cli and redis-benchmark send them, and
//! inline commands, a space-separated line as typed into `telnet`) and
//! encoding replies.
//!
//! [`parse`] looks at the bytes a connection has buffered and returns the
//! first complete command, or `None` when more bytes are needed, so
//! pipelined commands (several in one read) and commands split across reads
//! both work: the caller parses until `None`, then reads again.

/// The longest inline command (a line without `*`) accepted.
pub const MAX_INLINE: usize = 64 * 1024;

/// The most arguments a request may declare.
pub const MAX_ARGS: usize = 1024 * 1024;

/// The longest bulk string a request may declare.
pub const MAX_BULK: usize = 64 * 1024 * 1024;

/// The longest `*<count>` or `$<length>` header line.
const MAX_HEADER: usize = 32;

/// Input that is not RESP: the connection gets this as an error reply and
/// is closed, as there is no telling where the next command starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtocolError(pub String);

/// One complete command at the front of the buffer.
#[derive(Debug, PartialEq, Eq)]
pub struct Request<'a> {
    /// The command name and its arguments; empty for an empty inline line
    /// or a `*0` array, which are skipped.
    pub args: Vec<&'a [u8]>,
    /// Bytes the command took, to drop from the buffer.
    pub used: usize,
}

/// Parses the first command in `buf`: `Ok(None)` if it is not complete yet.
pub fn parse(buf: &[u8]) -> Result<Option<Request<'_>>, ProtocolError> {
    match buf.first() {
        None => Ok(None),
        Some(b'*') => parse_array(buf),
        Some(_) => parse_inline(buf),
    }
}

/// The position just past the `\r\n` ending the line that starts at
/// `start`, and the line without it; `None` if the line is not complete.
fn line(buf: &[u8], start: usize, limit: usize) -> Result<Option<(&[u8], usize)>, ProtocolError> {
    let rest = &buf[start..];
    let Some(newline) = rest.iter().take(limit + 2).position(|&byte| byte == b'\n') else {
        if rest.len() > limit + 1 {
            return Err(ProtocolError(
                "Protocol error: too big header or inline request".into(),
            ));
        }
        return Ok(None);
    };
    let text = rest[..newline]
        .strip_suffix(b"\r")
        .unwrap_or(&rest[..newline]);
    Ok(Some((text, start + newline + 1)))
}

/// Parses the number after the type byte of a header line (`*3`, `$5`).
fn header_number(text: &[u8], what: &str) -> Result<i64, ProtocolError> {
    std::str::from_utf8(&text[1..])
        .ok()
        .and_then(|digits| digits.parse().ok())
        .ok_or_else(|| ProtocolError(format!("Protocol error: invalid {what}")))
}

fn parse_array(buf: &[u8]) -> Result<Option<Request<'_>>, ProtocolError> {
    let Some((header, mut at)) = line(buf, 0, MAX_HEADER)? else {
        return Ok(None);
    };
    let count = header_number(header, "multibulk length")?;
    if count > MAX_ARGS as i64 {
        return Err(ProtocolError(
            "Protocol error: invalid multibulk length".into(),
        ));
    }
    // `*0` and `*-1` are empty requests, skipped as Redis does.
    let count = count.max(0) as usize;
    let mut args = Vec::with_capacity(count.min(64));
    for _ in 0..count {
        let Some((header, data_start)) = line(buf, at, MAX_HEADER)? else {
            return Ok(None);
        };
        if header.first() != Some(&b'$') {
            let got = header
                .first()
                .map_or_else(String::new, |&byte| printable(&[byte]));
            return Err(ProtocolError(format!(
                "Protocol error: expected '$', got '{got}'"
            )));
        }
        let length = header_number(header, "bulk length")?;
        if !(0..=MAX_BULK as i64).contains(&length) {
            return Err(ProtocolError("Protocol error: invalid bulk length".into()));
        }
        let data_end = data_start + length as usize;
        if buf.len() < data_end + 2 {
            return Ok(None);
        }
        if &buf[data_end..data_end + 2] != b"\r\n" {
            return Err(ProtocolError(
                "Protocol error: bulk string not followed by CRLF".into(),
            ));
        }
        args.push(&buf[data_start..data_end]);
        at = data_end + 2;
    }
    Ok(Some(Request { args, used: at }))
}

fn parse_inline(buf: &[u8]) -> Result<Option<Request<'_>>, ProtocolError> {
    let Some((text, used)) = line(buf, 0, MAX_INLINE)? else {
        return Ok(None);
    };
    let args = text
        .split(|byte| byte.is_ascii_whitespace())
        .filter(|word| !word.is_empty())
        .collect();
    Ok(Some(Request { args, used }))
}

/// `bytes` for an error message: printable ASCII kept, anything else
/// (which could end the error line early) written as `\xNN`.
pub fn printable(bytes: &[u8]) -> String {
    let mut text = String::with_capacity(bytes.len());
    for &byte in bytes {
        if byte == b' ' || byte.is_ascii_graphic() {
            text.push(byte as char);
        } else {
            text.push_str(&format!("\\x{byte:02x}"));
        }
    }
    text
}

/// Appends a simple string reply: `+OK\r\n`.
pub fn simple(out: &mut Vec<u8>, text: &str) {
    out.push(b'+');
    out.extend_from_slice(text.as_bytes());
    out.extend_from_slice(b"\r\n");
}

/// Appends an error reply: `-ERR ...\r\n`. Line breaks in `message`
/// become spaces, so the reply stays one line.
pub fn error(out: &mut Vec<u8>, message: &str) {
    out.push(b'-');
    out.extend(message.bytes().map(|byte| match byte {
        b'\r' | b'\n' => b' ',
        other => other,
    }));
    out.extend_from_slice(b"\r\n");
}

/// Appends an integer reply: `:42\r\n`.
pub fn integer(out: &mut Vec<u8>, value: i64) {
    out.push(b':');
    out.extend_from_slice(value.to_string().as_bytes());
    out.extend_from_slice(b"\r\n");
}

/// Appends a bulk string reply: `$5\r\nhello\r\n`.
pub fn bulk(out: &mut Vec<u8>, data: &[u8]) {
    out.push(b'$');
    out.extend_from_slice(data.len().to_string().as_bytes());
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(data);
    out.extend_from_slice(b"\r\n");
}

/// Appends the null bulk string: `$-1\r\n` (GET of a missing key).
pub fn null(out: &mut Vec<u8>) {
    out.extend_from_slice(b"$-1\r\n");
}

/// Appends an empty array: `*0\r\n`.
pub fn empty_array(out: &mut Vec<u8>) {
    out.extend_from_slice(b"*0\r\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(buf: &[u8]) -> Vec<&[u8]> {
        parse(buf).unwrap().unwrap().args
    }

    #[test]
    fn an_array_of_bulk_strings() {
        let frame = b"*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$5\r\nva\r\nl\r\n";
        let request = parse(frame).unwrap().unwrap();
        assert_eq!(request.args, [&b"SET"[..], b"key", b"va\r\nl"]);
        assert_eq!(request.used, frame.len());
    }

    #[test]
    fn every_split_of_a_frame_is_incomplete_until_the_last_byte() {
        let frame = b"*2\r\n$3\r\nGET\r\n$10\r\nkey:000001\r\n";
        for end in 0..frame.len() {
            assert_eq!(parse(&frame[..end]), Ok(None), "split at {end}");
        }
        assert_eq!(args(frame), [&b"GET"[..], b"key:000001"]);
    }

    #[test]
    fn pipelined_frames_parse_one_at_a_time() {
        let buf = b"*1\r\n$4\r\nPING\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\nPING hi\r\n*2\r\n$3\r\nGE";
        let mut at = 0;
        let mut seen = Vec::new();
        while let Some(request) = parse(&buf[at..]).unwrap() {
            seen.push(request.args.concat());
            at += request.used;
        }
        assert_eq!(seen, [&b"PING"[..], b"GETk", b"PINGhi"]);
        assert_eq!(&buf[at..], b"*2\r\n$3\r\nGE");
    }

    #[test]
    fn inline_commands() {
        assert_eq!(args(b"set  a   b\r\n"), [&b"set"[..], b"a", b"b"]);
        assert_eq!(args(b"PING\n"), [&b"PING"[..]]);
        assert_eq!(parse(b"GET a"), Ok(None));
        let empty = parse(b"\r\nPING\r\n").unwrap().unwrap();
        assert!(empty.args.is_empty());
        assert_eq!(empty.used, 2);
    }

    #[test]
    fn empty_arrays_are_empty_requests() {
        for frame in [&b"*0\r\n"[..], b"*-1\r\n"] {
            let request = parse(frame).unwrap().unwrap();
            assert!(request.args.is_empty());
            assert_eq!(request.used, frame.len());
        }
    }

    #[test]
    fn garbage_is_a_protocol_error() {
        for (frame, needle) in [
            (&b"*x\r\n"[..], "invalid multibulk length"),
            (b"*1\r\n+PING\r\n", "expected '$', got '+'"),
            (b"*1\r\n$-5\r\n", "invalid bulk length"),
            (b"*1\r\n$99999999999\r\n", "invalid bulk length"),
            (b"*1\r\n$2\r\nabcd\r\n", "not followed by CRLF"),
            (b"*99999999\r\n", "invalid multibulk length"),
        ] {
            let error = parse(frame).unwrap_err();
            assert!(error.0.contains(needle), "{frame:?}: {error:?}");
        }
    }

    #[test]
    fn overlong_lines_are_errors_not_endless_buffering() {
        let long = vec![b'a'; MAX_INLINE + 2];
        assert!(parse(&long).is_err());
        assert_eq!(parse(&long[..MAX_INLINE]), Ok(None));
        assert!(parse(b"*1\r\n$1111111111111111111111111111111111111").is_err());
    }

    #[test]
    fn replies_are_encoded() {
        let mut out = Vec::new();
        simple(&mut out, "OK");
        error(&mut out, "ERR bad\r\nthing");
        integer(&mut out, -3);
        bulk(&mut out, b"hi");
        bulk(&mut out, b"");
        null(&mut out);
        empty_array(&mut out);
        assert_eq!(
            out,
            b"+OK\r\n-ERR bad  thing\r\n:-3\r\n$2\r\nhi\r\n$0\r\n\r\n$-1\r\n*0\r\n"
        );
    }

    #[test]
    fn printable_escapes_control_bytes() {
        assert_eq!(printable(b"a b\r\n\xff"), "a b\\x0d\\x0a\\xff");
    }
}
