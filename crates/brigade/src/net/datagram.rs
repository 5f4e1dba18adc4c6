//! What `UdpSocket` and `UnixDatagram` share: the receive and connected-send
//! methods, which differ only in the type of the sender's address, and the
//! readiness methods.

/// Gives a datagram type (a struct with an `io: PollEvented<S>` field, where
/// `S` has mio's `recv_from`/`send`/`recv`) its async `recv_from`, `send`
/// and `recv`, their `try_` forms, and its readiness methods; `$addr` is
/// the address type `recv_from` returns.
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
        }
    };
}

pub(crate) use datagram_io;
