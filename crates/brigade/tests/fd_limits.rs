//! File descriptors that run out (`RLIMIT_NOFILE`), each case in a child
//! process of its own (`child/mod.rs`):
//! - `TcpListener::accept` and `UnixListener::accept` return `EMFILE` as an
//!   error, and accept the waiting connection once a descriptor is freed;
//! - `Builder::build` returns a `BuildError` when the driver's descriptors
//!   (the epoll instance, its eventfd waker, the watcher's wake pipe)
//!   cannot be created, and `signal()` an error when its socket pair cannot;
//! - a source the kernel refuses to register (`epoll_ctl` fails) is an
//!   error to the caller, and the driver carries on;
//! - the monitor thread, judging a stuck worker from `/proc` at every
//!   sample, never takes a descriptor the program frees (its files are
//!   opened at `build` and read in place), and with none free a stuck
//!   worker still gets its spare.

mod child;
mod common;

use std::io::{Read, Write};
use std::os::fd::{FromRawFd, IntoRawFd};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use child::{exhaust_descriptors, in_child, lift_soft_limit};
use common::TIMEOUT;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

fn runtime() -> brigade::Runtime {
    let mut builder = brigade::Builder::new();
    builder.worker_threads(1);
    #[cfg(feature = "tokio-compat")]
    builder.tokio_compat(false);
    builder.build().expect("runtime")
}

fn open_descriptors() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

fn is_emfile(error: &std::io::Error) -> bool {
    error.raw_os_error() == Some(libc::EMFILE)
}

/// Bounds a wait by a brigade timer (no watchdog thread: the parent bounds
/// the child too).
async fn bounded<F: std::future::Future>(future: F) -> F::Output {
    brigade::time::timeout(TIMEOUT, future)
        .await
        .expect("did not complete in time: something hangs")
}

#[test]
fn tcp_accept_reports_emfile_and_recovers() {
    in_child("tcp_accept_reports_emfile_and_recovers", || {
        let rt = runtime();
        rt.block_on(bounded(async {
            let listener = brigade::net::TcpListener::bind("127.0.0.1:0")
                .await
                .unwrap();
            let addr = listener.local_addr().unwrap();
            // Connected before the shortage: it waits in the backlog.
            let mut client = std::net::TcpStream::connect(addr).unwrap();
            let mut spare = exhaust_descriptors();
            for _ in 0..3 {
                let error = listener.accept().await.expect_err("no descriptor left");
                assert!(is_emfile(&error), "{error}");
            }
            spare.pop();
            let (mut server, _) = listener.accept().await.expect("a descriptor is free again");
            drop(spare);
            lift_soft_limit(libc::RLIMIT_NOFILE);
            client.write_all(b"ping").unwrap();
            let mut buf = [0u8; 4];
            server.read_exact(&mut buf).await.unwrap();
            assert_eq!(&buf, b"ping");
            // And it goes on accepting.
            let _second = std::net::TcpStream::connect(addr).unwrap();
            listener.accept().await.expect("the next connection");
        }));
    });
}

