//! `pause`, `resume` and `advance`: the controls of the runtime's clock,
//! for tests (`driver/clock.rs` has the clock; `runtime/scheduler/auto_advance.rs`
//! the auto-advance).

use std::sync::Arc;
use std::time::Duration;

use crate::driver::Driver;
use crate::driver::clock::ClockError;
use crate::runtime::context;

/// Pauses the current runtime's clock.
///
/// [`Instant::now`](super::Instant::now) then returns the time of the
/// call, until the clock is moved by [`advance`] or by the auto-advance:
/// when the runtime has nothing to do (every worker idle, no task queued,
/// no `spawn_blocking` closure running, no event pending; the module docs
/// have the full list), it moves the clock to the next timer, so sleeps and
/// timeouts end at once, in deadline order. Works on a runtime with any
/// number of workers. The system's clock (`std::time::Instant`) is not
/// affected.
///
/// To start a runtime paused, prefer `Builder::start_paused(true)` or
/// `#[brigade::test(start_paused = true)]`: timers are then exact
/// milliseconds from the start.
///
/// # Panics
/// If the clock is already paused, or outside a brigade runtime.
///
/// # Examples
///
/// ```
/// use brigade::time::{self, Duration, Instant};
///
/// let rt = brigade::Builder::new().worker_threads(2).build()?;
/// rt.block_on(async {
///     time::pause();
///     let start = Instant::now();
///     // Ends at once: nothing else to do, so the clock jumps to the timer.
///     time::sleep(Duration::from_secs(60)).await;
///     assert!(start.elapsed() >= Duration::from_secs(60));
///     time::resume();
/// });
/// # Ok::<(), brigade::BuildError>(())
/// ```
#[track_caller]
pub fn pause() {
    let driver = current("brigade::time::pause");
    if driver.clock().pause() == Err(ClockError::AlreadyPaused) {
        panic!(
            "brigade::time::pause: the clock is already paused; call it once \
             (or `brigade::time::resume()` first)"
        );
    }
    // A watcher waiting for a timer on the running clock must stop
    // waiting for it: the timer now waits for the clock.
    driver.unpark_watcher();
}

/// Resumes the current runtime's clock: it runs on from where the paused
/// clock stood.
///
/// # Panics
/// If the clock is not paused, or outside a brigade runtime.
#[track_caller]
pub fn resume() {
    let driver = current("brigade::time::resume");
    if driver.clock().resume() == Err(ClockError::NotPaused) {
        not_paused("resume");
    }
    // The watcher waits with no timeout while the clock is paused.
    driver.unpark_watcher();
}

/// Moves the current runtime's paused clock forward by `duration`, and
/// fires every timer that is then due, all "at the same time": their tasks
/// run in no particular order. Then yields once, so that they may run:
/// called from a task, or from the body of a current-thread runtime's
/// `block_on` (a `#[brigade::test]`'s body, by default), it goes to the
/// back of the queue, so on a current-thread runtime the timers' tasks have
/// all been polled when it returns, as on tokio's; called from a
/// multi-thread runtime's `block_on` thread, it returns once a task
/// spawned after them has run.
///
/// It does not wait for the tasks whose timers fired to finish; to wait
/// for them, sleep instead and let the clock auto-advance.
///
/// # Panics
/// If the clock is not paused, or outside a brigade runtime (when the
/// future is first polled, as tokio's).
///
/// # Examples
///
/// ```
/// use brigade::time::{self, Duration, Instant};
///
/// let rt = brigade::Builder::new().start_paused(true).build()?;
/// rt.block_on(async {
///     let start = Instant::now();
///     time::advance(Duration::from_millis(1500)).await;
///     assert_eq!(start.elapsed(), Duration::from_millis(1500));
/// });
/// # Ok::<(), brigade::BuildError>(())
/// ```
pub async fn advance(duration: Duration) {
    let driver = current("brigade::time::advance");
    if driver.clock().advance(duration) == Err(ClockError::NotPaused) {
        not_paused("advance");
    }
    driver.timers.process();
    drop(driver);
    let on_worker = context::on_worker();
    if on_worker {
        // Woken from here, the timers' tasks are in this worker's deque or
        // the injector, and a self-wake makes this worker look there first
        // (on a current-thread runtime, the body is on the worker: its
        // yield lets every woken task run before it goes on, as on tokio).
        crate::yield_now().await;
    } else {
        // A multi-thread runtime's `block_on` thread: the timers' tasks run
        // on the workers, and the caller must not go on before they have
        // had their turn. A task spawned now queues behind them, so once it
        // has run, a one-worker runtime has polled every one of them.
        let _ = crate::task::spawn(async {}).await;
    }
}

#[track_caller]
fn current(what: &str) -> Arc<Driver> {
    context::current_driver().unwrap_or_else(|| context::outside_runtime(what))
}

#[track_caller]
fn not_paused(what: &str) -> ! {
    panic!(
        "brigade::time::{what}: the clock is not paused; pause it first with \
         `brigade::time::pause()`, `Builder::start_paused(true)` or \
         `#[brigade::test(start_paused = true)]`"
    )
}
