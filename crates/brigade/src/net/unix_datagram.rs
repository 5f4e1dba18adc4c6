//! `UnixDatagram`.

use std::fmt;
use std::future::poll_fn;
use std::io;
use std::os::unix::net::SocketAddr;
use std::path::Path;

use crate::io::Interest;
use crate::io::poll_evented::PollEvented;

/// A Unix domain datagram socket.
///
/// A socket bound to a path leaves its socket file behind when dropped (as
/// with tokio and the standard library): remove it yourself.
///
/// # Examples
///
/// ```
/// use brigade::net::UnixDatagram;
///
/// let path = std::env::temp_dir().join(format!("brigade-dgram-{}.sock", std::process::id()));
/// let rt = brigade::Runtime::new()?;
/// rt.block_on(async {
///     let server = UnixDatagram::bind(&path)?;
///     let client = UnixDatagram::unbound()?;
///     client.send_to(b"ping", &path).await?;
///     let mut buf = [0u8; 16];
///     let (n, _from) = server.recv_from(&mut buf).await?;
///     assert_eq!(&buf[..n], b"ping");
///     std::io::Result::Ok(())
/// })?;
/// std::fs::remove_file(&path)?;
/// # Ok::<(), std::io::Error>(())
/// ```
pub struct UnixDatagram {
    io: PollEvented<mio::net::UnixDatagram>,
}

impl UnixDatagram {
    fn from_mio(socket: mio::net::UnixDatagram, what: &str) -> io::Result<UnixDatagram> {
        Ok(UnixDatagram {
            io: PollEvented::new(socket, what)?,
        })
    }

    /// Creates a socket bound to a new socket file at `path`.
    ///
    /// Not `async`, like tokio's: binding does not block. Returns an error
    /// if called outside a brigade runtime.
    pub fn bind(path: impl AsRef<Path>) -> io::Result<UnixDatagram> {
        let socket = mio::net::UnixDatagram::bind(path)?;
        Self::from_mio(socket, "brigade::net::UnixDatagram::bind")
    }

    /// Creates a socket bound to no address: it can send, and receive
    /// replies only once [connected](Self::connect) (an unbound sender has
    /// no address to reply to).
    pub fn unbound() -> io::Result<UnixDatagram> {
        let socket = mio::net::UnixDatagram::unbound()?;
        Self::from_mio(socket, "brigade::net::UnixDatagram::unbound")
    }

    /// Creates a pair of unnamed sockets connected to each other.
    pub fn pair() -> io::Result<(UnixDatagram, UnixDatagram)> {
        let what = "brigade::net::UnixDatagram::pair";
        let (a, b) = mio::net::UnixDatagram::pair()?;
        Ok((Self::from_mio(a, what)?, Self::from_mio(b, what)?))
    }

    /// Wraps a standard-library socket (made non-blocking here).
    ///
    /// Returns an error if called outside a brigade runtime.
    pub fn from_std(socket: std::os::unix::net::UnixDatagram) -> io::Result<UnixDatagram> {
        socket.set_nonblocking(true)?;
        let socket = mio::net::UnixDatagram::from_std(socket);
        Self::from_mio(socket, "brigade::net::UnixDatagram::from_std")
    }

    /// Deregisters the socket and returns it as a standard-library one
    /// (still in non-blocking mode).
    pub fn into_std(self) -> io::Result<std::os::unix::net::UnixDatagram> {
        Ok(self.io.into_inner().into())
    }

    /// Takes the socket's pending error (`SO_ERROR`), if any.
    pub fn take_error(&self) -> io::Result<Option<io::Error>> {
        self.io.get_ref().take_error()
    }

    /// Sets the default destination for [`send`](Self::send) and the only
    /// source [`recv`](Self::recv) accepts. Not `async`: connecting a
    /// datagram socket does not block.
    pub fn connect(&self, path: impl AsRef<Path>) -> io::Result<()> {
        self.io.get_ref().connect(path)
    }

    /// Sends `buf` to the socket at `target`; returns the number of bytes sent.
    pub async fn send_to(&self, buf: &[u8], target: impl AsRef<Path>) -> io::Result<usize> {
        let target = target.as_ref();
        poll_fn(|cx| {
            self.io
                .poll_write_io(cx, |socket| socket.send_to(buf, target))
        })
        .await
    }

    /// Polls to send `buf` to the socket at `target`; see
    /// [`poll_send`](Self::poll_send).
    pub fn poll_send_to(
        &self,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
        target: impl AsRef<Path>,
    ) -> std::task::Poll<io::Result<usize>> {
        let target = target.as_ref();
        self.io
            .poll_write_io(cx, |socket| socket.send_to(buf, target))
    }

    /// Sends `buf` to the socket at `target` without waiting, or returns
    /// `WouldBlock`; then wait with [`writable`](Self::writable) and try
    /// again.
    pub fn try_send_to(&self, buf: &[u8], target: impl AsRef<Path>) -> io::Result<usize> {
        let target = target.as_ref();
        self.io
            .try_io(Interest::WRITABLE, |socket| socket.send_to(buf, target))
    }

    /// The local address (unnamed unless bound to a path).
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.io.get_ref().local_addr()
    }

    /// The connected peer's address.
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.io.get_ref().peer_addr()
    }
}

super::datagram::datagram_io!(UnixDatagram, SocketAddr);

impl fmt::Debug for UnixDatagram {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.io.get_ref().fmt(f)
    }
}

super::fd_impls!(UnixDatagram);
