//! Parsing of RESP 2 replies, as a client reads them: the first complete
//! reply at the front of a buffer, or `None` when more bytes are needed,
//! so that pipelined replies and replies split across reads both work.

use crate::kv::resp::{MAX_ARGS, MAX_BULK, ProtocolError};

/// The longest simple-string, error or header line accepted.
const MAX_LINE: usize = 64 * 1024;

/// A reply, borrowing from the buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reply<'a> {
    /// `+text`.
    Simple(&'a [u8]),
    /// `-message`.
    Error(&'a [u8]),
    /// `:n`.
    Integer(i64),
    /// `$len` and the data, or `$-1` (`None`).
    Bulk(Option<&'a [u8]>),
    /// `*count` and its elements (skipped), or `*-1` (`None`).
    Array(Option<usize>),
}

/// Parses the first reply in `buf`: the reply and the bytes it took, or
/// `Ok(None)` if it is not complete yet.
pub fn parse(buf: &[u8]) -> Result<Option<(Reply<'_>, usize)>, ProtocolError> {
    let Some((line, mut used)) = line(buf, 0)? else {
        return Ok(None);
    };
    let (kind, rest) = line
        .split_first()
        .ok_or_else(|| ProtocolError("empty reply line".into()))?;
    let reply = match kind {
        b'+' => Reply::Simple(rest),
        b'-' => Reply::Error(rest),
        b':' => Reply::Integer(number(rest)?),
        b'$' => match length(rest, MAX_BULK)? {
            None => Reply::Bulk(None),
            Some(len) => {
                let Some(data) = buf.get(used..used + len + 2) else {
                    return Ok(None);
                };
                if &data[len..] != b"\r\n" {
                    return Err(ProtocolError("bulk data without \\r\\n".into()));
                }
                used += len + 2;
                Reply::Bulk(Some(&data[..len]))
            }
        },
        b'*' => match length(rest, MAX_ARGS)? {
            None => Reply::Array(None),
            Some(count) => {
                for _ in 0..count {
                    let Some((_, element)) = parse(&buf[used..])? else {
                        return Ok(None);
                    };
                    used += element;
                }
                Reply::Array(Some(count))
            }
        },
        _ => {
            let shown = crate::kv::resp::printable(line);
            return Err(ProtocolError(format!("not a RESP reply: {shown:?}")));
        }
    };
    Ok(Some((reply, used)))
}

/// The line at `start` without its `\r\n`, and the position after it.
fn line(buf: &[u8], start: usize) -> Result<Option<(&[u8], usize)>, ProtocolError> {
    let rest = &buf[start..];
    match rest
        .iter()
        .take(MAX_LINE + 2)
        .position(|&byte| byte == b'\n')
    {
        Some(newline) => {
            let text = rest[..newline]
                .strip_suffix(b"\r")
                .ok_or_else(|| ProtocolError("line ends without \\r\\n".into()))?;
            Ok(Some((text, start + newline + 1)))
        }
        None if rest.len() > MAX_LINE + 1 => Err(ProtocolError("reply line too long".into())),
        None => Ok(None),
    }
}

fn number(text: &[u8]) -> Result<i64, ProtocolError> {
    std::str::from_utf8(text)
        .ok()
        .and_then(|text| text.parse().ok())
        .ok_or_else(|| ProtocolError("bad integer in reply".into()))
}

/// A `$` or `*` length: `None` for -1, else at most `limit`.
fn length(text: &[u8], limit: usize) -> Result<Option<usize>, ProtocolError> {
    match number(text)? {
        -1 => Ok(None),
        len if (0..=limit as i64).contains(&len) => Ok(Some(len as usize)),
        _ => Err(ProtocolError("bad length in reply".into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn whole(bytes: &[u8]) -> Reply<'_> {
        let (reply, used) = parse(bytes).unwrap().unwrap();
        assert_eq!(used, bytes.len(), "{bytes:?}");
        reply
    }

    #[test]
    fn every_kind() {
        assert_eq!(whole(b"+OK\r\n"), Reply::Simple(b"OK"));
        assert_eq!(whole(b"-ERR no\r\n"), Reply::Error(b"ERR no"));
        assert_eq!(whole(b":-42\r\n"), Reply::Integer(-42));
        assert_eq!(whole(b"$3\r\nabc\r\n"), Reply::Bulk(Some(b"abc")));
        assert_eq!(whole(b"$0\r\n\r\n"), Reply::Bulk(Some(b"")));
        assert_eq!(whole(b"$-1\r\n"), Reply::Bulk(None));
        assert_eq!(whole(b"*0\r\n"), Reply::Array(Some(0)));
        assert_eq!(whole(b"*-1\r\n"), Reply::Array(None));
        assert_eq!(
            whole(b"*3\r\n$1\r\na\r\n:1\r\n*1\r\n+x\r\n"),
            Reply::Array(Some(3))
        );
    }

    #[test]
    fn pipelined_replies_one_at_a_time() {
        let buf = b"+OK\r\n$2\r\nhi\r\n$-1\r\n";
        let (first, used) = parse(buf).unwrap().unwrap();
        assert_eq!((first, used), (Reply::Simple(b"OK"), 5));
        let (second, more) = parse(&buf[used..]).unwrap().unwrap();
        assert_eq!((second, more), (Reply::Bulk(Some(b"hi")), 8));
        assert_eq!(whole(&buf[used + more..]), Reply::Bulk(None));
    }

    #[test]
    fn every_prefix_of_a_reply_is_incomplete() {
        let reply = b"*2\r\n$5\r\nhello\r\n+OK\r\n";
        for end in 0..reply.len() {
            assert_eq!(parse(&reply[..end]).unwrap(), None, "{end}");
        }
        assert_eq!(whole(reply), Reply::Array(Some(2)));
    }

    #[test]
    fn garbage_is_an_error() {
        for bad in [
            &b"?\r\n"[..],
            b"\r\n",
            b"+OK\n",
            b":x\r\n",
            b"$-2\r\n",
            b"$2\r\nabcd",
            b"*-5\r\n",
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
        assert!(parse(&vec![b'+'; MAX_LINE + 2]).is_err());
    }
}
