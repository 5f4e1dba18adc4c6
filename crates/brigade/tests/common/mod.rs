//! Helpers shared by brigade's integration tests: bounded waits, drop
//! counters, a tiny async channel and a runtime-free `block_on`.
//!
//! Every wait here is bounded, so a scheduler bug fails a test instead of
//! hanging the suite. No helper measures or asserts a duration.
#![allow(dead_code)]

use std::any::Any;
use std::collections::VecDeque;
use std::future::Future;
use std::panic::resume_unwind;
use std::pin::{Pin, pin};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Wake, Waker};
use std::thread::{self, Thread};
use std::time::{Duration, Instant};

/// Generous bound for any single test body or wait: a hang, not slowness.
pub(crate) const TIMEOUT_SECS: u64 = 60;

/// The same bound as a `Duration`.
pub(crate) const TIMEOUT: Duration = Duration::from_secs(TIMEOUT_SECS);

/// Runs `body` on its own thread and returns its result. Panics if it has not
/// finished after `secs` seconds (the body thread is then leaked), and
/// re-raises the body's own panic.
pub(crate) fn with_timeout<T, F>(secs: u64, body: F) -> T
where
    T: Send + 'static,
    F: FnOnce() -> T + Send + 'static,
{
    let (sender, receiver) = mpsc::channel();
    let thread = thread::Builder::new()
        .name("test-body".to_owned())
        .spawn(move || {
            let _ = sender.send(body());
        })
        .expect("could not start the test-body thread");
    match receiver.recv_timeout(Duration::from_secs(secs)) {
        Ok(value) => {
            thread
                .join()
                .expect("test-body thread panicked after sending");
            value
        }
        Err(RecvTimeoutError::Disconnected) => match thread.join() {
            Err(payload) => resume_unwind(payload),
            Ok(()) => unreachable!("the body thread exited without sending or panicking"),
        },
        Err(RecvTimeoutError::Timeout) => {
            panic!("test body did not finish within {secs} s: something hangs")
        }
    }
}

/// Bounds the body of an async test (`#[brigade::test]`): panics if `body`
/// is still pending after [`TIMEOUT`], measured by a brigade timer. In case
/// the runtime is too broken for that timer to fire, a watchdog thread also
/// aborts the test process, with a message, if the body is still running
/// [`TIMEOUT`] later.
///
/// The timer counts in `RuntimeMetrics::num_timers` while the body runs.
pub(crate) async fn bounded<F: Future>(body: F) -> F::Output {
    let _watchdog = Watchdog::start(2 * TIMEOUT);
    brigade::time::timeout(TIMEOUT, body)
        .await
        .unwrap_or_else(|_| {
            panic!("test body did not finish within {TIMEOUT_SECS} s: something hangs")
        })
}

/// Aborts the process unless dropped within the given time.
struct Watchdog {
    /// Dropping it disconnects the channel, which disarms the watchdog.
    _disarm: mpsc::Sender<()>,
}

impl Watchdog {
    fn start(after: Duration) -> Self {
        let (disarm, armed) = mpsc::channel::<()>();
        let test = thread::current().name().unwrap_or("<unnamed>").to_owned();
        thread::Builder::new()
            .name("test-watchdog".to_owned())
            .spawn(move || {
                if let Err(RecvTimeoutError::Timeout) = armed.recv_timeout(after) {
                    eprintln!(
                        "test {test} still running after {} s, past its own timeout: \
                         the runtime hangs; aborting",
                        after.as_secs()
                    );
                    std::process::abort();
                }
            })
            .expect("could not start the watchdog thread");
        Watchdog { _disarm: disarm }
    }
}

/// Waits (polling, with a short sleep) until `condition` holds. Panics with
/// `what` if it still does not after [`TIMEOUT`].
pub(crate) fn wait_until(what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = Instant::now() + TIMEOUT;
    while !condition() {
        assert!(
            Instant::now() < deadline,
            "timed out after {TIMEOUT_SECS} s waiting until {what}"
        );
        thread::sleep(Duration::from_micros(200));
    }
}

/// Like [`wait_until`] but never sleeps (yields the OS thread instead): for
/// use inside a task, where a sleep would only slow the test down.
pub(crate) fn spin_until(what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = Instant::now() + TIMEOUT;
    while !condition() {
        assert!(
            Instant::now() < deadline,
            "timed out after {TIMEOUT_SECS} s waiting until {what}"
        );
        thread::yield_now();
    }
}

/// Busy-waits for about `duration`: one "unit" of CPU-bound work.
pub(crate) fn spin_for(duration: Duration) {
    let start = Instant::now();
    while start.elapsed() < duration {
        std::hint::spin_loop();
    }
}

/// The message of a panic payload (`&str` or `String`), or a placeholder.
pub(crate) fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(message) = payload.downcast_ref::<&str>() {
        (*message).to_owned()
    } else if let Some(message) = payload.downcast_ref::<String>() {
        message.clone()
    } else {
        "<non-string panic payload>".to_owned()
    }
}

