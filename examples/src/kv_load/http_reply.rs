//! Parsing of HTTP/1.1 responses, as a client reads them: the first
//! complete response at the front of a buffer (its status and the bytes it
//! took), or `None` when more bytes are needed, so that pipelined responses
//! and responses split across reads both work.
//!
//! Only what `--http` needs: a status line, headers, and a body framed by
//! `content-length`. A chunked body is a clear error (the servers this
//! load is for, `http_import` on either runtime, send fixed bodies).

use crate::kv::resp::ProtocolError;

/// The longest head (status line and headers) accepted.
const MAX_HEAD: usize = 64 * 1024;

/// The largest body accepted.
const MAX_BODY: usize = 16 * 1024 * 1024;

/// Parses the first response in `buf`: its status code and the bytes it
/// took (head and body), or `Ok(None)` if it is not complete yet.
pub fn parse(buf: &[u8]) -> Result<Option<(u16, usize)>, ProtocolError> {
    let Some(head_len) = head_end(buf)? else {
        return Ok(None);
    };
    let head = std::str::from_utf8(&buf[..head_len - 4])
        .map_err(|_| ProtocolError("response head is not UTF-8".into()))?;
    let mut lines = head.split("\r\n");
    let status = status(lines.next().unwrap_or_default())?;
    let mut body_len = None;
    for header in lines {
        let (name, value) = header
            .split_once(':')
            .ok_or_else(|| ProtocolError(format!("header without ':': {header:?}")))?;
        let value = value.trim();
        if name.eq_ignore_ascii_case("content-length") {
            let len = value
                .parse::<usize>()
                .ok()
                .filter(|len| *len <= MAX_BODY)
                .ok_or_else(|| ProtocolError(format!("bad content-length {value:?}")))?;
            body_len = Some(len);
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            return Err(ProtocolError(format!(
                "transfer-encoding {value:?} is not supported (only content-length bodies)"
            )));
        }
    }
    // A 1xx, 204 or 304 response has no body; every other one here must
    // say how long its body is.
    let body_len = match (status, body_len) {
        (100..=199 | 204 | 304, _) => 0,
        (_, Some(len)) => len,
        (_, None) => return Err(ProtocolError("a response without content-length".into())),
    };
    let total = head_len + body_len;
    Ok((buf.len() >= total).then_some((status, total)))
}

/// The length of the head including its blank line, if all of it is in.
fn head_end(buf: &[u8]) -> Result<Option<usize>, ProtocolError> {
    let searched = &buf[..buf.len().min(MAX_HEAD)];
    match searched.windows(4).position(|window| window == b"\r\n\r\n") {
        Some(at) => Ok(Some(at + 4)),
        None if buf.len() >= MAX_HEAD => Err(ProtocolError("response head too long".into())),
        None => Ok(None),
    }
}

/// The code of a status line such as `HTTP/1.1 200 OK`.
fn status(line: &str) -> Result<u16, ProtocolError> {
    let mut parts = line.splitn(3, ' ');
    let version = parts.next().unwrap_or_default();
    let code = parts.next().unwrap_or_default();
    if !version.starts_with("HTTP/1.") {
        return Err(ProtocolError(format!(
            "not an HTTP/1 status line: {line:?}"
        )));
    }
    code.parse()
        .ok()
        .filter(|code| (100..=999).contains(code))
        .ok_or_else(|| ProtocolError(format!("bad status code in {line:?}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    const OK: &[u8] = b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\nContent-Length: 5\r\n\
                        date: Thu, 26 Nov 2026 12:00:00 GMT\r\n\r\nhello";

    #[test]
    fn a_response_and_its_length() {
        assert_eq!(parse(OK).unwrap(), Some((200, OK.len())));
        let empty = b"HTTP/1.1 204 No Content\r\n\r\n";
        assert_eq!(parse(empty).unwrap(), Some((204, empty.len())));
        let missing = b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n";
        assert_eq!(parse(missing).unwrap(), Some((404, missing.len())));
    }

    #[test]
    fn pipelined_responses_one_at_a_time() {
        let mut buf = OK.to_vec();
        buf.extend_from_slice(b"HTTP/1.1 500 Oops\r\ncontent-length: 2\r\n\r\nno");
        let (first, used) = parse(&buf).unwrap().unwrap();
        assert_eq!((first, used), (200, OK.len()));
        assert_eq!(parse(&buf[used..]).unwrap(), Some((500, buf.len() - used)));
    }

    #[test]
    fn every_prefix_of_a_response_is_incomplete() {
        for end in 0..OK.len() {
            assert_eq!(parse(&OK[..end]).unwrap(), None, "{end}");
        }
    }

    #[test]
    fn what_it_cannot_frame_is_an_error() {
        for bad in [
            &b"SPDY/3 200 OK\r\ncontent-length: 0\r\n\r\n"[..],
            b"HTTP/1.1 2x0 OK\r\ncontent-length: 0\r\n\r\n",
            b"HTTP/1.1 200 OK\r\n\r\n",
            b"HTTP/1.1 200 OK\r\ncontent-length: -1\r\n\r\n",
            b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nno colon\r\n\r\n",
        ] {
            assert!(parse(bad).is_err(), "{}", String::from_utf8_lossy(bad));
        }
        assert!(parse(&vec![b'x'; MAX_HEAD]).is_err());
    }
}
