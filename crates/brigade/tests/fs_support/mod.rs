//! What the `fs` tests share: a temporary directory per test, a byte
//! pattern, and a runtime whose one blocking thread a test can occupy.

#![allow(dead_code)] // Each test file uses part of it.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A fresh directory under the temporary directory, removed on drop.
pub(crate) struct TempDir(pub(crate) PathBuf);

impl TempDir {
    pub(crate) fn new(test: &str) -> TempDir {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let unique = format!(
            "brigade-fs-{test}-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let path = std::env::temp_dir().join(unique);
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).expect("create the test directory");
        TempDir(path)
    }

    pub(crate) fn join(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Bytes that differ from their neighbours, so a lost or reordered chunk
/// shows.
pub(crate) fn pattern(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i % 251) as u8).collect()
}

/// Occupies the blocking pool's only thread (a runtime built with
/// `max_blocking_threads(1)`) until the sender is dropped, so the next
/// blocking call waits in the queue: a file operation then stays in
/// flight, whatever the machine's speed.
pub(crate) async fn occupy_the_blocking_thread() -> std::sync::mpsc::Sender<()> {
    let (release, released) = std::sync::mpsc::channel::<()>();
    let (started, running) = tokio::sync::oneshot::channel();
    brigade::spawn_blocking(move || {
        let _ = started.send(());
        let _ = released.recv();
    });
    running.await.expect("the blocking closure runs");
    release
}

pub(crate) fn one_blocking_thread() -> brigade::Runtime {
    brigade::Builder::new_current_thread()
        .max_blocking_threads(1)
        .build()
        .expect("runtime")
}
