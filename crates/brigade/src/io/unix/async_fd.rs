//! `AsyncFd`: a file descriptor registered with the runtime's reactor.
//!
//! ## Protocol
//! - The registration ([`PollEvented`] of an [`FdSource`], the descriptor's
//!   number and nothing else) is declared before the object that owns the
//!   descriptor, so dropping an `AsyncFd` deregisters while the descriptor
//!   is still open, then closes it; `into_inner` deregisters and returns
//!   the object with its descriptor open.
//! - Readiness is the registration's cell (`driver/scheduled_io.rs`):
//!   waits return a guard holding the event they saw (its bits and tick),
//!   and only the guard's `clear_ready` (or a `try_io` that reports
//!   `WouldBlock`) clears it, and only if no newer event arrived since.
//! - Every wait spends a unit of the task's cooperative budget when it
//!   completes (`PollEvented::poll_ready`); `try_io` spends none, as on
//!   brigade's sockets.

use std::error::Error;
use std::fmt;
use std::future::poll_fn;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, RawFd};
use std::task::{Context, Poll, ready};

use mio::unix::SourceFd;

use super::ready_guard::{AsyncFdReadyGuard, AsyncFdReadyMutGuard};
use crate::driver::scheduled_io::ReadyEvent;
use crate::io::Interest;
use crate::io::poll_evented::PollEvented;

/// A descriptor's number as a `mio` source. It owns nothing: the
/// `AsyncFd`'s inner object owns (and closes) the descriptor.
pub(crate) struct FdSource(RawFd);

impl mio::event::Source for FdSource {
    fn register(
        &mut self,
        registry: &mio::Registry,
        token: mio::Token,
        interests: mio::Interest,
    ) -> io::Result<()> {
        SourceFd(&self.0).register(registry, token, interests)
    }

    fn reregister(
        &mut self,
        registry: &mio::Registry,
        token: mio::Token,
        interests: mio::Interest,
    ) -> io::Result<()> {
        SourceFd(&self.0).reregister(registry, token, interests)
    }

    fn deregister(&mut self, registry: &mio::Registry) -> io::Result<()> {
        SourceFd(&self.0).deregister(registry)
    }
}

/// An object that owns a file descriptor (an [`OwnedFd`], a
/// standard-library socket, a pipe, an `eventfd`), registered with the
/// runtime's reactor so that tasks can wait until it is readable or
/// writable, as tokio's `tokio::io::unix::AsyncFd`.
///
/// The descriptor must be one the reactor can poll (epoll on Linux,
/// kqueue elsewhere: sockets, pipes, FIFOs, terminals, `eventfd`s; not
/// regular files), in non-blocking mode, and `as_raw_fd` must return the
/// same descriptor for as long as the `AsyncFd` owns the object.
///
/// Readiness is edge-triggered: the reactor hears of it when the
/// descriptor *becomes* ready. A wait ([`readable`](Self::readable),
/// [`writable`](Self::writable), [`ready`](Self::ready) and their `poll_`
/// and `_mut` forms) returns at once while readiness is recorded, and
/// returns a guard; once an operation on the descriptor reports
/// `WouldBlock`, call the guard's
/// [`clear_ready`](AsyncFdReadyGuard::clear_ready) (or run the operation
/// through the guard's [`try_io`](AsyncFdReadyGuard::try_io), which does
/// so), and the next wait waits for a new event. Clearing when the
/// descriptor is still ready would wait for an event that never comes.
///
/// Dropping the `AsyncFd` deregisters the descriptor, then drops the
/// object (which closes it); [`into_inner`](Self::into_inner) deregisters
/// and returns the object, its descriptor still open.
///
/// # Examples
///
/// One end of a standard-library socket pair, read through `AsyncFd`:
///
/// ```
/// use std::io::{Read, Write};
/// use std::os::unix::net::UnixStream;
///
/// use brigade::io::unix::AsyncFd;
///
/// let rt = brigade::Runtime::new()?;
/// rt.block_on(async {
///     let (mut writer, reader) = UnixStream::pair()?;
///     reader.set_nonblocking(true)?;
///     let reader = AsyncFd::new(reader)?;
///     writer.write_all(b"ping")?;
///     let mut buf = [0u8; 16];
///     let n = loop {
///         let mut guard = reader.readable().await?;
///         match guard.try_io(|fd| fd.get_ref().read(&mut buf)) {
///             Ok(result) => break result?,
///             Err(_would_block) => continue,
///         }
///     };
///     assert_eq!(&buf[..n], b"ping");
///     std::io::Result::Ok(())
/// })?;
/// # Ok::<(), std::io::Error>(())
/// ```
///
/// [`OwnedFd`]: std::os::fd::OwnedFd
pub struct AsyncFd<T: AsRawFd> {
    // Before `inner`: dropped (deregistered) before the descriptor closes.
    registration: PollEvented<FdSource>,
    inner: T,
}

