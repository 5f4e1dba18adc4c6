//! Shutdown and abort reach tasks that never end by themselves: loops on
//! `yield_if_busy()`, `yield_now()`, elastic loops, tasks pending on I/O
//! and tasks sleeping in loops. Every future is dropped exactly once, and
//! nothing hangs (every wait is bounded).

mod common;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

use brigade::{Builder, Runtime};
use common::{spin_until, wait_until, with_timeout};

/// A kind of task that never ends by itself.
#[derive(Debug, Clone, Copy)]
enum Loop {
    YieldIfBusy,
    YieldNow,
    ElasticYieldIfBusy,
    PendingOnIo,
    Sleeping,
}

const ALL_LOOPS: [Loop; 5] = [
    Loop::YieldIfBusy,
    Loop::YieldNow,
    Loop::ElasticYieldIfBusy,
    Loop::PendingOnIo,
    Loop::Sleeping,
];

/// Counts how many futures were made, started and dropped; each future
/// also checks that it is dropped only once.
#[derive(Default)]
struct Census {
    made: AtomicUsize,
    started: AtomicUsize,
    dropped: AtomicUsize,
}

/// Wraps a future, counting it in a [`Census`].
struct Counted<F> {
    future: Pin<Box<F>>,
    census: Arc<Census>,
    started: bool,
    dropped: bool,
}

impl<F> Counted<F> {
    fn new(census: &Arc<Census>, future: F) -> Self {
        census.made.fetch_add(1, Ordering::SeqCst);
        Counted {
            future: Box::pin(future),
            census: census.clone(),
            started: false,
            dropped: false,
        }
    }
}

impl<F: Future> Future for Counted<F> {
    type Output = F::Output;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        if !self.started {
            self.started = true;
            self.census.started.fetch_add(1, Ordering::SeqCst);
        }
        self.future.as_mut().poll(cx)
    }
}

impl<F> Drop for Counted<F> {
    fn drop(&mut self) {
        assert!(!self.dropped, "a future was dropped twice");
        self.dropped = true;
        self.census.dropped.fetch_add(1, Ordering::SeqCst);
    }
}

fn spin(units: &mut u64) {
    *units = units.wrapping_add(1);
    std::hint::black_box(*units);
}

/// CPU work with `yield_if_busy()` between units, forever.
async fn yield_if_busy_forever() {
    let mut units = 0;
    loop {
        spin(&mut units);
        brigade::yield_if_busy().await;
    }
}

/// Spawns one task of kind `kind` on `rt`, counted in `census`.
fn spawn_loop(rt: &Runtime, kind: Loop, census: &Arc<Census>) -> brigade::JoinHandle<()> {
    match kind {
        Loop::YieldIfBusy => rt.spawn(Counted::new(census, yield_if_busy_forever())),
        Loop::YieldNow => rt.spawn(Counted::new(census, async {
            let mut units = 0;
            loop {
                spin(&mut units);
                brigade::yield_now().await;
            }
        })),
        Loop::ElasticYieldIfBusy => rt.spawn_elastic(Counted::new(census, yield_if_busy_forever())),
        Loop::PendingOnIo => rt.spawn(Counted::new(census, async {
            let listener = brigade::net::TcpListener::bind("127.0.0.1:0")
                .await
                .unwrap();
            let address = listener.local_addr().unwrap();
            let mut client = brigade::net::TcpStream::connect(address).await.unwrap();
            let (_server, _) = listener.accept().await.unwrap();
            // Nobody ever writes.
            let mut byte = [0u8; 1];
            let _ = tokio::io::AsyncReadExt::read(&mut client, &mut byte).await;
            unreachable!("nobody writes to this socket");
        })),
        Loop::Sleeping => rt.spawn(Counted::new(census, async {
            loop {
                brigade::time::sleep(Duration::from_millis(1)).await;
            }
        })),
    }
}

