//! Bounded waits: wall-clock timeouts and alarms that fail a seed with a
//! message instead of hanging, and the filter for intentional panics.

#[allow(unused_imports)]
use super::*;

/// The bound of a wait: like `brigade::time::timeout`, but measured by a
/// plain thread, so that it still runs out, with a message, if the
/// runtime's own timers stall.
pub(crate) fn wall_timeout<F: Future>(limit: Duration, future: F) -> WallTimeout<F> {
    WallTimeout {
        future: Box::pin(future),
        alarm: Alarm::start(limit),
    }
}

/// The error of a [`wall_timeout`] that ran out.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct WallElapsed;

/// Future returned by [`wall_timeout`].
pub(crate) struct WallTimeout<F> {
    pub(crate) future: Pin<Box<F>>,
    pub(crate) alarm: Alarm,
}

impl<F: Future> Future for WallTimeout<F> {
    type Output = Result<F::Output, WallElapsed>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        if let Poll::Ready(output) = self.future.as_mut().poll(cx) {
            return Poll::Ready(Ok(output));
        }
        if self.alarm.has_fired(cx.waker()) {
            Poll::Ready(Err(WallElapsed))
        } else {
            Poll::Pending
        }
    }
}

/// A thread that wakes the last registered waker once its time is up, and
/// exits early when the alarm is dropped.
pub(crate) struct Alarm {
    pub(crate) state: Arc<AlarmState>,
    pub(crate) thread: thread::Thread,
}

pub(crate) struct AlarmState {
    pub(crate) fired: AtomicBool,
    pub(crate) dropped: AtomicBool,
    pub(crate) waker: Mutex<Option<Waker>>,
}

impl Alarm {
    pub(crate) fn start(limit: Duration) -> Alarm {
        let state = Arc::new(AlarmState {
            fired: AtomicBool::new(false),
            dropped: AtomicBool::new(false),
            waker: Mutex::new(None),
        });
        let deadline = Instant::now() + limit;
        let thread = thread::Builder::new()
            .name("random-ops-alarm".to_owned())
            .spawn({
                let state = state.clone();
                move || {
                    while !state.dropped.load(Ordering::SeqCst) {
                        let now = Instant::now();
                        if now >= deadline {
                            state.fired.store(true, Ordering::SeqCst);
                            let waker = lock(&state.waker).take();
                            if let Some(waker) = waker {
                                waker.wake();
                            }
                            return;
                        }
                        thread::park_timeout(deadline - now);
                    }
                }
            })
            .expect("could not start an alarm thread")
            .thread()
            .clone();
        Alarm { state, thread }
    }

    /// Whether the time is up; if not, `waker` is woken when it is.
    pub(crate) fn has_fired(&self, waker: &Waker) -> bool {
        *lock(&self.state.waker) = Some(waker.clone());
        // Read after storing the waker: a firing in between wakes it.
        self.state.fired.load(Ordering::SeqCst)
    }
}

impl Drop for Alarm {
    fn drop(&mut self) {
        self.state.dropped.store(true, Ordering::SeqCst);
        self.thread.unpark();
    }
}

/// Panics on purpose (the message starts with [`INTENTIONAL`]).
pub(crate) fn intentional_panic(where_: &str) -> u64 {
    panic!("{INTENTIONAL} {where_}")
}

/// Keeps panics whose message starts with [`QUIET`] off stderr; every other
/// panic is printed by the previous hook.
pub(crate) fn install_panic_filter() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !panic_message(info.payload()).starts_with(QUIET) {
                previous(info);
            }
        }));
    });
}

/// Runs `f` on a new thread and waits for it at most `bound`.
pub(crate) fn run_on_thread<T: Send + 'static>(
    bound: Duration,
    what: &str,
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, String> {
    let (sender, receiver) = mpsc::channel();
    let thread = thread::spawn(move || {
        let _ = sender.send(f());
    });
    match receiver.recv_timeout(bound) {
        Ok(value) => {
            let _ = thread.join();
            Ok(value)
        }
        Err(RecvTimeoutError::Timeout) => Err(format!("{what}: not done within {bound:?}")),
        Err(RecvTimeoutError::Disconnected) => match thread.join() {
            Err(payload) => Err(format!("{what}: panicked: {}", panic_message(&*payload))),
            Ok(()) => Err(format!("{what}: the thread exited without a result")),
        },
    }
}
