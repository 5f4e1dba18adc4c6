//! `timeout` and `timeout_at`.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use super::Instant;
use super::sleep::{Sleep, sleep_until};
use crate::task::coop;

/// Runs `future`, giving up after `duration`.
///
/// The future is polled first, so a future that is already ready completes
/// even with a zero timeout.
///
/// # Panics
/// Outside a brigade runtime.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use brigade::time::{sleep, timeout};
///
/// let rt = brigade::Runtime::new()?;
/// rt.block_on(async {
///     assert_eq!(timeout(Duration::from_secs(5), async { 7 }).await, Ok(7));
///     let slow = sleep(Duration::from_secs(60));
///     assert!(timeout(Duration::from_millis(1), slow).await.is_err());
/// });
/// # Ok::<(), std::io::Error>(())
/// ```
#[track_caller]
pub fn timeout<F: Future>(duration: Duration, future: F) -> Timeout<F> {
    timeout_at(Instant::far_future_or(Instant::now(), duration), future)
}

/// Runs `future`, giving up at `deadline`.
///
/// # Panics
/// Outside a brigade runtime.
#[track_caller]
pub fn timeout_at<F: Future>(deadline: Instant, future: F) -> Timeout<F> {
    Timeout {
        future,
        sleep: sleep_until(deadline),
    }
}

pin_project_lite::pin_project! {
    /// Future returned by [`timeout`] and [`timeout_at`].
    #[must_use = "futures do nothing unless you `.await` or poll them"]
    pub struct Timeout<F> {
        #[pin]
        future: F,
        sleep: Sleep,
    }
}

impl<F> Timeout<F> {
    /// The wrapped future.
    pub fn get_ref(&self) -> &F {
        &self.future
    }

    /// The wrapped future, mutably.
    pub fn get_mut(&mut self) -> &mut F {
        &mut self.future
    }

    /// Consumes the timeout, returning the wrapped future.
    pub fn into_inner(self) -> F {
        self.future
    }
}

impl<F: Future> Future for Timeout<F> {
    type Output = Result<F::Output, Elapsed>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let had_budget = coop::has_budget_remaining();
        if let Poll::Ready(output) = this.future.poll(cx) {
            return Poll::Ready(Ok(output));
        }
        let mut deadline = || {
            Pin::new(&mut *this.sleep)
                .poll(cx)
                .map(|()| Err(Elapsed(())))
        };
        if had_budget && !coop::has_budget_remaining() {
            // The future spent the budget: the deadline is still looked at,
            // or a future that always spends it would never time out.
            coop::with_unconstrained(deadline)
        } else {
            deadline()
        }
    }
}

impl<F> fmt::Debug for Timeout<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Timeout")
            .field("sleep", &self.sleep)
            .finish_non_exhaustive()
    }
}

/// The error of a [`timeout`] whose deadline passed first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Elapsed(());

impl fmt::Display for Elapsed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("deadline has elapsed")
    }
}

impl std::error::Error for Elapsed {}

impl From<Elapsed> for std::io::Error {
    fn from(elapsed: Elapsed) -> Self {
        std::io::Error::new(std::io::ErrorKind::TimedOut, elapsed)
    }
}
