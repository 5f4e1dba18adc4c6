//! A `mio` source registered with the current runtime's reactor.
//!
//! Every wait for readiness and every operation run through it spends a
//! unit of the task's cooperative budget when it makes progress (C6 of the
//! policy, `task/coop.rs`; `try_io` spends nothing, as tokio's `try_`
//! methods do), so every socket type is budgeted here, once.

use std::future::poll_fn;
use std::io;
use std::sync::Arc;
use std::task::{Context, Poll};

use mio::Interest;

use super::io_span::IoSpan;
use super::ready::{Interest as UserInterest, Ready};
use crate::driver::Driver;
use crate::driver::scheduled_io::{Direction, ReadyEvent, ScheduledIo};
use crate::runtime::context;
use crate::task::coop::budgeted;

/// Owns a `mio` source and its registration; deregisters on drop.
pub(crate) struct PollEvented<S: mio::event::Source> {
    /// `None` only after `into_inner`.
    source: Option<S>,
    token: usize,
    io: Arc<ScheduledIo>,
    driver: Arc<Driver>,
    /// Its tokio-console resource span (`io_span.rs`; nothing without the
    /// feature).
    _span: IoSpan,
}

/// The error for net types created outside a runtime.
pub(crate) fn no_runtime_error(what: &str) -> io::Error {
    io::Error::other(format!(
        "{what} must be called from inside a brigade runtime (a task, `Runtime::block_on`, or \
         a `spawn_blocking` closure): I/O objects register with the runtime's reactor"
    ))
}

impl<S: mio::event::Source> PollEvented<S> {
    /// Registers `source` with the current runtime. `what` names the calling
    /// API for the error raised outside a runtime.
    pub(crate) fn new(source: S, what: &str) -> io::Result<Self> {
        Self::new_with_interest(source, Interest::READABLE | Interest::WRITABLE, what)
    }

    /// Like [`new`](Self::new), for a source that is only ever read or
    /// only ever written (a pipe's end: kqueue has no write filter for a
    /// read end).
    pub(crate) fn new_with_interest(source: S, interest: Interest, what: &str) -> io::Result<Self> {
        let driver = context::current_driver().ok_or_else(|| no_runtime_error(what))?;
        Self::register_in(driver, source, interest)
    }

    /// Like [`new_with_interest`](Self::new_with_interest), but outside a
    /// runtime it panics with the same message, as tokio's `AsyncFd::new`
    /// does (tokio's sockets panic there too; brigade's return the error).
    #[track_caller]
    pub(crate) fn new_or_panic(source: S, interest: Interest, what: &str) -> io::Result<Self> {
        let Some(driver) = context::current_driver() else {
            panic!("{}", no_runtime_error(what));
        };
        Self::register_in(driver, source, interest)
    }

    fn register_in(driver: Arc<Driver>, mut source: S, interest: Interest) -> io::Result<Self> {
        let (token, io) = driver.reactor.register(&mut source, interest)?;
        Ok(PollEvented {
            source: Some(source),
            token,
            io,
            driver,
            _span: IoSpan::new::<S>(),
        })
    }

    pub(crate) fn get_ref(&self) -> &S {
        self.source.as_ref().expect("source taken")
    }

    /// Runs `op` until it does not report `WouldBlock`, waiting for read
    /// readiness in between.
    pub(crate) fn poll_read_io<R>(
        &self,
        cx: &mut Context<'_>,
        mut op: impl FnMut(&S) -> io::Result<R>,
    ) -> Poll<io::Result<R>> {
        let source = self.get_ref();
        budgeted(cx, |cx| {
            self.io
                .poll_io(cx, Direction::Read, || op(source), |_| false)
        })
    }

    /// Like [`poll_read_io`](Self::poll_read_io), for write readiness.
    pub(crate) fn poll_write_io<R>(
        &self,
        cx: &mut Context<'_>,
        mut op: impl FnMut(&S) -> io::Result<R>,
    ) -> Poll<io::Result<R>> {
        let source = self.get_ref();
        budgeted(cx, |cx| {
            self.io
                .poll_io(cx, Direction::Write, || op(source), |_| false)
        })
    }

    /// A byte stream's read into the unfilled part of tokio's `ReadBuf`,
    /// without zeroing it first: as [`poll_stream_read`](Self::poll_stream_read)
    /// with `read_into`, which must only write into the memory it is given
    /// and return how many bytes it wrote (`recv(2)`, `read(2)`). The one
    /// place brigade's streams hand tokio uninitialised memory.
    #[cfg(feature = "tokio-io")]
    pub(crate) fn poll_read_buf(
        &self,
        cx: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
        mut read_into: impl FnMut(&S, &mut [std::mem::MaybeUninit<u8>]) -> io::Result<usize>,
    ) -> Poll<io::Result<()>> {
        // SAFETY: the unfilled part is only handed to `read_into`, which
        // writes into it and never de-initialises any of it.
        let unfilled = unsafe { buf.unfilled_mut() };
        let len = unfilled.len();
        let read = self.poll_stream_read(cx, len, |source| read_into(source, unfilled));
        read.map_ok(|received| {
            // SAFETY: `read_into` wrote the first `received` bytes of the
            // unfilled part.
            unsafe { buf.assume_init(received) };
            buf.advance(received);
        })
    }

