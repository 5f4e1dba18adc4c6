//! `Instant`: a point on the runtime's clock, which tests may pause.

use std::fmt;
use std::ops::{Add, AddAssign, Sub, SubAssign};
use std::time::Duration;

use crate::runtime::context;

/// A measurement of a monotonically nondecreasing clock: the one brigade's
/// timers follow.
///
/// It is [`std::time::Instant`] underneath, and [`Instant::now`] is
/// `std::time::Instant::now()`, except inside a runtime whose clock is
/// paused ([`pause`](super::pause), `Builder::start_paused`,
/// `#[brigade::test(start_paused = true)]`): there `now()` returns the
/// paused time, which moves only with [`advance`](super::advance) and the
/// runtime's auto-advance. Outside any runtime `now()` is the system's
/// clock.
///
/// The API is tokio's `tokio::time::Instant`: subtracting a later instant
/// from an earlier one gives zero instead of panicking.
///
/// # Examples
///
/// ```
/// use brigade::time::{self, Duration, Instant};
///
/// let rt = brigade::Builder::new().worker_threads(1).start_paused(true).build()?;
/// rt.block_on(async {
///     let start = Instant::now();
///     time::sleep(Duration::from_secs(3600)).await; // at once: the clock auto-advances
///     assert_eq!(start.elapsed(), Duration::from_secs(3600));
/// });
/// # Ok::<(), brigade::BuildError>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Instant {
    std: std::time::Instant,
}

impl Instant {
    /// The current time on the current runtime's clock (the system's
    /// outside a runtime).
    pub fn now() -> Instant {
        Instant {
            std: context::clock_now().unwrap_or_else(std::time::Instant::now),
        }
    }

    /// An `Instant` from a `std::time::Instant`.
    pub fn from_std(std: std::time::Instant) -> Instant {
        Instant { std }
    }

    /// The `std::time::Instant` underneath.
    pub fn into_std(self) -> std::time::Instant {
        self.std
    }

    /// The time elapsed from `earlier` to `self`; zero if `earlier` is
    /// later.
    pub fn duration_since(&self, earlier: Instant) -> Duration {
        self.std.saturating_duration_since(earlier.std)
    }

    /// The time elapsed from `earlier` to `self`, or `None` if `earlier` is
    /// later.
    pub fn checked_duration_since(&self, earlier: Instant) -> Option<Duration> {
        self.std.checked_duration_since(earlier.std)
    }

    /// The time elapsed from `earlier` to `self`; zero if `earlier` is
    /// later.
    pub fn saturating_duration_since(&self, earlier: Instant) -> Duration {
        self.std.saturating_duration_since(earlier.std)
    }

    /// The time elapsed since `self`, on the current runtime's clock.
    pub fn elapsed(&self) -> Duration {
        Instant::now().saturating_duration_since(*self)
    }

    /// `self + duration`, or `None` if that is not representable.
    pub fn checked_add(&self, duration: Duration) -> Option<Instant> {
        self.std.checked_add(duration).map(Instant::from_std)
    }

    /// `self - duration`, or `None` if that is not representable.
    pub fn checked_sub(&self, duration: Duration) -> Option<Instant> {
        self.std.checked_sub(duration).map(Instant::from_std)
    }

    /// `now + duration`, saturating at about 30 years from now: the deadline
    /// of a sleep "for ever".
    pub(crate) fn far_future_or(now: Instant, duration: Duration) -> Instant {
        now.checked_add(duration)
            .unwrap_or_else(|| now + Duration::from_secs(86_400 * 365 * 30))
    }
}

impl From<std::time::Instant> for Instant {
    fn from(std: std::time::Instant) -> Instant {
        Instant { std }
    }
}

impl From<Instant> for std::time::Instant {
    fn from(instant: Instant) -> std::time::Instant {
        instant.std
    }
}

impl Add<Duration> for Instant {
    type Output = Instant;

    /// # Panics
    /// If the result is not representable; see [`Instant::checked_add`].
    fn add(self, duration: Duration) -> Instant {
        Instant {
            std: self.std + duration,
        }
    }
}

impl AddAssign<Duration> for Instant {
    fn add_assign(&mut self, duration: Duration) {
        *self = *self + duration;
    }
}

impl Sub<Duration> for Instant {
    type Output = Instant;

    /// # Panics
    /// If the result is not representable; see [`Instant::checked_sub`].
    fn sub(self, duration: Duration) -> Instant {
        Instant {
            std: self.std - duration,
        }
    }
}

impl SubAssign<Duration> for Instant {
    fn sub_assign(&mut self, duration: Duration) {
        *self = *self - duration;
    }
}

impl Sub<Instant> for Instant {
    type Output = Duration;

    /// `self.saturating_duration_since(earlier)`.
    fn sub(self, earlier: Instant) -> Duration {
        self.saturating_duration_since(earlier)
    }
}

impl fmt::Debug for Instant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.std.fmt(f)
    }
}
