//! `TcpSocket`: a TCP socket configured before it connects or listens.
//!
//! Built on `socket2`, the crate tokio and the standard library's
//! ecosystem use for this: it creates the socket and sets each option with
//! the right `setsockopt` level, name and value type per platform, so none
//! of that `unsafe` code is written here.

use std::fmt;
use std::io;
use std::net::SocketAddr;
use std::time::Duration;

use socket2::{Domain, Protocol, SockAddr, Socket, Type};

use super::{TcpListener, TcpStream};

/// A TCP socket not yet connected or listening, for setting options that
/// must be set before (`SO_REUSEADDR`, `SO_REUSEPORT`, buffer sizes, the
/// listen backlog), as tokio's `TcpSocket`.
///
/// Create it with [`new_v4`](Self::new_v4) or [`new_v6`](Self::new_v6),
/// set options, optionally [`bind`](Self::bind), then turn it into a
/// [`TcpStream`] with [`connect`](Self::connect) or a [`TcpListener`] with
/// [`listen`](Self::listen). Creating and configuring it works anywhere;
/// `connect` and `listen` register with the reactor, so they must run
/// inside a brigade runtime (elsewhere they return an error that says so).
///
/// # Examples
///
/// ```
/// use brigade::net::TcpSocket;
///
/// let rt = brigade::Runtime::new()?;
/// rt.block_on(async {
///     let socket = TcpSocket::new_v4()?;
///     socket.set_reuseaddr(true)?;
///     socket.set_reuseport(true)?;
///     socket.bind("127.0.0.1:0".parse().unwrap())?;
///     let listener = socket.listen(1024)?;
///
///     let client = TcpSocket::new_v4()?;
///     client.set_nodelay(true)?;
///     let stream = client.connect(listener.local_addr()?).await?;
///     assert!(stream.nodelay()?);
///     std::io::Result::Ok(())
/// })?;
/// # Ok::<(), std::io::Error>(())
/// ```
pub struct TcpSocket {
    inner: Socket,
}

impl TcpSocket {
    /// Creates an IPv4 TCP socket.
    pub fn new_v4() -> io::Result<TcpSocket> {
        TcpSocket::new(Domain::IPV4)
    }

    /// Creates an IPv6 TCP socket.
    pub fn new_v6() -> io::Result<TcpSocket> {
        TcpSocket::new(Domain::IPV6)
    }

    fn new(domain: Domain) -> io::Result<TcpSocket> {
        // `Socket::new` sets close-on-exec where the platform has it.
        let inner = Socket::new(domain, Type::STREAM, Some(Protocol::TCP))?;
        Ok(TcpSocket { inner })
    }

    /// Wraps a standard-library socket that is not connected yet: one made
    /// elsewhere (with `socket2`, say) to set options this type does not
    /// offer. [`connect`](Self::connect) and [`listen`](Self::listen) make
    /// it non-blocking.
    pub fn from_std_stream(stream: std::net::TcpStream) -> TcpSocket {
        TcpSocket {
            inner: Socket::from(stream),
        }
    }

    /// Sets `SO_KEEPALIVE`.
    pub fn set_keepalive(&self, keepalive: bool) -> io::Result<()> {
        self.inner.set_keepalive(keepalive)
    }

    /// Reads `SO_KEEPALIVE`.
    pub fn keepalive(&self) -> io::Result<bool> {
        self.inner.keepalive()
    }

    /// Sets `SO_REUSEADDR`: on Unix, a listener may bind an address that
    /// still has connections in `TIME_WAIT`.
    pub fn set_reuseaddr(&self, reuseaddr: bool) -> io::Result<()> {
        self.inner.set_reuse_address(reuseaddr)
    }

    /// Reads `SO_REUSEADDR`.
    pub fn reuseaddr(&self) -> io::Result<bool> {
        self.inner.reuse_address()
    }

    /// Sets `SO_REUSEPORT`: several sockets (each with the option set) may
    /// bind the same address and port; on Linux the kernel spreads
    /// incoming connections over their listeners.
    #[cfg(all(unix, not(any(target_os = "solaris", target_os = "illumos"))))]
    pub fn set_reuseport(&self, reuseport: bool) -> io::Result<()> {
        self.inner.set_reuse_port(reuseport)
    }

    /// Reads `SO_REUSEPORT`.
    #[cfg(all(unix, not(any(target_os = "solaris", target_os = "illumos"))))]
    pub fn reuseport(&self) -> io::Result<bool> {
        self.inner.reuse_port()
    }

    /// Sets `SO_SNDBUF`, the size of the send buffer. The kernel may adjust
    /// it: Linux doubles the value (for its bookkeeping) and applies a
    /// minimum, so [`send_buffer_size`](Self::send_buffer_size) may return
    /// more.
    pub fn set_send_buffer_size(&self, size: u32) -> io::Result<()> {
        self.inner.set_send_buffer_size(size as usize)
    }

    /// Reads `SO_SNDBUF`.
    pub fn send_buffer_size(&self) -> io::Result<u32> {
        self.inner.send_buffer_size().map(saturate_u32)
    }

