//! Timers: [`sleep`], [`sleep_until`], [`timeout`] and [`interval`].
//!
//! Timers live in a hierarchical timing wheel with millisecond resolution
//! (`driver/wheel.rs`); a sleep never ends before its deadline and usually ends
//! within a millisecond after it. Expired timers fire from whichever thread
//! polls the runtime's driver: a worker parked in it, a busy worker's
//! periodic poll, or the fallback driver thread.
//!
//! All of these must be created inside a brigade runtime.

mod interval;
mod sleep;
mod timeout;

pub use interval::{Interval, MissedTickBehavior, interval, interval_at};
pub use sleep::{Sleep, sleep, sleep_until};
pub use timeout::{Elapsed, Timeout, timeout, timeout_at};
