//! Waiting without the poll lock: `poll(2)` on the epoll descriptor and the
//! watcher's wake pipe, which consumes no event (the protocol is in the
//! module docs of `poll/mod.rs`, "Watching without holding the poll").

use std::io::{self, Read, Write};
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::net::UnixStream;
use std::thread;
use std::time::Duration;

/// `timeout` for `poll(2)`: milliseconds, rounded up so that a timer is
/// due when the wait ends; -1 for none.
pub(super) fn timeout_millis(timeout: Option<Duration>) -> libc::c_int {
    match timeout {
        Some(timeout) => timeout.as_micros().div_ceil(1000).min(i32::MAX as u128) as libc::c_int,
        None => -1,
    }
}

/// What ended a [`wait_readable`] (neither: the timeout).
pub(super) struct Woken {
    /// The first descriptor was readable.
    pub(super) by_fd: bool,
    /// The second descriptor (the wake pipe) was readable.
    pub(super) by_also: bool,
}

/// Waits until `fd` (or `also`) is readable or `timeout` passes (`None`:
/// no timeout). To the nanosecond, not rounded up to a millisecond as
/// `poll(2)`'s timeout would be: a worker paced to the end of a CPU-limit
/// window (`runtime/cpu_limit/pacer.rs`) would otherwise sleep past it by
/// half a millisecond on average, a twentieth of a 10 ms window.
pub(super) fn wait_readable(
    fd: BorrowedFd<'_>,
    also: Option<BorrowedFd<'_>>,
    timeout: Option<Duration>,
) -> Woken {
    match poll_readable(fd, also, timeout) {
        Ok((by_fd, by_also)) => Woken { by_fd, by_also },
        Err(error) => {
            if error.kind() != io::ErrorKind::Interrupted {
                tracing::error!(target: "brigade::driver::poll", %error, "driver wait failed");
                // Avoid a hot loop on a persistent error.
                thread::sleep(Duration::from_millis(1));
            }
            // Read the pipe anyway: a needless read costs one syscall.
            Woken {
                by_fd: false,
                by_also: also.is_some(),
            }
        }
    }
}

/// Whether `fd` is readable right now.
pub(super) fn is_readable_now(fd: BorrowedFd<'_>) -> bool {
    poll_readable(fd, None, Some(Duration::ZERO)).is_ok_and(|(ready, _)| ready)
}

/// `ppoll(2)` (`poll(2)` where there is none) for readability of `fd`
/// and, if given, `also`: whether each is readable when it returns.
fn poll_readable(
    fd: BorrowedFd<'_>,
    also: Option<BorrowedFd<'_>>,
    timeout: Option<Duration>,
) -> io::Result<(bool, bool)> {
    use rustix::event::{PollFd, PollFlags, Timespec};

    // A timeout too long for a `timespec` waits for ever.
    let timespec = timeout.and_then(|timeout| Timespec::try_from(timeout).ok());
    let mut fds = [PollFd::from_borrowed_fd(fd, PollFlags::IN)];
    let mut both = also.map(|also| {
        [
            fds[0].clone(),
            PollFd::from_borrowed_fd(also, PollFlags::IN),
        ]
    });
    let entries: &mut [PollFd<'_>] = match &mut both {
        Some(both) => both,
        None => &mut fds,
    };
    rustix::event::poll(entries, timespec.as_ref())?;
    let readable = |entry: &PollFd<'_>| entry.revents().contains(PollFlags::IN);
    Ok((readable(&entries[0]), entries.get(1).is_some_and(readable)))
}

/// The watcher's unpark channel: a non-blocking socket pair outside the
/// epoll set, so that no harvester consumes its wake-ups (see the module
/// docs).
pub(super) struct WakePipe {
    reader: UnixStream,
    writer: UnixStream,
}

impl WakePipe {
    pub(super) fn new() -> io::Result<WakePipe> {
        let (reader, writer) = UnixStream::pair()?;
        reader.set_nonblocking(true)?;
        writer.set_nonblocking(true)?;
        Ok(WakePipe { reader, writer })
    }

    pub(super) fn read_fd(&self) -> BorrowedFd<'_> {
        self.reader.as_fd()
    }

    /// Makes the reader readable. A full buffer already is.
    pub(super) fn wake(&self) {
        if let Err(error) = (&self.writer).write(&[1])
            && error.kind() != io::ErrorKind::WouldBlock
        {
            tracing::error!(
                target: "brigade::driver::poll",
                %error,
                "could not wake the driver's watcher"
            );
        }
    }

    /// Reads every pending wake-up.
    pub(super) fn drain(&self) {
        let mut buffer = [0u8; 256];
        while matches!((&self.reader).read(&mut buffer), Ok(read) if read > 0) {}
    }
}
