//! `TcpStream`.

use std::fmt;
use std::future::poll_fn;
use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr};
use std::pin::Pin;
use std::task::{Context, Poll};

use super::addr::{ToSocketAddrs, first_ok, resolve};
use crate::io::poll_evented::PollEvented;

/// A TCP connection.
///
/// Reading and writing take `&self`, so one task can read while another
/// writes (share it through an `Arc`, or use the `AsyncRead`/`AsyncWrite`
/// impls on `&TcpStream`).
///
/// # Examples
///
/// See the [module docs](crate::net).
pub struct TcpStream {
    io: PollEvented<mio::net::TcpStream>,
}

impl TcpStream {
    pub(crate) fn from_mio(stream: mio::net::TcpStream) -> io::Result<TcpStream> {
        Ok(TcpStream {
            io: PollEvented::new(stream, "brigade::net::TcpStream")?,
        })
    }

    /// Connects to `addr`, trying each of its addresses in turn.
    ///
    /// # Examples
    ///
    /// ```
    /// let rt = brigade::Runtime::new()?;
    /// // Any TCP server will do; this one is a standard-library listener.
    /// let server = std::net::TcpListener::bind("127.0.0.1:0")?;
    /// let addr = server.local_addr()?;
    /// rt.block_on(async {
    ///     let stream = brigade::net::TcpStream::connect(addr).await?;
    ///     assert_eq!(stream.peer_addr()?, addr);
    ///     stream.set_nodelay(true)
    /// })?;
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub async fn connect(addr: impl ToSocketAddrs) -> io::Result<TcpStream> {
        let addrs = resolve(&addr).await?;
        first_ok(addrs, |addr| async move {
            let stream = TcpStream {
                io: PollEvented::new(
                    mio::net::TcpStream::connect(addr)?,
                    "brigade::net::TcpStream::connect",
                )?,
            };
            // The connection is established (or failed) once it is writable.
            poll_fn(|cx| {
                stream.io.poll_write_io(cx, |s| {
                    s.peer_addr().map(drop).or_else(|e| connect_state(s, e))
                })
            })
            .await?;
            Ok(stream)
        })
        .await
    }

    /// Wraps a standard-library stream (made non-blocking here).
    ///
    /// Returns an error if called outside a brigade runtime.
    pub fn from_std(stream: std::net::TcpStream) -> io::Result<TcpStream> {
        stream.set_nonblocking(true)?;
        Ok(TcpStream {
            io: PollEvented::new(
                mio::net::TcpStream::from_std(stream),
                "brigade::net::TcpStream::from_std",
            )?,
        })
    }

    /// The local address of this end.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.io.get_ref().local_addr()
    }

    /// The address of the other end.
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.io.get_ref().peer_addr()
    }

    /// Sets `TCP_NODELAY` (disables Nagle's algorithm when `true`).
    pub fn set_nodelay(&self, nodelay: bool) -> io::Result<()> {
        self.io.get_ref().set_nodelay(nodelay)
    }

    /// Reads `TCP_NODELAY`.
    pub fn nodelay(&self) -> io::Result<bool> {
        self.io.get_ref().nodelay()
    }

    /// Shuts down the read half, the write half, or both.
    pub fn shutdown(&self, how: Shutdown) -> io::Result<()> {
        self.io.get_ref().shutdown(how)
    }

    /// Reads into `buf`; returns how many bytes were read (0 at end of stream).
    pub async fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
        poll_fn(|cx| self.poll_read_priv(cx, buf)).await
    }

    /// Reads exactly `buf.len()` bytes; an early end of stream is an
    /// `UnexpectedEof` error.
    pub async fn read_exact(&self, mut buf: &mut [u8]) -> io::Result<()> {
        while !buf.is_empty() {
            match self.read(buf).await? {
                0 => return Err(io::ErrorKind::UnexpectedEof.into()),
                n => buf = &mut buf[n..],
            }
        }
        Ok(())
    }

    /// Writes from `buf`; returns how many bytes were written.
    pub async fn write(&self, buf: &[u8]) -> io::Result<usize> {
        poll_fn(|cx| self.poll_write_priv(cx, buf)).await
    }

    /// Writes all of `buf`.
    pub async fn write_all(&self, mut buf: &[u8]) -> io::Result<()> {
        while !buf.is_empty() {
            match self.write(buf).await? {
                0 => return Err(io::ErrorKind::WriteZero.into()),
                n => buf = &buf[n..],
            }
        }
        Ok(())
    }

    fn poll_read_priv(&self, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
        self.io.poll_read_io(cx, |mut stream| stream.read(buf))
    }

    fn poll_write_priv(&self, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        self.io.poll_write_io(cx, |mut stream| stream.write(buf))
    }
}

/// While connecting, `peer_addr` fails with `NotConnected`: report the
/// socket error if there is one, else keep waiting.
fn connect_state(stream: &mio::net::TcpStream, error: io::Error) -> io::Result<()> {
    if let Some(socket_error) = stream.take_error()? {
        return Err(socket_error);
    }
    match error.kind() {
        io::ErrorKind::NotConnected => Err(io::ErrorKind::WouldBlock.into()),
        _ => Err(error),
    }
}

impl fmt::Debug for TcpStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.io.get_ref().fmt(f)
    }
}

macro_rules! futures_io_impls {
    ($($ty:ty),*) => {$(
        impl futures_io::AsyncRead for $ty {
            fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
                self.poll_read_priv(cx, buf)
            }
        }

        impl futures_io::AsyncWrite for $ty {
            fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
                self.poll_write_priv(cx, buf)
            }

            fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
                Poll::Ready(Ok(()))
            }

            fn poll_close(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
                Poll::Ready(self.shutdown(Shutdown::Write))
            }
        }

        #[cfg(feature = "tokio-io")]
        impl tokio::io::AsyncRead for $ty {
            fn poll_read(
                self: Pin<&mut Self>,
                cx: &mut Context<'_>,
                buf: &mut tokio::io::ReadBuf<'_>,
            ) -> Poll<io::Result<()>> {
                let unfilled = buf.initialize_unfilled();
                match self.poll_read_priv(cx, unfilled) {
                    Poll::Ready(Ok(n)) => {
                        buf.advance(n);
                        Poll::Ready(Ok(()))
                    }
                    Poll::Ready(Err(error)) => Poll::Ready(Err(error)),
                    Poll::Pending => Poll::Pending,
                }
            }
        }

        #[cfg(feature = "tokio-io")]
        impl tokio::io::AsyncWrite for $ty {
            fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
                self.poll_write_priv(cx, buf)
            }

            fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
                Poll::Ready(Ok(()))
            }

            fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
                Poll::Ready(self.shutdown(Shutdown::Write))
            }
        }
    )*};
}

futures_io_impls!(TcpStream, &TcpStream);
