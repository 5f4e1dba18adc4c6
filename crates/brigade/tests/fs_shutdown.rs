//! `brigade::fs` at the ends of a runtime: outside one (a panic that says
//! what to do), tasks doing file I/O at shutdown, an operation dropped
//! unrun, and writes still queued when the runtime goes, which run before
//! the blocking pool exits. Every wait is bounded.

mod common;
mod fs_support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::task::Poll;

use brigade::fs::{self, File};
use common::{DropFlag, expect_panic, local_block_on, poll_once, wait_until, with_timeout};
use fs_support::{TempDir, occupy_the_blocking_thread, one_blocking_thread, pattern};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

#[test]
fn outside_a_runtime_it_panics_saying_so() {
    let dir = TempDir::new("outside");
    let path = dir.join("f");
    std::fs::write(&path, "x").unwrap();
    let message = expect_panic(|| local_block_on(fs::read(&path)));
    assert!(
        message.contains("outside of a brigade runtime"),
        "{message}"
    );
    assert!(message.contains("brigade::fs::read"), "{message}");

    // A file made outside one works once inside, and panics outside.
    let mut file = File::from_std(std::fs::File::open(&path).unwrap());
    let message = expect_panic(|| local_block_on(file.read(&mut [0u8; 1])));
    assert!(
        message.contains("outside of a brigade runtime"),
        "{message}"
    );
}

/// Tasks in the middle of file I/O when the runtime shuts down are
/// dropped, and the shutdown completes: queued blocking calls are dropped,
/// running ones are short.
#[test]
fn tasks_using_fs_end_at_shutdown() {
    with_timeout(120, || {
        let dir = Arc::new(TempDir::new("shutdown"));
        let rt = brigade::Builder::new().worker_threads(2).build().unwrap();
        let progress = Arc::new(AtomicUsize::new(0));
        let dropped: Vec<Arc<AtomicBool>> = (0..6).map(|_| Arc::default()).collect();
        for (n, flag) in dropped.iter().enumerate() {
            let (dir, progress) = (dir.clone(), progress.clone());
            let flag = DropFlag(flag.clone());
            rt.spawn(async move {
                let _flag = flag;
                let path = dir.join(&format!("task-{n}"));
                let mut file = File::create(&path).await.unwrap();
                let chunk = pattern(64 * 1024);
                loop {
                    fs::write(&path, &chunk[..4096]).await.unwrap();
                    assert_eq!(fs::read(&path).await.unwrap().len(), 4096);
                    file.write_all(&chunk).await.unwrap();
                    file.flush().await.unwrap();
                    progress.fetch_add(1, Ordering::SeqCst);
                }
            });
        }
        wait_until("every task did file I/O", || {
            progress.load(Ordering::SeqCst) >= 12
        });
        rt.shutdown_timeout(common::TIMEOUT);
        for flag in &dropped {
            assert!(flag.load(Ordering::SeqCst), "a task outlived the runtime");
        }
    });
}

/// A read still queued when its runtime shuts down is dropped unrun: the
/// next operation reports it, once, and the file works from another
/// runtime.
#[test]
fn an_operation_dropped_at_shutdown_is_reported_once() {
    with_timeout(common::TIMEOUT_SECS, || {
        let dir = TempDir::new("dropped");
        let path = dir.join("f");
        std::fs::write(&path, "abc").unwrap();
        let rt = one_blocking_thread();
        let mut file = rt.block_on(File::open(&path)).unwrap();
        let release = rt.block_on(async {
            let release = occupy_the_blocking_thread().await;
            let mut buf = [0u8; 3];
            let mut read = std::pin::pin!(file.read(&mut buf));
            assert!(matches!(poll_once(&mut read), Poll::Pending));
            release
        });
        // The pool drops the queued read; its one thread is still held,
        // and is left to finish on its own.
        rt.shutdown_timeout(std::time::Duration::from_millis(50));
        drop(release);

        let rt = brigade::Runtime::new().unwrap();
        rt.block_on(async {
            let mut buf = [0u8; 3];
            let lost = file.read(&mut buf).await.unwrap_err();
            assert!(lost.to_string().contains("did not complete"), "{lost}");
            let mut contents = String::new();
            file.read_to_string(&mut contents).await.unwrap();
            assert_eq!(contents, "abc");
        });
    });
}

