//! `brigade::io::unix::AsyncFd` on an `eventfd`: a write wakes a reader,
//! a cleared guard waits for the next write, write readiness, and
//! deregistration by `into_inner` and drop. Every wait is bounded.
#![cfg(target_os = "linux")]

mod common;

use std::io;
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};
use std::time::Duration;

use brigade::io::unix::AsyncFd;
use brigade::io::{Interest, Ready};
use brigade::time::timeout;
use common::bounded;

/// A non-blocking `eventfd` with a zero count.
fn eventfd() -> OwnedFd {
    // SAFETY: `eventfd` takes no pointers; it returns a new descriptor or -1.
    let fd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
    assert!(fd >= 0, "eventfd: {}", io::Error::last_os_error());
    // SAFETY: `fd` was just created and is owned by nobody else.
    unsafe { OwnedFd::from_raw_fd(fd) }
}

/// Adds `count` to the eventfd's counter.
fn add(fd: &impl AsRawFd, count: u64) -> io::Result<()> {
    let bytes = count.to_ne_bytes();
    // SAFETY: `bytes` is a live 8-byte buffer; the descriptor is open.
    let written = unsafe { libc::write(fd.as_raw_fd(), bytes.as_ptr().cast(), 8) };
    if written < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Reads and resets the counter; `WouldBlock` while it is zero.
fn take(fd: &impl AsRawFd) -> io::Result<u64> {
    let mut bytes = [0u8; 8];
    // SAFETY: `bytes` is a live 8-byte buffer; the descriptor is open.
    let read = unsafe { libc::read(fd.as_raw_fd(), bytes.as_mut_ptr().cast(), 8) };
    if read < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(u64::from_ne_bytes(bytes))
}

#[brigade::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_wakes_the_reader_and_a_cleared_guard_waits_for_the_next() {
    bounded(async {
        let fd = std::sync::Arc::new(AsyncFd::new(eventfd()).unwrap());
        let (sent, mut got_first) = tokio::sync::mpsc::channel::<()>(1);
        let reader = {
            let fd = fd.clone();
            brigade::spawn(async move {
                let mut counts = Vec::new();
                while counts.len() < 2 {
                    let mut guard = fd.readable().await.unwrap();
                    assert!(guard.ready().is_readable());
                    match guard.try_io(|fd| take(fd.get_ref())) {
                        Ok(count) => {
                            counts.push(count.unwrap());
                            sent.send(()).await.unwrap();
                        }
                        Err(_would_block) => continue,
                    }
                }
                counts
            })
        };
        add(fd.get_ref(), 3).unwrap();
        got_first.recv().await.unwrap();
        add(fd.get_ref(), 4).unwrap();
        assert_eq!(reader.await.unwrap(), vec![3, 4]);
    })
    .await;
}

#[brigade::test]
async fn clear_ready_makes_the_next_wait_wait() {
    bounded(async {
        let fd = AsyncFd::new(eventfd()).unwrap();
        add(fd.get_ref(), 1).unwrap();
        let mut guard = fd.readable().await.unwrap();
        assert_eq!(take(guard.get_inner()).unwrap(), 1);
        // Not cleared: the next wait returns at once, with nothing to read.
        guard.retain_ready();
        let mut guard = fd.readable().await.unwrap();
        let blocked = take(guard.get_inner()).unwrap_err();
        assert_eq!(blocked.kind(), io::ErrorKind::WouldBlock);
        guard.clear_ready();
        assert_eq!(guard.ready(), Ready::EMPTY);
        // Cleared: the next wait waits until the next write.
        let early = timeout(Duration::from_millis(50), fd.readable()).await;
        assert!(early.is_err(), "readable() returned with nothing written");
        add(fd.get_ref(), 2).unwrap();
        let mut guard = fd.readable().await.unwrap();
        assert_eq!(guard.try_io(|fd| take(fd.get_ref())).unwrap().unwrap(), 2);
        // try_io's WouldBlock clears too.
        assert!(guard.try_io(|fd| take(fd.get_ref())).is_err());
        assert_eq!(
            fd.try_io(Interest::READABLE, take).unwrap_err().kind(),
            io::ErrorKind::WouldBlock
        );
    })
    .await;
}

