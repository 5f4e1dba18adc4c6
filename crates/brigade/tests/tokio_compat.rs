//! Feature `tokio-compat`: tokio's timers, sockets, `spawn` and
//! `spawn_blocking` work inside brigade tasks, on every kind of brigade
//! thread, and the tokio runtime behind them stops with the brigade
//! runtime. Built only with the feature:
//! `cargo test -p brigade --features tokio-compat --test tokio_compat`.
//! Every wait is bounded and nothing here measures time.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use brigade::{Builder, Runtime};
use common::{DropFlag, TIMEOUT, TIMEOUT_SECS, wait_until, with_timeout};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

fn runtime() -> Runtime {
    Builder::new()
        .worker_threads(2)
        .thread_name("compat-test")
        .build()
        .unwrap()
}

/// Names of this process's threads (Linux: `/proc/self/task/*/comm`).
fn thread_names() -> Vec<String> {
    std::fs::read_dir("/proc/self/task")
        .map(|tasks| {
            tasks
                .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("comm")).ok())
                .map(|name| name.trim().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn tokio_timers_and_sockets_work_inside_brigade_tasks() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = runtime();
        let echoed = rt.block_on(async {
            let listener = brigade::net::TcpListener::bind("127.0.0.1:0")
                .await
                .unwrap();
            let addr = listener.local_addr().unwrap();
            // A brigade echo server...
            let server = brigade::spawn(async move {
                let (mut socket, _) = listener.accept().await.unwrap();
                let mut buffer = [0; 5];
                socket.read_exact(&mut buffer).await.unwrap();
                socket.write_all(&buffer).await.unwrap();
            });
            // ...and a tokio client, in a brigade task.
            let client = brigade::spawn(async move {
                tokio::time::sleep(Duration::from_millis(1)).await;
                let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
                stream.write_all(b"hello").await.unwrap();
                let mut reply = [0; 5];
                stream.read_exact(&mut reply).await.unwrap();
                reply
            });
            server.await.unwrap();
            client.await.unwrap()
        });
        assert_eq!(&echoed, b"hello");
    });
}

#[test]
fn tokio_spawn_runs_on_the_compat_thread_and_spawn_blocking_on_its_pool() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = runtime();
        let (spawned_on, blocking) = rt
            .block_on(rt.spawn(async {
                let spawned_on =
                    tokio::spawn(async { std::thread::current().name().map(str::to_owned) })
                        .await
                        .unwrap();
                let blocking = tokio::task::spawn_blocking(|| 6 * 7).await.unwrap();
                (spawned_on, blocking)
            }))
            .unwrap();
        assert_eq!(spawned_on.as_deref(), Some("compat-test-tokio"));
        assert_eq!(blocking, 42);
    });
}

#[test]
fn every_kind_of_brigade_thread_has_the_tokio_context() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = runtime();
        let on_worker =
            rt.block_on(rt.spawn(async { tokio::runtime::Handle::try_current().is_ok() }));
        let on_blocking =
            rt.block_on(rt.spawn_blocking(|| tokio::runtime::Handle::try_current().is_ok()));
        let in_block_on = rt.block_on(async { tokio::runtime::Handle::try_current().is_ok() });
        assert!(on_worker.unwrap() && on_blocking.unwrap() && in_block_on);
        // Outside the runtime, none.
        assert!(tokio::runtime::Handle::try_current().is_err());
    });
}

#[test]
fn the_tokio_runtime_stops_with_the_brigade_runtime() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = Builder::new()
            .worker_threads(1)
            .thread_name("compat-stop")
            .build()
            .unwrap();
        let dropped = Arc::new(AtomicBool::new(false));
        let guard = DropFlag(dropped.clone());
        rt.block_on(rt.spawn(async move {
            // A tokio task that never finishes on its own.
            drop(tokio::spawn(async move {
                let _guard = guard;
                std::future::pending::<()>().await;
            }));
        }))
        .unwrap();
        // Named by the thread itself once it runs (Linux keeps 15 bytes).
        wait_until("the tokio thread runs", || {
            thread_names().iter().any(|name| name == "compat-stop-tok")
        });
        rt.shutdown_timeout(TIMEOUT);
        wait_until("the tokio task is dropped", || {
            dropped.load(Ordering::SeqCst)
        });
        wait_until("the tokio thread exits", || {
            !thread_names().iter().any(|name| name == "compat-stop-tok")
        });
    });
}

#[test]
fn with_compat_off_tokio_code_panics_inside_the_task_only() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = Builder::new()
            .worker_threads(1)
            .tokio_compat(false)
            .build()
            .unwrap();
        let outcome = rt.block_on(rt.spawn(async {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }));
        assert!(outcome.unwrap_err().is_panic());
        // The runtime goes on.
        assert_eq!(rt.block_on(rt.spawn(async { 7 })).unwrap(), 7);
    });
}
