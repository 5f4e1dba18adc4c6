//! The guards an `AsyncFd` wait returns: the readiness the wait saw, to
//! clear once an operation reports `WouldBlock` (or to keep).
//!
//! ## Protocol
//! A guard holds the event its wait saw (bits and tick), or `None` once
//! cleared. Clearing clears in the registration only the bits the event
//! saw, and only if no newer event arrived since
//! (`ScheduledIo::clear_readiness`): an event between the wait and the
//! clear is kept, so the next wait returns at once. Dropping a guard
//! clears nothing.

use std::fmt;
use std::io;
use std::os::fd::AsRawFd;

use super::AsyncFd;
use crate::driver::scheduled_io::ReadyEvent;
use crate::io::Ready;

/// The readiness an [`AsyncFd`] wait saw, with shared access to the
/// `AsyncFd`: returned by [`AsyncFd::readable`], [`AsyncFd::writable`],
/// [`AsyncFd::ready`] and their `poll_` forms.
///
/// After an operation on the descriptor reports `WouldBlock`, call
/// [`clear_ready`](Self::clear_ready), or run the operation through
/// [`try_io`](Self::try_io), which does so; otherwise the next wait
/// returns at once again. [`retain_ready`](Self::retain_ready) says that
/// the readiness is kept on purpose.
#[must_use = "call `clear_ready` once an operation reports `WouldBlock`, or `retain_ready`"]
pub struct AsyncFdReadyGuard<'a, T: AsRawFd> {
    async_fd: &'a AsyncFd<T>,
    event: Option<ReadyEvent>,
}

/// Like [`AsyncFdReadyGuard`], with mutable access to the [`AsyncFd`]:
/// returned by [`AsyncFd::readable_mut`], [`AsyncFd::writable_mut`],
/// [`AsyncFd::ready_mut`] and their `poll_` forms.
#[must_use = "call `clear_ready` once an operation reports `WouldBlock`, or `retain_ready`"]
pub struct AsyncFdReadyMutGuard<'a, T: AsRawFd> {
    async_fd: &'a mut AsyncFd<T>,
    event: Option<ReadyEvent>,
}

/// The error of a guard's `try_io` whose operation reported
/// `WouldBlock`: the readiness is cleared, wait again.
#[derive(Debug)]
pub struct TryIoError(());

/// Clears the `ready` part of `event` in `fd`'s registration; returns
/// what is left of the event, if anything.
fn clear_matching<T: AsRawFd>(
    fd: &AsyncFd<T>,
    event: ReadyEvent,
    ready: Ready,
) -> Option<ReadyEvent> {
    let bits = ready.to_driver_bits();
    fd.clear_readiness(event.only(bits));
    let left = event.only(!bits);
    (left.bits() != 0).then_some(left)
}

fn ready_of(event: Option<ReadyEvent>) -> Ready {
    event.map_or(Ready::EMPTY, |event| Ready::from_driver_bits(event.bits()))
}

impl<'a, T: AsRawFd> AsyncFdReadyGuard<'a, T> {
    pub(super) fn new(async_fd: &'a AsyncFd<T>, event: ReadyEvent) -> Self {
        AsyncFdReadyGuard {
            async_fd,
            event: Some(event),
        }
    }

    /// Clears the readiness this guard saw, so the next wait waits for
    /// the descriptor's next event. Call it only once an operation has
    /// reported `WouldBlock`: cleared while the descriptor is still ready,
    /// the next wait may never end. An event that arrived after the wait
    /// is not cleared.
    pub fn clear_ready(&mut self) {
        if let Some(event) = self.event.take() {
            self.async_fd.clear_readiness(event);
        }
    }

    /// Clears only `ready` of what this guard saw (after a read blocked,
    /// `Ready::READABLE`, keeping a write readiness seen by the same
    /// [`AsyncFd::ready`] wait); see [`clear_ready`](Self::clear_ready).
    pub fn clear_ready_matching(&mut self, ready: Ready) {
        if let Some(event) = self.event.take() {
            self.event = clear_matching(self.async_fd, event, ready);
        }
    }

