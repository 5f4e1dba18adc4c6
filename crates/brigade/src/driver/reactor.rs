//! The I/O half of the driver: one `mio::Poll` for the runtime, the table of
//! registered sources, and the `mio::Waker` that interrupts a blocked poll.
//!
//! The `mio::Poll` itself (with its event buffer) lives in [`PollState`],
//! which the runtime's driver keeps behind its lock: whoever holds the lock
//! may poll. Registration goes through a cloned `mio::Registry` and needs no
//! lock on the poll.
//!
//! ## Polls with nothing to find
//! Busy workers poll without blocking every `EVENT_INTERVAL` ticks and once
//! per epoch (`driver/mod.rs`). A runtime with no source registered (pure
//! computation, tokio's runtime built without I/O) would pay an
//! `epoll_wait` for each, to find nothing: [`Reactor::may_have_events`]
//! lets such a poll skip the syscall. It says no only when no source is
//! registered and the mio waker has not been woken since the last
//! `epoll_wait` began:
//! - `registered` counts sources; it is raised before `epoll_ctl` adds a
//!   source. A poll that read it as 0 just before then misses nothing that
//!   a poll at that moment would have found: the source's first readiness
//!   waits in the epoll set for the next poll, as an event that arrives
//!   just after a poll does.
//! - `woken` is set after each write to the waker and cleared by a swap
//!   right before each `epoll_wait`. If the swap sees the flag, the write
//!   came first and this `epoll_wait` consumes its event; if not, the flag
//!   is set after the swap, so the next poll does not skip. Either way the
//!   waker's event is taken by an `epoll_wait`, never left pending in the
//!   epoll set, where it would keep the descriptor readable (a watcher's
//!   `poll(2)` and `Driver::has_pending_work` read that).
//!
//! Only busy workers' polls skip ([`Reactor::turn_if_may_have_events`]).
//! The watcher's and the fallback thread's polls, which follow a wait on
//! the epoll descriptor, always call `epoll_wait`: their wait may have
//! ended on the waker's write before `woken` was set.

use std::io;
use std::os::fd::{AsFd, BorrowedFd};
use std::sync::Arc;
use std::task::Waker;
use std::time::Duration;

use mio::{Events, Interest, Poll, Registry, Token};
use slab::Slab;

use super::scheduled_io::{ERROR, READ_CLOSED, READABLE, ScheduledIo, WRITABLE, WRITE_CLOSED};
use crate::sync::{AtomicBool, AtomicUsize, Mutex, Ordering, lock};

const WAKER_TOKEN: Token = Token(usize::MAX);

/// The poll and its event buffer: owned by whoever holds the driver lock.
pub(crate) struct PollState {
    poll: Poll,
    events: Events,
    wake: Vec<Waker>,
}

/// Registered sources and the means to wake a blocked poll.
pub(crate) struct Reactor {
    registry: Registry,
    waker: mio::Waker,
    sources: Mutex<Sources>,
    /// Sources registered (see "Polls with nothing to find").
    registered: AtomicUsize,
    /// The waker was woken since the last `epoll_wait` began (see "Polls
    /// with nothing to find").
    woken: AtomicBool,
}

struct Sources {
    table: Slab<Arc<ScheduledIo>>,
    shutdown: bool,
}

impl Reactor {
    pub(crate) fn new() -> io::Result<(Reactor, PollState)> {
        let poll = Poll::new()?;
        let waker = mio::Waker::new(poll.registry(), WAKER_TOKEN)?;
        let reactor = Reactor {
            registry: poll.registry().try_clone()?,
            waker,
            sources: Mutex::new(Sources {
                table: Slab::new(),
                shutdown: false,
            }),
            registered: AtomicUsize::new(0),
            woken: AtomicBool::new(false),
        };
        let state = PollState {
            poll,
            events: Events::with_capacity(1024),
            wake: Vec::new(),
        };
        Ok((reactor, state))
    }

