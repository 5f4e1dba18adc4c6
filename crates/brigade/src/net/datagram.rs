//! What `UdpSocket` and `UnixDatagram` share: the receive and connected-send
//! methods and their `poll_` forms, which differ only in the type of the
//! sender's address, and the readiness methods.
//!
//! The `poll_` forms spend the task's cooperative budget as the async
//! methods do (through `PollEvented`'s `poll_read_io`/`poll_write_io`),
//! and fill tokio's `ReadBuf`, so they need the `tokio-io` feature.

/// Gives a datagram type (a struct with an `io: PollEvented<S>` field, where
/// `S` has mio's `recv_from`/`send`/`recv`) its async `recv_from`, `send`
/// and `recv`, their `try_` and `poll_` forms, and its readiness methods;
/// `$addr` is the address type `recv_from` returns.
macro_rules! datagram_io {
    ($ty:ident, $addr:ty) => {
        $crate::net::readiness::readiness!($ty, poll_recv_ready, poll_send_ready);

        impl $ty {
            /// Receives one datagram without waiting: its length and
            /// sender, or `WouldBlock` if none is queued; then wait with
            /// [`readable`](Self::readable) and try again.
            pub fn try_recv_from(&self, buf: &mut [u8]) -> std::io::Result<(usize, $addr)> {
                self.io.try_io($crate::io::Interest::READABLE, |socket| {
                    socket.recv_from(buf)
                })
            }

            /// Sends `buf` to the connected peer without waiting, or
            /// returns `WouldBlock`; then wait with
            /// [`writable`](Self::writable) and try again.
            pub fn try_send(&self, buf: &[u8]) -> std::io::Result<usize> {
                self.io
                    .try_io($crate::io::Interest::WRITABLE, |socket| socket.send(buf))
            }

            /// Receives one datagram from the connected peer without
            /// waiting, or returns `WouldBlock`; then wait with
            /// [`readable`](Self::readable) and try again.
            pub fn try_recv(&self, buf: &mut [u8]) -> std::io::Result<usize> {
                self.io
                    .try_io($crate::io::Interest::READABLE, |socket| socket.recv(buf))
            }

            /// Receives one datagram; returns its length and sender.
            pub async fn recv_from(&self, buf: &mut [u8]) -> std::io::Result<(usize, $addr)> {
                std::future::poll_fn(|cx| self.io.poll_read_io(cx, |socket| socket.recv_from(buf)))
                    .await
            }

            /// Sends `buf` to the connected peer.
            pub async fn send(&self, buf: &[u8]) -> std::io::Result<usize> {
                std::future::poll_fn(|cx| self.io.poll_write_io(cx, |socket| socket.send(buf)))
                    .await
            }

            /// Receives one datagram from the connected peer.
            pub async fn recv(&self, buf: &mut [u8]) -> std::io::Result<usize> {
                std::future::poll_fn(|cx| self.io.poll_read_io(cx, |socket| socket.recv(buf))).await
            }

            /// Polls to receive one datagram from the connected peer into
            /// the unfilled part of `buf` (a longer datagram is cut to
            /// fit): `Pending` registers the task's waker.
            #[cfg(feature = "tokio-io")]
            #[cfg_attr(docsrs, doc(cfg(feature = "tokio-io")))]
            pub fn poll_recv(
                &self,
                cx: &mut std::task::Context<'_>,
                buf: &mut tokio::io::ReadBuf<'_>,
            ) -> std::task::Poll<std::io::Result<()>> {
                let unfilled = buf.initialize_unfilled();
                let received = self.io.poll_read_io(cx, |socket| socket.recv(unfilled));
                received.map_ok(|n| buf.advance(n))
            }

            /// Polls to receive one datagram into the unfilled part of
            /// `buf`; returns its sender. See [`poll_recv`](Self::poll_recv).
            #[cfg(feature = "tokio-io")]
            #[cfg_attr(docsrs, doc(cfg(feature = "tokio-io")))]
            pub fn poll_recv_from(
                &self,
                cx: &mut std::task::Context<'_>,
                buf: &mut tokio::io::ReadBuf<'_>,
            ) -> std::task::Poll<std::io::Result<$addr>> {
                let unfilled = buf.initialize_unfilled();
                let received = self
                    .io
                    .poll_read_io(cx, |socket| socket.recv_from(unfilled));
                received.map_ok(|(n, from)| {
                    buf.advance(n);
                    from
                })
            }

            /// Polls to send `buf` to the connected peer: the number of
            /// bytes sent, or `Pending` (the task's waker registered)
            /// while the socket's send buffer is full.
            pub fn poll_send(
                &self,
                cx: &mut std::task::Context<'_>,
                buf: &[u8],
            ) -> std::task::Poll<std::io::Result<usize>> {
                self.io.poll_write_io(cx, |socket| socket.send(buf))
            }
        }
    };
}

pub(crate) use datagram_io;
