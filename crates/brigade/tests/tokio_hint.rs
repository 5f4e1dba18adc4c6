//! A task that calls tokio with no tokio runtime around it panics with
//! tokio's message; its `JoinError` says, on one more line, which brigade
//! module replaces the call, and a `tracing` warning (target
//! `brigade::tokio_hint`) says it when the task panics, detached or not.
//! Other panics get neither. Every wait is bounded; nothing here measures
//! time. The one test that installs a `tracing` subscriber installs it
//! for the whole binary; the others do not look at events.

mod common;

use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use brigade::{Builder, Runtime};
use common::{TIMEOUT_SECS, panic_message, wait_until, with_timeout};
use tracing::field::{Field, Visit};
use tracing_subscriber::layer::SubscriberExt;

/// tokio's message when there is no tokio runtime at all.
const NO_TOKIO: &str =
    "there is no reactor running, must be called from the context of a Tokio 1.x runtime";

/// A runtime whose threads are in no tokio runtime's context, with or
/// without feature `tokio-compat`.
fn runtime() -> Runtime {
    let mut builder = Builder::new_multi_thread();
    builder.worker_threads(1);
    #[cfg(feature = "tokio-compat")]
    builder.tokio_compat(false);
    builder.build().unwrap()
}

#[test]
fn tokio_spawn_in_a_task_names_brigade_spawn_in_the_join_error() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = runtime();
        let error = rt
            .block_on(rt.spawn(async { drop(tokio::spawn(async {})) }))
            .unwrap_err();
        let shown = error.to_string();
        let (first, hint) = shown.split_once('\n').expect("a hint line");
        assert!(first.contains(NO_TOKIO), "{shown}");
        assert!(hint.starts_with("hint: "), "{shown}");
        assert!(hint.contains("brigade::spawn"), "{shown}");
        assert!(hint.contains("`tokio-compat`"), "{shown}");
        assert!(!hint.contains('\n'), "one line: {shown}");
        // The payload is tokio's own, untouched.
        assert_eq!(panic_message(&*error.into_panic()), NO_TOKIO);

        // A `spawn_blocking` closure gets it too, and so does the
        // `io::Error` a `?` turns the error into.
        let error = rt
            .block_on(rt.spawn_blocking(|| drop(tokio::spawn(async {}))))
            .unwrap_err();
        let io_error = std::io::Error::from(error);
        assert!(io_error.to_string().contains("hint: "), "{io_error}");
    });
}

#[test]
fn a_tokio_runtime_without_timers_names_brigade_time() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = runtime();
        // A tokio runtime with no driver enabled, entered by the task.
        let tokio_rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let tokio_handle = tokio_rt.handle().clone();
        let error = rt
            .block_on(rt.spawn(async move {
                let _entered = tokio_handle.enter();
                drop(tokio::time::sleep(Duration::from_millis(1)));
            }))
            .unwrap_err();
        let shown = error.to_string();
        assert!(shown.contains("timers are disabled"), "{shown}");
        let hint = shown.lines().nth(1).expect("a hint line");
        assert!(hint.contains("brigade::time"), "{shown}");
        // The message says timers: the hint names no other module.
        assert!(!hint.contains("brigade::net"), "{shown}");
        assert!(!hint.contains("brigade::spawn"), "{shown}");
    });
}

#[test]
fn other_panics_get_no_hint() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = runtime();
        let error = rt
            .block_on(rt.spawn(async { panic!("a Tokio 1.x fan's own bug") }))
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            format!(
                "task {} panicked with message \"a Tokio 1.x fan's own bug\"",
                error.id()
            )
        );
    });
}

/// The fields of every `brigade::tokio_hint` event, one string each.
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
        if event.metadata().target() == "brigade::tokio_hint" {
            let mut fields = Fields(String::new());
            event.record(&mut fields);
            self.0.lock().unwrap().push(fields.0);
        }
    }
}

impl Events {
    /// The events about task `id`.
    fn of_task(&self, id: brigade::task::Id) -> Vec<String> {
        let wanted = format!("task={id} ");
        let events = self.0.lock().unwrap();
        events
            .iter()
            .filter(|event| event.contains(&wanted))
            .cloned()
            .collect()
    }
}

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
fn a_detached_task_s_tokio_panic_is_warned_with_the_hint() {
    let events = events();
    with_timeout(TIMEOUT_SECS, move || {
        let rt = runtime();
        // Detached: its `JoinError` is never seen; the warning is.
        #[rustfmt::skip]
        let (detached, line) = (rt.spawn(async { drop(tokio::spawn(async {})) }).id(), line!());
        wait_until("the detached task's warning", || {
            !events.of_task(detached).is_empty()
        });
        let warned = events.of_task(detached);
        assert_eq!(warned.len(), 1, "{warned:?}");
        assert!(warned[0].contains("hint=hint: "), "{warned:?}");
        assert!(warned[0].contains("brigade::spawn"), "{warned:?}");
        let site = format!("tests/tokio_hint.rs:{line}");
        assert!(warned[0].contains(&site), "no {site} in {warned:?}");

        // A panic of its own: the harness warns before the handle
        // resolves, so by then there would be one.
        let other = rt.spawn(async { panic!("boom") });
        let id = other.id();
        assert!(rt.block_on(other).unwrap_err().is_panic());
        assert!(events.of_task(id).is_empty(), "{:?}", events.of_task(id));
    });
}

#[test]
fn a_named_task_s_warning_carries_its_name() {
    let events = events();
    with_timeout(TIMEOUT_SECS, move || {
        let rt = runtime();
        let named = brigade::task::Builder::new()
            .name("importer")
            .spawn_on(async { drop(tokio::spawn(async {})) }, rt.handle());
        let id = named.id();
        assert!(rt.block_on(named).unwrap_err().is_panic());
        let warned = events.of_task(id);
        assert_eq!(warned.len(), 1, "{warned:?}");
        assert!(warned[0].contains("task.name=\"importer\""), "{warned:?}");
        // An unnamed task's warning has no name field.
        let unnamed = rt.spawn(async { drop(tokio::spawn(async {})) });
        let id = unnamed.id();
        assert!(rt.block_on(unnamed).unwrap_err().is_panic());
        let warned = events.of_task(id);
        assert!(!warned[0].contains("task.name"), "{warned:?}");
    });
}
