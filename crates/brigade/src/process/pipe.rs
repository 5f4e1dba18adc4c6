//! The parent's ends of a child's standard streams: [`ChildStdin`],
//! [`ChildStdout`] and [`ChildStderr`], non-blocking pipes registered with
//! the runtime's reactor, read and written through `futures_io`'s and
//! (feature `tokio-io`) tokio's `AsyncRead`/`AsyncWrite`, as brigade's
//! sockets are.
//!
//! As with tokio's, shutting down (or closing) a [`ChildStdin`] only
//! flushes, which a pipe needs not: the child reads end of input once the
//! `ChildStdin` is dropped. [`Child::wait`](super::Child::wait) drops it
//! first.

use std::fmt;
use std::io::{self, IoSlice, Read, Write};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::pin::Pin;
use std::process::Stdio;
use std::task::{Context, Poll, ready};

use mio::Interest;
use mio::unix::pipe::{Receiver, Sender};

use crate::io::poll_evented::PollEvented;

/// The most a read-to-end asks `read(2)` for at a time.
const READ_CHUNK: usize = 32 * 1024;

/// The write end of a child's standard input, made by
/// [`Command::spawn`](super::Command::spawn) with
/// [`Stdio::piped`](std::process::Stdio::piped) for stdin: the
/// [`Child::stdin`](super::Child::stdin) field.
///
/// Write with tokio's `AsyncWriteExt` (or futures'). The child reads end of
/// input once this is dropped; `shutdown` does not close it, as with tokio.
pub struct ChildStdin {
    io: PollEvented<Sender>,
}

/// The read end of a child's standard output: the
/// [`Child::stdout`](super::Child::stdout) field, with
/// [`Stdio::piped`](std::process::Stdio::piped) for stdout.
///
/// Read with tokio's `AsyncReadExt` (or futures'); a read returns 0 at the
/// end, once every process holding the write end closed it.
pub struct ChildStdout {
    io: PollEvented<Receiver>,
}

/// The read end of a child's standard error: the
/// [`Child::stderr`](super::Child::stderr) field, with
/// [`Stdio::piped`](std::process::Stdio::piped) for stderr. Read as
/// [`ChildStdout`] is.
pub struct ChildStderr {
    io: PollEvented<Receiver>,
}

impl ChildStdin {
    /// Wraps the standard library's handle, made non-blocking and
    /// registered with the current runtime.
    ///
    /// Returns an error if called outside a brigade runtime.
    pub fn from_std(inner: std::process::ChildStdin) -> io::Result<ChildStdin> {
        let pipe = Sender::from(inner);
        pipe.set_nonblocking(true)?;
        let io = PollEvented::new_with_interest(
            pipe,
            Interest::WRITABLE,
            "brigade::process::ChildStdin::from_std",
        )?;
        Ok(ChildStdin { io })
    }

    fn poll_write_priv(&self, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        self.io
            .poll_stream_write(cx, buf.len(), |mut pipe| pipe.write(buf))
    }

    fn poll_write_vectored_priv(
        &self,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.io
            .poll_write_io(cx, |mut pipe| pipe.write_vectored(bufs))
    }
}

/// `from_std` and the reads of a read end.
macro_rules! read_end {
    ($ty:ident, $std:ty, $what:literal) => {
        impl $ty {
            /// Wraps the standard library's handle, made non-blocking and
            /// registered with the current runtime.
            ///
            /// Returns an error if called outside a brigade runtime.
            pub fn from_std(inner: $std) -> io::Result<$ty> {
                let pipe = Receiver::from(inner);
                pipe.set_nonblocking(true)?;
                let io = PollEvented::new_with_interest(pipe, Interest::READABLE, $what)?;
                Ok($ty { io })
            }

            /// Reads until the end of the stream, appending to `buf`
            /// (`Child::wait_with_output`).
            pub(super) fn poll_read_to_end(
                &self,
                cx: &mut Context<'_>,
                buf: &mut Vec<u8>,
            ) -> Poll<io::Result<()>> {
                poll_read_to_end(&self.io, cx, buf)
            }

            fn poll_read_priv(
                &self,
                cx: &mut Context<'_>,
                buf: &mut [u8],
            ) -> Poll<io::Result<usize>> {
                self.io.poll_stream_read(cx, buf.len(), |mut pipe| {
                    retry_interrupted(|| pipe.read(buf))
                })
            }

            #[cfg(feature = "tokio-io")]
            fn poll_read_buf_priv(
                &self,
                cx: &mut Context<'_>,
                buf: &mut tokio::io::ReadBuf<'_>,
            ) -> Poll<io::Result<()>> {
                self.io
                    .poll_read_buf(cx, buf, |pipe, unfilled| read_uninit(pipe, unfilled))
            }
        }

        impl futures_io::AsyncRead for $ty {
            fn poll_read(
                self: Pin<&mut Self>,
                cx: &mut Context<'_>,
                buf: &mut [u8],
            ) -> Poll<io::Result<usize>> {
                self.poll_read_priv(cx, buf)
            }
        }

        #[cfg(feature = "tokio-io")]
        #[cfg_attr(docsrs, doc(cfg(feature = "tokio-io")))]
        impl tokio::io::AsyncRead for $ty {
            fn poll_read(
                self: Pin<&mut Self>,
                cx: &mut Context<'_>,
                buf: &mut tokio::io::ReadBuf<'_>,
            ) -> Poll<io::Result<()>> {
                self.poll_read_buf_priv(cx, buf)
            }
        }
    };
}

