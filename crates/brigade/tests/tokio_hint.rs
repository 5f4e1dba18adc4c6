//! A task that calls tokio code needing a tokio runtime panics with
//! tokio's message; its `JoinError` and a `tracing` event add the line
//! that says what to do instead. Other panics get no such line.

mod common;

use std::sync::{Arc, Mutex, OnceLock};

use brigade::Runtime;
use common::{TIMEOUT_SECS, with_timeout};
use tracing::field::{Field, Visit};
use tracing_subscriber::layer::SubscriberExt;

/// A runtime in which tokio code finds no tokio runtime: without
/// `tokio-compat` (off in this build, or turned off here).
fn runtime_without_tokio() -> Runtime {
    let mut builder = brigade::Builder::new();
    builder.worker_threads(1);
    #[cfg(feature = "tokio-compat")]
    builder.tokio_compat(false);
    builder.build().unwrap()
}

/// The messages of `brigade::task` events.
#[derive(Clone, Default)]
struct TaskEvents(Arc<Mutex<Vec<String>>>);

struct Message(String);

impl Visit for Message {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            self.0 = format!("{value:?}");
        }
    }
}

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for TaskEvents {
    fn on_event(&self, event: &tracing::Event<'_>, _: tracing_subscriber::layer::Context<'_, S>) {
        if event.metadata().target() == "brigade::task" {
            let mut message = Message(String::new());
            event.record(&mut message);
            self.0.lock().unwrap().push(message.0);
        }
    }
}

/// The events of this test binary (the workers' threads log them), from
/// the first call on.
fn task_events() -> TaskEvents {
    static EVENTS: OnceLock<TaskEvents> = OnceLock::new();
    EVENTS
        .get_or_init(|| {
            let events = TaskEvents::default();
            tracing::subscriber::set_global_default(
                tracing_subscriber::registry().with(events.clone()),
            )
            .expect("install the capturing subscriber");
            events
        })
        .clone()
}

#[test]
fn tokio_code_outside_a_tokio_runtime_gets_the_hint() {
    let events = task_events();
    with_timeout(TIMEOUT_SECS, move || {
        let rt = runtime_without_tokio();
        let error = rt
            .block_on(rt.spawn(async {
                // What `tokio::time::sleep`, `tokio::net` and `tokio::spawn`
                // do first.
                tokio::runtime::Handle::current();
            }))
            .unwrap_err();
        assert!(error.is_panic());
        let display = error.to_string();
        assert!(display.contains("Tokio 1.x runtime"), "{display}");
        let hint = display.lines().nth(1).expect("a second line");
        assert!(hint.starts_with("hint: "), "{display}");
        assert!(hint.contains("tokio::time -> brigade::time"), "{hint}");
        assert!(hint.contains("tokio::fs -> brigade::fs"), "{hint}");
        assert!(
            hint.contains("tokio-compat") || hint.contains("tokio_compat"),
            "{hint}"
        );
        drop(rt);
        // Dropping the runtime joined its worker: the event is in.
        let events = events.0.lock().unwrap();
        let hinted: Vec<_> = events.iter().filter(|event| event.contains(hint)).collect();
        assert_eq!(hinted.len(), 1, "one event for the one panic: {events:?}");
    });
}

#[test]
fn other_panics_get_no_hint() {
    let events = task_events();
    with_timeout(TIMEOUT_SECS, move || {
        let rt = runtime_without_tokio();
        let error = rt
            .block_on(rt.spawn(async { panic!("an ordinary panic") }))
            .unwrap_err();
        assert_eq!(error.to_string().lines().count(), 1, "{error}");
        drop(rt);
        let events = events.0.lock().unwrap();
        assert!(
            !events.iter().any(|event| event.contains("ordinary")),
            "{events:?}"
        );
    });
}
