//! [`BrigadeTimer`]: hyper's timer on brigade's timing wheel.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

/// A [`hyper::rt::Timer`] backed by [`brigade::time`]'s timers.
///
/// Give it to hyper's connection builders (`.timer(BrigadeTimer::new())`)
/// to enable the settings that need a timer: HTTP/1
/// `header_read_timeout`, HTTP/2 `keep_alive_interval` and
/// `keep_alive_timeout`, and so on.
///
/// The timer itself holds nothing and can be built anywhere. The
/// [`BrigadeSleep`]s it returns register with brigade's timing wheel when
/// first polled, so they must be polled inside a brigade runtime (a task
/// or `block_on`); hyper polls them from the connection future, so this
/// holds whenever the connection runs on brigade. A sleep whose deadline
/// has already passed completes without touching the runtime.
/// brigade's timers have millisecond resolution: a sleep never ends before
/// its deadline and usually ends within a millisecond after it.
///
/// # Examples
///
/// ```
/// use std::time::{Duration, Instant};
///
/// use brigade_hyper::BrigadeTimer;
/// use hyper::rt::Timer;
///
/// let rt = brigade::Runtime::new()?;
/// let started = Instant::now();
/// rt.block_on(BrigadeTimer::new().sleep(Duration::from_millis(5)));
/// assert!(started.elapsed() >= Duration::from_millis(5));
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct BrigadeTimer {
    _private: (),
}

impl BrigadeTimer {
    /// A timer on the brigade runtime that polls its sleeps.
    pub fn new() -> Self {
        BrigadeTimer { _private: () }
    }
}

impl hyper::rt::Timer for BrigadeTimer {
    fn sleep(&self, duration: Duration) -> Pin<Box<dyn hyper::rt::Sleep>> {
        Box::pin(BrigadeSleep::until(far_future_or(Instant::now(), duration)))
    }

    fn sleep_until(&self, deadline: Instant) -> Pin<Box<dyn hyper::rt::Sleep>> {
        Box::pin(BrigadeSleep::until(deadline))
    }

    /// Moves a sleep made by this timer to `new_deadline` in place (no new
    /// allocation); any other sleep is replaced by a new one.
    fn reset(&self, sleep: &mut Pin<Box<dyn hyper::rt::Sleep>>, new_deadline: Instant) {
        match sleep.as_mut().downcast_mut_pin::<BrigadeSleep>() {
            Some(mut ours) => ours.reset(new_deadline),
            None => *sleep = self.sleep_until(new_deadline),
        }
    }
}

/// `now + duration`, saturating about 30 years from now (as brigade's own
/// `sleep` does) so that `Duration::MAX` means "never".
fn far_future_or(now: Instant, duration: Duration) -> Instant {
    now.checked_add(duration)
        .unwrap_or_else(|| now + Duration::from_secs(86_400 * 365 * 30))
}

/// The [`hyper::rt::Sleep`] returned by [`BrigadeTimer`]: a
/// [`brigade::time::Sleep`], created on first poll.
///
/// It is `Unpin`. It can also be awaited directly.
#[must_use = "futures do nothing unless you `.await` or poll them"]
#[derive(Debug)]
pub struct BrigadeSleep {
    deadline: Instant,
    /// The brigade timer, registered on the first poll that finds the
    /// deadline still ahead.
    inner: Option<brigade::time::Sleep>,
}

impl BrigadeSleep {
    /// A sleep that ends at `deadline`.
    pub fn until(deadline: Instant) -> Self {
        BrigadeSleep {
            deadline,
            inner: None,
        }
    }

    /// The instant this sleep ends.
    pub fn deadline(&self) -> Instant {
        self.deadline
    }

    /// Moves the deadline; the sleep becomes pending again if it is later.
    pub fn reset(&mut self, deadline: Instant) {
        self.deadline = deadline;
        if let Some(inner) = &mut self.inner {
            inner.reset(deadline.into());
        }
    }
}

impl Future for BrigadeSleep {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.get_mut();
        let inner = match &mut this.inner {
            Some(inner) => inner,
            None => {
                if Instant::now() >= this.deadline {
                    return Poll::Ready(());
                }
                this.inner
                    .insert(brigade::time::sleep_until(this.deadline.into()))
            }
        };
        Pin::new(inner).poll(cx)
    }
}

impl hyper::rt::Sleep for BrigadeSleep {}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::rt::Timer;

    #[test]
    fn sleeps_end_after_their_deadline() {
        let rt = brigade::Runtime::new().unwrap();
        let timer = BrigadeTimer::new();
        rt.block_on(async {
            let started = Instant::now();
            timer.sleep(Duration::from_millis(3)).await;
            assert!(started.elapsed() >= Duration::from_millis(3));
            let deadline = Instant::now() + Duration::from_millis(3);
            timer.sleep_until(deadline).await;
            assert!(Instant::now() >= deadline);
        });
    }

    #[test]
    fn an_expired_sleep_needs_no_runtime() {
        // Polled outside any runtime: fine, because nothing is registered.
        let waker = std::task::Waker::noop();
        let mut cx = Context::from_waker(waker);
        let mut sleep = BrigadeTimer::new().sleep(Duration::ZERO);
        assert_eq!(sleep.as_mut().poll(&mut cx), Poll::Ready(()));
    }

    #[test]
    fn reset_moves_a_sleep_in_place_both_ways() {
        let rt = brigade::Runtime::new().unwrap();
        let timer = BrigadeTimer::new();
        rt.block_on(async {
            // Far away, registered, then pulled in: ends at the new deadline.
            let mut sleep = timer.sleep(Duration::from_secs(3600));
            let waker = std::task::Waker::noop();
            assert!(
                sleep
                    .as_mut()
                    .poll(&mut Context::from_waker(waker))
                    .is_pending()
            );
            let before: *const dyn hyper::rt::Sleep = &*sleep;
            let soon = Instant::now() + Duration::from_millis(2);
            timer.reset(&mut sleep, soon);
            assert!(std::ptr::addr_eq(before, &*sleep), "reset reallocated");
            brigade::time::timeout(Duration::from_secs(30), sleep)
                .await
                .expect("a reset sleep never fired");
            assert!(Instant::now() >= soon);

            // Pushed out: pending again.
            let mut sleep = timer.sleep(Duration::ZERO);
            timer.reset(&mut sleep, Instant::now() + Duration::from_secs(3600));
            let waker = std::task::Waker::noop();
            assert!(
                sleep
                    .as_mut()
                    .poll(&mut Context::from_waker(waker))
                    .is_pending()
            );
        });
    }

    #[test]
    fn a_huge_duration_does_not_overflow() {
        let sleep = BrigadeTimer::new().sleep(Duration::MAX);
        drop(sleep);
    }
}
