//! `TcpStream`.

use std::fmt;
use std::future::poll_fn;
use std::io;
use std::net::{Shutdown, SocketAddr};
use std::time::Duration;

use super::addr::{ToSocketAddrs, first_ok, resolve};
use super::byte_stream::{Connecting, byte_stream, wait_connected};
use crate::io::poll_evented::PollEvented;

/// A TCP connection.
///
/// Read and write through tokio's `AsyncReadExt`/`AsyncWriteExt` (or
/// futures'), as with tokio's `TcpStream`. To read in one task while
/// another writes, [`into_split`](Self::into_split) it; the traits are
/// also implemented for `&TcpStream`. [`readable`](Self::readable) and
/// [`try_read`](Self::try_read) (and the write forms) work on `&self`.
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
            let stream = mio::net::TcpStream::connect(addr)?;
            TcpStream::connecting(stream, "brigade::net::TcpStream::connect").await
        })
        .await
    }

    /// Registers a stream whose non-blocking connect is under way and
    /// waits until it is connected. `what` names the calling API for the
    /// error raised outside a runtime.
    pub(crate) async fn connecting(
        stream: mio::net::TcpStream,
        what: &str,
    ) -> io::Result<TcpStream> {
        let stream = TcpStream {
            io: PollEvented::new(stream, what)?,
        };
        wait_connected(&stream.io).await?;
        Ok(stream)
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

    /// Sets `SO_LINGER`: with `Some(duration)`, closing the socket (or
    /// shutting it down) with unsent data waits up to `duration` for the
    /// peer to take it, and `Some(Duration::ZERO)` resets the connection
    /// at close; `None` (the default) closes at once and sends the data
    /// in the background. A close that lingers blocks the thread that
    /// drops the stream, a worker included.
    pub fn set_linger(&self, linger: Option<Duration>) -> io::Result<()> {
        socket2::SockRef::from(self.io.get_ref()).set_linger(linger)
    }

    /// Reads `SO_LINGER`; see [`set_linger`](Self::set_linger).
    pub fn linger(&self) -> io::Result<Option<Duration>> {
        socket2::SockRef::from(self.io.get_ref()).linger()
    }

    /// Sets `IP_TTL`, the time to live of the packets this socket sends.
    pub fn set_ttl(&self, ttl: u32) -> io::Result<()> {
        self.io.get_ref().set_ttl(ttl)
    }

    /// Reads `IP_TTL`.
    pub fn ttl(&self) -> io::Result<u32> {
        self.io.get_ref().ttl()
    }

    /// Takes the socket's pending error (`SO_ERROR`), if any.
    pub fn take_error(&self) -> io::Result<Option<io::Error>> {
        self.io.get_ref().take_error()
    }

    /// Deregisters the stream and returns it as a standard-library one
    /// (still in non-blocking mode: set it blocking to use it so).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::io::{Read, Write};
    ///
    /// let rt = brigade::Runtime::new()?;
    /// rt.block_on(async {
    ///     let listener = brigade::net::TcpListener::bind("127.0.0.1:0").await?;
    ///     let client = brigade::net::TcpStream::connect(listener.local_addr()?).await?;
    ///     let (server, _) = listener.accept().await?;
    ///     let mut client = client.into_std()?;
    ///     client.set_nonblocking(false)?;
    ///     client.write_all(b"hi")?;
    ///     let mut server = server.into_std()?;
    ///     server.set_nonblocking(false)?;
    ///     let mut buf = [0u8; 2];
    ///     server.read_exact(&mut buf)?;
    ///     assert_eq!(&buf, b"hi");
    ///     std::io::Result::Ok(())
    /// })?;
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn into_std(self) -> io::Result<std::net::TcpStream> {
        Ok(self.io.into_inner().into())
    }

    /// Shuts down the read half, the write half, or both, at once (the
    /// socket's `shutdown(2)`).
    ///
    /// Not named `shutdown`: tokio's streams have no inherent `shutdown`,
    /// and ported code calls `AsyncWriteExt::shutdown().await` (which
    /// shuts down the write half) on them; an inherent method of that name
    /// would take its place.
    pub fn shutdown_now(&self, how: Shutdown) -> io::Result<()> {
        self.io.get_ref().shutdown(how)
    }

    /// Reads into `buf` without removing the data from the socket's queue:
    /// the next read (or peek) sees the same bytes. Waits until data (or
    /// end of stream, `Ok(0)`) is there.
    ///
    /// # Examples
    ///
    /// ```
    /// use tokio::io::{AsyncReadExt, AsyncWriteExt};
    ///
    /// let rt = brigade::Runtime::new()?;
    /// rt.block_on(async {
    ///     let listener = brigade::net::TcpListener::bind("127.0.0.1:0").await?;
    ///     let mut client = brigade::net::TcpStream::connect(listener.local_addr()?).await?;
    ///     let (mut server, _) = listener.accept().await?;
    ///     client.write_all(b"GET /").await?;
    ///     let mut head = [0u8; 3];
    ///     let n = server.peek(&mut head).await?;
    ///     assert_eq!(&head[..n], &b"GET"[..n]);
    ///     let mut request = [0u8; 5];
    ///     server.read_exact(&mut request).await?;
    ///     assert_eq!(&request, b"GET /");
    ///     std::io::Result::Ok(())
    /// })?;
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub async fn peek(&self, buf: &mut [u8]) -> io::Result<usize> {
        poll_fn(|cx| self.io.poll_read_io(cx, |stream| stream.peek(buf))).await
    }

    /// Polls a [`peek`](Self::peek) into tokio's `ReadBuf`: on success the
    /// bytes fill `buf` (still unread on the socket) and their count is
    /// returned.
    #[cfg(feature = "tokio-io")]
    #[cfg_attr(docsrs, doc(cfg(feature = "tokio-io")))]
    pub fn poll_peek(
        &self,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<io::Result<usize>> {
        let unfilled = buf.initialize_unfilled();
        let peeked = self.io.poll_read_io(cx, |stream| stream.peek(unfilled));
        if let std::task::Poll::Ready(Ok(n)) = peeked {
            buf.advance(n);
        }
        peeked
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

#[cfg(unix)]
super::fd_impls!(TcpStream);
