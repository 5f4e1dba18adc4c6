//! Readiness types for brigade's sockets: [`Interest`] (what a task waits
//! for) and [`Ready`] (what the reactor reported), used by the sockets'
//! `ready`, `try_io` and `async_io` methods; and the process's standard
//! streams, [`stdin`], [`stdout`] and [`stderr`], in place of tokio's
//! (which need tokio's runtime: inside brigade they panic with "there is no
//! reactor running"); and on Unix, [`unix::AsyncFd`], tokio's
//! `tokio::io::unix::AsyncFd`, for waiting on any pollable descriptor.
//!
//! Reading and writing use tokio's or `futures_io`'s traits, which the
//! sockets implement: tokio's `AsyncReadExt`/`AsyncWriteExt` (add tokio,
//! with its `io-util` feature, to your dependencies) or futures' extension
//! traits; `tokio::io`'s other utilities work on brigade's sockets as well.
//!
//! Inside the crate, the reactor and each source's readiness cell are the
//! driver's (`driver/reactor.rs` and `driver/scheduled_io.rs`), and
//! `poll_evented.rs` holds a `mio` source registered with the current
//! runtime, the building block of `brigade::net`.

mod io_span;
pub(crate) mod poll_evented;
mod ready;
mod stdio;
#[cfg(unix)]
pub mod unix;

pub use ready::{Interest, Ready};
pub use stdio::{Stderr, Stdin, Stdout, stderr, stdin, stdout};
