//! `TcpStream`.

use std::fmt;
use std::io;
use std::net::{Shutdown, SocketAddr};

use super::addr::{ToSocketAddrs, first_ok, resolve};
use super::byte_stream::{Connecting, byte_stream, wait_connected};
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
            wait_connected(&stream.io).await?;
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
}

byte_stream!(TcpStream);

impl Connecting for mio::net::TcpStream {
    fn connected(&self) -> io::Result<()> {
        self.peer_addr().map(drop)
    }

    fn take_error(&self) -> io::Result<Option<io::Error>> {
        mio::net::TcpStream::take_error(self)
    }
}

impl fmt::Debug for TcpStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.io.get_ref().fmt(f)
    }
}
