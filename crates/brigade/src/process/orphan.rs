//! Children dropped before they were reaped: the orphan queue, which
//! reaps them once they exit, so that no zombie is left behind.
//!
//! A [`Child`](super::Child) dropped while its process may still run
//! ([`adopt`]) hands the process, with its exit watch (`exit.rs`), to a
//! queue that belongs to the process, not to a runtime: an orphan may
//! outlive the runtime it was spawned in.
//!
//! ## Protocol
//! Only a *pass* ([`reap`]) touches the queue's entries, holding its lock:
//! it polls every orphan's watch with one waker of its own, the reaper's,
//! removes those that were reaped, and leaves the reaper's waker with the
//! others' watches. So a watch's event (the pidfd turns readable, a SIGCHLD
//! arrives) makes the reactor wake the reaper, which runs the next pass.
//! Passes also run when a child is orphaned and at every spawn. At a
//! runtime's shutdown the reactor fails every registration's waits and
//! wakes their wakers, the reaper's too: that pass reaps what has exited,
//! and ends the watches of that runtime's orphans (dropping their
//! registrations); those still running stay queued, unwatched, and are
//! tried by every later pass (the next spawn, another orphan's exit), as
//! tokio's orphan queue is.
//!
//! A pass may wake the reaper on its own thread: a SIGCHLD watch's poll
//! reads the runtime's signal socket and wakes every waiter of it
//! (`driver/signal.rs`), the reaper included, and a woken task of a
//! runtime that shut down is dropped by the thread that wakes it, which
//! may drop a `Child`. Neither locks the queue again (this thread holds
//! it): the wake marks the pass to run once more (it took the waker that
//! an orphan polled earlier in the pass had left), and an adopted child
//! waits in a thread-local list that the pass empties into the queue
//! before it runs again. A wake on another thread waits for the lock and
//! runs a pass of its own after this one: a pass takes no other lock
//! while it holds the queue's except the readiness cells' and the
//! reactor's source table's (when a registration is dropped), which no
//! holder of those waits on.

use std::cell::{Cell, RefCell};
use std::sync::{Arc, LazyLock};
use std::task::{Context, Poll, Wake, Waker};

use super::exit::Watched;
use crate::sync::{Mutex, lock};
use crate::task::coop::with_unconstrained;

/// The orphans: children dropped unreaped, with their exit watches.
static ORPHANS: Mutex<Vec<Watched>> = Mutex::new(Vec::new());

/// The waker the orphans' watches hold: it runs a pass.
static REAPER: LazyLock<Waker> = LazyLock::new(|| Waker::from(Arc::new(Reaper)));

thread_local! {
    /// Whether this thread runs a pass (holds `ORPHANS`).
    static IN_PASS: Cell<bool> = const { Cell::new(false) };
    /// Set during a pass when the reaper was woken on this thread.
    static AGAIN: Cell<bool> = const { Cell::new(false) };
    /// Children orphaned on this thread during its pass.
    static ADOPTED: RefCell<Vec<Watched>> = const { RefCell::new(Vec::new()) };
}

struct Reaper;

impl Wake for Reaper {
    fn wake(self: Arc<Self>) {
        reap();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        reap();
    }
}

/// Takes in a child dropped unreaped (killed first if it was to be), and
/// runs a pass, which reaps it at once if it has exited.
pub(crate) fn adopt(orphan: Watched) {
    if IN_PASS.get() {
        ADOPTED.with_borrow_mut(|adopted| adopted.push(orphan));
        AGAIN.set(true);
        return;
    }
    lock(&ORPHANS).push(orphan);
    reap();
}

/// Runs a pass over the queue (see the module docs).
pub(crate) fn reap() {
    if IN_PASS.get() {
        AGAIN.set(true);
        return;
    }
    let mut reaped = Vec::new();
    {
        let mut orphans = lock(&ORPHANS);
        let _in_pass = InPass::enter();
        loop {
            AGAIN.set(false);
            orphans.append(&mut ADOPTED.take());
            pass(&mut orphans, &mut reaped);
            if !AGAIN.get() {
                break;
            }
        }
    }
    // Their registrations go once the queue's lock is released.
    drop(reaped);
}

/// Moves the orphans that are done with into `reaped`.
fn pass(orphans: &mut Vec<Watched>, reaped: &mut Vec<Watched>) {
    let mut cx = Context::from_waker(&REAPER);
    let mut index = 0;
    while index < orphans.len() {
        if settled(&mut orphans[index], &mut cx) {
            reaped.push(orphans.swap_remove(index));
        } else {
            index += 1;
        }
    }
}

/// Whether `orphan` is done with: reaped, or no longer ours (`waitpid`
/// fails, say because the program reaped it itself with `waitpid(-1)`).
/// Otherwise its watch holds the reaper's waker, if it still has a watch.
fn settled(orphan: &mut Watched, cx: &mut Context<'_>) -> bool {
    if orphan.is_watched() {
        // Unconstrained: a pass is no task, and a spent budget's `Pending`
        // would wake the reaper at once.
        match with_unconstrained(|| orphan.poll_exit(cx)) {
            Poll::Ready(Ok(_)) => return true,
            Poll::Pending => return false,
            // The watch ended with its runtime; the child may still run.
            Poll::Ready(Err(_)) => {}
        }
    }
    !matches!(orphan.try_wait(), Ok(None))
}

/// Marks this thread as running a pass; unmarks it when dropped, also if
/// the pass unwinds.
struct InPass;

impl InPass {
    fn enter() -> InPass {
        IN_PASS.set(true);
        InPass
    }
}

impl Drop for InPass {
    fn drop(&mut self) {
        IN_PASS.set(false);
    }
}

/// Whether the child with `pid` waits in the queue.
#[cfg(test)]
pub(crate) fn is_queued(pid: u32) -> bool {
    lock(&ORPHANS).iter().any(|orphan| orphan.id() == pid)
}