#[brigade::test]
async fn writable_guard_and_clear_ready_matching() {
    bounded(async {
        let mut fd = AsyncFd::new(eventfd()).unwrap();
        let mut guard = fd.writable_mut().await.unwrap();
        assert!(guard.ready().is_writable());
        guard.try_io(|fd| add(fd.get_ref(), 5)).unwrap().unwrap();
        guard.retain_ready();
        // The write's read readiness reaches the reactor: wait for it.
        fd.readable().await.unwrap().retain_ready();
        let mut guard = fd
            .ready(Interest::READABLE | Interest::WRITABLE)
            .await
            .unwrap();
        let ready = guard.ready();
        assert!(ready.is_readable() && ready.is_writable(), "{ready:?}");
        assert_eq!(take(guard.get_inner()).unwrap(), 5);
        let blocked = take(guard.get_inner()).unwrap_err();
        assert_eq!(blocked.kind(), io::ErrorKind::WouldBlock);
        // Only the read blocked: clear the read readiness, keep the write's.
        guard.clear_ready_matching(Ready::READABLE);
        assert!(!guard.ready().is_readable() && guard.ready().is_writable());
        let early = timeout(Duration::from_millis(50), fd.readable()).await;
        assert!(early.is_err(), "read readiness was not cleared");
        let count = fd
            .async_io_mut(Interest::WRITABLE, |fd| add(fd, 1).map(|()| 1))
            .await
            .unwrap();
        assert_eq!(count, 1);
        let guard = std::future::poll_fn(|cx| fd.poll_read_ready(cx))
            .await
            .unwrap();
        assert_eq!(take(guard.get_inner()).unwrap(), 1);
        drop(guard);
        add(fd.get_ref(), 2).unwrap();
        let mut guard = fd.readable_mut().await.unwrap();
        let count = guard.try_io(|fd| take(fd.get_mut())).unwrap();
        assert_eq!(count.unwrap(), 2);
    })
    .await;
}

#[brigade::test]
async fn into_inner_keeps_the_fd_open_and_drop_deregisters() {
    bounded(async {
        let fd = AsyncFd::new(eventfd()).unwrap();
        let raw = fd.as_raw_fd();
        let owned = fd.into_inner();
        assert_eq!(owned.as_raw_fd(), raw);
        add(&owned, 7).unwrap();
        // Deregistered: registering the same descriptor again works
        // (epoll refuses a second registration with EEXIST).
        let fd = AsyncFd::new(owned).unwrap();
        assert_eq!(fd.readable().await.unwrap().get_inner().as_raw_fd(), raw);
        assert_eq!(fd.async_io(Interest::READABLE, take).await.unwrap(), 7);
        // While registered, a second registration fails (EEXIST), and
        // try_new gives the object back.
        let owned = fd.into_inner();
        let first = AsyncFd::new(owned.as_fd()).unwrap();
        let (back, error) = AsyncFd::try_new(owned.as_fd()).unwrap_err().into_parts();
        assert_eq!(back.as_raw_fd(), raw);
        assert_eq!(error.kind(), io::ErrorKind::AlreadyExists);
        // Dropping the first (a borrowed descriptor: nothing is closed)
        // deregistered it, so it registers again.
        drop(first);
        let again = AsyncFd::new(owned.as_fd()).unwrap();
        add(again.get_ref(), 1).unwrap();
        assert_eq!(again.async_io(Interest::READABLE, take).await.unwrap(), 1);
    })
    .await;
}

#[test]
fn outside_a_runtime_it_panics_saying_so() {
    let panic = std::panic::catch_unwind(|| AsyncFd::new(eventfd())).unwrap_err();
    let message = panic
        .downcast_ref::<String>()
        .expect("a formatted panic message");
    assert!(message.contains("brigade runtime"), "{message}");
}
