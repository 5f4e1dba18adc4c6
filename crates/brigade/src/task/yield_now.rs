//! [`yield_now`]: the task yields unconditionally, by waking itself. The
//! scheduler tells the self-wake from other wakes (A2 to A4 of the policy,
//! `policy.rs`); nothing here depends on it. (`yield_if_busy()`, which asks
//! the scheduler, is in `yield_if_busy.rs`.)

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

/// Yields to the scheduler unconditionally: the task goes to the back of its
/// worker's queue and runs again after the tasks queued before it.
///
/// A task that does nothing but yield this way several times in a row is
/// taken for background work and *demoted* (see
/// [`TaskClass::Auto`](crate::task::TaskClass::Auto)): while other work
/// waits, it then steps aside into the yield queue, as after
/// [`yield_if_busy`](crate::yield_if_busy), rather than queueing ahead of tasks woken after it;
/// demoted tasks on a worker take turns with each other at their 65th
/// yield in a row or after ≈ 33 µs, whichever comes first. Its next wake by I/O, a timer
/// or another task promotes it back.
///
/// Prefer [`yield_if_busy`](crate::yield_if_busy) in loops that do background work: it costs
/// nothing when nobody is waiting.
///
/// # Examples
///
/// ```
/// let rt = brigade::Runtime::new()?;
/// rt.block_on(async {
///     brigade::spawn(async {
///         for _ in 0..3 {
///             brigade::yield_now().await;
///         }
///     })
///     .await
///     .unwrap();
/// });
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn yield_now() -> YieldNow {
    YieldNow { yielded: false }
}

/// Future returned by [`yield_now`].
#[must_use = "futures do nothing unless you `.await` or poll them"]
#[derive(Debug)]
pub struct YieldNow {
    yielded: bool,
}

impl Future for YieldNow {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.yielded {
            return Poll::Ready(());
        }
        self.yielded = true;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}
