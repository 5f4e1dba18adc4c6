//! Unix signals as streams: [`signal`] returns a [`Signal`] whose
//! [`recv`](Signal::recv) completes once per delivery (or batch of
//! deliveries) of a [`SignalKind`]. Names and semantics are tokio's
//! (`tokio::signal::unix`).
//!
//! # Examples
//!
//! ```
//! use brigade::signal::unix::{SignalKind, signal};
//!
//! let rt = brigade::Runtime::new()?;
//! rt.block_on(async {
//!     let mut hangup = signal(SignalKind::hangup())?;
//!     // Stand-in for `kill -HUP <pid>` from outside. The stream exists, so
//!     // SIGHUP no longer ends the process.
//!     // SAFETY: `raise` only sends a signal to this thread.
//!     unsafe { libc::raise(libc::SIGHUP) };
//!     assert_eq!(hangup.recv().await, Some(()));
//!     std::io::Result::Ok(())
//! })?;
//! # Ok::<(), std::io::Error>(())
//! ```

use std::fmt;
use std::future::poll_fn;
use std::io;
use std::sync::Arc;
use std::task::{Context, Poll};

use libc::c_int;

use crate::driver::signal::{Deliveries, Listener, check_signum};
use crate::io::poll_evented::no_runtime_error;
use crate::runtime::context;

/// A kind of Unix signal: a signal number with a name.
///
/// The named constructors cover the signals programs usually listen to;
/// [`from_raw`](Self::from_raw) takes any other number (a real-time signal,
/// say). Whether a number can be listened to is decided by [`signal`].
///
/// # Examples
///
/// ```
/// use brigade::signal::unix::SignalKind;
///
/// assert_eq!(SignalKind::terminate().as_raw_value(), libc::SIGTERM);
/// assert_eq!(SignalKind::from_raw(libc::SIGUSR1), SignalKind::user_defined1());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SignalKind(c_int);

impl SignalKind {
    /// The signal with number `signum`, as the platform numbers them.
    pub const fn from_raw(signum: c_int) -> SignalKind {
        SignalKind(signum)
    }

    /// The signal number.
    pub const fn as_raw_value(&self) -> c_int {
        self.0
    }

    /// SIGALRM: a real-time timer (`alarm(2)`) expired.
    pub const fn alarm() -> SignalKind {
        SignalKind(libc::SIGALRM)
    }

    /// SIGCHLD: a child process exited, stopped or continued.
    pub const fn child() -> SignalKind {
        SignalKind(libc::SIGCHLD)
    }

    /// SIGHUP: the terminal hung up; daemons take it as "reload the
    /// configuration".
    pub const fn hangup() -> SignalKind {
        SignalKind(libc::SIGHUP)
    }

    /// SIGINT: an interrupt from the terminal (Ctrl-C). See also
    /// [`ctrl_c`](crate::signal::ctrl_c).
    pub const fn interrupt() -> SignalKind {
        SignalKind(libc::SIGINT)
    }

    /// SIGIO: I/O is possible on a descriptor set up for signal-driven I/O.
    pub const fn io() -> SignalKind {
        SignalKind(libc::SIGIO)
    }

    /// SIGPIPE: a write to a pipe or socket whose reader is gone.
    pub const fn pipe() -> SignalKind {
        SignalKind(libc::SIGPIPE)
    }

    /// SIGQUIT: a quit request from the terminal (Ctrl-\\).
    pub const fn quit() -> SignalKind {
        SignalKind(libc::SIGQUIT)
    }

    /// SIGTERM: a request to terminate (what `kill` sends by default).
    pub const fn terminate() -> SignalKind {
        SignalKind(libc::SIGTERM)
    }

    /// SIGUSR1: for the application's own use.
    pub const fn user_defined1() -> SignalKind {
        SignalKind(libc::SIGUSR1)
    }

    /// SIGUSR2: for the application's own use.
    pub const fn user_defined2() -> SignalKind {
        SignalKind(libc::SIGUSR2)
    }

    /// SIGWINCH: the terminal window changed size.
    pub const fn window_change() -> SignalKind {
        SignalKind(libc::SIGWINCH)
    }
}

impl From<c_int> for SignalKind {
    fn from(signum: c_int) -> SignalKind {
        SignalKind::from_raw(signum)
    }
}

impl From<SignalKind> for c_int {
    fn from(kind: SignalKind) -> c_int {
        kind.as_raw_value()
    }
}

