//! `UnixStream`.

use std::fmt;
use std::io;
use std::net::Shutdown;
use std::os::unix::net::SocketAddr;
use std::path::Path;

use super::byte_stream::{Connecting, byte_stream, wait_connected};
use crate::io::poll_evented::PollEvented;

/// A Unix domain stream socket: a connection accepted by a
/// [`UnixListener`](super::UnixListener), made by [`connect`](Self::connect),
/// or one end of a [`pair`](Self::pair).
///
/// Read and write through tokio's `AsyncReadExt`/`AsyncWriteExt` (or
/// futures'), as with tokio's `UnixStream`. To read in one task while
/// another writes, [`into_split`](Self::into_split) it; the traits are
/// also implemented for `&UnixStream`. [`readable`](Self::readable) and
/// [`try_read`](Self::try_read) (and the write forms) work on `&self`.
///
/// # Examples
///
/// ```
/// let rt = brigade::Runtime::new()?;
/// rt.block_on(async {
///     use tokio::io::{AsyncReadExt, AsyncWriteExt};
///
///     let (mut a, mut b) = brigade::net::UnixStream::pair()?;
///     a.write_all(b"ping").await?;
///     let mut buf = [0u8; 4];
///     b.read_exact(&mut buf).await?;
///     assert_eq!(&buf, b"ping");
///     std::io::Result::Ok(())
/// })?;
/// # Ok::<(), std::io::Error>(())
/// ```
pub struct UnixStream {
    io: PollEvented<mio::net::UnixStream>,
}

impl UnixStream {
    pub(crate) fn from_mio(stream: mio::net::UnixStream) -> io::Result<UnixStream> {
        Ok(UnixStream {
            io: PollEvented::new(stream, "brigade::net::UnixStream")?,
        })
    }

    /// Connects to the socket file at `path`.
    ///
    /// As with tokio, a listener whose backlog is full makes this fail
    /// (with `WouldBlock` on Linux) rather than wait.
    ///
    /// # Examples
    ///
    /// ```
    /// let path = std::env::temp_dir().join(format!("brigade-connect-{}.sock", std::process::id()));
    /// // Any Unix socket server will do; this one is a standard-library listener.
    /// let server = std::os::unix::net::UnixListener::bind(&path)?;
    /// let rt = brigade::Runtime::new()?;
    /// rt.block_on(async {
    ///     let stream = brigade::net::UnixStream::connect(&path).await?;
    ///     assert_eq!(stream.peer_addr()?.as_pathname(), Some(path.as_path()));
    ///     std::io::Result::Ok(())
    /// })?;
    /// drop(server);
    /// std::fs::remove_file(&path)?;
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub async fn connect(path: impl AsRef<Path>) -> io::Result<UnixStream> {
        let stream = UnixStream {
            io: PollEvented::new(
                mio::net::UnixStream::connect(path)?,
                "brigade::net::UnixStream::connect",
            )?,
        };
        wait_connected(&stream.io).await?;
        Ok(stream)
    }

    /// Creates a connected pair of unnamed sockets.
    ///
    /// Returns an error if called outside a brigade runtime.
    pub fn pair() -> io::Result<(UnixStream, UnixStream)> {
        let (a, b) = mio::net::UnixStream::pair()?;
        Ok((Self::from_mio(a)?, Self::from_mio(b)?))
    }

    /// Wraps a standard-library stream (made non-blocking here).
    ///
    /// Returns an error if called outside a brigade runtime.
    pub fn from_std(stream: std::os::unix::net::UnixStream) -> io::Result<UnixStream> {
        stream.set_nonblocking(true)?;
        Ok(UnixStream {
            io: PollEvented::new(
                mio::net::UnixStream::from_std(stream),
                "brigade::net::UnixStream::from_std",
            )?,
        })
    }

    /// Deregisters the stream and returns it as a standard-library one
    /// (still in non-blocking mode: set it blocking to use it so).
    pub fn into_std(self) -> io::Result<std::os::unix::net::UnixStream> {
        Ok(self.io.into_inner().into())
    }

    /// The credentials of the process at the other end: its uid, gid and
    /// (where the platform says) pid, as they were when it connected (or
    /// made the [`pair`](Self::pair)).
    ///
    /// # Examples
    ///
    /// ```
    /// let rt = brigade::Runtime::new()?;
    /// rt.block_on(async {
    ///     let (a, _b) = brigade::net::UnixStream::pair()?;
    ///     let cred = a.peer_cred()?;
    ///     assert_eq!(cred.pid(), Some(std::process::id() as i32));
    ///     std::io::Result::Ok(())
    /// })?;
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn peer_cred(&self) -> io::Result<super::unix::UCred> {
        super::ucred::peer_cred(self.io.get_ref())
    }

    /// Takes the socket's pending error (`SO_ERROR`), if any.
    pub fn take_error(&self) -> io::Result<Option<io::Error>> {
        self.io.get_ref().take_error()
    }

    /// The local address of this end (usually unnamed for a client).
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.io.get_ref().local_addr()
    }

    /// The address of the other end.
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.io.get_ref().peer_addr()
    }

    /// Shuts down the read half, the write half, or both, at once (the
    /// socket's `shutdown(2)`). After the write half is shut down, the peer
    /// reads end of stream.
    ///
    /// Not named `shutdown`: tokio's streams have no inherent `shutdown`,
    /// and ported code calls `AsyncWriteExt::shutdown().await` (which
    /// shuts down the write half) on them; an inherent method of that name
    /// would take its place.
    pub fn shutdown_now(&self, how: Shutdown) -> io::Result<()> {
        self.io.get_ref().shutdown(how)
    }
}

byte_stream!(UnixStream);

impl Connecting for mio::net::UnixStream {
    fn connected(&self) -> io::Result<()> {
        self.peer_addr().map(drop)
    }

    fn take_error(&self) -> io::Result<Option<io::Error>> {
        mio::net::UnixStream::take_error(self)
    }
}

impl fmt::Debug for UnixStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.io.get_ref().fmt(f)
    }
}

super::fd_impls!(UnixStream);