impl<T: AsRawFd> AsyncFd<T> {
    /// Registers `inner`'s descriptor for reading and writing.
    ///
    /// # Panics
    ///
    /// Outside a brigade runtime (a task, `Runtime::block_on`, or a
    /// `spawn_blocking` closure), as tokio's panics outside tokio's.
    #[track_caller]
    pub fn new(inner: T) -> io::Result<AsyncFd<T>> {
        Self::with_interest(inner, Interest::READABLE | Interest::WRITABLE)
    }

    /// Registers `inner`'s descriptor for `interest` only (a descriptor
    /// that is only ever read, say). Waiting for the other readiness then
    /// never completes.
    ///
    /// # Panics
    ///
    /// Outside a brigade runtime, as [`new`](Self::new).
    #[track_caller]
    pub fn with_interest(inner: T, interest: Interest) -> io::Result<AsyncFd<T>> {
        Self::try_with_interest(inner, interest).map_err(io::Error::from)
    }

    /// Like [`new`](Self::new), but a failed registration (a descriptor
    /// the reactor cannot poll, such as a regular file: `EPERM`) gives
    /// `inner` back with the error.
    ///
    /// # Panics
    ///
    /// Outside a brigade runtime, as [`new`](Self::new).
    #[track_caller]
    pub fn try_new(inner: T) -> Result<AsyncFd<T>, AsyncFdTryNewError<T>> {
        Self::try_with_interest(inner, Interest::READABLE | Interest::WRITABLE)
    }

    /// Like [`with_interest`](Self::with_interest), but a failed
    /// registration gives `inner` back with the error.
    ///
    /// # Panics
    ///
    /// Outside a brigade runtime, as [`new`](Self::new).
    #[track_caller]
    pub fn try_with_interest(
        inner: T,
        interest: Interest,
    ) -> Result<AsyncFd<T>, AsyncFdTryNewError<T>> {
        let source = FdSource(inner.as_raw_fd());
        let what = "brigade::io::unix::AsyncFd::new";
        match PollEvented::new_or_panic(source, interest.to_mio(), what) {
            Ok(registration) => Ok(AsyncFd {
                registration,
                inner,
            }),
            Err(cause) => Err(AsyncFdTryNewError { inner, cause }),
        }
    }

    /// The object that owns the descriptor.
    pub fn get_ref(&self) -> &T {
        &self.inner
    }

    /// The object that owns the descriptor, mutably.
    pub fn get_mut(&mut self) -> &mut T {
        &mut self.inner
    }

    /// Deregisters the descriptor and returns the object that owns it,
    /// the descriptor still open.
    pub fn into_inner(self) -> T {
        let AsyncFd {
            registration,
            inner,
        } = self;
        let FdSource(_) = registration.into_inner();
        inner
    }

