//! `brigade::signal`: streams see the deliveries made after they were
//! created, coalesced; runtimes listen independently; errors instead of
//! panics for signals that cannot be handled.
//!
//! This is its own test binary because it installs process-wide handlers
//! (SIGINT, SIGUSR1, ... no longer end the process once a stream exists).
//! The tests run one at a time (`serial`), so each can count the deliveries
//! of its signals exactly. Signals are sent with `raise`, which returns only
//! after the handler ran on the calling thread, except where a test wants
//! the handler on an arbitrary thread (`kill`). Every wait is bounded.

mod common;

use std::future::Future;
use std::pin::pin;
use std::sync::mpsc;
use std::sync::{Mutex, MutexGuard, TryLockError};
use std::thread;
use std::time::Instant;

use brigade::signal::unix::{Signal, SignalKind, signal};
use common::{TIMEOUT, bounded, local_block_on, with_timeout};
use futures_lite::future::poll_once;

static SERIAL: Mutex<()> = Mutex::new(());

/// Takes the lock that runs these tests one at a time (bounded: a test that
/// hung while holding it fails the others instead of hanging them).
fn serial() -> MutexGuard<'static, ()> {
    let deadline = Instant::now() + 2 * TIMEOUT;
    loop {
        match SERIAL.try_lock() {
            Ok(guard) => return guard,
            Err(TryLockError::Poisoned(poisoned)) => return poisoned.into_inner(),
            Err(TryLockError::WouldBlock) => {
                assert!(Instant::now() < deadline, "another signal test hangs");
                thread::sleep(std::time::Duration::from_millis(1));
            }
        }
    }
}

fn runtime(workers: usize) -> brigade::Runtime {
    brigade::Builder::new()
        .worker_threads(workers)
        .build()
        .expect("runtime")
}

/// Runs `body` on a fresh runtime, one test at a time, bounded.
fn run<F: Future<Output = ()> + 'static>(
    workers: usize,
    body: impl FnOnce() -> F + Send + 'static,
) {
    with_timeout(3 * common::TIMEOUT_SECS, move || {
        let _serial = serial();
        runtime(workers).block_on(bounded(body()));
    });
}

/// Sends `signum` to this thread; its handler has run when this returns.
fn raise(signum: libc::c_int) {
    // SAFETY: `raise` only sends a signal; every signal raised here has a
    // handler installed by a stream made before.
    assert_eq!(unsafe { libc::raise(signum) }, 0, "raise({signum})");
}

/// Sends `signum` to the process: any thread may run the handler.
fn kill(signum: libc::c_int) {
    // SAFETY: as in `raise`.
    let sent = unsafe { libc::kill(libc::getpid(), signum) };
    assert_eq!(sent, 0, "kill({signum})");
}

fn usr1() -> Signal {
    signal(SignalKind::user_defined1()).expect("SIGUSR1 stream")
}

fn usr2() -> Signal {
    signal(SignalKind::user_defined2()).expect("SIGUSR2 stream")
}

/// Whether `stream` has no delivery to report now (polls it once).
async fn nothing_delivered(stream: &mut Signal) -> bool {
    poll_once(stream.recv()).await.is_none()
}

#[test]
fn recv_returns_after_a_delivery() {
    run(1, || async {
        let mut stream = usr1();
        raise(libc::SIGUSR1);
        assert_eq!(stream.recv().await, Some(()));
    });
}

#[test]
fn a_waiting_task_is_woken_by_a_delivery_on_another_thread() {
    run(2, || async {
        let mut stream = usr1();
        let (waiting, waiting_rx) = mpsc::channel::<()>();
        let sender = thread::spawn(move || {
            waiting_rx
                .recv_timeout(TIMEOUT)
                .expect("the task never waited");
            kill(libc::SIGUSR1);
        });
        let mut recv = pin!(stream.recv());
        assert!(poll_once(&mut recv).await.is_none(), "nothing sent yet");
        waiting.send(()).unwrap();
        assert_eq!(recv.await, Some(()));
        sender.join().unwrap();
    });
}

#[test]
fn two_streams_for_the_same_signal_both_see_it() {
    run(2, || async {
        let (mut first, mut second) = (usr1(), usr1());
        raise(libc::SIGUSR1);
        assert_eq!(first.recv().await, Some(()));
        assert_eq!(second.recv().await, Some(()));
    });
}

#[test]
fn a_delivery_before_a_stream_was_created_is_not_seen() {
    run(1, || async {
        let mut earlier = usr1();
        raise(libc::SIGUSR1);
        assert_eq!(earlier.recv().await, Some(()));
        let mut later = usr1();
        assert!(nothing_delivered(&mut later).await);
        // Once a delivery of another signal, raised after, has arrived,
        // the reactor has read everything the handler wrote before it:
        // look again.
        let mut other = usr2();
        raise(libc::SIGUSR2);
        assert_eq!(other.recv().await, Some(()));
        assert!(nothing_delivered(&mut later).await);
        raise(libc::SIGUSR1);
        assert_eq!(later.recv().await, Some(()));
    });
}

#[test]
fn deliveries_before_recv_coalesce() {
    run(1, || async {
        let mut stream = usr2();
        for _ in 0..3 {
            raise(libc::SIGUSR2);
        }
        assert_eq!(stream.recv().await, Some(()));
        assert!(
            nothing_delivered(&mut stream).await,
            "three deliveries, one recv"
        );
        raise(libc::SIGUSR2);
        assert_eq!(stream.recv().await, Some(()));
    });
}

