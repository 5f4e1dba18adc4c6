//! Feature `tokio-compat`: tokio's timers, sockets, `spawn` and
//! `spawn_blocking` work inside brigade tasks, on every kind of brigade
//! thread, and the tokio runtime behind them stops with the brigade
//! runtime. Its threads are brigade threads too: brigade's API works in
//! `tokio::spawn`ed tasks, their count is a setting, their names differ
//! from brigade's, their work shows in the metrics and a `tracing` event
//! says when a tokio task first lands there (`tokio_compat_events.rs`
//! covers the rest: `tokio::fs`, `tokio::process`, that event). Built only
//! with the feature:
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
    Builder::new().worker_threads(2).build().unwrap()
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
        // A compat thread: named for its role, not as brigade's workers.
        let spawned_on = spawned_on.unwrap();
        assert!(spawned_on.starts_with("brigade-tok-"), "{spawned_on}");
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
            .thread_name("stopper")
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
        // Named by the thread itself once it runs; `thread_name` names
        // every thread of the runtime, the compat threads too.
        let compat_name = rt
            .block_on(rt.spawn(async {
                tokio::spawn(async { std::thread::current().name().map(str::to_owned) })
                    .await
                    .unwrap()
            }))
            .unwrap();
        assert_eq!(compat_name.as_deref(), Some("stopper"));
        rt.shutdown_timeout(TIMEOUT);
        wait_until("the tokio task is dropped", || {
            dropped.load(Ordering::SeqCst)
        });
        wait_until("every thread of the runtime exits, tokio's too", || {
            !thread_names().iter().any(|name| name == "stopper")
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

#[test]
fn brigade_api_works_inside_tokio_spawned_tasks() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = runtime();
        let (handle_seen, spawned, slept) = rt.block_on(async {
            tokio::spawn(async {
                let handle_seen = brigade::Handle::try_current().is_ok();
                let spawned = brigade::spawn(async { 6 * 7 }).await.unwrap();
                brigade::time::sleep(Duration::from_millis(1)).await;
                let listener = brigade::net::TcpListener::bind("127.0.0.1:0")
                    .await
                    .unwrap();
                drop(listener);
                for _ in 0..1_000 {
                    brigade::yield_if_busy().await;
                }
                (handle_seen, spawned, true)
            })
            .await
            .unwrap()
        });
        assert!(handle_seen);
        assert_eq!(spawned, 42);
        assert!(slept);
    });
}

#[test]
fn yield_if_busy_in_a_tokio_task_gives_way_to_the_other_tokio_tasks() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = Builder::new()
            .worker_threads(1)
            .tokio_compat_threads(1)
            .thread_name("coop")
            .build()
            .unwrap();
        let iterations_before_the_other_ran = rt.block_on(async {
            tokio::spawn(async {
                let other_ran = Arc::new(AtomicBool::new(false));
                let flag = other_ran.clone();
                // Queued on the same, only compat thread: it runs only if
                // this task gives way.
                let other = tokio::spawn(async move { flag.store(true, Ordering::SeqCst) });
                let mut iterations = 0u32;
                while !other_ran.load(Ordering::SeqCst) && iterations < 100_000 {
                    iterations += 1;
                    brigade::yield_if_busy().await;
                }
                other.await.unwrap();
                iterations
            })
            .await
            .unwrap()
        });
        // tokio's budget is 128 units per poll.
        assert!(
            iterations_before_the_other_ran < 100_000,
            "the loop never gave way"
        );
    });
}

