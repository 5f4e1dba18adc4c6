//! The events a stuck worker produces: long-poll warnings while the stretch
//! runs (at the threshold, past 10× and 100× it) and when it ends, naming
//! the spawn site, and an info event for each compensation. Its own test
//! binary, because it installs a global `tracing` subscriber (the events
//! come from the runtime's monitor thread).

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{TIMEOUT_SECS, wait_until, with_timeout};
use tracing::field::{Field, Visit};
use tracing_subscriber::layer::SubscriberExt;

/// Collects `target level fields` of every event from brigade at info or above.
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
        let metadata = event.metadata();
        if metadata.target().starts_with("brigade") && *metadata.level() <= tracing::Level::INFO {
            let mut fields = Fields(format!("{} {} ", metadata.target(), metadata.level()));
            event.record(&mut fields);
            self.0.lock().unwrap().push(fields.0);
        }
    }
}

impl Events {
    fn matching(&self, pattern: &[&str]) -> Vec<String> {
        self.0
            .lock()
            .unwrap()
            .iter()
            .filter(|event| pattern.iter().all(|part| event.contains(part)))
            .cloned()
            .collect()
    }
}

#[test]
fn a_stuck_worker_is_reported_while_stuck_and_compensated() {
    let events = Events::default();
    tracing::subscriber::set_global_default(tracing_subscriber::registry().with(events.clone()))
        .expect("install the capturing subscriber");
    with_timeout(TIMEOUT_SECS, move || {
        let rt = brigade::Builder::new()
            .worker_threads(1)
            .long_poll_threshold(Some(Duration::from_millis(2)))
            .compensation_threshold(Some(Duration::from_millis(2)))
            .build()
            .unwrap();
        let (release, stuck) = std::sync::mpsc::channel::<()>();
        #[rustfmt::skip]
        let (blocker, line) = (rt.spawn(async move { stuck.recv_timeout(common::TIMEOUT).unwrap() }), line!());
        let site = format!("tests/compensation_events.rs:{line}");
        let running = ["brigade::long_poll WARN", "running=true", site.as_str()];
        wait_until("the stuck stretch is reported", || {
            !events.matching(&running).is_empty()
        });
        // Work waits: the monitor compensates, and says so.
        rt.block_on(rt.spawn(async {})).unwrap();
        let compensated = ["brigade::compensation INFO", "stuck_ms=", site.as_str()];
        wait_until("the compensation is reported", || {
            !events.matching(&compensated).is_empty()
        });
        // Past 10× and 100× the threshold (20 ms, 200 ms), while still stuck.
        wait_until("three reports while running", || {
            events.matching(&running).len() == 3
        });
        assert!(!blocker.is_finished());
        release.send(()).unwrap();
        rt.block_on(blocker).unwrap();
        let ended = ["brigade::long_poll WARN", "running=false", site.as_str()];
        wait_until("the end is reported", || events.matching(&ended).len() == 1);
        assert_eq!(rt.metrics().long_polls(), 1, "counted once");
        assert_eq!(events.matching(&compensated).len(), 1, "one compensation");
    });
}