/// Queues three closures behind a blocker on `rt`'s only blocking thread
/// (`one_blocking_thread`): a `File` write (the file dropped meanwhile),
/// an `fs::write`, and a plain `spawn_blocking` closure, whose handle is
/// returned with the blocker's release.
fn queue_writes_behind_a_blocker(
    rt: &brigade::Runtime,
    dir: &TempDir,
) -> (std::sync::mpsc::Sender<()>, brigade::JoinHandle<()>) {
    let mut file = rt.block_on(File::create(dir.join("file"))).unwrap();
    rt.block_on(async {
        let release = occupy_the_blocking_thread().await;
        // Returns at once: the bytes were taken, their write is queued.
        file.write_all(b"by File").await.unwrap();
        drop(file);
        let mut write = std::pin::pin!(fs::write(dir.join("write"), "by fs::write"));
        assert!(poll_once(&mut write).is_pending());
        let plain = brigade::spawn_blocking(|| {});
        let queued = brigade::runtime::Handle::current()
            .metrics()
            .blocking_queue_depth();
        assert_eq!(queued, 3, "the three closures wait behind the blocker");
        (release, plain)
    })
}

fn assert_both_writes_landed(dir: &TempDir) {
    assert_eq!(std::fs::read(dir.join("file")).unwrap(), b"by File");
    assert_eq!(std::fs::read(dir.join("write")).unwrap(), b"by fs::write");
}

/// Writes still queued when the runtime is dropped are run before the
/// drop returns, not dropped (tokio's "mandatory" blocking tasks); the
/// plain closure queued with them is still dropped unrun.
#[test]
fn writes_queued_when_the_runtime_drops_are_run_first() {
    with_timeout(2 * common::TIMEOUT_SECS, || {
        let dir = TempDir::new("mandatory-drop");
        let rt = one_blocking_thread();
        let metrics = rt.metrics();
        let (release, plain) = queue_writes_behind_a_blocker(&rt, &dir);
        // The blocker goes once the shutdown has dropped the plain closure
        // and kept the writes, so they are queued, not running, then.
        let releaser = std::thread::spawn(move || {
            let _release = release;
            wait_until("the shutdown kept the two writes queued", || {
                metrics.blocking_queue_depth() == 2
            });
        });
        drop(rt);
        assert_both_writes_landed(&dir);
        releaser.join().unwrap();
        assert!(local_block_on(plain).unwrap_err().is_cancelled());
    });
}

/// After `shutdown_background`, the blocking thread runs the queued writes
/// once it is free, though nobody waits for it.
#[test]
fn writes_queued_at_shutdown_background_are_run_by_the_pool() {
    with_timeout(2 * common::TIMEOUT_SECS, || {
        let dir = TempDir::new("mandatory-background");
        let rt = one_blocking_thread();
        let (release, plain) = queue_writes_behind_a_blocker(&rt, &dir);
        rt.shutdown_background();
        assert!(local_block_on(plain).unwrap_err().is_cancelled());
        // Nothing ran yet: the only blocking thread is still held.
        assert_eq!(std::fs::read(dir.join("file")).unwrap(), b"");
        assert!(!dir.join("write").exists());
        drop(release);
        wait_until("the queued writes reached their files", || {
            std::fs::read(dir.join("file")).is_ok_and(|bytes| bytes == b"by File")
                && std::fs::read(dir.join("write")).is_ok_and(|bytes| bytes == b"by fs::write")
        });
        assert_both_writes_landed(&dir);
    });
}
