//! TCP, UDP and (on Unix) Unix domain sockets driven by the runtime's reactor.
//!
//! The types mirror tokio's, with the same names, signatures and
//! behaviour: [`TcpListener::bind`] / [`accept`](TcpListener::accept),
//! [`TcpStream::connect`], [`TcpSocket`] (options set before connecting or
//! listening), [`UdpSocket`], [`lookup_host`], and on Unix `UnixListener`,
//! `UnixStream` and `UnixDatagram`. A port from `tokio::net` renames the
//! path and nothing else.
//!
//! [`TcpStream`] and `UnixStream` implement `futures_io::AsyncRead`/
//! `AsyncWrite` and, with the default `tokio-io` feature, tokio's
//! `AsyncRead`/`AsyncWrite`, and have no inherent `read`/`write` methods
//! of their own: read and write with tokio's `AsyncReadExt`/
//! `AsyncWriteExt` (tokio with its `io-util` feature) or futures'
//! extension traits, and codecs and adapters from either ecosystem work on
//! them. Like tokio's, they also have `split` and `into_split` (halves in
//! [`tcp`] and `unix`), `readable`/`writable`/`ready` with
//! `try_read`/`try_write` (readiness types in [`crate::io`]), and
//! [`peek`](TcpStream::peek).
//!
//! Sockets register with the runtime they are created in, so they must be
//! created inside one (a task, `Runtime::block_on`, or a `spawn_blocking`
//! closure); elsewhere, creating one returns an error that says so.
//!
//! # Examples
//!
//! ```
//! use brigade::net::{TcpListener, TcpStream};
//! use tokio::io::{AsyncReadExt, AsyncWriteExt};
//!
//! let rt = brigade::Runtime::new()?;
//! rt.block_on(async {
//!     let listener = TcpListener::bind("127.0.0.1:0").await?;
//!     let addr = listener.local_addr()?;
//!     let server = brigade::spawn(async move {
//!         let (mut stream, _) = listener.accept().await?;
//!         let mut buf = [0u8; 5];
//!         stream.read_exact(&mut buf).await?;
//!         stream.write_all(&buf).await?;
//!         std::io::Result::Ok(())
//!     });
//!     let mut client = TcpStream::connect(addr).await?;
//!     client.write_all(b"hello").await?;
//!     let mut echo = [0u8; 5];
//!     client.read_exact(&mut echo).await?;
//!     assert_eq!(&echo, b"hello");
//!     server.await??;
//!     std::io::Result::Ok(())
//! })?;
//! # Ok::<(), std::io::Error>(())
//! ```
//!
//! Waiting for readiness, then reading without waiting, as with tokio:
//!
//! ```
//! use brigade::net::UdpSocket;
//!
//! let rt = brigade::Runtime::new()?;
//! rt.block_on(async {
//!     let socket = UdpSocket::bind("127.0.0.1:0").await?;
//!     socket.connect(socket.local_addr()?).await?;
//!     socket.send(b"ping").await?;
//!     let mut buf = [0u8; 16];
//!     let n = loop {
//!         socket.readable().await?;
//!         match socket.try_recv(&mut buf) {
//!             Ok(n) => break n,
//!             Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
//!             Err(e) => return Err(e),
//!         }
//!     };
//!     assert_eq!(&buf[..n], b"ping");
//!     std::io::Result::Ok(())
//! })?;
//! # Ok::<(), std::io::Error>(())
//! ```

mod addr;
mod byte_stream;
mod datagram;
mod readiness;
mod split;
pub mod tcp;
mod tcp_listener;
mod tcp_socket;
mod tcp_stream;
#[cfg(unix)]
mod ucred;
mod udp;
#[cfg(unix)]
pub mod unix;
#[cfg(unix)]
mod unix_datagram;
#[cfg(unix)]
mod unix_listener;
#[cfg(unix)]
mod unix_stream;

pub use addr::{ToSocketAddrs, lookup_host};
pub use tcp_listener::TcpListener;
pub use tcp_socket::TcpSocket;
pub use tcp_stream::TcpStream;
pub use udp::UdpSocket;
#[cfg(unix)]
pub use unix_datagram::UnixDatagram;
#[cfg(unix)]
pub use unix_listener::UnixListener;
#[cfg(unix)]
pub use unix_stream::UnixStream;

/// `AsRawFd` and `AsFd` for socket types with an `io: PollEvented<S>`
/// field, through the mio source's descriptor.
#[cfg(unix)]
macro_rules! fd_impls {
    ($ty:ident) => {
        impl std::os::fd::AsRawFd for $ty {
            fn as_raw_fd(&self) -> std::os::fd::RawFd {
                std::os::fd::AsRawFd::as_raw_fd(self.io.get_ref())
            }
        }

        impl std::os::fd::AsFd for $ty {
            fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
                std::os::fd::AsFd::as_fd(self.io.get_ref())
            }
        }
    };
}
#[cfg(unix)]
use fd_impls;
