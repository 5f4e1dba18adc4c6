//! Asynchronous signal handling, with tokio's names and semantics
//! (`tokio::signal`).
//!
//! - [`ctrl_c`]: completes at the next Ctrl-C (SIGINT).
//! - [`unix::signal`]: a [`Signal`](unix::Signal) stream for any signal that
//!   can be handled ([`SignalKind`](unix::SignalKind) names the usual ones).
//!
//! Signals are handled through `signal-hook-registry`: one process-wide
//! handler per signal number, installed on first use and kept for the rest
//! of the process. The handler does only async-signal-safe work: it counts
//! the delivery and writes a byte to a socket that each runtime listening
//! for the signal has registered with its I/O reactor, which wakes the
//! waiting tasks. Streams must therefore be created inside a runtime.
//!
//! Unix only: the module is empty elsewhere (brigade's reactor is built on
//! Unix descriptors; Windows console events are not supported).
//!
//! # Examples
//!
//! Shut a server down on Ctrl-C:
//!
//! ```no_run
//! #[brigade::main]
//! async fn main() -> std::io::Result<()> {
//!     let server = brigade::spawn(async {
//!         // ... accept connections ...
//!         std::future::pending::<()>().await
//!     });
//!     brigade::signal::ctrl_c().await?;
//!     println!("ctrl-c: shutting down");
//!     server.abort();
//!     Ok(())
//! }
//! ```

#[cfg(unix)]
pub mod unix;

/// Completes at the next Ctrl-C: a SIGINT delivered to the process.
///
/// Like tokio's, the future is lazy: it starts listening when it is first
/// polled (it makes a [`unix::signal`] stream for
/// [`SignalKind::interrupt`](unix::SignalKind::interrupt) then), and a
/// SIGINT before that is not seen. From that first poll on, SIGINT no
/// longer ends the process, for the rest of its life: the program decides
/// what Ctrl-C does.
///
/// # Errors
/// The errors of [`unix::signal`] (outside a brigade runtime, for one), and
/// an error if the runtime shuts down before a SIGINT arrives. (tokio
/// returns `Ok(())` in that case; a shutdown is not a Ctrl-C.)
///
/// # Examples
///
/// Waiting for Ctrl-C in `main` is in the [module docs](self). This one
/// sends itself the SIGINT:
///
/// ```
/// use std::pin::pin;
///
/// let rt = brigade::Runtime::new()?;
/// rt.block_on(async {
///     let mut ctrl_c = pin!(brigade::signal::ctrl_c());
///     // The first poll starts listening (and is pending: no SIGINT yet).
///     assert!(futures_lite::future::poll_once(&mut ctrl_c).await.is_none());
///     // SAFETY: `raise` only sends a signal to this thread.
///     unsafe { libc::raise(libc::SIGINT) };
///     ctrl_c.await
/// })?;
/// # Ok::<(), std::io::Error>(())
/// ```
#[cfg(unix)]
pub async fn ctrl_c() -> std::io::Result<()> {
    let mut interrupt = unix::signal(unix::SignalKind::interrupt())?;
    interrupt.recv().await.ok_or_else(|| {
        std::io::Error::other("the brigade runtime shut down before a ctrl-c (SIGINT) arrived")
    })
}