    /// A byte stream's read into a buffer of `len` bytes: as
    /// [`poll_read_io`](Self::poll_read_io), and a read that fills less
    /// than the buffer drains the source (`ScheduledIo::poll_io`).
    pub(crate) fn poll_stream_read(
        &self,
        cx: &mut Context<'_>,
        len: usize,
        op: impl FnMut(&S) -> io::Result<usize>,
    ) -> Poll<io::Result<usize>> {
        self.poll_stream(cx, Direction::Read, len, op)
    }

    /// A byte stream's write of `len` bytes: as
    /// [`poll_write_io`](Self::poll_write_io), and a write that takes less
    /// than it was given fills the socket's buffer (`ScheduledIo::poll_io`).
    pub(crate) fn poll_stream_write(
        &self,
        cx: &mut Context<'_>,
        len: usize,
        op: impl FnMut(&S) -> io::Result<usize>,
    ) -> Poll<io::Result<usize>> {
        self.poll_stream(cx, Direction::Write, len, op)
    }

    fn poll_stream(
        &self,
        cx: &mut Context<'_>,
        direction: Direction,
        len: usize,
        mut op: impl FnMut(&S) -> io::Result<usize>,
    ) -> Poll<io::Result<usize>> {
        let source = self.get_ref();
        let short = |&moved: &usize| moved > 0 && moved < len;
        budgeted(cx, |cx| {
            self.io.poll_io(cx, direction, || op(source), short)
        })
    }

    /// Ready once the source may be ready for `interest`; otherwise
    /// registers the task's waker.
    pub(crate) fn poll_ready(
        &self,
        cx: &mut Context<'_>,
        interest: UserInterest,
    ) -> Poll<io::Result<ReadyEvent>> {
        budgeted(cx, |cx| self.io.poll_ready_any(cx, interest.directions()))
    }

    /// Waits until the source may be ready for `interest`.
    pub(crate) async fn ready(&self, interest: UserInterest) -> io::Result<Ready> {
        let event = poll_fn(|cx| self.poll_ready(cx, interest)).await?;
        Ok(Ready::from_driver_bits(event.bits()))
    }

    /// Runs `op` once if the source may be ready for `interest`, else
    /// reports `WouldBlock` without a system call. When `op` reports
    /// `WouldBlock`, the readiness it saw is cleared, so the next wait
    /// waits for a new event.
    pub(crate) fn try_io<R>(
        &self,
        interest: UserInterest,
        op: impl FnOnce(&S) -> io::Result<R>,
    ) -> io::Result<R> {
        let Some(event) = self.io.ready_now(interest.directions())? else {
            return Err(io::ErrorKind::WouldBlock.into());
        };
        let result = op(self.get_ref());
        if matches!(&result, Err(error) if error.kind() == io::ErrorKind::WouldBlock) {
            self.io.clear_readiness(event);
        }
        result
    }

    /// Waits for `interest` and runs `op` until it stops reporting
    /// `WouldBlock`, clearing the readiness after each `WouldBlock`.
    pub(crate) async fn async_io<R>(
        &self,
        interest: UserInterest,
        mut op: impl FnMut(&S) -> io::Result<R>,
    ) -> io::Result<R> {
        let source = self.get_ref();
        poll_fn(|cx| {
            loop {
                let event = match self.poll_ready(cx, interest) {
                    Poll::Ready(Ok(event)) => event,
                    Poll::Ready(Err(error)) => return Poll::Ready(Err(error)),
                    Poll::Pending => return Poll::Pending,
                };
                match op(source) {
                    Err(error) if error.kind() == io::ErrorKind::WouldBlock => {
                        self.io.clear_readiness(event)
                    }
                    result => return Poll::Ready(result),
                }
            }
        })
        .await
    }

    /// Clears what `event` saw (after an operation reported `WouldBlock`),
    /// unless a newer event arrived since (`ScheduledIo::clear_readiness`).
    pub(crate) fn clear_readiness(&self, event: ReadyEvent) {
        self.io.clear_readiness(event);
    }

    /// Deregisters and returns the source.
    pub(crate) fn into_inner(mut self) -> S {
        let mut source = self.source.take().expect("source taken");
        self.driver.reactor.deregister(&mut source, self.token);
        source
    }
}

impl<S: mio::event::Source> Drop for PollEvented<S> {
    fn drop(&mut self) {
        if let Some(mut source) = self.source.take() {
            self.driver.reactor.deregister(&mut source, self.token);
        }
    }
}
