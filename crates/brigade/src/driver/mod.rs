//! The driver: the layer below the scheduler that turns I/O readiness,
//! timers and signals into task wake-ups, and the parker a worker sleeps
//! on.
//!
//! ## What it owns
//! - [`Driver`] (`poll.rs`): one runtime's `mio::Poll` and event buffer
//!   behind the driver lock, its timers, its signal listener, and the
//!   optional fallback thread. Under `--cfg loom` it is the model driver of
//!   `loom.rs` instead: the same lock and wake-up structure, with no I/O and
//!   no timers. Both share [`EVENT_INTERVAL`] and [`PollPark`].
//! - The reactor (`reactor.rs`): source registration, the `mio::Waker`, and
//!   event dispatch to each source's readiness cell (`scheduled_io.rs`).
//! - The timers (`time.rs`): a hierarchical timing wheel (`wheel.rs`) under
//!   a mutex, advanced by whoever polls.
//! - The signal listener (`signal.rs`, Unix): one socket per runtime,
//!   registered with the reactor, fed by signal-hook-registry's handlers.
//! - The [`Parker`] (`park.rs`): how one worker sleeps, on its condvar or
//!   inside the poll.
//!
//! The resources users see stay in `io/`, `time/`, `signal/` and `net/`;
//! they reach the current runtime's driver only through
//! `runtime::context::current_driver()`.
//!
//! ## Who polls when
//! The `mio::Poll` sits behind one lock; whoever holds it polls.
//! - A worker with nothing to do **parks in the driver** if no other worker
//!   does ([`Driver::park_in_poll`]): it *watches* the poll, waiting in
//!   `poll(2)` until the epoll descriptor is readable (events pending), the
//!   nearest timer is due, or it is unparked (a byte on the driver's wake
//!   pipe), without holding the lock; then it takes the lock and harvests
//!   without blocking. Other idle workers sleep on their own condvar.
//! - **Busy workers** poll without blocking, if the lock is free and no
//!   worker watches, every [`EVENT_INTERVAL`] ticks, in `yield_if_busy()`'s
//!   once-per-epoch check, and before taking a task from the yield queue.
//!   While a worker watches, the same checks ask instead whether it serves
//!   (`poll.rs`, "the crowded-host hand-off"): a busy worker harvests work
//!   that has waited an epoch for a watcher the kernel has not run.
//! - The optional **fallback thread** covers the gap when every worker is
//!   busy: whenever no worker is parked in the poll, it waits in `poll(2)` on
//!   the epoll descriptor itself (readable while events are pending; it does
//!   not hold the lock while waiting), with the nearest timer as timeout.
//!   When it wakes it takes the lock and polls without blocking, so readiness
//!   and timers are noticed at once and the woken tasks land in the injector,
//!   where busy tasks see them at their next `yield_if_busy()`.
//!
//! ## Invariants
//! - One lock: only the holder of the driver lock polls I/O and fires due
//!   timers, and every poll under it is non-blocking, so two threads never
//!   harvest at once and nobody holds the lock while it waits. At most one
//!   worker watches at a time (`worker_in_poll`).
//! - A worker watches only between `Parker::begin_driver_park` and
//!   `end_driver_park`, so an unpark in between writes the wake pipe instead
//!   of signalling the condvar, and an unpark that came first cancels the
//!   park. Only the watcher reads the wake pipe, and the pipe is outside the
//!   epoll set, so no harvest consumes an unpark.
//! - The fallback thread waits for events without the lock (it takes the
//!   lock only for a non-blocking poll), and does not wait at all while a
//!   worker is parked in the poll, so an idle runtime does not wake two
//!   threads per event.

#[cfg(loom)]
mod loom;
pub(crate) mod park;
#[cfg(not(loom))]
mod poll;
#[cfg(not(loom))]
pub(crate) mod reactor;
#[cfg(not(loom))]
pub(crate) mod scheduled_io;
#[cfg(all(unix, not(loom)))]
pub(crate) mod signal;
#[cfg(not(loom))]
pub(crate) mod time;
#[cfg(not(loom))]
pub(crate) mod wheel;

#[cfg(loom)]
pub(crate) use loom::Driver;
pub(crate) use park::Parker;
#[cfg(not(loom))]
pub(crate) use poll::Driver;

/// How many ticks a busy worker runs between non-blocking driver polls.
///
/// A fixed 61 ticks, not tuned at run time: often enough that a busy
/// runtime handles I/O in batches on the workers themselves (no thread
/// hop), rarely enough that the `epoll_wait` syscall, which costs as much as
/// a short poll, is paid once per 61 ticks. There is nothing to tune it
/// for: latency under saturation does not depend on it, because the
/// fallback thread and `yield_if_busy()`'s epoch poll bound that.
pub(crate) const EVENT_INTERVAL: u32 = 61;

/// What [`Driver::park_in_poll`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PollPark {
    /// The worker watched the poll and harvested it (or did not need to
    /// wait).
    Parked,
    /// Another worker watches the poll: sleep on the condvar.
    Occupied,
}
