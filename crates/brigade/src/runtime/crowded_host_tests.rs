//! A crowded host, made deterministic: the worker watching the driver is
//! held after it wakes, as a kernel with no free CPU would hold it, and the
//! work it was woken for must still be served, by the busy worker whose
//! `yield_if_busy()` loop trusted it (`driver.rs`, "the crowded-host
//! hand-off"). The tests assert what is served, never how fast; every wait
//! is bounded.

use std::io::{Read, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::{Builder, Runtime};

const BOUND: Duration = Duration::from_secs(10);

/// A two-worker runtime with one worker in a `yield_if_busy()` loop until
/// the returned flag is set, and the other watching the driver.
fn runtime_with_a_busy_worker() -> (Runtime, Arc<AtomicBool>) {
    let rt = Builder::new().worker_threads(2).build().unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let (running, is_running) = mpsc::channel();
    rt.spawn({
        let stop = stop.clone();
        async move {
            running.send(()).unwrap();
            while !stop.load(Ordering::Relaxed) {
                std::hint::spin_loop();
                crate::yield_if_busy().await;
            }
        }
    });
    is_running.recv_timeout(BOUND).expect("the busy task runs");
    wait_for("a worker to watch the driver", || {
        rt.handle.shared.driver.has_worker_in_poll()
    });
    (rt, stop)
}

fn wait_for(what: &str, condition: impl Fn() -> bool) {
    let deadline = Instant::now() + BOUND;
    while !condition() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::yield_now();
    }
}

#[test]
fn a_busy_worker_serves_io_while_the_idle_worker_is_held() {
    let (rt, stop) = runtime_with_a_busy_worker();
    let hooks = &rt.handle.shared.driver.test_hooks;
    let (bound, address) = mpsc::channel();
    let server = rt.spawn(async move {
        let listener = crate::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        bound.send(listener.local_addr().unwrap()).unwrap();
        let (stream, _) = listener.accept().await.unwrap();
        stream.write_all(b"served").await.unwrap();
    });
    let address = address.recv_timeout(BOUND).unwrap();
    // The server task waits in `accept`; the idle worker watches again.
    wait_for("the watcher to be back", || {
        rt.handle.shared.driver.has_worker_in_poll()
    });
    hooks.hold();
    let mut client = std::net::TcpStream::connect(address).unwrap();
    assert!(
        hooks.wait_held(BOUND),
        "the watcher wakes for the connection"
    );
    client.set_read_timeout(Some(BOUND)).unwrap();
    let mut reply = [0u8; 6];
    let read = client.read_exact(&mut reply);
    let served_while_held = rt.metrics().idle_not_serving();
    hooks.release();
    stop.store(true, Ordering::Relaxed);
    read.expect("the busy worker serves the connection while the watcher is held");
    assert_eq!(&reply, b"served");
    assert!(
        served_while_held >= 1,
        "counted as an idle worker not serving"
    );
    rt.block_on(server).unwrap();
    client.write_all(b"x").ok();
}

#[test]
fn a_busy_worker_fires_timers_while_the_idle_worker_is_held() {
    let (rt, stop) = runtime_with_a_busy_worker();
    let hooks = &rt.handle.shared.driver.test_hooks;
    hooks.hold();
    let (fired, has_fired) = mpsc::channel();
    rt.spawn(async move {
        crate::time::sleep(Duration::from_millis(5)).await;
        fired.send(()).unwrap();
    });
    assert!(hooks.wait_held(BOUND), "the watcher wakes for the timer");
    let result = has_fired.recv_timeout(BOUND);
    hooks.release();
    stop.store(true, Ordering::Relaxed);
    result.expect("the busy worker fires the timer while the watcher is held");
}

#[test]
fn a_busy_worker_runs_tasks_woken_from_outside_while_the_idle_worker_is_held() {
    let (rt, stop) = runtime_with_a_busy_worker();
    let hooks = &rt.handle.shared.driver.test_hooks;
    hooks.hold();
    let (ran, has_run) = mpsc::channel();
    // The spawn's notification claims the watcher (it no longer counts as
    // idle), which wakes and is held.
    rt.spawn(async move { ran.send(()).unwrap() });
    assert!(hooks.wait_held(BOUND), "the watcher wakes for the spawn");
    let result = has_run.recv_timeout(BOUND);
    hooks.release();
    stop.store(true, Ordering::Relaxed);
    result.expect("the busy worker runs the task while the watcher is held");
}
