//! `interval`: ticks at a fixed period.

use std::future::{Future, poll_fn};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use super::Instant;
use super::sleep::{Sleep, sleep_until};

/// What an [`Interval`] does when ticks were missed (the task was busy for
/// longer than a period).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MissedTickBehavior {
    /// Fire the missed ticks back to back, then keep the original schedule.
    #[default]
    Burst,
    /// Restart the schedule from now: the next tick is one period after the
    /// late one.
    Delay,
    /// Skip the missed ticks and keep the original phase.
    Skip,
}

/// Ticks every `period`, the first tick completing immediately.
///
/// # Panics
/// If `period` is zero, or outside a brigade runtime.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
///
/// let rt = brigade::Runtime::new()?;
/// rt.block_on(async {
///     let mut interval = brigade::time::interval(Duration::from_millis(2));
///     let first = interval.tick().await;
///     let second = interval.tick().await;
///     assert!(second - first >= Duration::from_millis(2));
/// });
/// # Ok::<(), std::io::Error>(())
/// ```
#[track_caller]
pub fn interval(period: Duration) -> Interval {
    interval_at(Instant::now(), period)
}

/// Ticks every `period`, the first tick at `start`.
///
/// # Panics
/// If `period` is zero, or outside a brigade runtime.
#[track_caller]
pub fn interval_at(start: Instant, period: Duration) -> Interval {
    assert!(
        !period.is_zero(),
        "brigade::time::interval: `period` must be non-zero"
    );
    Interval {
        sleep: sleep_until(start),
        period,
        missed_tick_behavior: MissedTickBehavior::default(),
    }
}

/// A stream of ticks at a fixed period; see [`interval`].
#[derive(Debug)]
pub struct Interval {
    sleep: Sleep,
    period: Duration,
    missed_tick_behavior: MissedTickBehavior,
}

impl Interval {
    /// Waits for the next tick; returns the instant it was scheduled for.
    pub async fn tick(&mut self) -> Instant {
        poll_fn(|cx| self.poll_tick(cx)).await
    }

    /// Polls for the next tick.
    pub fn poll_tick(&mut self, cx: &mut Context<'_>) -> Poll<Instant> {
        if Pin::new(&mut self.sleep).poll(cx).is_pending() {
            return Poll::Pending;
        }
        let scheduled = self.sleep.deadline();
        let now = Instant::now();
        let next = match self.missed_tick_behavior {
            MissedTickBehavior::Burst => scheduled + self.period,
            MissedTickBehavior::Delay => now + self.period,
            MissedTickBehavior::Skip => {
                let behind = now.saturating_duration_since(scheduled).as_nanos();
                let periods = behind / self.period.as_nanos() + 1;
                scheduled + self.period * u32::try_from(periods).unwrap_or(u32::MAX)
            }
        };
        self.sleep.reset(next);
        Poll::Ready(scheduled)
    }

    /// Restarts the schedule: the next tick is one period from now.
    pub fn reset(&mut self) {
        self.sleep.reset(Instant::now() + self.period);
    }

    /// Restarts the schedule from now: the next tick is at once, and the
    /// ones after it a period apart, as tokio's.
    pub fn reset_immediately(&mut self) {
        self.sleep.reset(Instant::now());
    }

    /// Restarts the schedule: the next tick is `after` from now, the ones
    /// after it a period apart, as tokio's.
    pub fn reset_after(&mut self, after: Duration) {
        self.sleep.reset(Instant::now() + after);
    }

    /// Restarts the schedule: the next tick is at `deadline` (at once if it
    /// has passed), the ones after it a period apart, as tokio's.
    pub fn reset_at(&mut self, deadline: Instant) {
        self.sleep.reset(deadline);
    }

    /// The period.
    pub fn period(&self) -> Duration {
        self.period
    }

    /// What happens to missed ticks.
    pub fn missed_tick_behavior(&self) -> MissedTickBehavior {
        self.missed_tick_behavior
    }

    /// Sets what happens to missed ticks.
    pub fn set_missed_tick_behavior(&mut self, behavior: MissedTickBehavior) {
        self.missed_tick_behavior = behavior;
    }
}
