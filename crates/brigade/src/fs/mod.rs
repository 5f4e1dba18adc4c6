//! Files and directories for async code, with tokio's names and semantics
//! (`tokio::fs`): free functions for whole-file and path operations
//! ([`read`], [`write()`], [`read_dir`], [`metadata`], [`rename`], ...),
//! [`File`] for reading and writing an open file with tokio's or
//! `futures_io`'s `AsyncRead`/`AsyncWrite`/`AsyncSeek`, [`OpenOptions`] and
//! [`DirBuilder`]. A port from `tokio::fs` renames the path.
//!
//! Operating systems offer no readiness for regular files (a read of a
//! file on disk is always "ready", and blocks), so, as tokio does, every
//! operation runs on the runtime's blocking pool
//! ([`spawn_blocking`](crate::spawn_blocking)), never on a worker. Each
//! free function is one blocking call: [`read`] reads the whole file in
//! it, [`write()`] writes all the bytes, so small files cost one trip to the
//! pool, not one per chunk. A [`File`] keeps at most one operation in
//! flight and a buffer, so its reads and writes move up to
//! [`File::max_buf_size`] bytes per trip (2 MiB by default).
//!
//! At shutdown the pool drops the operations still queued, as tokio's
//! does, except writes ([`File`]'s and [`write()`]'s): those it runs
//! before its threads exit, so that no bytes a caller handed over are
//! lost. Operations started once the shutdown began are refused.
//!
//! Errors are std's: `NotFound`, `PermissionDenied`, `AlreadyExists`, ...
//! as the same call on [`std::fs`] returns them.
//!
//! # Panics
//! Every function and every operation of a [`File`] or [`ReadDir`] needs
//! the runtime's blocking pool: awaited or polled outside a brigade
//! runtime (a task, `Runtime::block_on`, or a `spawn_blocking` closure),
//! it panics with a message saying so, as tokio's do outside tokio's.
//!
//! # Examples
//!
//! ```
//! use tokio::io::{AsyncReadExt, AsyncWriteExt};
//!
//! let dir = std::env::temp_dir().join(format!("brigade-fs-doc-{}", std::process::id()));
//! let rt = brigade::Runtime::new()?;
//! rt.block_on(async {
//!     brigade::fs::create_dir_all(&dir).await?;
//!     let path = dir.join("greeting.txt");
//!     brigade::fs::write(&path, "hello").await?;
//!
//!     let mut file = brigade::fs::OpenOptions::new().append(true).open(&path).await?;
//!     file.write_all(b", world").await?;
//!     file.flush().await?; // waits for the write, and reports its error
//!
//!     let mut contents = String::new();
//!     brigade::fs::File::open(&path).await?.read_to_string(&mut contents).await?;
//!     assert_eq!(contents, "hello, world");
//!     brigade::fs::remove_dir_all(&dir).await
//! })?;
//! # Ok::<(), std::io::Error>(())
//! ```

mod dir_builder;
mod file;
mod file_lock;
mod file_state;
mod open_options;
mod ops;
mod read_dir;

use std::io;

pub use dir_builder::DirBuilder;
pub use file::File;
pub use open_options::OpenOptions;
#[cfg(unix)]
pub use ops::symlink;
pub use ops::{
    canonicalize, copy, create_dir, create_dir_all, hard_link, metadata, read, read_link,
    read_to_string, remove_dir, remove_dir_all, remove_file, rename, set_permissions,
    symlink_metadata, try_exists, write,
};
pub use read_dir::{DirEntry, ReadDir, read_dir};

use crate::runtime::{Handle, context};
use crate::task::JoinHandle;

/// The current runtime, for an operation named `what`; panics outside one.
#[track_caller]
fn current(what: &str) -> Handle {
    context::try_current().unwrap_or_else(|| {
        panic!(
            "{what} called outside of a brigade runtime: brigade::fs runs each operation on \
             the runtime's blocking pool, so call it from a task, from inside \
             `Runtime::block_on`, or from a `spawn_blocking` closure"
        )
    })
}

/// What the runtime's shutdown does with an operation still queued on
/// the blocking pool, not yet started.
#[derive(Debug, Clone, Copy)]
enum AtShutdown {
    /// Dropped unrun: reads, seeks, metadata, path operations. Whoever
    /// awaits it gets [`lost`]'s error; nothing on disk changed.
    Dropped,
    /// Run before the pool's threads exit, as tokio does for file writes:
    /// a write whose bytes the caller was told were taken (`File`'s
    /// writes return before they run), or [`write()`]. Dropping those
    /// would lose data silently.
    Run,
}

/// Starts `f` on the current runtime's blocking pool (see [`current`]).
#[track_caller]
fn spawn_blocking<F, R>(what: &str, at_shutdown: AtShutdown, f: F) -> JoinHandle<R>
where
    F: FnOnce() -> R + Send + 'static,
    R: Send + 'static,
{
    let runtime = current(what);
    match at_shutdown {
        AtShutdown::Dropped => runtime.spawn_blocking(f),
        AtShutdown::Run => runtime.spawn_mandatory_blocking(f),
    }
}

/// Runs the blocking call `f` on the blocking pool and returns its
/// outcome: what every free function and every `&self` method of `File`
/// is made of.
async fn asyncify<F, T>(what: &'static str, f: F) -> io::Result<T>
where
    F: FnOnce() -> io::Result<T> + Send + 'static,
    T: Send + 'static,
{
    asyncify_as(what, AtShutdown::Dropped, f).await
}

/// [`asyncify`], with what shutdown does to `f` if it is still queued.
async fn asyncify_as<F, T>(what: &'static str, at_shutdown: AtShutdown, f: F) -> io::Result<T>
where
    F: FnOnce() -> io::Result<T> + Send + 'static,
    T: Send + 'static,
{
    spawn_blocking(what, at_shutdown, f)
        .await
        .unwrap_or_else(|_| Err(lost()))
}

/// The error for an operation whose blocking-pool closure never returned:
/// the runtime shut down before it ran (the pool drops queued closures
/// that are not [`AtShutdown::Run`], and refuses new ones).
fn lost() -> io::Error {
    io::Error::other(
        "a file system operation on the blocking pool did not complete \
         (the runtime is shutting down)",
    )
}
