//! How a child's exit is seen: a pidfd registered with the runtime's
//! reactor (Linux), or else SIGCHLD through [`crate::signal`].
//!
//! ## Protocol
//! Either way the exit itself is taken by `waitpid(pid, WNOHANG)` (std's
//! `Child::try_wait`, which reaps the child and keeps its status); the
//! event only says when to try again. Until it is reaped the child's pid
//! cannot be reused, so neither the pidfd nor `waitpid` can name another
//! process.
//! - **pidfd** (`pidfd_open(2)`, Linux 5.3 on): the descriptor turns
//!   readable when the process exits, and stays readable. `waitpid` runs
//!   only once the readiness cell says readable (`PollEvented::try_io`),
//!   *after* the readiness was read; when it finds nothing yet, the
//!   readiness it saw is cleared unless a newer event came meanwhile
//!   (`scheduled_io.rs`), so an exit whose event arrives between the two
//!   is not cleared away. The reactor is edge-triggered: registering a
//!   descriptor that is readable already reports it at once.
//! - **SIGCHLD**, where `pidfd_open` fails (a kernel before 5.3, a seccomp
//!   filter, another Unix): a [`Signal`] stream subscribed *before* the
//!   first `waitpid`. An exit either happened before that `waitpid`, which
//!   reaps it, or is counted as a delivery after the subscription, which
//!   the next `poll_recv` reports. Deliveries coalesce, and every child's
//!   exit wakes every child's watch: each wake costs one `waitpid`.
//!
//! A watch whose runtime shut down ends (its waits fail from then on): the
//! child is then reaped only by a `try_wait`, such as the orphan queue's
//! passes (`orphan.rs`).

use std::io;
use std::process::{Child as StdChild, ExitStatus};
use std::task::{Context, Poll, ready};

use crate::signal::unix::{Signal, SignalKind, signal};

#[cfg(target_os = "linux")]
use pidfd::Pidfd;

/// A spawned child and how its exit is seen.
pub(crate) struct Watched {
    child: StdChild,
    /// `None` before [`watch`](Self::watch), and once the watch ended.
    source: Option<ExitSource>,
}

enum ExitSource {
    #[cfg(target_os = "linux")]
    Pidfd(crate::io::poll_evented::PollEvented<Pidfd>),
    Sigchld(Signal),
}

impl Watched {
    /// `child`, not watched yet: only `try_wait` sees its exit.
    pub(crate) fn unwatched(child: StdChild) -> Watched {
        Watched {
            child,
            source: None,
        }
    }

    /// Starts watching for the exit in the current runtime: through a
    /// pidfd if `prefer_pidfd` and the kernel has them, else through
    /// SIGCHLD. (Tests pass `false` to take the SIGCHLD path on Linux.)
    pub(crate) fn watch(&mut self, prefer_pidfd: bool) -> io::Result<()> {
        #[cfg(target_os = "linux")]
        if prefer_pidfd && let Some(pidfd) = Pidfd::open(self.child.id()) {
            let io = crate::io::poll_evented::PollEvented::new_with_interest(
                pidfd,
                mio::Interest::READABLE,
                "brigade::process::Command::spawn",
            )?;
            self.source = Some(ExitSource::Pidfd(io));
            return Ok(());
        }
        #[cfg(not(target_os = "linux"))]
        let _ = prefer_pidfd;
        self.source = Some(ExitSource::Sigchld(signal(SignalKind::child())?));
        Ok(())
    }

    /// Whether the exit is watched (not yet ended by a runtime shutdown).
    pub(crate) fn is_watched(&self) -> bool {
        self.source.is_some()
    }

    /// Whether the exit is watched through a pidfd.
    #[cfg(test)]
    pub(crate) fn uses_pidfd(&self) -> bool {
        match self.source {
            #[cfg(target_os = "linux")]
            Some(ExitSource::Pidfd(_)) => true,
            _ => false,
        }
    }

    pub(crate) fn id(&self) -> u32 {
        self.child.id()
    }

    /// Sends SIGKILL (nothing if std already reaped the child).
    pub(crate) fn kill(&mut self) -> io::Result<()> {
        self.child.kill()
    }

