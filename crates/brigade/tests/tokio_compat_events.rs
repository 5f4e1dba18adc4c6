//! Feature `tokio-compat`: `tokio::fs` and `tokio::process` work inside
//! brigade tasks and `tokio::spawn`ed ones, and a `tracing` event says,
//! once per runtime, that a `tokio::spawn`ed task landed on the compat
//! threads. Its own test binary, because it installs a global `tracing`
//! subscriber (the event comes from a compat thread). Built only with the
//! feature:
//! `cargo test -p brigade --features tokio-compat --test tokio_compat_events`.
//! Every wait is bounded and nothing here measures time.

mod common;

use std::sync::{Arc, Mutex, OnceLock};

use brigade::{Builder, Runtime};
use common::{TIMEOUT_SECS, wait_until, with_timeout};
use tracing::field::{Field, Visit};
use tracing_subscriber::layer::SubscriberExt;

fn runtime(name: &str) -> Runtime {
    Builder::new()
        .worker_threads(2)
        .thread_name(name)
        .build()
        .unwrap()
}

/// The fields of every event with target `brigade::tokio_compat`.
#[derive(Clone, Default)]
struct Events(Arc<Mutex<Vec<String>>>);

struct Fields(String);

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.push_str(&format!("{}={:?} ", field.name(), value));
    }
}

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Events {
    fn on_event(&self, event: &tracing::Event<'_>, _: tracing_subscriber::layer::Context<'_, S>) {
        if event.metadata().target() == "brigade::tokio_compat" {
            let mut fields = Fields(String::new());
            event.record(&mut fields);
            self.0.lock().unwrap().push(fields.0);
        }
    }
}

impl Events {
    /// How many events name the runtime `rt` (by its `Handle::id`).
    fn of_runtime(&self, rt: &Runtime) -> usize {
        let wanted = format!("runtime={} ", rt.handle().id());
        let events = self.0.lock().unwrap();
        events
            .iter()
            .filter(|event| event.contains(&wanted))
            .count()
    }
}

/// The events of this test binary, collected from the first call on.
fn events() -> Events {
    static EVENTS: OnceLock<Events> = OnceLock::new();
    EVENTS
        .get_or_init(|| {
            let events = Events::default();
            tracing::subscriber::set_global_default(
                tracing_subscriber::registry().with(events.clone()),
            )
            .expect("install the capturing subscriber");
            events
        })
        .clone()
}

#[test]
fn the_first_tokio_spawn_is_reported_once() {
    let events = events();
    with_timeout(TIMEOUT_SECS, move || {
        let rt = runtime("first-spawn");
        // tokio sockets and timers in brigade tasks are not tokio tasks.
        rt.block_on(async { tokio::time::sleep(std::time::Duration::from_millis(1)).await });
        assert_eq!(events.of_runtime(&rt), 0);
        let pending =
            rt.block_on(async { tokio::spawn(std::future::pending::<()>()).abort_handle() });
        wait_until("the first tokio::spawn is reported", || {
            events.of_runtime(&rt) == 1
        });
        // More tokio tasks, and the compat thread parks again after them.
        let parks = rt.metrics().tokio_compat().unwrap().total_park_count();
        rt.block_on(async {
            for _ in 0..10 {
                tokio::spawn(async {}).await.unwrap();
            }
        });
        wait_until("the compat thread parks again", || {
            rt.metrics().tokio_compat().unwrap().total_park_count() > parks
        });
        assert_eq!(events.of_runtime(&rt), 1);
        pending.abort();
    });
}

#[test]
fn tokio_fs_works_in_brigade_tasks_and_tokio_tasks() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = runtime("fs");
        let dir = std::env::temp_dir().join(format!("brigade-compat-fs-{}", std::process::id()));
        let read_back = rt.block_on(rt.spawn(async move {
            tokio::fs::create_dir_all(&dir).await.unwrap();
            let file = dir.join("greeting");
            tokio::fs::write(&file, b"hello").await.unwrap();
            let in_tokio_task = {
                let file = file.clone();
                tokio::spawn(async move { tokio::fs::read(&file).await.unwrap() })
                    .await
                    .unwrap()
            };
            let in_brigade_task = tokio::fs::read_to_string(&file).await.unwrap();
            tokio::fs::remove_dir_all(&dir).await.unwrap();
            (in_tokio_task, in_brigade_task)
        }));
        let (in_tokio_task, in_brigade_task) = read_back.unwrap();
        assert_eq!(in_tokio_task, b"hello");
        assert_eq!(in_brigade_task, "hello");
    });
}

#[test]
fn tokio_process_works_in_brigade_tasks_and_tokio_tasks() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = runtime("process");
        let (output, status) = rt
            .block_on(rt.spawn(async {
                let output = tokio::process::Command::new("sh")
                    .args(["-c", "echo hello from a child"])
                    .output()
                    .await
                    .unwrap();
                // A child waited for from a tokio task, reaped by tokio's
                // signal driver.
                let status = tokio::spawn(async {
                    let mut child = tokio::process::Command::new("sh")
                        .args(["-c", "exit 3"])
                        .spawn()
                        .unwrap();
                    child.wait().await.unwrap()
                })
                .await
                .unwrap();
                (output, status)
            }))
            .unwrap();
        assert!(output.status.success());
        assert_eq!(output.stdout, b"hello from a child\n");
        assert_eq!(status.code(), Some(3));
    });
}
