//! [`FirstBytes`]: a deadline on the bytes that tell HTTP/1 from HTTP/2.
//!
//! Why: hyper-util's auto builder reads a connection's first bytes to pick
//! the protocol (up to the 24 bytes of HTTP/2's preface, or the first byte
//! that differs from it) and has no timeout while it does. hyper's
//! header-read timeout only starts once HTTP/1 is chosen. Without this, a
//! client that connects and sends nothing, or sends the preface a byte a
//! minute, would hold a connection (and a place under the connection cap)
//! for ever.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use pin_project_lite::pin_project;

/// HTTP/2's connection preface, which a prior-knowledge client sends first.
const H2_PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

pin_project! {
    /// A stream whose reads fail with [`io::ErrorKind::TimedOut`] if the
    /// protocol is not yet decided when the deadline passes. It is decided
    /// once the bytes read differ from HTTP/2's preface (HTTP/1), all of the
    /// preface has come (HTTP/2), or the stream ended; from then on it passes
    /// everything through, and the protocol's own timeouts take over.
    #[derive(Debug)]
    pub(super) struct FirstBytes<T> {
        #[pin]
        inner: T,
        // `None` once the protocol is decided, or with no timeout.
        deadline: Option<brigade::time::Sleep>,
        // How many of the bytes read so far matched the preface.
        matched: usize,
    }
}

impl<T> FirstBytes<T> {
    /// Wraps `inner`, with `timeout` from now for the first bytes (`None`:
    /// no deadline). Call it inside the runtime.
    pub(super) fn new(inner: T, timeout: Option<Duration>) -> Self {
        FirstBytes {
            inner,
            deadline: timeout.map(brigade::time::sleep),
            matched: 0,
        }
    }
}

/// Whether the protocol is decided after `read` follows `matched` bytes of
/// the preface; otherwise, how many now match.
fn observe(matched: usize, read: &[u8]) -> Option<usize> {
    if read.is_empty() {
        return None; // end of stream
    }
    let expected = &H2_PREFACE[matched..];
    let n = read.len().min(expected.len());
    if read[..n] != expected[..n] || matched + n == H2_PREFACE.len() {
        return None;
    }
    Some(matched + n)
}

impl<T: futures_io::AsyncRead> futures_io::AsyncRead for FirstBytes<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.project();
        let Some(deadline) = this.deadline.as_mut() else {
            return this.inner.poll_read(cx, buf);
        };
        match this.inner.poll_read(cx, buf) {
            Poll::Ready(Ok(n)) => {
                match observe(*this.matched, &buf[..n.min(buf.len())]) {
                    Some(matched) => *this.matched = matched,
                    None => *this.deadline = None,
                }
                Poll::Ready(Ok(n))
            }
            Poll::Pending => match Pin::new(deadline).poll(cx) {
                Poll::Ready(()) => Poll::Ready(Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    "no request started within the header-read timeout",
                ))),
                Poll::Pending => Poll::Pending,
            },
            Poll::Ready(Err(error)) => Poll::Ready(Err(error)),
        }
    }
}

impl<T: futures_io::AsyncWrite> futures_io::AsyncWrite for FirstBytes<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.project().inner.poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.project().inner.poll_write_vectored(cx, bufs)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.project().inner.poll_flush(cx)
    }

    fn poll_close(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.project().inner.poll_close(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http1_is_decided_at_its_first_byte() {
        assert_eq!(observe(0, b"G"), None);
        assert_eq!(observe(0, b"GET / HTTP/1.1\r\n"), None);
        // "PRI" then something else: HTTP/1 (a bad request), decided.
        assert_eq!(observe(0, b"PRI"), Some(3));
        assert_eq!(observe(3, b" * HTTP/1.1"), None);
    }

    #[test]
    fn http2_is_decided_once_the_whole_preface_came() {
        let mut matched = 0;
        for &byte in &H2_PREFACE[..H2_PREFACE.len() - 1] {
            matched = observe(matched, &[byte]).expect("still undecided");
        }
        assert_eq!(matched, H2_PREFACE.len() - 1);
        assert_eq!(observe(matched, b"\n"), None);
        // The preface and a frame in one read.
        assert_eq!(
            observe(0, b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\0\0\0\x04"),
            None
        );
    }

    #[test]
    fn the_end_of_the_stream_decides() {
        assert_eq!(observe(5, b""), None);
    }
}
