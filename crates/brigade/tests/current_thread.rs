//! The current-thread flavour: `block_on`'s thread runs the future and the
//! runtime's tasks, taking turns, as tokio's current-thread runtime does
//! (`runtime/scheduler/current_thread.rs`, `runtime/scheduler/worker/block_on.rs`).

mod common;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

use brigade::runtime::Builder;
use common::{DropCounter, TIMEOUT_SECS, bounded, channel, with_timeout};

/// How long a test waits for something that must *not* happen (a task
/// running on another thread while the body blocks). Not a measure of
/// speed: a wrong runtime runs the task at once, long before this.
const NOT_WITHIN: Duration = Duration::from_millis(200);

fn current_thread() -> brigade::Runtime {
    Builder::new_current_thread().enable_all().build().unwrap()
}

/// tokio's guarantee that ported tests rely on: a spawned task runs only
/// once the body returns `Pending`. The body blocks its thread on a channel
/// that only the task sends on: on a runtime with a worker thread the task
/// sends at once; here it cannot run until the body awaits.
#[brigade::test]
async fn a_spawned_task_does_not_run_until_the_body_awaits() {
    bounded(async {
        let (sender, receiver) = mpsc::channel();
        let task = brigade::spawn(async move { sender.send(()).unwrap() });
        assert_eq!(
            receiver.recv_timeout(NOT_WITHIN),
            Err(mpsc::RecvTimeoutError::Timeout),
            "the task ran while the body had not awaited"
        );
        brigade::yield_now().await;
        assert_eq!(
            receiver.try_recv(),
            Ok(()),
            "the task ran at the body's await"
        );
        task.await.unwrap();
    })
    .await;
}

#[test]
fn the_body_and_its_tasks_run_on_the_callers_thread() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = current_thread();
        let caller = std::thread::current().id();
        let (body, task) = rt.block_on(async {
            let task = brigade::spawn(async { std::thread::current().id() });
            (std::thread::current().id(), task.await.unwrap())
        });
        assert_eq!(body, caller);
        assert_eq!(task, caller);
    });
}

/// tokio's order: tasks run in the order they were scheduled (a child
/// spawned by a task goes behind those already queued), all before the
/// body that yielded is polled again.
#[brigade::test]
async fn tasks_take_turns_in_spawn_order_while_the_body_yields() {
    bounded(async {
        let order = Arc::new(Mutex::new(Vec::new()));
        let record = |name: &'static str| {
            let order = order.clone();
            move || order.lock().unwrap().push(name)
        };
        let (a, b, c) = (record("a"), record("b"), record("c"));
        let first = brigade::spawn(async move {
            a();
            // Not awaited here: the child only goes to the back of the queue.
            let child = brigade::spawn(async move { c() });
            Some(child)
        });
        let second = brigade::spawn(async move { b() });
        record("body")();
        brigade::yield_now().await;
        assert_eq!(*order.lock().unwrap(), ["body", "a", "b", "c"]);
        first.await.unwrap().unwrap().await.unwrap();
        second.await.unwrap();
    })
    .await;
}

/// A spawn through a `Handle` on another thread, while the body waits with
/// the worker parked, reaches it: the remote spawn alone unparks
/// `block_on` (only the spawned task wakes the body).
#[test]
fn a_remote_spawn_wakes_a_parked_block_on() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = current_thread();
        let handle = rt.handle().clone();
        let metrics = rt.metrics();
        let (sender, mut receiver) = channel();
        let spawner = std::thread::spawn(move || {
            // Until `block_on` has parked at least once.
            common::wait_until("block_on parks", || metrics.total_parks() > 0);
            drop(handle.spawn(async move { sender.send(std::thread::current().id()) }));
        });
        let ran_on = rt.block_on(receiver.recv());
        spawner.join().unwrap();
        assert_eq!(ran_on, Some(std::thread::current().id()));
    });
}

/// A wake of the body from another thread (a channel send) unparks it.
#[test]
fn a_remote_wake_of_the_body_unparks_block_on() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = current_thread();
        let metrics = rt.metrics();
        let (sender, mut receiver) = channel();
        let waker = std::thread::spawn(move || {
            common::wait_until("block_on parks", || metrics.total_parks() > 0);
            sender.send(7);
        });
        assert_eq!(rt.block_on(receiver.recv()), Some(7));
        waker.join().unwrap();
    });
}

/// Nothing runs between two `block_on` calls, as on tokio.
#[test]
fn tasks_do_not_run_outside_block_on() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = current_thread();
        let (sender, receiver) = mpsc::channel();
        let task = rt.spawn(async move { sender.send(()).unwrap() });
        assert_eq!(
            receiver.recv_timeout(NOT_WITHIN),
            Err(mpsc::RecvTimeoutError::Timeout)
        );
        rt.block_on(task).unwrap();
        assert_eq!(receiver.try_recv(), Ok(()));
    });
}