#[test]
fn a_stream_does_not_see_other_signals() {
    run(1, || async {
        let (mut one, mut two) = (usr1(), usr2());
        raise(libc::SIGUSR1);
        assert_eq!(one.recv().await, Some(()));
        assert!(nothing_delivered(&mut two).await);
        raise(libc::SIGUSR2);
        assert_eq!(two.recv().await, Some(()));
        assert!(nothing_delivered(&mut one).await);
    });
}

#[test]
fn signals_that_cannot_be_handled_are_invalid_input() {
    let forbidden = [
        libc::SIGKILL,
        libc::SIGSTOP,
        libc::SIGILL,
        libc::SIGFPE,
        libc::SIGSEGV,
        0,
        -1,
    ];
    let check = move || {
        for signum in forbidden {
            let error = signal(SignalKind::from_raw(signum)).unwrap_err();
            assert_eq!(error.kind(), std::io::ErrorKind::InvalidInput, "{signum}");
        }
    };
    check(); // outside a runtime too
    run(1, move || async move { check() });
}

#[test]
fn signal_outside_a_runtime_is_an_error() {
    let error = signal(SignalKind::user_defined1()).unwrap_err();
    assert!(
        error.to_string().contains("inside a brigade runtime"),
        "{error}"
    );
}

#[test]
fn streams_in_two_runtimes_both_receive() {
    with_timeout(3 * common::TIMEOUT_SECS, || {
        let _serial = serial();
        let (first, second) = (runtime(1), runtime(2));
        let mut in_first = first.block_on(async { usr1() });
        let mut in_second = second.block_on(async { usr1() });
        raise(libc::SIGUSR1);
        assert_eq!(first.block_on(bounded(in_first.recv())), Some(()));
        assert_eq!(second.block_on(bounded(in_second.recv())), Some(()));
    });
}

#[test]
fn a_runtime_built_after_another_was_dropped_still_receives() {
    with_timeout(3 * common::TIMEOUT_SECS, || {
        let _serial = serial();
        for _ in 0..3 {
            let rt = runtime(1);
            rt.block_on(bounded(async {
                let mut stream = usr2();
                raise(libc::SIGUSR2);
                assert_eq!(stream.recv().await, Some(()));
            }));
        }
    });
}

#[test]
fn recv_returns_none_after_the_runtime_shut_down() {
    with_timeout(3 * common::TIMEOUT_SECS, || {
        let _serial = serial();
        let rt = runtime(1);
        let mut stream = rt.block_on(async { usr1() });
        drop(rt);
        assert_eq!(local_block_on(stream.recv()), None);
    });
}

#[test]
fn ctrl_c_resolves_on_sigint() {
    run(1, || async {
        let mut ctrl_c = pin!(brigade::signal::ctrl_c());
        // The first poll installs the handler; SIGINT before it would end
        // the test process.
        assert!(poll_once(&mut ctrl_c).await.is_none());
        raise(libc::SIGINT);
        ctrl_c.await.expect("ctrl_c");
    });
}

/// Streams waiting in many tasks of one runtime share its socket: each
/// must be woken, whichever task reads the bytes.
#[test]
fn every_waiting_task_of_a_runtime_wakes() {
    run(2, || async {
        let (waiting, mut waiting_rx) = common::channel::<()>();
        let tasks: Vec<_> = (0..8)
            .map(|task| {
                let waiting = waiting.clone();
                brigade::spawn(async move {
                    let mut stream = if task % 2 == 0 { usr1() } else { usr2() };
                    let mut recv = pin!(stream.recv());
                    assert!(poll_once(&mut recv).await.is_none());
                    waiting.send(());
                    recv.await
                })
            })
            .collect();
        for _ in 0..8 {
            waiting_rx.recv().await.expect("every task waits");
        }
        kill(libc::SIGUSR1);
        kill(libc::SIGUSR2);
        for task in tasks {
            assert_eq!(task.await.unwrap(), Some(()));
        }
    });
}

/// Two signals, one stream each in its own task, many rounds: one delivery
/// of each per round, sent from another thread once both tasks took the
/// previous one. A wake lost between the streams (one reads the byte meant
/// to wake the other) hangs a round.
#[test]
fn interleaved_deliveries_of_two_signals_lose_no_wake() {
    const ROUNDS: usize = 2000;
    run(2, || async {
        let (taken, taken_rx) = mpsc::channel::<libc::c_int>();
        let tasks: Vec<_> = [libc::SIGUSR1, libc::SIGUSR2]
            .into_iter()
            .map(|signum| {
                let taken = taken.clone();
                let mut stream = signal(SignalKind::from_raw(signum)).unwrap();
                brigade::spawn(async move {
                    for _ in 0..ROUNDS {
                        assert_eq!(stream.recv().await, Some(()));
                        taken.send(signum).unwrap();
                    }
                })
            })
            .collect();
        let sender = thread::spawn(move || {
            for round in 0..ROUNDS {
                kill(libc::SIGUSR1);
                kill(libc::SIGUSR2);
                for _ in 0..2 {
                    taken_rx
                        .recv_timeout(TIMEOUT)
                        .unwrap_or_else(|_| panic!("a stream missed round {round}"));
                }
            }
        });
        for task in tasks {
            task.await.unwrap();
        }
        brigade::spawn_blocking(move || sender.join().unwrap())
            .await
            .unwrap();
    });
}