/// Runs `f`, expects it to panic, and returns the panic's message.
pub(crate) fn expect_panic<R>(f: impl FnOnce() -> R) -> String {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(_) => panic!("expected a panic, but the call returned"),
        Err(payload) => panic_message(&*payload),
    }
}

/// Increments a shared counter when dropped: put one in a future to observe
/// that the future was dropped.
pub(crate) struct DropCounter(pub(crate) Arc<AtomicUsize>);

impl Drop for DropCounter {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// Sets a shared flag when dropped.
pub(crate) struct DropFlag(pub(crate) Arc<AtomicBool>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// Polls `future` once with a waker that does nothing.
pub(crate) fn poll_once<F: Future + Unpin>(future: &mut F) -> Poll<F::Output> {
    let mut cx = Context::from_waker(Waker::noop());
    Pin::new(future).poll(&mut cx)
}

/// Unparks a thread blocked in [`local_block_on`].
struct ThreadWaker(Thread);

impl Wake for ThreadWaker {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }
    fn wake_by_ref(self: &Arc<Self>) {
        self.0.unpark();
    }
}

/// A minimal `block_on` that needs no runtime (for futures that outlive
/// one). Panics if `future` is not ready within [`TIMEOUT`].
pub(crate) fn local_block_on<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let waker = Waker::from(Arc::new(ThreadWaker(thread::current())));
    let mut cx = Context::from_waker(&waker);
    let deadline = Instant::now() + TIMEOUT;
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
        let now = Instant::now();
        assert!(
            now < deadline,
            "local_block_on: future not ready after {TIMEOUT_SECS} s"
        );
        thread::park_timeout(deadline - now);
    }
}

/// Shared state of a [`channel`].
struct ChannelState<T> {
    queue: VecDeque<T>,
    receiver_waker: Option<Waker>,
    senders: usize,
}

/// The sending half of a [`channel`]. Clonable; the channel closes when the
/// last sender is dropped.
pub(crate) struct Sender<T> {
    state: Arc<Mutex<ChannelState<T>>>,
}

/// The receiving half of a [`channel`].
pub(crate) struct Receiver<T> {
    state: Arc<Mutex<ChannelState<T>>>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// An unbounded single-consumer async channel built from a `Mutex` and a
/// `Waker`, so the tests need no async dependency.
pub(crate) fn channel<T>() -> (Sender<T>, Receiver<T>) {
    let state = Arc::new(Mutex::new(ChannelState {
        queue: VecDeque::new(),
        receiver_waker: None,
        senders: 1,
    }));
    (
        Sender {
            state: state.clone(),
        },
        Receiver { state },
    )
}

impl<T> Sender<T> {
    /// Queues `value` and wakes the receiver.
    pub(crate) fn send(&self, value: T) {
        let waker = {
            let mut state = lock(&self.state);
            state.queue.push_back(value);
            state.receiver_waker.take()
        };
        if let Some(waker) = waker {
            waker.wake();
        }
    }
}

impl<T> Clone for Sender<T> {
    fn clone(&self) -> Self {
        lock(&self.state).senders += 1;
        Sender {
            state: self.state.clone(),
        }
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        let waker = {
            let mut state = lock(&self.state);
            state.senders -= 1;
            if state.senders == 0 {
                state.receiver_waker.take()
            } else {
                None
            }
        };
        if let Some(waker) = waker {
            waker.wake();
        }
    }
}

impl<T> Receiver<T> {
    /// Waits for the next value; `None` once every sender is gone and the
    /// queue is empty.
    pub(crate) fn recv(&mut self) -> Recv<'_, T> {
        Recv { receiver: self }
    }

    /// Takes a value if one is queued.
    pub(crate) fn try_recv(&mut self) -> Option<T> {
        lock(&self.state).queue.pop_front()
    }
}

/// Future returned by [`Receiver::recv`].
pub(crate) struct Recv<'a, T> {
    receiver: &'a mut Receiver<T>,
}

impl<T> Future for Recv<'_, T> {
    type Output = Option<T>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<T>> {
        let mut state = lock(&self.receiver.state);
        if let Some(value) = state.queue.pop_front() {
            return Poll::Ready(Some(value));
        }
        if state.senders == 0 {
            return Poll::Ready(None);
        }
        state.receiver_waker = Some(cx.waker().clone());
        Poll::Pending
    }
}

/// A connected TCP pair on loopback: (client, server).
pub(crate) async fn tcp_pair() -> (brigade::net::TcpStream, brigade::net::TcpStream) {
    let listener = brigade::net::TcpListener::bind("127.0.0.1:0")
        .await
        .unwrap();
    let client = brigade::net::TcpStream::connect(listener.local_addr().unwrap())
        .await
        .unwrap();
    let (server, _) = listener.accept().await.unwrap();
    (client, server)
}
