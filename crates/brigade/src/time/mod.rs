//! Timers: [`sleep`], [`sleep_until`], [`timeout`] and [`interval`]; the
//! clock they follow, [`Instant`]; and, for tests, [`pause`], [`advance`]
//! and [`resume`].
//!
//! Timers live in a hierarchical timing wheel with millisecond resolution
//! (`driver/wheel.rs`); a sleep never ends before its deadline and usually ends
//! within a millisecond after it. Expired timers fire from whichever thread
//! polls the runtime's driver: a worker parked in it, a busy worker's
//! periodic poll, or the fallback driver thread.
//!
//! All of these must be created inside a brigade runtime.
//!
//! # Paused time
//!
//! A test can stop the runtime's clock ([`pause`], `Builder::start_paused`,
//! `#[brigade::test(start_paused = true)]`): [`Instant::now`] then stands
//! still, and timers fire only when the clock moves, by [`advance`] or by
//! the *auto-advance*: when the runtime has nothing to do, the clock jumps
//! to the next timer. So a test of a 30-second timeout runs in
//! microseconds, and deterministically. This works on a runtime with any
//! number of workers (tokio's paused time needs its one-thread runtime).
//!
//! "Nothing to do" means, all at once: every worker is idle; no task waits
//! in a worker's queue, the injector, the yield queue or elastic admission;
//! no `spawn_blocking` closure is queued or running; no `block_on` thread is
//! polling or has a wake-up pending; and a non-blocking look at I/O found
//! no event. The protocol that makes this one consistent look is in
//! `runtime/scheduler/auto_advance.rs`.
//!
//! What the runtime cannot see, it cannot wait for: a plain thread (or
//! another runtime, or the `tokio-compat` threads) that will wake a task
//! later does not stop the auto-advance, and neither does I/O that has not
//! arrived yet, as with tokio. Wait for such work with a timer-free
//! primitive, or resume the clock around it.

mod instant;
mod interval;
mod pause;
mod sleep;
mod sleep_span;
mod timeout;

pub use instant::Instant;
pub use interval::{Interval, MissedTickBehavior, interval, interval_at};
pub use pause::{advance, pause, resume};
pub use sleep::{Sleep, sleep, sleep_until};
pub use std::time::Duration;
pub use timeout::{Elapsed, Timeout, timeout, timeout_at};