#[test]
fn unix_accept_reports_emfile_and_recovers() {
    in_child("unix_accept_reports_emfile_and_recovers", || {
        let dir = std::env::temp_dir().join(format!("brigade-fd-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("socket");
        let _ = std::fs::remove_file(&path);
        let rt = runtime();
        rt.block_on(bounded(async {
            let listener = brigade::net::UnixListener::bind(&path).unwrap();
            let mut client = std::os::unix::net::UnixStream::connect(&path).unwrap();
            let mut spare = exhaust_descriptors();
            for _ in 0..3 {
                let error = listener.accept().await.expect_err("no descriptor left");
                assert!(is_emfile(&error), "{error}");
            }
            spare.pop();
            let (mut server, _) = listener.accept().await.expect("a descriptor is free again");
            drop(spare);
            lift_soft_limit(libc::RLIMIT_NOFILE);
            client.write_all(b"ping").unwrap();
            let mut buf = [0u8; 4];
            server.read_exact(&mut buf).await.unwrap();
            assert_eq!(&buf, b"ping");
        }));
        let _ = std::fs::remove_dir_all(&dir);
    });
}

#[test]
fn build_fails_with_a_build_error_when_the_driver_gets_no_descriptors() {
    in_child(
        "build_fails_with_a_build_error_when_the_driver_gets_no_descriptors",
        || {
            // The driver needs 5 descriptors: the epoll instance, a clone of
            // it for registration, the eventfd waker and the wake pipe's two
            // ends. Any fewer free, and the build must fail cleanly, closing
            // what it opened.
            let open_before = open_descriptors();
            for free in 0..5 {
                let mut spare = exhaust_descriptors();
                spare.truncate(spare.len().saturating_sub(free));
                let error = brigade::Builder::new()
                    .worker_threads(1)
                    .build()
                    .expect_err("no descriptors for the driver");
                assert!(
                    error
                        .to_string()
                        .contains("could not create the I/O driver"),
                    "{error}"
                );
                let source = std::error::Error::source(&error).expect("the OS error");
                let source = source.downcast_ref::<std::io::Error>().unwrap();
                assert!(is_emfile(source), "{error}");
                drop(spare);
                lift_soft_limit(libc::RLIMIT_NOFILE);
            }
            assert_eq!(open_descriptors(), open_before, "nothing leaked");
            // With descriptors back, it builds and runs.
            let rt = runtime();
            assert_eq!(rt.block_on(rt.spawn(async { 5 })).unwrap(), 5);
        },
    );
}

#[test]
fn signal_without_descriptors_is_an_error() {
    in_child("signal_without_descriptors_is_an_error", || {
        use brigade::signal::unix::{SignalKind, signal};
        let rt = runtime();
        rt.block_on(async {
            let spare = exhaust_descriptors();
            let error = signal(SignalKind::user_defined1()).expect_err("no descriptors");
            assert!(is_emfile(&error), "{error}");
            drop(spare);
            lift_soft_limit(libc::RLIMIT_NOFILE);
            signal(SignalKind::user_defined1()).expect("descriptors are back");
        });
    });
}

#[test]
fn a_source_epoll_refuses_is_an_error_and_the_driver_carries_on() {
    common::with_timeout(common::TIMEOUT_SECS, || {
        let rt = runtime();
        rt.block_on(async {
            // epoll_ctl refuses regular files (EPERM): a registration failure.
            let file = std::fs::File::open(std::env::current_exe().unwrap()).unwrap();
            // SAFETY: the descriptor is `file`'s, whose ownership moves to the
            // listener (closed once, when the listener is dropped).
            let not_a_socket =
                unsafe { std::os::unix::net::UnixListener::from_raw_fd(file.into_raw_fd()) };
            let error = brigade::net::UnixListener::from_std(not_a_socket)
                .expect_err("epoll_ctl refuses a regular file");
            assert_eq!(error.raw_os_error(), Some(libc::EPERM), "{error}");
            // The driver still serves a real socket.
            let listener = brigade::net::TcpListener::bind("127.0.0.1:0")
                .await
                .unwrap();
            let addr = listener.local_addr().unwrap();
            let mut client = std::net::TcpStream::connect(addr).unwrap();
            let (mut server, _) = listener.accept().await.unwrap();
            server.write_all(b"ok").await.unwrap();
            let mut buf = [0u8; 2];
            client.read_exact(&mut buf).unwrap();
            assert_eq!(&buf, b"ok");
        });
    });
}

/// A poll that computes with no yield point until `stop` is set (or
/// [`TIMEOUT`] passes): its worker is stuck, and runnable.
async fn spin_until(stop: Arc<AtomicBool>) {
    let deadline = Instant::now() + TIMEOUT;
    while !stop.load(Ordering::Relaxed) && Instant::now() < deadline {
        std::hint::spin_loop();
    }
}

#[test]
fn the_monitor_takes_no_descriptor_while_it_judges_a_stuck_worker() {
    in_child(
        "the_monitor_takes_no_descriptor_while_it_judges_a_stuck_worker",
        || {
            // No spare: the stuck worker stays uncovered, so the monitor
            // judges it (its thread's state, the host's load) at every
            // sample, each millisecond.
            let rt = brigade::Builder::new()
                .worker_threads(1)
                .max_spare_workers(0)
                .compensation_threshold(Some(Duration::from_millis(1)))
                .long_poll_threshold(Some(Duration::from_millis(2)))
                .build()
                .expect("runtime");
            let stop = Arc::new(AtomicBool::new(false));
            let spinner = rt.spawn(spin_until(stop.clone()));
            // Work waiting behind the stuck worker: the monitor judges only
            // while some waits.
            let waiting = rt.spawn(async { 7 });
            let metrics = rt.metrics();
            common::wait_until("the monitor sees the stuck worker", || {
                metrics.long_polls() >= 1
            });
            let mut spare = exhaust_descriptors();
            // One descriptor free, which this thread opens and closes again
            // and again for a while: each open must get it.
            spare.pop();
            let (mut opens, mut refused) = (0u32, 0u32);
            let until = Instant::now() + Duration::from_millis(1500);
            while Instant::now() < until {
                match std::fs::File::open("/dev/null") {
                    Ok(file) => drop(file),
                    Err(error) if is_emfile(&error) => refused += 1,
                    Err(error) => panic!("opening /dev/null: {error}"),
                }
                opens += 1;
            }
            let still_stuck = !spinner.is_finished();
            stop.store(true, Ordering::Relaxed);
            drop(spare);
            lift_soft_limit(libc::RLIMIT_NOFILE);
            assert!(still_stuck, "the worker was stuck all along");
            assert_eq!(
                refused, 0,
                "the runtime held the one free descriptor at {refused} of {opens} opens"
            );
            // The runtime carries on: the waiting task runs.
            rt.block_on(bounded(async move {
                spinner.await.unwrap();
                assert_eq!(waiting.await.unwrap(), 7);
            }));
        },
    );
}

#[test]
fn a_stuck_worker_gets_a_spare_when_no_descriptor_is_free() {
    in_child(
        "a_stuck_worker_gets_a_spare_when_no_descriptor_is_free",
        || {
            let rt = brigade::Builder::new()
                .worker_threads(1)
                .compensation_threshold(Some(Duration::from_millis(1)))
                .build()
                .expect("runtime");
            let open_after_build = open_descriptors();
            // A blocking call by mistake on the only worker, while no
            // descriptor is free: the spare that takes its place cannot
            // open its own stat file, and serves without it.
            let spare_descriptors = exhaust_descriptors();
            let (release, stuck) = std::sync::mpsc::channel::<()>();
            let blocked = rt.spawn(async move {
                let _ = stuck.recv_timeout(TIMEOUT);
            });
            let answer = rt.block_on(bounded(rt.spawn(async { 6 * 7 })));
            assert_eq!(answer.unwrap(), 42);
            assert!(rt.metrics().compensations() >= 1, "a spare served");
            release.send(()).unwrap();
            rt.block_on(bounded(blocked)).unwrap();
            drop(spare_descriptors);
            lift_soft_limit(libc::RLIMIT_NOFILE);
            // The spare thread holds no descriptor: its file never opened.
            assert_eq!(open_descriptors(), open_after_build);
            // And the runtime goes on with descriptors back.
            assert_eq!(rt.block_on(rt.spawn(async { 5 })).unwrap(), 5);
        },
    );
}