    /// The epoll (or kqueue) descriptor: readable while events are pending.
    /// The registry's is a duplicate of the poll's, one open description.
    pub(crate) fn poll_fd(&self) -> BorrowedFd<'_> {
        self.registry.as_fd()
    }

    /// Interrupts a thread blocked in [`turn`](Self::turn).
    pub(crate) fn wake(&self) {
        if let Err(error) = self.waker.wake() {
            tracing::error!(%error, "could not wake the I/O driver");
        }
        // After the write: see "Polls with nothing to find".
        self.woken.store(true, Ordering::Release);
    }

    /// Whether an `epoll_wait` could find anything (see "Polls with
    /// nothing to find"): some source is registered, or the waker was woken
    /// since the last `epoll_wait` began.
    fn may_have_events(&self) -> bool {
        self.registered.load(Ordering::Acquire) > 0 || self.woken.load(Ordering::Acquire)
    }

    /// Registers `source`; returns its token and readiness cell.
    pub(crate) fn register(
        &self,
        source: &mut impl mio::event::Source,
        interest: Interest,
    ) -> io::Result<(usize, Arc<ScheduledIo>)> {
        let io = Arc::new(ScheduledIo::default());
        let token = {
            let mut sources = lock(&self.sources);
            if sources.shutdown {
                return Err(super::scheduled_io::shutdown_error());
            }
            // Before `epoll_ctl`: see "Polls with nothing to find".
            self.registered.fetch_add(1, Ordering::Release);
            sources.table.insert(io.clone())
        };
        if let Err(error) = self.registry.register(source, Token(token), interest) {
            lock(&self.sources).table.remove(token);
            self.registered.fetch_sub(1, Ordering::Release);
            return Err(error);
        }
        Ok((token, io))
    }

    /// Deregisters `source` and forgets `token`.
    pub(crate) fn deregister(&self, source: &mut impl mio::event::Source, token: usize) {
        // Failing to deregister (the fd may already be closed) is harmless:
        // the token is forgotten below, so stray events find nothing.
        let _ = self.registry.deregister(source);
        let mut sources = lock(&self.sources);
        if sources.table.contains(token) {
            sources.table.remove(token);
            self.registered.fetch_sub(1, Ordering::Release);
        }
    }

    /// A busy worker's poll ([`turn`](Self::turn) without blocking): skips
    /// the `epoll_wait` if it could find nothing (see "Polls with nothing
    /// to find"). Returns how many tasks were woken.
    pub(crate) fn turn_if_may_have_events(&self, state: &mut PollState) -> usize {
        if !self.may_have_events() {
            return 0;
        }
        self.turn(state, Some(Duration::ZERO))
    }

    /// Polls for events (blocking up to `timeout`) and wakes the tasks they
    /// ready. Returns how many tasks were woken.
    pub(crate) fn turn(&self, state: &mut PollState, timeout: Option<Duration>) -> usize {
        // Before `epoll_wait`: see "Polls with nothing to find".
        self.woken.swap(false, Ordering::AcqRel);
        if let Err(error) = state.poll.poll(&mut state.events, timeout) {
            if error.kind() != io::ErrorKind::Interrupted {
                tracing::error!(%error, "I/O driver poll failed");
            }
            return 0;
        }
        if state.events.is_empty() {
            return 0;
        }
        {
            let sources = lock(&self.sources);
            for event in state.events.iter() {
                if event.token() == WAKER_TOKEN {
                    continue;
                }
                let Some(io) = sources.table.get(event.token().0) else {
                    continue;
                };
                let mut bits = 0;
                if event.is_readable() {
                    bits |= READABLE;
                }
                if event.is_writable() {
                    bits |= WRITABLE;
                }
                if event.is_read_closed() {
                    bits |= READ_CLOSED;
                }
                if event.is_write_closed() {
                    bits |= WRITE_CLOSED;
                }
                if event.is_error() {
                    bits |= ERROR;
                }
                io.set_readiness(bits, &mut state.wake);
            }
        }
        let woken = state.wake.len();
        state.wake.drain(..).for_each(Waker::wake);
        woken
    }

    /// Fails every registered source's waits (runtime shutdown).
    pub(crate) fn shutdown(&self) {
        let sources: Vec<_> = {
            let mut sources = lock(&self.sources);
            sources.shutdown = true;
            sources.table.iter().map(|(_, io)| io.clone()).collect()
        };
        sources.iter().for_each(|io| io.shutdown());
    }
}