/// One budget per task, never two: in a `tokio::spawn`ed task brigade's
/// resources spend tokio's budget, and in a brigade task tokio's budget is
/// unconstrained (brigade, not tokio, polls the task), so only brigade's
/// is spent there. A unit spent through either API is gone from the one
/// budget that task has.
#[test]
fn a_task_spends_one_cooperative_budget_whichever_runtime_s_api_spends_it() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = runtime();
        let in_tokio_task = rt.block_on(async {
            tokio::spawn(async {
                // A fresh poll's budget: spend 127 units through tokio's API,
                // then see brigade's view of the same budget.
                for _ in 0..127 {
                    tokio::task::consume_budget().await;
                }
                let one_left = brigade::task::coop::has_budget_remaining();
                // brigade's API spends that last unit of tokio's budget.
                brigade::task::consume_budget().await;
                (one_left, tokio::task::coop::has_budget_remaining())
            })
            .await
            .unwrap()
        });
        assert_eq!(
            in_tokio_task,
            (true, false),
            "in a tokio task, brigade reads and spends tokio's budget"
        );
        let in_brigade_task = rt.block_on(async {
            brigade::spawn(async {
                for _ in 0..1_000 {
                    tokio::task::consume_budget().await;
                }
                // tokio's budget is unconstrained here; brigade's untouched.
                (
                    tokio::task::coop::has_budget_remaining(),
                    brigade::task::coop::has_budget_remaining(),
                )
            })
            .await
            .unwrap()
        });
        assert_eq!(in_brigade_task, (true, true));
    });
}

#[test]
fn a_brigade_timeout_fires_in_a_tokio_task_whose_future_spends_tokio_s_budget() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = runtime();
        let outcome = rt.block_on(async {
            tokio::spawn(async {
                // Spends the whole budget at every poll; gives up after 5 s
                // so that a timeout that never fires fails the test.
                let gives_up = std::time::Instant::now() + Duration::from_secs(5);
                let spender = std::future::poll_fn(|cx| {
                    if std::time::Instant::now() >= gives_up {
                        return std::task::Poll::Ready(());
                    }
                    while let std::task::Poll::Ready(restore) = tokio::task::coop::poll_proceed(cx)
                    {
                        restore.made_progress();
                    }
                    std::task::Poll::Pending
                });
                brigade::time::timeout(Duration::from_millis(20), spender).await
            })
            .await
            .unwrap()
        });
        assert!(outcome.is_err(), "the timeout did not fire");
    });
}

#[test]
fn the_compat_thread_count_is_a_setting_and_the_names_differ() {
    with_timeout(TIMEOUT_SECS, || {
        let error = Builder::new().tokio_compat_threads(0).build().unwrap_err();
        assert!(
            error.to_string().contains("tokio_compat_threads"),
            "{error}"
        );
        let rt = Builder::new()
            .worker_threads(1)
            .tokio_compat_threads(3)
            .build()
            .unwrap();
        let compat = rt.metrics().tokio_compat().unwrap();
        assert_eq!(compat.num_threads(), 3);
        // Named for their role (`brigade-tok-N`), not as brigade's workers.
        let spawned_on = rt
            .block_on(rt.spawn(async {
                tokio::spawn(async { std::thread::current().name().map(str::to_owned) })
                    .await
                    .unwrap()
            }))
            .unwrap()
            .unwrap();
        assert!(
            ["brigade-tok-0", "brigade-tok-1", "brigade-tok-2"].contains(&spawned_on.as_str()),
            "{spawned_on}"
        );
        // (Other tests' runtimes have threads of these names too: this
        // runtime's are among them.)
        wait_until("three named compat threads run", || {
            let names = thread_names();
            ["brigade-tok-0", "brigade-tok-1", "brigade-tok-2"]
                .iter()
                .all(|wanted| names.iter().any(|name| name == wanted))
        });
    });
}

#[test]
fn the_compat_threads_work_shows_in_the_metrics() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = runtime();
        let compat = || rt.metrics().tokio_compat().unwrap();
        assert_eq!(compat().num_alive_tasks(), 0);
        let pending = rt.block_on(async {
            let pending = tokio::spawn(std::future::pending::<()>());
            // Some work there: a task that sleeps on a tokio timer.
            tokio::spawn(tokio::time::sleep(Duration::from_millis(1)))
                .await
                .unwrap();
            pending.abort_handle()
        });
        wait_until("the pending tokio task counts as alive", || {
            compat().num_alive_tasks() == 1
        });
        wait_until("the compat thread's busy time and parks show", || {
            compat().total_busy_duration() > Duration::ZERO && compat().total_park_count() > 0
        });
        pending.abort();
        wait_until("the aborted tokio task is gone", || {
            compat().num_alive_tasks() == 0
        });
        let off = Builder::new()
            .worker_threads(1)
            .tokio_compat(false)
            .build()
            .unwrap();
        assert!(off.metrics().tokio_compat().is_none());
    });
}