    /// `waitpid(pid, WNOHANG)`: the status if the child has exited (it is
    /// reaped then), without waiting.
    pub(crate) fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        self.child.try_wait()
    }

    /// Ready with the exit status once the child has exited and been
    /// reaped; otherwise registers `cx`'s waker with the watch. Spends the
    /// task's cooperative budget as the watch's resource does.
    ///
    /// An error once the watch ended (its runtime shut down) while the
    /// child still runs, or if `waitpid` fails.
    pub(crate) fn poll_exit(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<ExitStatus>> {
        let waited = match &mut self.source {
            None => {
                return Poll::Ready(self.child.try_wait()?.ok_or_else(unwatched_error));
            }
            #[cfg(target_os = "linux")]
            Some(ExitSource::Pidfd(io)) => poll_pidfd(io, &mut self.child, cx),
            Some(ExitSource::Sigchld(sigchld)) => poll_sigchld(sigchld, &mut self.child, cx),
        };
        let error = match ready!(waited) {
            Ok(status) => return Poll::Ready(Ok(status)),
            Err(error) => error,
        };
        // The watch failed (a runtime shut down) or `waitpid` did: the
        // watch is over, and a child that has exited is still reaped.
        self.source = None;
        Poll::Ready(match self.child.try_wait() {
            Ok(Some(status)) => Ok(status),
            Ok(None) => Err(error),
            Err(wait_error) => Err(wait_error),
        })
    }
}

/// `waitpid` reports a running child as `WouldBlock`, for `try_io`.
fn exited(child: &mut StdChild) -> io::Result<ExitStatus> {
    child
        .try_wait()?
        .ok_or_else(|| io::ErrorKind::WouldBlock.into())
}

/// The pidfd half of the protocol in the module docs.
#[cfg(target_os = "linux")]
fn poll_pidfd(
    io: &crate::io::poll_evented::PollEvented<Pidfd>,
    child: &mut StdChild,
    cx: &mut Context<'_>,
) -> Poll<io::Result<ExitStatus>> {
    use crate::io::Interest;
    loop {
        match io.try_io(Interest::READABLE, |_| exited(child)) {
            Err(error) if error.kind() == io::ErrorKind::WouldBlock => {}
            result => return Poll::Ready(result),
        }
        ready!(io.poll_ready(cx, Interest::READABLE))?;
    }
}

/// The SIGCHLD half of the protocol in the module docs.
fn poll_sigchld(
    sigchld: &mut Signal,
    child: &mut StdChild,
    cx: &mut Context<'_>,
) -> Poll<io::Result<ExitStatus>> {
    loop {
        if let Some(status) = child.try_wait()? {
            return Poll::Ready(Ok(status));
        }
        if ready!(sigchld.poll_recv(cx)).is_none() {
            return Poll::Ready(Err(unwatched_error()));
        }
    }
}

fn unwatched_error() -> io::Error {
    io::Error::other(
        "the brigade runtime this child was spawned in has shut down: its exit can no longer be \
         awaited (`try_wait` still reaps it)",
    )
}

/// Whether this process may open pidfds.
#[cfg(all(test, target_os = "linux"))]
pub(crate) fn pidfd_supported() -> bool {
    Pidfd::open(std::process::id()).is_some()
}

#[cfg(target_os = "linux")]
mod pidfd {
    use std::io;
    use std::os::fd::{AsRawFd, OwnedFd};
    use std::sync::atomic::{AtomicBool, Ordering};

    use mio::unix::SourceFd;

    /// A process's pidfd, as a `mio` source.
    pub(super) struct Pidfd(OwnedFd);

    /// Set once `pidfd_open` is known to be missing (`ENOSYS`), so later
    /// spawns skip the system call. A hint: read and written alone.
    static UNSUPPORTED: AtomicBool = AtomicBool::new(false);

    impl Pidfd {
        /// `pidfd_open(pid, 0)`, or `None` if the kernel refuses it (the
        /// caller falls back to SIGCHLD). Close-on-exec, as every pidfd.
        pub(super) fn open(pid: u32) -> Option<Pidfd> {
            if UNSUPPORTED.load(Ordering::Relaxed) {
                return None;
            }
            let pid = rustix::process::Pid::from_raw(i32::try_from(pid).ok()?)?;
            match rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()) {
                Ok(fd) => Some(Pidfd(fd)),
                Err(rustix::io::Errno::NOSYS) => {
                    UNSUPPORTED.store(true, Ordering::Relaxed);
                    None
                }
                Err(_) => None,
            }
        }
    }

    impl mio::event::Source for Pidfd {
        fn register(
            &mut self,
            registry: &mio::Registry,
            token: mio::Token,
            interest: mio::Interest,
        ) -> io::Result<()> {
            SourceFd(&self.0.as_raw_fd()).register(registry, token, interest)
        }

        fn reregister(
            &mut self,
            registry: &mio::Registry,
            token: mio::Token,
            interest: mio::Interest,
        ) -> io::Result<()> {
            SourceFd(&self.0.as_raw_fd()).reregister(registry, token, interest)
        }

        fn deregister(&mut self, registry: &mio::Registry) -> io::Result<()> {
            SourceFd(&self.0.as_raw_fd()).deregister(registry)
        }
    }
}
