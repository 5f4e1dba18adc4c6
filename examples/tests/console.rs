//! tokio-console sees brigade's tasks: a real `console-subscriber` server in
//! this process, a real `console-api` client connected to it over gRPC, and
//! brigade tasks named with `task::Builder::name`, found by the client by
//! name with their kind, spawn location, polls and wakes, and a
//! `time::sleep` and a `TcpListener` found as resources.
//!
//! Run with `cargo test -p brigade-examples --features console --test
//! console` (the workspace's .cargo/config.toml sets the cfg
//! `console-subscriber` asks for).

use std::collections::HashMap;
use std::time::{Duration, Instant};

use brigade::task::Builder;
use console_api::field;
use console_api::instrument::InstrumentRequest;
use console_api::instrument::instrument_client::InstrumentClient;
use tracing_subscriber::prelude::*;

/// Every wait in this test ends by then, found or not.
const DEADLINE: Duration = Duration::from_secs(30);
/// The probe task yields this many times before it waits: as many polls
/// again, plus the first.
const PROBE_YIELDS: u64 = 5;

/// What the client has learnt, by task span id.
#[derive(Default)]
struct Seen {
    names: HashMap<u64, String>,
    kinds: HashMap<u64, String>,
    files: HashMap<u64, String>,
    polls: HashMap<u64, u64>,
    wakes: HashMap<u64, u64>,
    /// Waker clones less drops: the wakers the task's future holds.
    live_wakers: HashMap<u64, i64>,
    /// Resources by concrete type.
    resources: HashMap<String, usize>,
}

impl Seen {
    fn task_named(&self, name: &str) -> Option<u64> {
        self.names
            .iter()
            .find(|(_, named)| named.as_str() == name)
            .map(|(id, _)| *id)
    }

    fn polls_of(&self, name: &str) -> u64 {
        self.task_named(name)
            .and_then(|id| self.polls.get(&id).copied())
            .unwrap_or(0)
    }

    fn record(&mut self, update: console_api::instrument::Update) {
        if let Some(tasks) = update.task_update {
            for task in tasks.new_tasks {
                let Some(id) = task.id.map(|id| id.id) else {
                    continue;
                };
                for field in &task.fields {
                    let (Some(field::Name::StrName(name)), Some(value)) =
                        (&field.name, &field.value)
                    else {
                        continue;
                    };
                    let value = match value {
                        field::Value::DebugVal(text) | field::Value::StrVal(text) => text.clone(),
                        _ => continue,
                    };
                    match name.as_str() {
                        "task.name" => self.names.insert(id, value),
                        "kind" => self.kinds.insert(id, value),
                        _ => None,
                    };
                }
                if let Some(file) = task.location.and_then(|location| location.file) {
                    self.files.insert(id, file);
                }
            }
            for (id, stats) in tasks.stats_update {
                let polls = stats.poll_stats.map_or(0, |poll| poll.polls);
                self.polls.insert(id, polls);
                self.wakes.insert(id, stats.wakes);
                let live = stats.waker_clones as i64 - stats.waker_drops as i64;
                self.live_wakers.insert(id, live);
            }
        }
        if let Some(resources) = update.resource_update {
            for resource in resources.new_resources {
                *self.resources.entry(resource.concrete_type).or_default() += 1;
            }
        }
    }
}

fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a free port");
    listener.local_addr().expect("its address").port()
}

#[test]
fn the_console_client_finds_named_tasks_with_their_polls_and_a_sleep() {
    let port = free_port();
    let layer = console_subscriber::ConsoleLayer::builder()
        .server_addr(([127, 0, 0, 1], port))
        .publish_interval(Duration::from_millis(50))
        .spawn();
    tracing_subscriber::registry().with(layer).init();

    let runtime = brigade::Builder::new()
        .worker_threads(2)
        .build()
        .expect("a runtime");
    let (release, released) = tokio::sync::oneshot::channel::<()>();
    let probe = Builder::new().name("console-probe").spawn_on(
        async move {
            for _ in 0..PROBE_YIELDS {
                brigade::yield_now().await;
            }
            released.await.ok();
        },
        runtime.handle(),
    );
    let sleeper = Builder::new().name("console-sleeper").spawn_on(
        async {
            // A socket, a console resource too, kept while it sleeps.
            let _listener = brigade::net::TcpListener::bind("127.0.0.1:0").await;
            brigade::time::sleep(Duration::from_secs(3600)).await
        },
        runtime.handle(),
    );

    let client_runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("the client's runtime");
    let seen = client_runtime.block_on(async {
        let started = Instant::now();
        let mut client = loop {
            match InstrumentClient::connect(format!("http://127.0.0.1:{port}")).await {
                Ok(client) => break client,
                Err(error) if started.elapsed() < DEADLINE => {
                    let _ = error;
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                Err(error) => panic!("the console server never accepted: {error}"),
            }
        };
        let mut updates = client
            .watch_updates(InstrumentRequest {})
            .await
            .expect("watch_updates")
            .into_inner();
        let mut seen = Seen::default();
        let found = |seen: &Seen| {
            seen.polls_of("console-probe") > PROBE_YIELDS
                && seen.task_named("console-sleeper").is_some()
                && seen.resources.contains_key("Sleep")
                && seen.resources.contains_key("TcpListener")
        };
        while !found(&seen) {
            let left = DEADLINE.saturating_sub(started.elapsed());
            match tokio::time::timeout(left, updates.message()).await {
                Ok(Ok(Some(update))) => seen.record(update),
                Ok(Ok(None)) => panic!("the console server closed the stream"),
                Ok(Err(status)) => panic!("the console stream failed: {status}"),
                Err(_) => panic!(
                    "not found within {DEADLINE:?}: names {:?}, polls {:?}, resources {:?}",
                    seen.names, seen.polls, seen.resources
                ),
            }
        }
        seen
    });

    let probe_id = seen.task_named("console-probe").expect("found above");
    assert_eq!(seen.kinds.get(&probe_id).map(String::as_str), Some("task"));
    let file = seen.files.get(&probe_id).expect("the spawn location");
    assert!(file.ends_with("console.rs"), "spawned at {file}");
    // Each yield wakes the task once.
    assert!(
        seen.wakes.get(&probe_id).copied().unwrap_or(0) >= PROBE_YIELDS,
        "wakes {:?}",
        seen.wakes.get(&probe_id)
    );

    // The sleeper waits on its timer, which holds its waker: the console
    // must not take it for a task with no waker (its "lost waker" warning).
    let sleeper_id = seen.task_named("console-sleeper").expect("found above");
    assert!(
        seen.live_wakers.get(&sleeper_id).copied().unwrap_or(0) >= 1,
        "the sleeper's wakers: {:?}",
        seen.live_wakers.get(&sleeper_id)
    );

    release.send(()).expect("the probe waits");
    runtime
        .block_on(probe)
        .expect("the probe ends once released");
    sleeper.abort();
    runtime.shutdown_timeout(DEADLINE);
}