/// `yield_if_busy()` in a task gives way to a woken body (the only other
/// thing ready), and continues at once when nothing else is ready.
#[brigade::test]
async fn yield_if_busy_gives_way_to_the_woken_body_only() {
    bounded(async {
        let units = Arc::new(AtomicUsize::new(0));
        let worker = {
            let units = units.clone();
            brigade::spawn(async move {
                for _ in 0..1_000 {
                    units.fetch_add(1, Ordering::SeqCst);
                    brigade::yield_if_busy().await;
                }
            })
        };
        // The body yields, so it is ready again when the task runs: the
        // task's first yield point gives way to it.
        brigade::yield_now().await;
        assert_eq!(units.load(Ordering::SeqCst), 1);
        let yields = brigade::Handle::current().metrics().yields();
        // Now the body waits for the task: nothing else is ready, so the
        // task runs its units without giving way.
        worker.await.unwrap();
        assert_eq!(units.load(Ordering::SeqCst), 1_000);
        assert_eq!(brigade::Handle::current().metrics().yields(), yields);
    })
    .await;
}

/// `yield_if_busy()` in the body gives way to queued tasks.
#[brigade::test]
async fn yield_if_busy_in_the_body_lets_queued_tasks_run() {
    bounded(async {
        let ran = Arc::new(AtomicBool::new(false));
        let flag = ran.clone();
        let _task = brigade::spawn(async move { flag.store(true, Ordering::SeqCst) });
        brigade::yield_if_busy().await;
        assert!(ran.load(Ordering::SeqCst));
    })
    .await;
}

#[brigade::test]
async fn timers_fire_for_the_body_and_for_tasks() {
    bounded(async {
        let task = brigade::spawn(async {
            brigade::time::sleep(Duration::from_millis(20)).await;
            1
        });
        brigade::time::sleep(Duration::from_millis(10)).await;
        let timed_out =
            brigade::time::timeout(Duration::from_millis(5), std::future::pending::<()>()).await;
        assert!(timed_out.is_err());
        assert_eq!(task.await.unwrap(), 1);
    })
    .await;
}

#[brigade::test]
async fn tcp_echo_between_the_body_and_a_task() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    bounded(async {
        let listener = brigade::net::TcpListener::bind("127.0.0.1:0")
            .await
            .unwrap();
        let address = listener.local_addr().unwrap();
        let server = brigade::spawn(async move {
            let (mut stream, _) = listener.accept().await.unwrap();
            let mut buffer = [0; 5];
            stream.read_exact(&mut buffer).await.unwrap();
            stream.write_all(&buffer).await.unwrap();
        });
        let mut client = brigade::net::TcpStream::connect(address).await.unwrap();
        client.write_all(b"hello").await.unwrap();
        let mut echoed = [0; 5];
        client.read_exact(&mut echoed).await.unwrap();
        assert_eq!(&echoed, b"hello");
        server.await.unwrap();
    })
    .await;
}

/// tokio's `start_paused` tests run on its current-thread runtime: the
/// clock jumps to the next timer when the body and every task wait.
#[brigade::test(start_paused = true)]
async fn paused_time_auto_advances_when_everything_waits() {
    let start = brigade::time::Instant::now();
    let task = brigade::spawn(async {
        brigade::time::sleep(Duration::from_secs(3_600)).await;
        brigade::time::Instant::now()
    });
    brigade::time::sleep(Duration::from_secs(60)).await;
    assert_eq!(start.elapsed(), Duration::from_secs(60));
    let woke = task.await.unwrap();
    assert_eq!(woke - start, Duration::from_secs(3_600));
}

#[test]
fn dropping_the_runtime_drops_every_unfinished_task() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = current_thread();
        let dropped = Arc::new(AtomicUsize::new(0));
        let spawn_pending = |rt: &brigade::Runtime| {
            let counter = DropCounter(dropped.clone());
            rt.spawn(async move {
                let _counter = counter;
                std::future::pending::<()>().await
            })
        };
        // Two that ran and wait, two still queued.
        let mut handles = vec![spawn_pending(&rt), spawn_pending(&rt)];
        rt.block_on(brigade::yield_now());
        handles.push(spawn_pending(&rt));
        handles.push(spawn_pending(&rt));
        assert_eq!(dropped.load(Ordering::SeqCst), 0);
        drop(rt);
        assert_eq!(dropped.load(Ordering::SeqCst), 4);
        for handle in handles {
            let error = common::local_block_on(handle).unwrap_err();
            assert!(error.is_cancelled());
        }
    });
}