    /// Keeps the readiness (does nothing): says that not clearing is
    /// meant.
    pub fn retain_ready(&mut self) {}

    /// The readiness this guard saw; empty once cleared.
    pub fn ready(&self) -> Ready {
        ready_of(self.event)
    }

    /// Runs `f`, an operation on the descriptor: its result, or
    /// `Err(TryIoError)` after clearing the readiness if it reported
    /// `WouldBlock` (then wait again). `f` must report `WouldBlock` only
    /// when the descriptor did.
    pub fn try_io<R>(
        &mut self,
        f: impl FnOnce(&'a AsyncFd<T>) -> io::Result<R>,
    ) -> Result<io::Result<R>, TryIoError> {
        match f(self.async_fd) {
            Err(error) if error.kind() == io::ErrorKind::WouldBlock => {
                self.clear_ready();
                Err(TryIoError(()))
            }
            result => Ok(result),
        }
    }

    /// The [`AsyncFd`] this guard is for.
    pub fn get_ref(&self) -> &'a AsyncFd<T> {
        self.async_fd
    }

    /// The object that owns the descriptor.
    pub fn get_inner(&self) -> &'a T {
        self.async_fd.get_ref()
    }
}

impl<'a, T: AsRawFd> AsyncFdReadyMutGuard<'a, T> {
    pub(super) fn new(async_fd: &'a mut AsyncFd<T>, event: ReadyEvent) -> Self {
        AsyncFdReadyMutGuard {
            async_fd,
            event: Some(event),
        }
    }

    /// Clears the readiness this guard saw; see
    /// [`AsyncFdReadyGuard::clear_ready`].
    pub fn clear_ready(&mut self) {
        if let Some(event) = self.event.take() {
            self.async_fd.clear_readiness(event);
        }
    }

    /// Clears only `ready` of what this guard saw; see
    /// [`AsyncFdReadyGuard::clear_ready_matching`].
    pub fn clear_ready_matching(&mut self, ready: Ready) {
        if let Some(event) = self.event.take() {
            self.event = clear_matching(self.async_fd, event, ready);
        }
    }

    /// Keeps the readiness (does nothing): says that not clearing is
    /// meant.
    pub fn retain_ready(&mut self) {}

    /// The readiness this guard saw; empty once cleared.
    pub fn ready(&self) -> Ready {
        ready_of(self.event)
    }

    /// Runs `f`, an operation on the descriptor, with mutable access; see
    /// [`AsyncFdReadyGuard::try_io`].
    pub fn try_io<R>(
        &mut self,
        f: impl FnOnce(&mut AsyncFd<T>) -> io::Result<R>,
    ) -> Result<io::Result<R>, TryIoError> {
        match f(self.async_fd) {
            Err(error) if error.kind() == io::ErrorKind::WouldBlock => {
                self.clear_ready();
                Err(TryIoError(()))
            }
            result => Ok(result),
        }
    }

    /// The [`AsyncFd`] this guard is for.
    pub fn get_ref(&self) -> &AsyncFd<T> {
        self.async_fd
    }

    /// The [`AsyncFd`] this guard is for, mutably.
    pub fn get_mut(&mut self) -> &mut AsyncFd<T> {
        self.async_fd
    }

    /// The object that owns the descriptor.
    pub fn get_inner(&self) -> &T {
        self.async_fd.get_ref()
    }

    /// The object that owns the descriptor, mutably.
    pub fn get_inner_mut(&mut self) -> &mut T {
        self.async_fd.get_mut()
    }
}

impl<T: AsRawFd + fmt::Debug> fmt::Debug for AsyncFdReadyGuard<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AsyncFdReadyGuard")
            .field("async_fd", self.async_fd)
            .field("ready", &self.ready())
            .finish()
    }
}

impl<T: AsRawFd + fmt::Debug> fmt::Debug for AsyncFdReadyMutGuard<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AsyncFdReadyMutGuard")
            .field("async_fd", &*self.async_fd)
            .field("ready", &self.ready())
            .finish()
    }
}