    /// Sets `SO_RCVBUF`, the size of the receive buffer; the kernel may
    /// adjust it, as for [`set_send_buffer_size`](Self::set_send_buffer_size).
    pub fn set_recv_buffer_size(&self, size: u32) -> io::Result<()> {
        self.inner.set_recv_buffer_size(size as usize)
    }

    /// Reads `SO_RCVBUF`.
    pub fn recv_buffer_size(&self) -> io::Result<u32> {
        self.inner.recv_buffer_size().map(saturate_u32)
    }

    /// Sets `SO_LINGER`: with `Some(duration)`, closing waits up to that
    /// long for unsent data (`Some(Duration::ZERO)` resets the connection
    /// instead); `None` turns lingering off.
    pub fn set_linger(&self, linger: Option<Duration>) -> io::Result<()> {
        self.inner.set_linger(linger)
    }

    /// Reads `SO_LINGER`.
    pub fn linger(&self) -> io::Result<Option<Duration>> {
        self.inner.linger()
    }

    /// Sets `TCP_NODELAY` (disables Nagle's algorithm when `true`); the
    /// stream from [`connect`](Self::connect) keeps it.
    pub fn set_nodelay(&self, nodelay: bool) -> io::Result<()> {
        self.inner.set_tcp_nodelay(nodelay)
    }

    /// Reads `TCP_NODELAY`.
    pub fn nodelay(&self) -> io::Result<bool> {
        self.inner.tcp_nodelay()
    }

    /// The local address, once bound (or after `connect` picked one).
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        socket_addr(self.inner.local_addr()?)
    }

    /// Takes the pending socket error (`SO_ERROR`), if any.
    pub fn take_error(&self) -> io::Result<Option<io::Error>> {
        self.inner.take_error()
    }

    /// Binds to `addr`. Port 0 asks the OS for a free port.
    pub fn bind(&self, addr: SocketAddr) -> io::Result<()> {
        self.inner.bind(&SockAddr::from(addr))
    }

    /// Connects to `addr` and returns the stream once connected; a refused
    /// or failed connection is an error.
    ///
    /// Must run inside a brigade runtime.
    pub async fn connect(self, addr: SocketAddr) -> io::Result<TcpStream> {
        self.inner.set_nonblocking(true)?;
        if let Err(error) = self.inner.connect(&SockAddr::from(addr))
            && !connect_in_progress(&error)
        {
            return Err(error);
        }
        let stream = mio::net::TcpStream::from_std(self.inner.into());
        TcpStream::connecting(stream, "brigade::net::TcpSocket::connect").await
    }

    /// Starts listening, with at most `backlog` connections waiting to be
    /// accepted (the OS may cap it, at `net.core.somaxconn` on Linux), and
    /// returns the listener. Binds to a free port first if not bound.
    ///
    /// Must be called inside a brigade runtime.
    pub fn listen(self, backlog: u32) -> io::Result<TcpListener> {
        let backlog = i32::try_from(backlog).unwrap_or(i32::MAX);
        self.inner.set_nonblocking(true)?;
        self.inner.listen(backlog)?;
        let listener = mio::net::TcpListener::from_std(self.inner.into());
        TcpListener::from_mio(listener, "brigade::net::TcpSocket::listen")
    }
}

fn saturate_u32(size: usize) -> u32 {
    u32::try_from(size).unwrap_or(u32::MAX)
}

fn socket_addr(addr: SockAddr) -> io::Result<SocketAddr> {
    addr.as_socket().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "the socket's address is not an IP address",
        )
    })
}

/// Whether a non-blocking `connect` failed only because it has not
/// finished yet.
fn connect_in_progress(error: &io::Error) -> bool {
    #[cfg(unix)]
    if error.raw_os_error() == Some(libc::EINPROGRESS) {
        return true;
    }
    error.kind() == io::ErrorKind::WouldBlock
}

impl fmt::Debug for TcpSocket {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.inner.fmt(f)
    }
}

#[cfg(unix)]
mod fd {
    use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, IntoRawFd, RawFd};

    use super::TcpSocket;

    impl AsRawFd for TcpSocket {
        fn as_raw_fd(&self) -> RawFd {
            self.inner.as_raw_fd()
        }
    }

    impl AsFd for TcpSocket {
        fn as_fd(&self) -> BorrowedFd<'_> {
            self.inner.as_fd()
        }
    }

    impl FromRawFd for TcpSocket {
        /// Takes ownership of `fd`, an open TCP socket owned by nobody else
        /// (the trait's safety contract).
        unsafe fn from_raw_fd(fd: RawFd) -> TcpSocket {
            TcpSocket {
                // SAFETY: the caller passes ownership of an open socket.
                inner: unsafe { socket2::Socket::from_raw_fd(fd) },
            }
        }
    }

    impl IntoRawFd for TcpSocket {
        fn into_raw_fd(self) -> RawFd {
            self.inner.into_raw_fd()
        }
    }
}
