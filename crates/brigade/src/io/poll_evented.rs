//! A `mio` source registered with the current runtime's reactor.

use std::io;
use std::sync::Arc;
use std::task::{Context, Poll};

use mio::Interest;

use crate::driver::Driver;
use crate::driver::scheduled_io::{Direction, ScheduledIo};
use crate::runtime::context;

/// Owns a `mio` source and its registration; deregisters on drop.
pub(crate) struct PollEvented<S: mio::event::Source> {
    /// `None` only after `into_inner`.
    source: Option<S>,
    token: usize,
    io: Arc<ScheduledIo>,
    driver: Arc<Driver>,
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
    pub(crate) fn new(mut source: S, what: &str) -> io::Result<Self> {
        let driver = context::current_driver().ok_or_else(|| no_runtime_error(what))?;
        let (token, io) = driver
            .reactor
            .register(&mut source, Interest::READABLE | Interest::WRITABLE)?;
        Ok(PollEvented {
            source: Some(source),
            token,
            io,
            driver,
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
        self.io.poll_io(cx, Direction::Read, || op(source))
    }

    /// Like [`poll_read_io`](Self::poll_read_io), for write readiness.
    pub(crate) fn poll_write_io<R>(
        &self,
        cx: &mut Context<'_>,
        mut op: impl FnMut(&S) -> io::Result<R>,
    ) -> Poll<io::Result<R>> {
        let source = self.get_ref();
        self.io.poll_io(cx, Direction::Write, || op(source))
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