/// Another thread's `block_on` on the same runtime waits for the worker
/// while this one holds it, and both complete.
#[test]
fn two_threads_in_block_on_share_the_worker() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = Arc::new(current_thread());
        let (sender, mut receiver) = channel();
        let other = {
            let rt = rt.clone();
            std::thread::spawn(move || {
                rt.block_on(async move {
                    let answer = brigade::spawn(async { 6 * 7 }).await.unwrap();
                    sender.send(answer);
                    answer
                })
            })
        };
        let got = rt.block_on(async move { receiver.recv().await.unwrap() });
        assert_eq!(got, 42);
        assert_eq!(other.join().unwrap(), 42);
    });
}

#[brigade::test]
async fn block_in_place_panics_as_on_tokio() {
    bounded(async {
        let task = brigade::spawn(async { brigade::task::block_in_place(|| 1) });
        let error = task.await.unwrap_err();
        assert!(error.is_panic());
    })
    .await;
}

#[brigade::test]
async fn spawn_blocking_and_join_set_work() {
    bounded(async {
        let blocking = brigade::spawn_blocking(|| std::thread::current().id());
        assert_ne!(blocking.await.unwrap(), std::thread::current().id());
        let mut set = brigade::task::JoinSet::new();
        for n in 0..5u32 {
            set.spawn(async move { n * 2 });
        }
        let mut total = 0;
        while let Some(result) = set.join_next().await {
            total += result.unwrap();
        }
        assert_eq!(total, 20);
    })
    .await;
}

#[test]
fn a_driver_thread_is_refused_with_the_setting_named() {
    let error = Builder::new_current_thread()
        .driver_thread(true)
        .build()
        .unwrap_err();
    assert!(error.to_string().contains("driver_thread"), "{error}");
}

/// A `block_on` whose future panics gives the worker back in a state the
/// next `block_on` can park and be woken in (no stale "searching" count
/// that would make a remote spawn skip the wake-up).
#[test]
fn a_block_on_that_panicked_leaves_the_worker_usable() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = current_thread();
        let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            rt.block_on(async {
                brigade::yield_now().await;
                panic!("the body panics after a turn of the loop");
            })
        }));
        assert!(panicked.is_err());
        let handle = rt.handle().clone();
        let metrics = rt.metrics();
        let parks = metrics.total_parks();
        let (sender, mut receiver) = channel();
        let spawner = std::thread::spawn(move || {
            common::wait_until("block_on parks", || metrics.total_parks() > parks);
            drop(handle.spawn(async move { sender.send(5) }));
        });
        let answer = rt.block_on(receiver.recv());
        spawner.join().unwrap();
        assert_eq!(answer, Some(5));
    });
}

/// Elastic tasks are admitted as on any runtime and run on the `block_on`
/// thread, in turns with the body.
#[brigade::test]
async fn elastic_tasks_run_on_the_block_on_thread() {
    bounded(async {
        let units = Arc::new(AtomicUsize::new(0));
        let task = {
            let units = units.clone();
            brigade::spawn_elastic(async move {
                for _ in 0..1_000 {
                    units.fetch_add(1, Ordering::SeqCst);
                    brigade::yield_if_busy().await;
                }
                std::thread::current().id()
            })
        };
        assert_eq!(
            units.load(Ordering::SeqCst),
            0,
            "ran before the body awaited"
        );
        assert_eq!(task.await.unwrap(), std::thread::current().id());
        assert_eq!(units.load(Ordering::SeqCst), 1_000);
    })
    .await;
}

/// tokio defers a yielding task's wake-up to the end of the turn: a task
/// looping on `yield_now()` runs once for each yield of the body, and two
/// such tasks alternate with it. The order is tokio 1.x's, as printed by
/// the same program on `#[tokio::main(flavor = "current_thread")]` (its
/// deferred wake-ups are a stack: `a b`, then `b a`).
#[brigade::test]
async fn yielding_tasks_run_once_per_turn_of_the_body() {
    bounded(async {
        let order = Arc::new(Mutex::new(Vec::new()));
        let yielder = |name: &'static str| {
            let order = order.clone();
            brigade::spawn(async move {
                for _ in 0..3 {
                    order.lock().unwrap().push(name);
                    brigade::yield_now().await;
                }
            })
        };
        let (a, b) = (yielder("a"), yielder("b"));
        for _ in 0..3 {
            brigade::yield_now().await;
            order.lock().unwrap().push("body");
        }
        assert_eq!(
            *order.lock().unwrap(),
            ["a", "b", "body", "b", "a", "body", "a", "b", "body"]
        );
        a.await.unwrap();
        b.await.unwrap();
    })
    .await;
}
