//! The halves of a split [`TcpStream`], as in `tokio::net::tcp`: borrowed
//! ([`ReadHalf`], [`WriteHalf`], from [`TcpStream::split`]) and owned
//! ([`OwnedReadHalf`], [`OwnedWriteHalf`], from [`TcpStream::into_split`]).
//!
//! # Examples
//!
//! A reader task and a writer task on one connection:
//!
//! ```
//! use brigade::net::{TcpListener, TcpStream};
//! use tokio::io::{AsyncReadExt, AsyncWriteExt};
//!
//! let rt = brigade::Runtime::new()?;
//! rt.block_on(async {
//!     let listener = TcpListener::bind("127.0.0.1:0").await?;
//!     let client = TcpStream::connect(listener.local_addr()?).await?;
//!     let (server, _) = listener.accept().await?;
//!     let (mut read, mut write) = server.into_split();
//!     let writer = brigade::spawn(async move {
//!         write.write_all(b"hello").await?;
//!         std::io::Result::Ok(write)
//!     });
//!     let mut client = client;
//!     let mut greeting = [0u8; 5];
//!     client.read_exact(&mut greeting).await?;
//!     client.write_all(b"bye").await?;
//!     let mut reply = [0u8; 3];
//!     read.read_exact(&mut reply).await?;
//!     assert_eq!((&greeting, &reply), (b"hello", b"bye"));
//!     let write = writer.await??;
//!     let server = read.reunite(write).expect("halves of one stream");
//!     assert_eq!(server.peer_addr()?, client.local_addr()?);
//!     std::io::Result::Ok(())
//! })?;
//! # Ok::<(), std::io::Error>(())
//! ```

use super::TcpStream;

super::split::split_halves!(TcpStream, std::net::SocketAddr);

impl ReadHalf<'_> {
    /// Reads without consuming; see [`TcpStream::peek`].
    pub async fn peek(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.0.peek(buf).await
    }

    /// Polls a read that does not consume; see [`TcpStream::poll_peek`].
    #[cfg(feature = "tokio-io")]
    #[cfg_attr(docsrs, doc(cfg(feature = "tokio-io")))]
    pub fn poll_peek(
        &mut self,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<usize>> {
        self.0.poll_peek(cx, buf)
    }
}

impl OwnedReadHalf {
    /// Reads without consuming; see [`TcpStream::peek`].
    pub async fn peek(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.stream.peek(buf).await
    }

    /// Polls a read that does not consume; see [`TcpStream::poll_peek`].
    #[cfg(feature = "tokio-io")]
    #[cfg_attr(docsrs, doc(cfg(feature = "tokio-io")))]
    pub fn poll_peek(
        &mut self,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<usize>> {
        self.stream.poll_peek(cx, buf)
    }
}