    /// Polls for read readiness: `Pending` registers the task's waker,
    /// `Ready` returns a guard for the readiness seen. A shared reference
    /// is enough, so another task may wait for writing meanwhile.
    pub fn poll_read_ready<'a>(
        &'a self,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<AsyncFdReadyGuard<'a, T>>> {
        let event = ready!(self.poll_event(cx, Interest::READABLE))?;
        Poll::Ready(Ok(AsyncFdReadyGuard::new(self, event)))
    }

    /// Like [`poll_read_ready`](Self::poll_read_ready), with a guard that
    /// gives mutable access to the object.
    pub fn poll_read_ready_mut<'a>(
        &'a mut self,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<AsyncFdReadyMutGuard<'a, T>>> {
        let event = ready!(self.poll_event(cx, Interest::READABLE))?;
        Poll::Ready(Ok(AsyncFdReadyMutGuard::new(self, event)))
    }

    /// Polls for write readiness; see
    /// [`poll_read_ready`](Self::poll_read_ready).
    pub fn poll_write_ready<'a>(
        &'a self,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<AsyncFdReadyGuard<'a, T>>> {
        let event = ready!(self.poll_event(cx, Interest::WRITABLE))?;
        Poll::Ready(Ok(AsyncFdReadyGuard::new(self, event)))
    }

    /// Like [`poll_write_ready`](Self::poll_write_ready), with a guard
    /// that gives mutable access to the object.
    pub fn poll_write_ready_mut<'a>(
        &'a mut self,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<AsyncFdReadyMutGuard<'a, T>>> {
        let event = ready!(self.poll_event(cx, Interest::WRITABLE))?;
        Poll::Ready(Ok(AsyncFdReadyMutGuard::new(self, event)))
    }

    /// Waits until the descriptor may be ready for any of `interest`, and
    /// returns a guard whose [`ready`](AsyncFdReadyGuard::ready) says
    /// which. With `READABLE | WRITABLE`, clear only the readiness whose
    /// operation blocked, with
    /// [`clear_ready_matching`](AsyncFdReadyGuard::clear_ready_matching).
    ///
    /// Fails only once the runtime has shut down. Cancel safe: readiness
    /// stays recorded until a guard clears it.
    pub async fn ready(&self, interest: Interest) -> io::Result<AsyncFdReadyGuard<'_, T>> {
        let event = poll_fn(|cx| self.poll_event(cx, interest)).await?;
        Ok(AsyncFdReadyGuard::new(self, event))
    }

    /// Like [`ready`](Self::ready), with a guard that gives mutable access
    /// to the object.
    pub async fn ready_mut(
        &mut self,
        interest: Interest,
    ) -> io::Result<AsyncFdReadyMutGuard<'_, T>> {
        let event = poll_fn(|cx| self.poll_event(cx, interest)).await?;
        Ok(AsyncFdReadyMutGuard::new(self, event))
    }

    /// Waits until the descriptor may be readable (or its read side is
    /// closed, or it has an error); see [`ready`](Self::ready).
    pub async fn readable(&self) -> io::Result<AsyncFdReadyGuard<'_, T>> {
        self.ready(Interest::READABLE).await
    }

    /// Like [`readable`](Self::readable), with a guard that gives mutable
    /// access to the object.
    pub async fn readable_mut(&mut self) -> io::Result<AsyncFdReadyMutGuard<'_, T>> {
        self.ready_mut(Interest::READABLE).await
    }

    /// Waits until the descriptor may be writable (or its write side is
    /// closed, or it has an error); see [`ready`](Self::ready).
    pub async fn writable(&self) -> io::Result<AsyncFdReadyGuard<'_, T>> {
        self.ready(Interest::WRITABLE).await
    }

    /// Like [`writable`](Self::writable), with a guard that gives mutable
    /// access to the object.
    pub async fn writable_mut(&mut self) -> io::Result<AsyncFdReadyMutGuard<'_, T>> {
        self.ready_mut(Interest::WRITABLE).await
    }

    /// Waits for `interest` and runs `f` (one non-blocking operation on the
    /// descriptor) until it returns something other than `WouldBlock`,
    /// clearing the readiness after each `WouldBlock`. `f` must report
    /// `WouldBlock` only when the descriptor did; give one interest, the
    /// one `f`'s operation needs.
    pub async fn async_io<R>(
        &self,
        interest: Interest,
        mut f: impl FnMut(&T) -> io::Result<R>,
    ) -> io::Result<R> {
        let inner = &self.inner;
        self.registration.async_io(interest, |_| f(inner)).await
    }

    /// Like [`async_io`](Self::async_io), with mutable access to the
    /// object.
    pub async fn async_io_mut<R>(
        &mut self,
        interest: Interest,
        mut f: impl FnMut(&mut T) -> io::Result<R>,
    ) -> io::Result<R> {
        let AsyncFd {
            registration,
            inner,
        } = self;
        registration.async_io(interest, |_| f(inner)).await
    }

    /// Runs `f` once if the descriptor may be ready for `interest`;
    /// otherwise returns `WouldBlock` without calling it. If `f` returns
    /// `WouldBlock`, the readiness is cleared (see
    /// [`async_io`](Self::async_io) for what `f` must respect).
    pub fn try_io<R>(
        &self,
        interest: Interest,
        f: impl FnOnce(&T) -> io::Result<R>,
    ) -> io::Result<R> {
        self.registration.try_io(interest, |_| f(&self.inner))
    }

    /// Like [`try_io`](Self::try_io), with mutable access to the object.
    pub fn try_io_mut<R>(
        &mut self,
        interest: Interest,
        f: impl FnOnce(&mut T) -> io::Result<R>,
    ) -> io::Result<R> {
        let AsyncFd {
            registration,
            inner,
        } = self;
        registration.try_io(interest, |_| f(inner))
    }

    fn poll_event(&self, cx: &mut Context<'_>, interest: Interest) -> Poll<io::Result<ReadyEvent>> {
        self.registration.poll_ready(cx, interest)
    }

    /// Clears what `event` saw, for a guard.
    pub(super) fn clear_readiness(&self, event: ReadyEvent) {
        self.registration.clear_readiness(event);
    }
}

