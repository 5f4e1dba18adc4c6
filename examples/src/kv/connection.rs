//! One client connection: read, answer every complete command in what was
//! read (pipelining), write the replies in one go, repeat. The same code
//! serves brigade's and tokio's sockets, through tokio's `AsyncRead` and
//! `AsyncWrite` (brigade's `TcpStream` implements them with its default
//! `tokio-io` feature).

use std::io;
use std::sync::atomic::{AtomicU64, Ordering};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use super::command::{After, execute};
use super::resp;
use super::store::Store;

/// Bytes asked for per read.
const READ_SIZE: usize = 16 * 1024;

/// What [`answer`] did with a buffer.
#[derive(Debug, PartialEq, Eq)]
pub struct Answered {
    /// Bytes of complete commands, to drop from the front of the buffer;
    /// the rest is the start of a command still arriving.
    pub used: usize,
    /// Commands run.
    pub commands: u64,
    /// Whether to close the connection once the replies are sent (QUIT,
    /// or input that is not RESP).
    pub close: bool,
}

/// Runs every complete command at the front of `input`, appending the
/// replies to `out`. Input that is not RESP gets an error reply and closes
/// the connection; the commands before it are answered.
pub fn answer(store: &Store, input: &[u8], out: &mut Vec<u8>) -> Answered {
    let mut done = Answered {
        used: 0,
        commands: 0,
        close: false,
    };
    while !done.close {
        match resp::parse(&input[done.used..]) {
            Ok(Some(request)) => {
                done.used += request.used;
                if !request.args.is_empty() {
                    done.commands += 1;
                }
                done.close = execute(store, &request.args, out) == After::Close;
            }
            Ok(None) => break,
            Err(error) => {
                resp::error(out, &format!("ERR {}", error.0));
                done.close = true;
            }
        }
    }
    done
}

/// Serves one connection until the client closes it, sends QUIT or
/// garbage, or the socket fails. Adds the commands it runs to `commands`.
pub async fn serve<S>(mut stream: S, store: &Store, commands: &AtomicU64) -> io::Result<()>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let mut input = Vec::with_capacity(READ_SIZE);
    let mut output = Vec::with_capacity(READ_SIZE);
    loop {
        if input.capacity() - input.len() < READ_SIZE / 2 {
            input.reserve(READ_SIZE);
        }
        if stream.read_buf(&mut input).await? == 0 {
            return Ok(());
        }
        let answered = answer(store, &input, &mut output);
        input.drain(..answered.used);
        commands.fetch_add(answered.commands, Ordering::Relaxed);
        if !output.is_empty() {
            stream.write_all(&output).await?;
            output.clear();
        }
        if answered.close {
            return stream.shutdown().await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pipelined_commands_are_answered_in_order() {
        let store = Store::new();
        let input = b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\nGET k\r\n*1\r\n$4\r\nPING\r\n*2\r\n$3\r\nGET";
        let mut out = Vec::new();
        let answered = answer(&store, input, &mut out);
        assert_eq!(out, b"+OK\r\n$1\r\nv\r\n+PONG\r\n");
        assert_eq!((answered.commands, answered.close), (3, false));
        assert_eq!(&input[answered.used..], b"*2\r\n$3\r\nGET");
    }

    #[test]
    fn a_command_split_across_reads_is_answered_once_whole() {
        let store = Store::new();
        let command = b"*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$5\r\nvalue\r\n";
        let mut buffer = Vec::new();
        let mut out = Vec::new();
        for &byte in command {
            buffer.push(byte);
            let answered = answer(&store, &buffer, &mut out);
            buffer.drain(..answered.used);
        }
        assert_eq!(out, b"+OK\r\n");
        assert!(buffer.is_empty());
        assert_eq!(store.get(b"key").as_deref(), Some(&b"value"[..]));
    }

    #[test]
    fn garbage_is_answered_then_closes() {
        let store = Store::new();
        let mut out = Vec::new();
        let answered = answer(&store, b"PING\r\n*1\r\n:5\r\nPING\r\n", &mut out);
        assert!(answered.close);
        assert_eq!(answered.commands, 1);
        assert_eq!(
            out,
            b"+PONG\r\n-ERR Protocol error: expected '$', got ':'\r\n"
        );
    }

    #[test]
    fn quit_stops_at_once() {
        let store = Store::new();
        let mut out = Vec::new();
        let answered = answer(&store, b"QUIT\r\nSET a b\r\n", &mut out);
        assert!(answered.close);
        assert_eq!(out, b"+OK\r\n");
        assert_eq!(store.get(b"a"), None);
    }
}
