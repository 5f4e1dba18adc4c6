//! `UnixListener`.

use std::fmt;
use std::future::poll_fn;
use std::io;
use std::os::unix::net::SocketAddr;
use std::path::Path;
use std::task::{Context, Poll};

use super::UnixStream;
use crate::io::poll_evented::PollEvented;

/// A Unix domain stream socket server, listening for connections.
///
/// Dropping the listener does not remove its socket file (neither does
/// tokio's nor the standard library's): remove it yourself, and note that
/// binding to a path that still exists fails with `AddrInUse`.
///
/// # Examples
///
/// An echo server in a temporary directory:
///
/// ```
/// use brigade::net::{UnixListener, UnixStream};
/// use tokio::io::{AsyncReadExt, AsyncWriteExt};
///
/// let path = std::env::temp_dir().join(format!("brigade-doc-{}.sock", std::process::id()));
/// let rt = brigade::Runtime::new()?;
/// rt.block_on(async {
///     let listener = UnixListener::bind(&path)?;
///     let server = brigade::spawn(async move {
///         let (mut stream, _peer) = listener.accept().await?;
///         let mut buf = [0u8; 5];
///         stream.read_exact(&mut buf).await?;
///         stream.write_all(&buf).await?;
///         std::io::Result::Ok(())
///     });
///     let mut client = UnixStream::connect(&path).await?;
///     client.write_all(b"hello").await?;
///     let mut echo = [0u8; 5];
///     client.read_exact(&mut echo).await?;
///     assert_eq!(&echo, b"hello");
///     server.await??;
///     std::io::Result::Ok(())
/// })?;
/// std::fs::remove_file(&path)?;
/// # Ok::<(), std::io::Error>(())
/// ```
pub struct UnixListener {
    io: PollEvented<mio::net::UnixListener>,
}

impl UnixListener {
    /// Creates a socket file at `path` and listens on it.
    ///
    /// Like tokio's, this is not `async`: binding a Unix socket does not
    /// block. Binding a path that exists (a socket file left by an earlier
    /// listener included) returns an error of kind `AddrInUse`. Returns an
    /// error if called outside a brigade runtime.
    pub fn bind(path: impl AsRef<Path>) -> io::Result<UnixListener> {
        let listener = mio::net::UnixListener::bind(path)?;
        Ok(UnixListener {
            io: PollEvented::new(listener, "brigade::net::UnixListener::bind")?,
        })
    }

    /// Waits for a connection; returns it and the peer's address (usually
    /// unnamed: clients seldom bind).
    pub async fn accept(&self) -> io::Result<(UnixStream, SocketAddr)> {
        poll_fn(|cx| self.poll_accept(cx)).await
    }

    /// Polls for a connection.
    pub fn poll_accept(&self, cx: &mut Context<'_>) -> Poll<io::Result<(UnixStream, SocketAddr)>> {
        self.io
            .poll_read_io(cx, |listener| listener.accept())
            .map(|accepted| {
                accepted.and_then(|(stream, addr)| Ok((UnixStream::from_mio(stream)?, addr)))
            })
    }

    /// Wraps a standard-library listener (made non-blocking here).
    ///
    /// Returns an error if called outside a brigade runtime.
    pub fn from_std(listener: std::os::unix::net::UnixListener) -> io::Result<UnixListener> {
        listener.set_nonblocking(true)?;
        Ok(UnixListener {
            io: PollEvented::new(
                mio::net::UnixListener::from_std(listener),
                "brigade::net::UnixListener::from_std",
            )?,
        })
    }

    /// Deregisters the listener and returns it as a standard-library one
    /// (still in non-blocking mode).
    pub fn into_std(self) -> io::Result<std::os::unix::net::UnixListener> {
        Ok(self.io.into_inner().into())
    }

    /// Takes the socket's pending error (`SO_ERROR`), if any.
    pub fn take_error(&self) -> io::Result<Option<io::Error>> {
        self.io.get_ref().take_error()
    }

    /// The local address the listener is bound to.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.io.get_ref().local_addr()
    }
}

impl fmt::Debug for UnixListener {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.io.get_ref().fmt(f)
    }
}

super::fd_impls!(UnixListener);
