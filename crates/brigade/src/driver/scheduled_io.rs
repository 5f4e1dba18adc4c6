//! Readiness of one registered I/O source, and the tasks waiting on it.
//!
//! ## Protocol
//! `readiness` packs the ready bits (low 8 bits) and a *tick* (the rest),
//! bumped by every event the driver delivers.
//! - The driver ([`ScheduledIo::set_readiness`]) ORs in the new bits and bumps
//!   the tick in one atomic update, **then** takes the matching waiters under
//!   the `waiters` lock and wakes them.
//! - A task ([`ScheduledIo::poll_ready`]) loads `readiness`; if a bit it
//!   wants is set it is ready. Otherwise it stores its waker under the lock
//!   and loads `readiness` again before releasing it. If the driver's update
//!   came before our locked section, the second load sees it; if after, the
//!   driver's locked section comes after ours and finds our waker. A task
//!   that waits in both directions ([`ScheduledIo::poll_ready_any`]) stores
//!   its waker in both lists in the same locked section, so the argument
//!   holds for each.
//! - After an operation reports `WouldBlock`, the task clears the bits it
//!   saw, but only if the tick is still the one it saw
//!   ([`ScheduledIo::clear_readiness`]): an event that arrived in between is
//!   not lost. Closed and error bits are final and never cleared.

use std::io;
use std::task::{Context, Poll, Waker};

use crate::sync::{AtomicUsize, Mutex, Ordering, lock};

pub(crate) const READABLE: usize = 1 << 0;
pub(crate) const WRITABLE: usize = 1 << 1;
pub(crate) const READ_CLOSED: usize = 1 << 2;
pub(crate) const WRITE_CLOSED: usize = 1 << 3;
pub(crate) const ERROR: usize = 1 << 4;
/// Set when the runtime shuts down: every wait fails from then on.
const SHUTDOWN: usize = 1 << 5;
const READY_MASK: usize = 0xff;
const TICK_ONE: usize = 0x100;
/// Bits that are never cleared once set.
const FINAL: usize = READ_CLOSED | WRITE_CLOSED | ERROR | SHUTDOWN;

/// Which way a task waits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Direction {
    Read,
    Write,
}

impl Direction {
    fn mask(self) -> usize {
        match self {
            Direction::Read => READABLE | READ_CLOSED | ERROR | SHUTDOWN,
            Direction::Write => WRITABLE | WRITE_CLOSED | ERROR | SHUTDOWN,
        }
    }
}

/// Readiness seen by a task: the bits, and the tick they were seen at.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ReadyEvent {
    tick: usize,
    ready: usize,
}

impl ReadyEvent {
    /// The ready bits seen (`READABLE`, `WRITABLE`, ... above).
    pub(crate) fn bits(self) -> usize {
        self.ready
    }

    /// The same event, seeing only the bits of `bits` (an `AsyncFd`
    /// guard's clear of one readiness keeps the others).
    pub(crate) fn only(self, bits: usize) -> ReadyEvent {
        ReadyEvent {
            tick: self.tick,
            ready: self.ready & bits,
        }
    }
}

/// The readiness mask of waiting in any of `directions`.
fn mask_of(directions: &[Direction]) -> usize {
    directions
        .iter()
        .fold(0, |mask, direction| mask | direction.mask())
}

#[derive(Default)]
struct Waiters {
    readers: Vec<Waker>,
    writers: Vec<Waker>,
}

/// Per-source readiness and waiters. See the module docs.
#[derive(Default)]
pub(crate) struct ScheduledIo {
    readiness: AtomicUsize,
    waiters: Mutex<Waiters>,
}

fn add_waker(list: &mut Vec<Waker>, waker: &Waker) {
    if !list.iter().any(|existing| existing.will_wake(waker)) {
        list.push(waker.clone());
    }
}

impl ScheduledIo {
    /// Records an event and moves the wakers of the tasks it readies into
    /// `wake` (the caller wakes them with no lock held).
    pub(crate) fn set_readiness(&self, bits: usize, wake: &mut Vec<Waker>) {
        let mut current = self.readiness.load(Ordering::Acquire);
        loop {
            let tick = (current & !READY_MASK).wrapping_add(TICK_ONE);
            let next = tick | (current & READY_MASK) | bits;
            match self.readiness.compare_exchange_weak(
                current,
                next,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => break,
                Err(actual) => current = actual,
            }
        }
        let mut waiters = lock(&self.waiters);
        if bits & Direction::Read.mask() != 0 {
            wake.append(&mut waiters.readers);
        }
        if bits & Direction::Write.mask() != 0 {
            wake.append(&mut waiters.writers);
        }
    }

    /// Marks the source as belonging to a runtime that shut down and wakes
    /// every waiter.
    pub(crate) fn shutdown(&self) {
        let mut wake = Vec::new();
        self.set_readiness(SHUTDOWN, &mut wake);
        wake.into_iter().for_each(Waker::wake);
    }

    fn ready_in(&self, mask: usize) -> Option<ReadyEvent> {
        let current = self.readiness.load(Ordering::Acquire);
        let ready = current & mask;
        (ready != 0).then_some(ReadyEvent {
            tick: current & !READY_MASK,
            ready,
        })
    }

    /// Ready if the source may be ready in `direction`; otherwise registers
    /// the task's waker.
    pub(crate) fn poll_ready(
        &self,
        cx: &mut Context<'_>,
        direction: Direction,
    ) -> Poll<io::Result<ReadyEvent>> {
        self.poll_ready_any(cx, &[direction])
    }

