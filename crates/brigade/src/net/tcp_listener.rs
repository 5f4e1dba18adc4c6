//! `TcpListener`.

use std::fmt;
use std::future::poll_fn;
use std::io;
use std::net::SocketAddr;
use std::task::{Context, Poll};

use super::TcpStream;
use super::addr::{ToSocketAddrs, first_ok, resolve};
use crate::io::poll_evented::PollEvented;

/// A TCP socket server, listening for connections.
///
/// # Examples
///
/// ```
/// let rt = brigade::Runtime::new()?;
/// rt.block_on(async {
///     let listener = brigade::net::TcpListener::bind("127.0.0.1:0").await?;
///     assert!(listener.local_addr()?.port() > 0);
///     std::io::Result::Ok(())
/// })?;
/// # Ok::<(), std::io::Error>(())
/// ```
pub struct TcpListener {
    io: PollEvented<mio::net::TcpListener>,
}

impl TcpListener {
    /// Binds to `addr` (the first of its addresses that works) and listens.
    ///
    /// On Unix, `SO_REUSEADDR` is set, as by tokio and mio. Binding an
    /// address already in use returns an error of kind `AddrInUse`.
    pub async fn bind(addr: impl ToSocketAddrs) -> io::Result<TcpListener> {
        let addrs = resolve(&addr).await?;
        first_ok(addrs, |addr| async move {
            let listener = mio::net::TcpListener::bind(addr)?;
            Ok(TcpListener {
                io: PollEvented::new(listener, "brigade::net::TcpListener::bind")?,
            })
        })
        .await
    }

    /// Waits for a connection; returns it and the peer's address.
    ///
    /// # Examples
    ///
    /// An accept loop that serves each connection in its own task:
    ///
    /// ```
    /// use brigade::net::{TcpListener, TcpStream};
    /// use tokio::io::{AsyncReadExt, AsyncWriteExt};
    ///
    /// let rt = brigade::Runtime::new()?;
    /// rt.block_on(async {
    ///     let listener = TcpListener::bind("127.0.0.1:0").await?;
    ///     let addr = listener.local_addr()?;
    ///     brigade::spawn(async move {
    ///         loop {
    ///             let Ok((mut stream, _peer)) = listener.accept().await else { continue };
    ///             brigade::spawn(async move { stream.write_all(b"hi").await });
    ///         }
    ///     });
    ///     for _ in 0..3 {
    ///         let mut client = TcpStream::connect(addr).await?;
    ///         let mut greeting = [0u8; 2];
    ///         client.read_exact(&mut greeting).await?;
    ///         assert_eq!(&greeting, b"hi");
    ///     }
    ///     std::io::Result::Ok(())
    /// })?;
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub async fn accept(&self) -> io::Result<(TcpStream, SocketAddr)> {
        poll_fn(|cx| self.poll_accept(cx)).await
    }

    /// Polls for a connection.
    pub fn poll_accept(&self, cx: &mut Context<'_>) -> Poll<io::Result<(TcpStream, SocketAddr)>> {
        self.io
            .poll_read_io(cx, |listener| listener.accept())
            .map(|accepted| {
                accepted.and_then(|(stream, addr)| Ok((TcpStream::from_mio(stream)?, addr)))
            })
    }

    /// Wraps a standard-library listener (made non-blocking here).
    ///
    /// Returns an error if called outside a brigade runtime.
    pub fn from_std(listener: std::net::TcpListener) -> io::Result<TcpListener> {
        listener.set_nonblocking(true)?;
        Ok(TcpListener {
            io: PollEvented::new(
                mio::net::TcpListener::from_std(listener),
                "brigade::net::TcpListener::from_std",
            )?,
        })
    }

    /// Registers a listening mio socket; `what` names the calling API for
    /// the error raised outside a runtime.
    pub(crate) fn from_mio(listener: mio::net::TcpListener, what: &str) -> io::Result<TcpListener> {
        Ok(TcpListener {
            io: PollEvented::new(listener, what)?,
        })
    }

    /// Deregisters the listener and returns it as a standard-library one
    /// (still in non-blocking mode).
    pub fn into_std(self) -> io::Result<std::net::TcpListener> {
        Ok(self.io.into_inner().into())
    }

    /// The local address the listener is bound to.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.io.get_ref().local_addr()
    }

    /// Sets `IP_TTL`, the time to live of packets sent from the
    /// connections it accepts.
    pub fn set_ttl(&self, ttl: u32) -> io::Result<()> {
        self.io.get_ref().set_ttl(ttl)
    }

    /// Reads `IP_TTL`.
    pub fn ttl(&self) -> io::Result<u32> {
        self.io.get_ref().ttl()
    }
}

impl fmt::Debug for TcpListener {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.io.get_ref().fmt(f)
    }
}

#[cfg(unix)]
super::fd_impls!(TcpListener);
