//! `UdpSocket`.

use std::fmt;
use std::future::poll_fn;
use std::io;
use std::net::SocketAddr;

use super::addr::{ToSocketAddrs, first_ok, resolve};
use crate::io::Interest;
use crate::io::poll_evented::PollEvented;

/// A UDP socket.
///
/// # Examples
///
/// ```
/// use brigade::net::UdpSocket;
///
/// let rt = brigade::Runtime::new()?;
/// rt.block_on(async {
///     let a = UdpSocket::bind("127.0.0.1:0").await?;
///     let b = UdpSocket::bind("127.0.0.1:0").await?;
///     a.send_to(b"ping", b.local_addr()?).await?;
///     let mut buf = [0u8; 16];
///     let (n, from) = b.recv_from(&mut buf).await?;
///     assert_eq!((&buf[..n], from), (&b"ping"[..], a.local_addr()?));
///     std::io::Result::Ok(())
/// })?;
/// # Ok::<(), std::io::Error>(())
/// ```
pub struct UdpSocket {
    io: PollEvented<mio::net::UdpSocket>,
}

impl UdpSocket {
    /// Binds to `addr` (the first of its addresses that works).
    pub async fn bind(addr: impl ToSocketAddrs) -> io::Result<UdpSocket> {
        let addrs = resolve(&addr).await?;
        first_ok(addrs, |addr| async move {
            Ok(UdpSocket {
                io: PollEvented::new(
                    mio::net::UdpSocket::bind(addr)?,
                    "brigade::net::UdpSocket::bind",
                )?,
            })
        })
        .await
    }

    /// Wraps a standard-library socket (made non-blocking here).
    ///
    /// Returns an error if called outside a brigade runtime.
    pub fn from_std(socket: std::net::UdpSocket) -> io::Result<UdpSocket> {
        socket.set_nonblocking(true)?;
        Ok(UdpSocket {
            io: PollEvented::new(
                mio::net::UdpSocket::from_std(socket),
                "brigade::net::UdpSocket::from_std",
            )?,
        })
    }

    /// Sets the default destination for [`send`](Self::send) and the only
    /// source [`recv`](Self::recv) accepts.
    pub async fn connect(&self, addr: impl ToSocketAddrs) -> io::Result<()> {
        let addrs = resolve(&addr).await?;
        first_ok(addrs, |addr| async move { self.io.get_ref().connect(addr) }).await
    }

    /// Sends `buf` to `target`; returns the number of bytes sent.
    pub async fn send_to(&self, buf: &[u8], target: impl ToSocketAddrs) -> io::Result<usize> {
        let addrs = resolve(&target).await?;
        let target = *addrs
            .first()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no address to send to"))?;
        poll_fn(|cx| {
            self.io
                .poll_write_io(cx, |socket| socket.send_to(buf, target))
        })
        .await
    }

    /// The local address.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.io.get_ref().local_addr()
    }

    /// The connected peer's address.
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.io.get_ref().peer_addr()
    }

    /// Sends `buf` to `target` without waiting, or returns `WouldBlock`;
    /// then wait with [`writable`](Self::writable) and try again.
    pub fn try_send_to(&self, buf: &[u8], target: SocketAddr) -> io::Result<usize> {
        self.io
            .try_io(Interest::WRITABLE, |socket| socket.send_to(buf, target))
    }

    /// Receives the next datagram without removing it from the queue: its
    /// length (at most `buf.len()`) and sender. The next receive gets the
    /// same datagram.
    pub async fn peek_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        poll_fn(|cx| self.io.poll_read_io(cx, |socket| socket.peek_from(buf))).await
    }

    /// Like [`peek_from`](Self::peek_from) without waiting, or returns
    /// `WouldBlock`.
    pub fn try_peek_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        self.io
            .try_io(Interest::READABLE, |socket| socket.peek_from(buf))
    }

    /// Sets `SO_BROADCAST`.
    pub fn set_broadcast(&self, on: bool) -> io::Result<()> {
        self.io.get_ref().set_broadcast(on)
    }
}

super::datagram::datagram_io!(UdpSocket, SocketAddr);

impl fmt::Debug for UdpSocket {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.io.get_ref().fmt(f)
    }
}