/// The program, for each kind, worker count and task count: the
/// tasks run, `block_on` returns, and dropping the runtime ends and drops
/// every future exactly once.
#[test]
fn dropping_the_runtime_ends_every_kind_of_endless_task() {
    for kind in ALL_LOOPS {
        for workers in [1, 2] {
            for tasks in [1, 3] {
                let census = Arc::new(Census::default());
                let in_body = census.clone();
                with_timeout(30, move || {
                    let rt = Builder::new().worker_threads(workers).build().unwrap();
                    for _ in 0..tasks {
                        drop(spawn_loop(&rt, kind, &in_body));
                    }
                    wait_until("every task started", || {
                        in_body.started.load(Ordering::SeqCst) == tasks
                    });
                    drop(rt);
                });
                let made = census.made.load(Ordering::SeqCst);
                assert_eq!(made, tasks, "{kind:?}");
                assert_eq!(
                    census.dropped.load(Ordering::SeqCst),
                    made,
                    "{kind:?} with {workers} workers and {tasks} tasks: futures leaked"
                );
            }
        }
    }
}

/// `shutdown_timeout` ends the same tasks without reaching its deadline's
/// fallback (the futures are all dropped by the time it returns).
#[test]
fn shutdown_timeout_ends_every_kind_of_endless_task() {
    for kind in ALL_LOOPS {
        let census = Arc::new(Census::default());
        let in_body = census.clone();
        with_timeout(30, move || {
            let rt = Builder::new().worker_threads(2).build().unwrap();
            let handles: Vec<_> = (0..3).map(|_| spawn_loop(&rt, kind, &in_body)).collect();
            wait_until("every task started", || {
                in_body.started.load(Ordering::SeqCst) == 3
            });
            rt.shutdown_timeout(Duration::from_secs(20));
            for handle in handles {
                let error = common::local_block_on(handle).unwrap_err();
                assert!(error.is_cancelled(), "{kind:?}");
            }
        });
        assert_eq!(census.dropped.load(Ordering::SeqCst), 3, "{kind:?}");
    }
}

/// `abort` reaches a `yield_if_busy()` loop while workers are idle, when
/// its fast path would let it go on forever; the runtime's other loops are
/// not disturbed, and after the abort the fast path works again (a second
/// loop, aborted in turn, is dropped too).
#[test]
fn abort_ends_a_yield_if_busy_loop_on_an_idle_runtime() {
    for kind in [Loop::YieldIfBusy, Loop::ElasticYieldIfBusy] {
        let census = Arc::new(Census::default());
        let in_body = census.clone();
        with_timeout(30, move || {
            let rt = Builder::new().worker_threads(2).build().unwrap();
            for round in 1..=2 {
                let handle = spawn_loop(&rt, kind, &in_body);
                spin_until("the loop started", || {
                    in_body.started.load(Ordering::SeqCst) == round
                });
                handle.abort();
                let error = rt.block_on(handle).unwrap_err();
                assert!(error.is_cancelled(), "{kind:?}");
                assert_eq!(in_body.dropped.load(Ordering::SeqCst), round);
            }
        });
    }
}

/// An abort of a task blocked in one long poll, and of tasks that are done,
/// leaves no attention hold behind: the loops that follow are not slowed
/// into the slow path for good. (A leaked hold is seen in the
/// `attention_holds()` test hook; `yields()` alone could not show it, since
/// the slow path does not give way either while nobody waits.)
#[test]
fn aborts_of_finished_tasks_leave_the_fast_path_alone() {
    with_timeout(30, || {
        let rt = Builder::new().worker_threads(2).build().unwrap();
        let done = rt.spawn(async { 1 });
        let done_abort = done.abort_handle();
        assert_eq!(rt.block_on(done).ok(), Some(1));
        let finished = rt.spawn(async {});
        wait_until("the task finished", || finished.is_finished());
        finished.abort();
        finished.abort();
        done_abort.abort();
        assert_eq!(rt.metrics().attention_holds(), 0, "an abort leaked a hold");
        let before = rt.metrics().yields();
        rt.block_on(async {
            brigade::spawn(async {
                for _ in 0..100_000 {
                    brigade::yield_if_busy().await;
                }
            })
            .await
            .unwrap();
        });
        assert_eq!(rt.metrics().yields(), before);
        assert_eq!(rt.metrics().attention_holds(), 0);
    });
}

