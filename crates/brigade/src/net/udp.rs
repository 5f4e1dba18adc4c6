//! `UdpSocket`.

use std::fmt;
use std::future::poll_fn;
use std::io;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};
use std::task::{Context, Poll};

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

    /// Polls a [`peek_from`](Self::peek_from) into the unfilled part of
    /// `buf`: `Pending` registers the task's waker; `Ready` returns the
    /// sender, the datagram still queued.
    #[cfg(feature = "tokio-io")]
    #[cfg_attr(docsrs, doc(cfg(feature = "tokio-io")))]
    pub fn poll_peek_from(
        &self,
        cx: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<io::Result<SocketAddr>> {
        let unfilled = buf.initialize_unfilled();
        let peeked = self
            .io
            .poll_read_io(cx, |socket| socket.peek_from(unfilled));
        peeked.map_ok(|(n, from)| {
            buf.advance(n);
            from
        })
    }

    /// Receives the next datagram from the connected peer without removing
    /// it from the queue: its length (at most `buf.len()`). The next
    /// receive gets the same datagram.
    pub async fn peek(&self, buf: &mut [u8]) -> io::Result<usize> {
        poll_fn(|cx| self.io.poll_read_io(cx, |socket| socket.peek(buf))).await
    }

    /// Polls a [`peek`](Self::peek) into the unfilled part of `buf`.
    #[cfg(feature = "tokio-io")]
    #[cfg_attr(docsrs, doc(cfg(feature = "tokio-io")))]
    pub fn poll_peek(
        &self,
        cx: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let unfilled = buf.initialize_unfilled();
        let peeked = self.io.poll_read_io(cx, |socket| socket.peek(unfilled));
        peeked.map_ok(|n| buf.advance(n))
    }

    /// Like [`peek`](Self::peek) without waiting, or returns `WouldBlock`.
    pub fn try_peek(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.io
            .try_io(Interest::READABLE, |socket| socket.peek(buf))
    }

    /// Polls to send `buf` to `target`: the number of bytes sent, or
    /// `Pending` (the task's waker registered) while the socket's send
    /// buffer is full.
    pub fn poll_send_to(
        &self,
        cx: &mut Context<'_>,
        buf: &[u8],
        target: SocketAddr,
    ) -> Poll<io::Result<usize>> {
        self.io
            .poll_write_io(cx, |socket| socket.send_to(buf, target))
    }

    /// Deregisters the socket and returns it as a standard-library one
    /// (still in non-blocking mode).
    pub fn into_std(self) -> io::Result<std::net::UdpSocket> {
        Ok(self.io.into_inner().into())
    }

    /// Takes the socket's pending error (`SO_ERROR`), if any: an ICMP
    /// error for an earlier send, for instance.
    pub fn take_error(&self) -> io::Result<Option<io::Error>> {
        self.io.get_ref().take_error()
    }

    /// Sets `SO_BROADCAST`: whether sending to a broadcast address is
    /// allowed.
    pub fn set_broadcast(&self, on: bool) -> io::Result<()> {
        self.io.get_ref().set_broadcast(on)
    }

    /// Reads `SO_BROADCAST`.
    pub fn broadcast(&self) -> io::Result<bool> {
        self.io.get_ref().broadcast()
    }

    /// Sets `IP_TTL`, the time to live of the packets this socket sends.
    pub fn set_ttl(&self, ttl: u32) -> io::Result<()> {
        self.io.get_ref().set_ttl(ttl)
    }

    /// Reads `IP_TTL`.
    pub fn ttl(&self) -> io::Result<u32> {
        self.io.get_ref().ttl()
    }

    /// Joins the IPv4 multicast group `multiaddr` on the interface whose
    /// address is `interface` (`Ipv4Addr::UNSPECIFIED`: the one the
    /// system picks).
    pub fn join_multicast_v4(&self, multiaddr: Ipv4Addr, interface: Ipv4Addr) -> io::Result<()> {
        self.io.get_ref().join_multicast_v4(&multiaddr, &interface)
    }

    /// Leaves a group joined with
    /// [`join_multicast_v4`](Self::join_multicast_v4).
    pub fn leave_multicast_v4(&self, multiaddr: Ipv4Addr, interface: Ipv4Addr) -> io::Result<()> {
        self.io.get_ref().leave_multicast_v4(&multiaddr, &interface)
    }

    /// Joins the IPv6 multicast group `multiaddr` on the interface with
    /// index `interface` (0: the one the system picks).
    pub fn join_multicast_v6(&self, multiaddr: &Ipv6Addr, interface: u32) -> io::Result<()> {
        self.io.get_ref().join_multicast_v6(multiaddr, interface)
    }

    /// Leaves a group joined with
    /// [`join_multicast_v6`](Self::join_multicast_v6).
    pub fn leave_multicast_v6(&self, multiaddr: &Ipv6Addr, interface: u32) -> io::Result<()> {
        self.io.get_ref().leave_multicast_v6(multiaddr, interface)
    }

    /// Sets `IP_MULTICAST_LOOP`: whether this host's own members of a
    /// group receive what this socket sends to it (on by default).
    pub fn set_multicast_loop_v4(&self, on: bool) -> io::Result<()> {
        self.io.get_ref().set_multicast_loop_v4(on)
    }

    /// Reads `IP_MULTICAST_LOOP`.
    pub fn multicast_loop_v4(&self) -> io::Result<bool> {
        self.io.get_ref().multicast_loop_v4()
    }

    /// Sets `IP_MULTICAST_TTL`, the time to live of the multicast packets
    /// this socket sends (1 by default: they stay on the local network).
    pub fn set_multicast_ttl_v4(&self, ttl: u32) -> io::Result<()> {
        self.io.get_ref().set_multicast_ttl_v4(ttl)
    }

    /// Reads `IP_MULTICAST_TTL`.
    pub fn multicast_ttl_v4(&self) -> io::Result<u32> {
        self.io.get_ref().multicast_ttl_v4()
    }

    /// Sets `IPV6_MULTICAST_LOOP`; see
    /// [`set_multicast_loop_v4`](Self::set_multicast_loop_v4).
    pub fn set_multicast_loop_v6(&self, on: bool) -> io::Result<()> {
        self.io.get_ref().set_multicast_loop_v6(on)
    }

    /// Reads `IPV6_MULTICAST_LOOP`.
    pub fn multicast_loop_v6(&self) -> io::Result<bool> {
        self.io.get_ref().multicast_loop_v6()
    }
}

super::datagram::datagram_io!(UdpSocket, SocketAddr);

impl fmt::Debug for UdpSocket {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.io.get_ref().fmt(f)
    }
}

#[cfg(unix)]
super::fd_impls!(UdpSocket);
