//! `sleep` and `sleep_until`.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use super::Instant;
use super::sleep_span::SleepSpan;
use crate::driver::Driver;
use crate::driver::timers::Registered;
use crate::driver::wheel::TimerKey;
use crate::runtime::context;

/// Waits until `duration` has elapsed.
///
/// # Panics
/// Outside a brigade runtime.
///
/// # Examples
///
/// ```
/// use brigade::time::{Duration, Instant};
///
/// let rt = brigade::Runtime::new()?;
/// let started = Instant::now();
/// rt.block_on(async { brigade::time::sleep(Duration::from_millis(5)).await });
/// assert!(started.elapsed() >= Duration::from_millis(5));
/// # Ok::<(), std::io::Error>(())
/// ```
#[track_caller]
pub fn sleep(duration: Duration) -> Sleep {
    sleep_until(Instant::far_future_or(Instant::now(), duration))
}

/// Waits until `deadline`.
///
/// # Panics
/// Outside a brigade runtime.
#[track_caller]
pub fn sleep_until(deadline: Instant) -> Sleep {
    let Some(driver) = context::current_driver() else {
        context::outside_runtime("brigade::time::sleep")
    };
    let wait = Wait {
        deadline,
        driver,
        timer: None,
        elapsed: false,
    };
    let span = SleepSpan::new(std::panic::Location::caller(), wait.remaining());
    Sleep { wait, span }
}

/// Future returned by [`sleep`] and [`sleep_until`]. It is `Unpin`, and can
/// be moved to a new deadline with [`reset`](Self::reset).
///
/// # After its runtime shut down
/// A `Sleep` belongs to the runtime it was created in. When that runtime
/// shuts down, every sleep of it that waits is woken, and from then on it
/// completes at its next poll, early, as does one created through a
/// `Handle` of a runtime already gone: no driver is left to time it, and
/// completing lets the task go on: a [`timeout`](super::timeout) then
/// returns [`Elapsed`](super::Elapsed), as a socket of a runtime that shut
/// down returns an error, and each tick of an
/// [`Interval`](super::Interval) completes at once. (tokio panics in this
/// case instead.)
#[must_use = "futures do nothing unless you `.await` or poll them"]
pub struct Sleep {
    wait: Wait,
    /// Its tokio-console spans (`sleep_span.rs`; nothing without the
    /// feature).
    span: SleepSpan,
}

/// A sleep's deadline and its timer in the driver's wheel.
struct Wait {
    deadline: Instant,
    driver: Arc<Driver>,
    /// The registered timer, once polled.
    timer: Option<TimerKey>,
    elapsed: bool,
}

impl Sleep {
    /// The instant this sleep ends.
    pub fn deadline(&self) -> Instant {
        self.wait.deadline
    }

    /// Whether the deadline has been reached (as seen by the last poll).
    pub fn is_elapsed(&self) -> bool {
        self.wait.elapsed
    }

    /// Moves the deadline; the sleep becomes pending again if it is later.
    pub fn reset(&mut self, deadline: Instant) {
        self.wait.cancel();
        self.wait.deadline = deadline;
        self.wait.elapsed = false;
        self.span.deadline_moved(self.wait.remaining());
    }
}

impl Future for Sleep {
    type Output = ();

    /// Spends a unit of the task's cooperative budget when it completes
    /// (`task/coop.rs`): a loop over sleeps that are already due yields
    /// while work waits.
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let Sleep { wait, span } = self.get_mut();
        crate::task::coop::budgeted(cx, |cx| span.poll(|| wait.poll_elapsed(cx)))
    }
}

impl Wait {
    /// How long from now until the deadline.
    fn remaining(&self) -> Duration {
        self.deadline
            .into_std()
            .saturating_duration_since(self.driver.clock().now())
    }

    fn cancel(&mut self) {
        if let Some(timer) = self.timer.take() {
            self.driver.timers.remove(timer);
        }
    }

    /// The poll proper, without the budget.
    fn poll_elapsed(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        if self.elapsed {
            return Poll::Ready(());
        }
        if let Some(timer) = self.timer {
            if !self.driver.timers.poll_fired(timer, cx.waker()) {
                return Poll::Pending;
            }
            self.cancel();
            // A deadline past the wheel's horizon fires early: re-register.
        }
        if Instant::from_std(self.driver.clock().now()) >= self.deadline {
            self.elapsed = true;
            return Poll::Ready(());
        }
        match self
            .driver
            .timers
            .register(self.deadline.into_std(), cx.waker())
        {
            Registered::Expired => {
                self.elapsed = true;
                Poll::Ready(())
            }
            Registered::Pending { key, earliest } => {
                self.timer = Some(key);
                if earliest {
                    // Whoever sleeps in the driver may sleep past this deadline.
                    self.driver.wake();
                }
                Poll::Pending
            }
        }
    }
}

impl Drop for Wait {
    fn drop(&mut self) {
        self.cancel();
    }
}

impl std::fmt::Debug for Sleep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sleep")
            .field("deadline", &self.wait.deadline)
            .field("elapsed", &self.wait.elapsed)
            .finish()
    }
}