/// A waker that counts its wakes.
struct CountingWaker(AtomicUsize);

impl Wake for CountingWaker {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// `yield_if_busy()` polled with a waker that is not its task's own (a
/// nested executor on a worker, here with one worker and work waiting)
/// steps aside by waking that waker at once: nothing waits for a free
/// worker (which would deadlock), and no state is left on the task for a
/// later, unrelated self-wake.
#[test]
fn yield_if_busy_under_a_nested_waker_wakes_it_at_once() {
    with_timeout(30, || {
        let rt = Builder::new().worker_threads(1).build().unwrap();
        let parks_before = rt.metrics().yield_queue_entries();
        let outcome = rt.block_on(async {
            brigade::spawn(async {
                // Work waiting behind this task on the only worker.
                let waiting = brigade::spawn(async { 5 });
                let counter = Arc::new(CountingWaker(AtomicUsize::new(0)));
                // Twice: the first visit would move to the back of the
                // deque, the second (the sentinel set) park in the yield
                // queue.
                let pending = (0..2)
                    .filter(|_| {
                        let waker = Waker::from(counter.clone());
                        let mut cx = Context::from_waker(&waker);
                        let mut yield_point = std::pin::pin!(brigade::yield_if_busy());
                        yield_point.as_mut().poll(&mut cx).is_pending()
                    })
                    .count();
                let woken = counter.0.load(Ordering::SeqCst);
                // A later plain self-wake goes to the deque as usual (not
                // to the yield queue), and the waiting task runs.
                brigade::yield_now().await;
                (pending, woken, waiting.await.unwrap())
            })
            .await
            .unwrap()
        });
        assert_eq!(outcome, (2, 2, 5));
        assert_eq!(rt.metrics().yield_queue_entries(), parks_before);
    });
}

/// A runtime dropped inside one of its own `spawn_blocking` closures does
/// not wait for that closure's thread (which would wait for itself): the
/// drop ends, the closure returns, and its loops are dropped.
#[test]
fn the_runtime_can_be_dropped_inside_its_own_blocking_closure() {
    let census = Arc::new(Census::default());
    let in_body = census.clone();
    with_timeout(30, move || {
        let rt = Builder::new().worker_threads(2).build().unwrap();
        drop(spawn_loop(&rt, Loop::YieldIfBusy, &in_body));
        let (done, dropped) = std::sync::mpsc::channel();
        let slot = Arc::new(std::sync::Mutex::new(None::<Runtime>));
        let handle = {
            let slot = slot.clone();
            rt.spawn_blocking(move || {
                let mut rt = None;
                wait_until("the runtime is handed over", || {
                    rt = slot.lock().unwrap().take();
                    rt.is_some()
                });
                drop(rt);
                done.send(()).unwrap();
            })
        };
        *slot.lock().unwrap() = Some(rt);
        dropped
            .recv_timeout(Duration::from_secs(20))
            .expect("dropping the runtime inside its blocking closure hangs");
        drop(handle);
    });
    assert_eq!(census.dropped.load(Ordering::SeqCst), 1);
}

/// A task that steps aside keeps at most one deferred wake-up in the yield
/// queue: when something else (here, a thread outside the runtime) wakes it
/// while its entry waits, and it steps aside again, it relies on the entry
/// it has instead of adding another. Under load that never lets the yield
/// queue run, the queue stays at one entry however many outside wakes come.
#[test]
fn outside_wakes_leave_at_most_one_yield_queue_entry_per_task() {
    use std::future::poll_fn;
    use std::sync::Mutex;
    with_timeout(30, || {
        let rt = Builder::new().worker_threads(1).build().unwrap();
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        // Something always waits in the only worker's deque: a foreground
        // task (an automatic one would be demoted to background, and take
        // turns through the yield queue itself).
        let spinner = {
            let stop = stop.clone();
            brigade::task::Builder::new()
                .class(brigade::task::TaskClass::Foreground)
                .spawn_on(
                    async move {
                        while !stop.load(Ordering::Relaxed) {
                            brigade::yield_now().await;
                        }
                    },
                    rt.handle(),
                )
        };
        let slot: Arc<Mutex<Option<Waker>>> = Arc::new(Mutex::new(None));
        let steps = Arc::new(AtomicUsize::new(0));
        let background = {
            let (slot, stop, steps) = (slot.clone(), stop.clone(), steps.clone());
            rt.spawn(async move {
                while !stop.load(Ordering::Relaxed) {
                    // Leave a waker where an outside source reaches it, as a
                    // `select!` between a channel and a unit of work does.
                    poll_fn(|cx| {
                        *slot.lock().unwrap() = Some(cx.waker().clone());
                        Poll::Ready(())
                    })
                    .await;
                    steps.fetch_add(1, Ordering::SeqCst);
                    brigade::yield_if_busy().await;
                }
            })
        };
        let metrics = rt.metrics();
        for wake in 1..=200 {
            wait_until("the background task stepped aside again", || {
                steps.load(Ordering::SeqCst) >= wake && slot.lock().unwrap().is_some()
            });
            if let Some(waker) = slot.lock().unwrap().take() {
                waker.wake();
            }
            assert!(
                metrics.yield_queue_depth() <= 1,
                "{} entries after {wake} outside wakes",
                metrics.yield_queue_depth()
            );
        }
        stop.store(true, Ordering::Relaxed);
        rt.block_on(async {
            spinner.await.unwrap();
            background.await.unwrap();
        });
    });
}

/// A task spawned into a worker's run-next slot by a poll that is still
/// running when the runtime shuts down (no yield point, no monitor to
/// open the slot) is neither run nor leaked: the worker drops it with its
/// deque when the poll returns and it leaves its loop.
#[test]
fn a_task_left_in_a_run_next_slot_at_shutdown_is_dropped_unrun() {
    let census = Arc::new(Census::default());
    let in_body = census.clone();
    with_timeout(30, move || {
        let rt = Builder::new()
            .worker_threads(1)
            .long_poll_threshold(None)
            .compensation_threshold(None)
            .build()
            .unwrap();
        let spawned = Arc::new(AtomicBool::new(false));
        let release = Arc::new(AtomicBool::new(false));
        drop({
            let (spawned, release) = (spawned.clone(), release.clone());
            let census = in_body.clone();
            rt.spawn(async move {
                drop(brigade::spawn(Counted::new(&census, async {})));
                spawned.store(true, Ordering::SeqCst);
                // No yield point: the child stays in the slot, unopened.
                while !release.load(Ordering::SeqCst) {
                    std::hint::spin_loop();
                }
            })
        });
        wait_until("the child is spawned", || spawned.load(Ordering::SeqCst));
        // The worker is still in its poll: the deadline passes.
        rt.shutdown_timeout(Duration::from_millis(20));
        let (started, dropped) = (&in_body.started, &in_body.dropped);
        assert_eq!(dropped.load(Ordering::SeqCst), 0, "dropped mid-poll");
        release.store(true, Ordering::SeqCst);
        wait_until("the child's future is dropped", || {
            dropped.load(Ordering::SeqCst) == 1
        });
        assert_eq!(started.load(Ordering::SeqCst), 0, "the child ran");
    });
    assert_eq!(census.made.load(Ordering::SeqCst), 1);
}
