//! How a signal reaches the tasks waiting for it: signal-hook-registry's
//! process-wide handler, one socket per runtime, and per-signal delivery
//! counters.
//!
//! ## Layers
//! - **Process-wide**: `signal-hook-registry` installs one OS handler per
//!   signal number, the first time an action is registered for it, and keeps
//!   it for the life of the process (as tokio does: the default action, such
//!   as SIGINT ending the process, is not restored). Its handler runs every
//!   action registered for the number, off a snapshot of the action list;
//!   `unregister` waits until no handler still uses the old list before it
//!   drops the removed action, so what an action captured is never freed (nor
//!   its descriptor closed and reused) while a handler may run it. Nothing in
//!   this layer belongs to a runtime, so any number of runtimes, built and
//!   dropped in any order, share it.
//! - **Per runtime** ([`RuntimeSignals`], a field of the runtime's driver):
//!   a [`Listener`], made on the first [`signal`](crate::signal::unix::signal) call
//!   in the runtime. It owns a non-blocking socket pair whose read end is
//!   registered with the runtime's reactor, and, per signal number asked for
//!   in that runtime, one action and one [`Deliveries`] counter. The action
//!   bumps the counter, then sends one byte on the socket. The actions are
//!   unregistered when the listener is dropped, that is, when the runtime's
//!   driver is gone and no `Signal` of it is left.
//! - **Per stream** (`Signal`): the counter value it has seen.
//!
//! ## Why not `signal-hook`'s helpers
//! `signal_hook::low_level::pipe` registers an action that only writes a
//! byte, and `signal-hook-mio`'s `Signals` owns a pipe and a pending set per
//! instance that one consumer drains. Here the count must be bumped *before*
//! the byte is sent, by the same action (so no ordering between separately
//! registered actions is relied on), and every stream of the signal must see
//! each delivery; the action that does both is four lines, so only
//! `signal-hook-registry` (which tokio also builds on) is used.

use std::io::{self, Read};
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use libc::c_int;
use mio::Interest;
use rustix::net::SendFlags;
use signal_hook_registry::SigId;

use super::reactor::Reactor;
use super::scheduled_io::{Direction, READABLE, ReadyEvent, ScheduledIo};
use crate::sync::{AtomicBool, AtomicU64, Mutex, Ordering, lock};

/// Rejects signal numbers that cannot or must not be handled: negative
/// numbers and zero, and signal-hook's `FORBIDDEN` list (SIGKILL and
/// SIGSTOP cannot be caught; SIGILL, SIGFPE and SIGSEGV cannot be handled
/// by waking a task). `signal_hook_registry::register` panics on the
/// latter, so this check must come first.
pub(crate) fn check_signum(signum: c_int) -> io::Result<()> {
    if signum <= 0 || signal_hook_registry::FORBIDDEN.contains(&signum) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("refusing to register signal {signum}: it cannot be handled by brigade"),
        ));
    }
    Ok(())
}

/// How many times one signal was delivered, as seen by one runtime. Bumped
/// by the signal handler, read by `Signal`s; see [`Listener`].
#[derive(Default)]
pub(crate) struct Deliveries(AtomicU64);

impl Deliveries {
    /// The count now. SeqCst: see [`Listener`] for the orders it takes part in.
    pub(crate) fn current(&self) -> u64 {
        self.0.load(Ordering::SeqCst)
    }

