//! TCP and UDP sockets driven by the runtime's reactor.
//!
//! The types mirror tokio's: [`TcpListener::bind`] / [`accept`](TcpListener::accept),
//! [`TcpStream::connect`], [`UdpSocket::bind`]. [`TcpStream`] implements
//! `futures_io::AsyncRead`/`AsyncWrite` and, with the default `tokio-io`
//! feature, tokio's `AsyncRead`/`AsyncWrite`, so codecs and adapters from
//! either ecosystem work on it.
//!
//! Sockets register with the runtime they are created in, so they must be
//! created inside one (a task, `Runtime::block_on`, or a `spawn_blocking`
//! closure); elsewhere, creating one returns an error that says so.
//!
//! # Examples
//!
//! ```
//! use brigade::net::{TcpListener, TcpStream};
//!
//! let rt = brigade::Runtime::new()?;
//! rt.block_on(async {
//!     let listener = TcpListener::bind("127.0.0.1:0").await?;
//!     let addr = listener.local_addr()?;
//!     let server = brigade::spawn(async move {
//!         let (stream, _) = listener.accept().await?;
//!         let mut buf = [0u8; 5];
//!         stream.read_exact(&mut buf).await?;
//!         stream.write_all(&buf).await?;
//!         std::io::Result::Ok(())
//!     });
//!     let client = TcpStream::connect(addr).await?;
//!     client.write_all(b"hello").await?;
//!     let mut echo = [0u8; 5];
//!     client.read_exact(&mut echo).await?;
//!     assert_eq!(&echo, b"hello");
//!     server.await??;
//!     std::io::Result::Ok(())
//! })?;
//! # Ok::<(), std::io::Error>(())
//! ```

mod addr;
mod tcp_listener;
mod tcp_stream;
mod udp;

pub use addr::ToSocketAddrs;
pub use tcp_listener::TcpListener;
pub use tcp_stream::TcpStream;
pub use udp::UdpSocket;