read_end!(
    ChildStdout,
    std::process::ChildStdout,
    "brigade::process::ChildStdout::from_std"
);
read_end!(
    ChildStderr,
    std::process::ChildStderr,
    "brigade::process::ChildStderr::from_std"
);

impl futures_io::AsyncWrite for ChildStdin {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.poll_write_priv(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.poll_write_vectored_priv(cx, bufs)
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    /// Only flushes (see [`ChildStdin`]): drop it to close the pipe.
    fn poll_close(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

#[cfg(feature = "tokio-io")]
#[cfg_attr(docsrs, doc(cfg(feature = "tokio-io")))]
impl tokio::io::AsyncWrite for ChildStdin {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.poll_write_priv(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.poll_write_vectored_priv(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    /// Only flushes, as tokio's does (see [`ChildStdin`]): drop it to close
    /// the pipe.
    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

/// What every end shares: the descriptor traits, `into_owned_fd`, the
/// conversion into a `Stdio` (to hand the pipe to another child), `Debug`.
macro_rules! pipe_end {
    ($ty:ident) => {
        impl $ty {
            /// Deregisters the pipe and returns its descriptor, in blocking
            /// mode again.
            pub fn into_owned_fd(self) -> io::Result<OwnedFd> {
                let pipe = self.io.into_inner();
                pipe.set_nonblocking(false)?;
                Ok(OwnedFd::from(pipe))
            }
        }

        /// The pipe in blocking mode, to be another child's standard
        /// stream (`Command::stdin(previous_stdout.try_into()?)` builds a
        /// shell pipeline).
        impl TryFrom<$ty> for Stdio {
            type Error = io::Error;

            fn try_from(end: $ty) -> io::Result<Stdio> {
                end.into_owned_fd().map(Stdio::from)
            }
        }

        impl AsRawFd for $ty {
            fn as_raw_fd(&self) -> RawFd {
                self.io.get_ref().as_raw_fd()
            }
        }

        impl AsFd for $ty {
            fn as_fd(&self) -> BorrowedFd<'_> {
                self.io.get_ref().as_fd()
            }
        }

        impl fmt::Debug for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_struct(stringify!($ty))
                    .field("fd", &self.as_raw_fd())
                    .finish()
            }
        }
    };
}

pipe_end!(ChildStdin);
pipe_end!(ChildStdout);
pipe_end!(ChildStderr);

/// Appends what the pipe holds to `buf` until its end, reading into
/// `buf`'s spare capacity (grown [`READ_CHUNK`] at a time) uninitialised.
fn poll_read_to_end(
    io: &PollEvented<Receiver>,
    cx: &mut Context<'_>,
    buf: &mut Vec<u8>,
) -> Poll<io::Result<()>> {
    loop {
        if buf.capacity() - buf.len() < READ_CHUNK / 4 {
            buf.reserve(READ_CHUNK);
        }
        let len = buf.capacity() - buf.len();
        // `spare_capacity` extends the vector by what `read(2)` wrote.
        let read = ready!(io.poll_stream_read(cx, len, |pipe| {
            rustix::io::retry_on_intr(|| {
                rustix::io::read(pipe, rustix::buffer::spare_capacity(buf))
            })
            .map_err(io::Error::from)
        }))?;
        if read == 0 {
            return Poll::Ready(Ok(()));
        }
    }
}

/// `read(2)` into possibly uninitialised memory, retried on `EINTR`:
/// how many bytes it wrote.
#[cfg(feature = "tokio-io")]
fn read_uninit(pipe: &impl AsFd, buf: &mut [std::mem::MaybeUninit<u8>]) -> io::Result<usize> {
    let read = rustix::io::retry_on_intr(|| {
        rustix::io::read(pipe, &mut *buf).map(|(read, _)| read.len())
    })?;
    Ok(read)
}

fn retry_interrupted<R>(mut op: impl FnMut() -> io::Result<R>) -> io::Result<R> {
    loop {
        match op() {
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            result => return result,
        }
    }
}