    /// Called from the signal handler: one atomic RMW, async-signal-safe
    /// (std's atomics exist only where the platform has them lock-free).
    fn record(&self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// The write end of a runtime's socket, owned by its signal actions.
struct Sender(UnixStream);

/// `MSG_DONTWAIT`: never block in a signal handler (the socket is also
/// non-blocking); `MSG_NOSIGNAL`, where it exists: never raise SIGPIPE.
#[cfg(any(target_os = "linux", target_os = "android"))]
const SEND_FLAGS: SendFlags = SendFlags::DONTWAIT.union(SendFlags::NOSIGNAL);
#[cfg(not(any(target_os = "linux", target_os = "android")))]
const SEND_FLAGS: SendFlags = SendFlags::DONTWAIT;

impl Sender {
    /// Called from the signal handler. `send(2)` is async-signal-safe
    /// (rustix makes the system call itself and allocates nothing), and
    /// signal-hook-registry saves and restores `errno` around its actions. A
    /// full buffer (`EAGAIN`) is fine: a byte already waits to be read, and
    /// the count, not the bytes, says what was delivered.
    fn wake(&self) {
        let _ = rustix::net::send(&self.0, &[1], SEND_FLAGS);
    }
}

/// One registered action: for which signal, its counter, its id.
struct Registration {
    signum: c_int,
    deliveries: Arc<Deliveries>,
    id: SigId,
}

/// The signal half of a runtime's driver: its [`Listener`], made on first
/// use.
pub(crate) struct RuntimeSignals {
    listener: Mutex<Option<Arc<Listener>>>,
}

impl RuntimeSignals {
    pub(crate) fn new() -> RuntimeSignals {
        RuntimeSignals {
            listener: Mutex::new(None),
        }
    }

    /// The runtime's listener, registered with `reactor` the first time.
    pub(crate) fn listener(&self, reactor: &Reactor) -> io::Result<Arc<Listener>> {
        let mut listener = lock(&self.listener);
        if let Some(listener) = &*listener {
            return Ok(listener.clone());
        }
        let created = Arc::new(Listener::new(reactor)?);
        *listener = Some(created.clone());
        Ok(created)
    }
}

/// One runtime's socket and signal actions.
///
/// ## Protocol
/// Every `Signal` of the runtime shares the socket and its readiness cell
/// (`io`, the reactor's usual protocol, see `scheduled_io.rs`).
/// - **Handler** (per delivery, per runtime that asked for the signal):
///   bumps the signal's [`Deliveries`], *then* sends a byte.
/// - **Creation** ([`subscribe`](Self::subscribe)): registers the action if
///   the runtime has none for the signal yet, *then* loads the count as the
///   stream's `seen`. A delivery counted before that load happened before
///   the stream existed and is not seen; one counted after makes the count
///   differ from `seen`, which the first poll checks before anything else,
///   whether or not its byte or readiness has arrived yet.
/// - **Poll** ([`poll_recv`](Self::poll_recv)): (1) a count other than
///   `seen` is a delivery. (2) Otherwise wait for the socket: `poll_ready`
///   stores the waker under the cell's lock. (3) If that is pending, load
///   the count again: a delivery counted between (1) and (2) whose byte was
///   read by another stream before our waker was stored is caught here.
///   (4) If the socket is readable, read it empty and clear the readiness;
///   if any byte was read, wake every task waiting on the socket, then go
///   to (1).
///
/// The wake in (4) is what keeps streams from losing wake-ups to each
/// other: epoll reports an edge only if the socket still holds data when
/// `epoll_wait` collects it (kqueue's `EV_CLEAR` alike), so a stream that drains bytes may swallow the
/// only wake-up of a delivery another stream waits for. Take a stream whose
/// step (3) saw the old count: the delivery's increment, and so its byte,
/// come after that load. The byte is read either after the reactor reported
/// it, whose wake reaches the stream's waker stored in (2), or by a draining
/// stream, whose wake in (4) does. The stream's next (1) runs after that
/// read, so after the increment, and sees it. The kernel orders the send
/// before the read that returns the byte, as every pipe-based wake-up
/// (tokio's too) relies on; SeqCst on the count keeps the rest simple.
///
/// One socket per runtime rather than per stream keeps a stream to two
/// `Arc`s and a counter (a `ctrl_c()` per connection task costs no file
/// descriptors), at the price of waking every waiting stream of the runtime,
/// whatever its signal, at each delivery: cheap at the rate signals come.
pub(crate) struct Listener {
    receiver: mio::net::UnixStream,
    io: Arc<ScheduledIo>,
    sender: Arc<Sender>,
    registrations: Mutex<Vec<Registration>>,
    /// Set if the socket failed or reached its end (it cannot while the
    /// listener holds the write end, but a final readiness bit would
    /// otherwise keep `poll_recv` spinning): every stream then ends.
    broken: AtomicBool,
}

impl Listener {
    fn new(reactor: &Reactor) -> io::Result<Listener> {
        let (receiver, sender) = UnixStream::pair()?;
        receiver.set_nonblocking(true)?;
        sender.set_nonblocking(true)?;
        let mut receiver = mio::net::UnixStream::from_std(receiver);
        // The token is never deregistered: the listener lives as long as the
        // driver (which holds it), unless `Signal`s outlive the driver, and
        // then the epoll descriptor is closed already.
        let (_token, io) = reactor.register(&mut receiver, Interest::READABLE)?;
        Ok(Listener {
            receiver,
            io,
            sender: Arc::new(Sender(sender)),
            registrations: Mutex::new(Vec::new()),
            broken: AtomicBool::new(false),
        })
    }

    /// The counter of `signum` in this runtime (its action registered if
    /// need be), and its value now: what a new stream has seen.
    pub(crate) fn subscribe(&self, signum: c_int) -> io::Result<(Arc<Deliveries>, u64)> {
        check_signum(signum)?;
        let mut registrations = lock(&self.registrations);
        let deliveries = match registrations.iter().find(|r| r.signum == signum) {
            Some(registration) => registration.deliveries.clone(),
            None => {
                let registration = self.register(signum)?;
                let deliveries = registration.deliveries.clone();
                registrations.push(registration);
                deliveries
            }
        };
        let seen = deliveries.current();
        Ok((deliveries, seen))
    }

    fn register(&self, signum: c_int) -> io::Result<Registration> {
        let deliveries = Arc::new(Deliveries::default());
        let action = {
            let deliveries = deliveries.clone();
            let sender = self.sender.clone();
            move || {
                deliveries.record();
                sender.wake();
            }
        };
        // SAFETY: the action only bumps a lock-free atomic and calls
        // `send(2)`, both async-signal-safe; it neither allocates, locks nor
        // panics. `signum` passed `check_signum`, so `register` does not
        // panic on a forbidden signal.
        let id = unsafe { signal_hook_registry::register(signum, action) }?;
        Ok(Registration {
            signum,
            deliveries,
            id,
        })
    }

    /// One step of a `Signal`'s `poll_recv`; see the protocol above.
    /// `Ready(None)`: the runtime shut down (or the socket broke).
    pub(crate) fn poll_recv(
        &self,
        deliveries: &Deliveries,
        seen: &mut u64,
        cx: &mut Context<'_>,
    ) -> Poll<Option<()>> {
        loop {
            if take_delivery(deliveries, seen) {
                return Poll::Ready(Some(()));
            }
            if self.broken.load(Ordering::Acquire) {
                return Poll::Ready(None);
            }
            match self.io.poll_ready(cx, Direction::Read) {
                Poll::Ready(Err(_shutdown)) => return Poll::Ready(None),
                Poll::Ready(Ok(event)) => self.drain(event),
                Poll::Pending if take_delivery(deliveries, seen) => {
                    return Poll::Ready(Some(()));
                }
                Poll::Pending => return Poll::Pending,
            }
        }
    }

    /// Step (4): reads the socket empty, clears the readiness `event`
    /// reported, and wakes every waiting stream if any byte was read.
    fn drain(&self, event: ReadyEvent) {
        let mut buf = [0u8; 64];
        let mut read_any = false;
        loop {
            match (&self.receiver).read(&mut buf) {
                Ok(0) => return self.break_down(),
                Ok(_) => read_any = true,
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                Err(error) if error.kind() == io::ErrorKind::WouldBlock => break,
                Err(error) => {
                    tracing::error!(%error, "could not read the signal socket");
                    return self.break_down();
                }
            }
        }
        self.io.clear_readiness(event);
        if read_any {
            self.wake_all();
        }
    }

    /// Wakes every task waiting on the socket (they re-check their counts).
    fn wake_all(&self) {
        let mut wake = Vec::new();
        self.io.set_readiness(READABLE, &mut wake);
        wake.into_iter().for_each(Waker::wake);
    }

    fn break_down(&self) {
        self.broken.store(true, Ordering::Release);
        self.wake_all();
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        // After `unregister` returns no handler runs the action; it then
        // drops its `Sender` clone (closing the write end with ours below).
        for registration in lock(&self.registrations).drain(..) {
            signal_hook_registry::unregister(registration.id);
        }
    }
}

/// Steps `seen` to the current count; `true` if it moved (one or more
/// deliveries since the last look, which coalesce into one).
fn take_delivery(deliveries: &Deliveries, seen: &mut u64) -> bool {
    let current = deliveries.current();
    let moved = current != *seen;
    *seen = current;
    moved
}