/// Listens for deliveries of `kind` in the current runtime.
///
/// The first call for a signal number installs a process-wide handler
/// (through `signal-hook-registry`) that stays for the rest of the process:
/// from then on the signal's default action (such as ending the process on
/// SIGINT or SIGTERM) no longer happens, even after every [`Signal`] is
/// dropped, as with tokio. Any earlier handler is chained, not replaced.
///
/// The stream sees every delivery that happens after this call returns, and
/// none from before. Each runtime listens separately, so streams in several
/// runtimes of one process (or in a runtime built after another was
/// dropped) all see each delivery.
///
/// # Errors
/// - `InvalidInput` for a number that cannot be handled: zero or negative,
///   SIGKILL, SIGSTOP, SIGILL, SIGFPE, SIGSEGV (signal-hook's `FORBIDDEN`
///   list), or one the platform does not have.
/// - Outside a brigade runtime (a task, `Runtime::block_on`, or a
///   `spawn_blocking` closure): an error that says so, as for
///   [`net`](crate::net) sockets. (tokio panics there instead.) The stream
///   registers with the runtime's I/O reactor, which wakes its tasks.
/// - An error from creating or registering the runtime's wake-up socket,
///   such as running out of file descriptors, or a runtime shutting down.
///
/// # Examples
///
/// ```
/// use brigade::signal::unix::{SignalKind, signal};
///
/// let rt = brigade::Runtime::new()?;
/// rt.block_on(async {
///     let err = signal(SignalKind::from_raw(libc::SIGKILL)).unwrap_err();
///     assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
///     let _terminate = signal(SignalKind::terminate())?;
///     std::io::Result::Ok(())
/// })?;
/// // Outside a runtime there is no reactor to register with.
/// assert!(signal(SignalKind::terminate()).is_err());
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn signal(kind: SignalKind) -> io::Result<Signal> {
    const WHAT: &str = "brigade::signal::unix::signal";
    let signum = kind.as_raw_value();
    check_signum(signum)?;
    let driver = context::current_driver().ok_or_else(|| no_runtime_error(WHAT))?;
    let listener = driver.signal_listener()?;
    let (deliveries, seen) = listener.subscribe(signum)?;
    Ok(Signal {
        kind,
        listener,
        deliveries,
        seen,
    })
}

/// A stream of deliveries of one signal; made by [`signal`].
///
/// [`recv`](Self::recv) completes once for each delivery since the last
/// `recv` (or since [`signal`], for the first). Deliveries that happen
/// while nobody calls `recv` *coalesce*: several of them make the next
/// `recv` return `Some(())` once, as a Unix process sees a signal that
/// arrives while it is already pending.
///
/// The stream belongs to the runtime it was created in, and is woken by
/// that runtime's I/O driver; `recv` returns `None` once that runtime has
/// shut down. Dropping the stream is cheap; the handler and the runtime's
/// wake-up socket stay for later streams.
pub struct Signal {
    kind: SignalKind,
    listener: Arc<Listener>,
    deliveries: Arc<Deliveries>,
    /// The delivery count already reported (see `driver/signal.rs`'s `Listener`).
    seen: u64,
}

impl Signal {
    /// Waits for the next delivery of the signal.
    ///
    /// Returns `Some(())` for one or more deliveries since the previous call
    /// (or since the stream was made), and `None` if no more can be
    /// received: the stream's runtime shut down.
    ///
    /// Cancel safe: dropping the future loses no delivery; the next call
    /// sees it.
    ///
    /// # Examples
    ///
    /// ```
    /// use brigade::signal::unix::{SignalKind, signal};
    ///
    /// let rt = brigade::Runtime::new()?;
    /// rt.block_on(async {
    ///     let mut usr1 = signal(SignalKind::user_defined1())?;
    ///     let waiter = brigade::spawn(async move { usr1.recv().await });
    ///     // SAFETY: `kill` only sends a signal, to this process.
    ///     unsafe { libc::kill(libc::getpid(), libc::SIGUSR1) };
    ///     assert_eq!(waiter.await.unwrap(), Some(()));
    ///     std::io::Result::Ok(())
    /// })?;
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub async fn recv(&mut self) -> Option<()> {
        poll_fn(|cx| self.poll_recv(cx)).await
    }

    /// Polls for the next delivery: `Ready(Some(()))` for one or more since
    /// the last ready poll, `Ready(None)` once the runtime shut down, and
    /// otherwise `Pending`, with `cx`'s waker woken at the next delivery.
    ///
    /// For use in hand-written futures and `Stream` impls.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::future::poll_fn;
    /// use brigade::signal::unix::{SignalKind, signal};
    ///
    /// let rt = brigade::Runtime::new()?;
    /// rt.block_on(async {
    ///     let mut usr2 = signal(SignalKind::user_defined2())?;
    ///     // SAFETY: `raise` only sends a signal to this thread.
    ///     unsafe { libc::raise(libc::SIGUSR2) };
    ///     assert_eq!(poll_fn(|cx| usr2.poll_recv(cx)).await, Some(()));
    ///     std::io::Result::Ok(())
    /// })?;
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Option<()>> {
        // A delivery spends a unit of the task's cooperative budget
        // (`task/coop.rs`).
        crate::task::coop::budgeted(cx, |cx| {
            self.listener
                .poll_recv(&self.deliveries, &mut self.seen, cx)
        })
    }
}

impl fmt::Debug for Signal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Signal").field("kind", &self.kind).finish()
    }
}