impl<T: AsRawFd> AsRawFd for AsyncFd<T> {
    fn as_raw_fd(&self) -> RawFd {
        self.inner.as_raw_fd()
    }
}

impl<T: AsRawFd> AsFd for AsyncFd<T> {
    fn as_fd(&self) -> BorrowedFd<'_> {
        // SAFETY: the descriptor is `inner`'s, which `self` owns for the
        // borrow's lifetime, and an `AsyncFd`'s object must keep one open
        // descriptor for as long as it is owned (the type's contract, as
        // tokio's); `AsFd` for any `AsRawFd` object is what tokio offers.
        unsafe { BorrowedFd::borrow_raw(self.as_raw_fd()) }
    }
}

impl<T: AsRawFd + fmt::Debug> fmt::Debug for AsyncFd<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AsyncFd")
            .field("inner", &self.inner)
            .finish()
    }
}

/// The error of [`AsyncFd::try_new`] and [`AsyncFd::try_with_interest`]:
/// why the registration failed, and the object, given back.
pub struct AsyncFdTryNewError<T> {
    inner: T,
    cause: io::Error,
}

impl<T> AsyncFdTryNewError<T> {
    /// The object passed in, and the error that failed its registration.
    pub fn into_parts(self) -> (T, io::Error) {
        (self.inner, self.cause)
    }
}

impl<T> fmt::Display for AsyncFdTryNewError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.cause, f)
    }
}

impl<T> fmt::Debug for AsyncFdTryNewError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.cause, f)
    }
}

impl<T> Error for AsyncFdTryNewError<T> {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        Some(&self.cause)
    }
}

impl<T> From<AsyncFdTryNewError<T>> for io::Error {
    fn from(error: AsyncFdTryNewError<T>) -> io::Error {
        error.cause
    }
}