    /// Ready if the source may be ready in any of `directions`; otherwise
    /// registers the task's waker for each of them (a wake in one leaves a
    /// stale waker in the other's list: one spurious wake at most).
    pub(crate) fn poll_ready_any(
        &self,
        cx: &mut Context<'_>,
        directions: &[Direction],
    ) -> Poll<io::Result<ReadyEvent>> {
        let mask = mask_of(directions);
        let event = match self.ready_in(mask) {
            Some(event) => event,
            None => {
                let mut waiters = lock(&self.waiters);
                for direction in directions {
                    let list = match direction {
                        Direction::Read => &mut waiters.readers,
                        Direction::Write => &mut waiters.writers,
                    };
                    add_waker(list, cx.waker());
                }
                match self.ready_in(mask) {
                    Some(event) => event,
                    None => return Poll::Pending,
                }
            }
        };
        if event.ready & SHUTDOWN != 0 {
            return Poll::Ready(Err(shutdown_error()));
        }
        Poll::Ready(Ok(event))
    }

    /// The readiness in any of `directions` right now, without waiting:
    /// `None` if there is none, an error after the runtime's shutdown.
    pub(crate) fn ready_now(&self, directions: &[Direction]) -> io::Result<Option<ReadyEvent>> {
        match self.ready_in(mask_of(directions)) {
            Some(event) if event.ready & SHUTDOWN != 0 => Err(shutdown_error()),
            event => Ok(event),
        }
    }

    /// Clears what `event` saw, unless a newer event arrived since.
    pub(crate) fn clear_readiness(&self, event: ReadyEvent) {
        let clear = event.ready & !FINAL;
        let mut current = self.readiness.load(Ordering::Acquire);
        while current & !READY_MASK == event.tick {
            match self.readiness.compare_exchange_weak(
                current,
                current & !clear,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return,
                Err(actual) => current = actual,
            }
        }
    }

    /// Runs a non-blocking operation until it stops reporting `WouldBlock`,
    /// waiting for readiness in `direction` in between. `drained` says of a
    /// successful result that it emptied the source (a byte stream's read
    /// that filled less than its buffer, a write that took less than it was
    /// given): the readiness is then cleared as after a `WouldBlock`, so
    /// the next operation waits for an event instead of making the system
    /// call that would report `WouldBlock`. The clear keeps an event that
    /// came after the one the operation ran on (`clear_readiness`), and
    /// readiness is edge-triggered, so data that arrives later raises a new
    /// event either way. (`kv` at 20,000 requests/s: half its reads were
    /// those `WouldBlock`s; tokio's streams skip them the same way.)
    pub(crate) fn poll_io<R>(
        &self,
        cx: &mut Context<'_>,
        direction: Direction,
        mut op: impl FnMut() -> io::Result<R>,
        drained: impl Fn(&R) -> bool,
    ) -> Poll<io::Result<R>> {
        loop {
            let event = match self.poll_ready(cx, direction) {
                Poll::Ready(Ok(event)) => event,
                Poll::Ready(Err(error)) => return Poll::Ready(Err(error)),
                Poll::Pending => return Poll::Pending,
            };
            match op() {
                Err(error) if error.kind() == io::ErrorKind::WouldBlock => {
                    self.clear_readiness(event)
                }
                Ok(done) if drained(&done) => {
                    self.clear_readiness(event);
                    return Poll::Ready(Ok(done));
                }
                result => return Poll::Ready(result),
            }
        }
    }
}

pub(crate) fn shutdown_error() -> io::Error {
    io::Error::other("the brigade runtime this I/O object was registered with has shut down")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::task::Waker;

    #[test]
    fn an_event_between_read_and_clear_is_not_lost() {
        let io = ScheduledIo::default();
        let mut wake = Vec::new();
        io.set_readiness(READABLE, &mut wake);
        let mut cx = Context::from_waker(Waker::noop());
        let Poll::Ready(Ok(seen)) = io.poll_ready(&mut cx, Direction::Read) else {
            panic!("should be readable");
        };
        // A new event arrives before the task's WouldBlock clear.
        io.set_readiness(READABLE, &mut wake);
        io.clear_readiness(seen);
        assert!(io.poll_ready(&mut cx, Direction::Read).is_ready());
        // Without a new event the clear works.
        let Poll::Ready(Ok(seen)) = io.poll_ready(&mut cx, Direction::Read) else {
            panic!("should be readable");
        };
        io.clear_readiness(seen);
        assert!(io.poll_ready(&mut cx, Direction::Read).is_pending());
        assert!(io.poll_ready(&mut cx, Direction::Write).is_pending());
    }

    #[test]
    fn closed_is_final_and_shutdown_errors() {
        let io = ScheduledIo::default();
        let mut wake = Vec::new();
        io.set_readiness(READ_CLOSED, &mut wake);
        let mut cx = Context::from_waker(Waker::noop());
        let Poll::Ready(Ok(seen)) = io.poll_ready(&mut cx, Direction::Read) else {
            panic!("closed counts as ready");
        };
        io.clear_readiness(seen);
        assert!(io.poll_ready(&mut cx, Direction::Read).is_ready());
        io.shutdown();
        assert!(matches!(
            io.poll_ready(&mut cx, Direction::Write),
            Poll::Ready(Err(_))
        ));
    }
}
