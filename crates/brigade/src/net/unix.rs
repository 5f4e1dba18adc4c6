//! The halves of a split [`UnixStream`], as in `tokio::net::unix`:
//! borrowed ([`ReadHalf`], [`WriteHalf`], from [`UnixStream::split`]) and
//! owned ([`OwnedReadHalf`], [`OwnedWriteHalf`], from
//! [`UnixStream::into_split`]); and [`UCred`], a peer's credentials
//! ([`UnixStream::peer_cred`]).
//!
//! # Examples
//!
//! Reading and writing at once in one task, with borrowed halves:
//!
//! ```
//! use brigade::net::UnixStream;
//! use tokio::io::{AsyncReadExt, AsyncWriteExt};
//!
//! let rt = brigade::Runtime::new()?;
//! rt.block_on(async {
//!     let (mut a, mut b) = UnixStream::pair()?;
//!     let (mut read, mut write) = a.split();
//!     let mut echo = [0u8; 4];
//!     // Any `join` will do; this one is futures-lite's.
//!     futures_lite::future::try_zip(write.write_all(b"ping"), async {
//!         let mut buf = [0u8; 4];
//!         b.read_exact(&mut buf).await?;
//!         b.write_all(&buf).await?;
//!         read.read_exact(&mut echo).await
//!     })
//!     .await?;
//!     assert_eq!(&echo, b"ping");
//!     std::io::Result::Ok(())
//! })?;
//! # Ok::<(), std::io::Error>(())
//! ```

use super::UnixStream;

pub use super::ucred::{UCred, gid_t, pid_t, uid_t};

super::split::split_halves!(UnixStream, std::os::unix::net::SocketAddr);
