//! Unix-only I/O, as in `tokio::io::unix`: [`AsyncFd`] waits on the
//! readiness of any file descriptor the reactor can poll (a pipe, an
//! `eventfd`, a socket made elsewhere, a device), through the same
//! reactor registration as brigade's own sockets.

mod async_fd;
mod ready_guard;

pub use async_fd::{AsyncFd, AsyncFdTryNewError};
pub use ready_guard::{AsyncFdReadyGuard, AsyncFdReadyMutGuard, TryIoError};
