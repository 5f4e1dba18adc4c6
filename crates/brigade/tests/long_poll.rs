//! The long-poll detector: a task that runs 50 ms without yielding is
//! reported while it runs and again when it ends, by `tracing` warnings
//! naming the file and line it was spawned at, and counted once in
//! `long_polls()`. Its own test binary, because it
//! installs a global `tracing` subscriber (the warning comes from the
//! runtime's monitor thread).

mod common;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{TIMEOUT, TIMEOUT_SECS, with_timeout};
use tracing::field::{Field, Visit};
use tracing_subscriber::layer::SubscriberExt;

/// Collects the formatted fields of every WARN event.
#[derive(Clone, Default)]
struct Warnings(Arc<Mutex<Vec<String>>>);

struct Fields(String);

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.push_str(&format!("{}={:?} ", field.name(), value));
    }
}

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Warnings {
    fn on_event(&self, event: &tracing::Event<'_>, _: tracing_subscriber::layer::Context<'_, S>) {
        if *event.metadata().level() == tracing::Level::WARN {
            let mut fields = Fields(String::new());
            event.record(&mut fields);
            self.0.lock().unwrap().push(fields.0);
        }
    }
}

fn spin(duration: Duration) {
    let started = Instant::now();
    while started.elapsed() < duration {
        std::hint::spin_loop();
    }
}

#[test]
fn a_50_ms_poll_is_reported_once_with_its_spawn_location() {
    let warnings = Warnings::default();
    tracing::subscriber::set_global_default(tracing_subscriber::registry().with(warnings.clone()))
        .expect("install the capturing subscriber");
    with_timeout(TIMEOUT_SECS, move || {
        let rt = brigade::Builder::new().worker_threads(2).build().unwrap();
        // Three 50 ms polls from one spawn site within a second: three long
        // polls counted, one warning (rate limit: one per location per second).
        #[rustfmt::skip]
        let (tasks, line): (Vec<_>, u32) = ((0..3).map(|_| rt.spawn(async { spin(Duration::from_millis(50)) })).collect(), line!());
        for task in tasks {
            rt.block_on(task).unwrap();
        }
        let deadline = Instant::now() + TIMEOUT;
        while rt.metrics().long_polls() < 3 {
            assert!(
                Instant::now() < deadline,
                "long polls not detected: {}",
                rt.metrics().long_polls()
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        // Short polls are not reported.
        rt.block_on(async {
            for _ in 0..100 {
                brigade::spawn(async { spin(Duration::from_micros(100)) })
                    .await
                    .unwrap();
            }
        });
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!(rt.metrics().long_polls(), 3);
        let warnings = warnings.0.lock().unwrap().clone();
        let site = format!("tests/long_poll.rs:{line}");
        let matching: Vec<_> = warnings
            .iter()
            .filter(|warning| warning.contains(&site))
            .collect();
        // One stretch warned about (the rate limit skips the other two):
        // once while it ran, once with its total when it ended.
        assert_eq!(
            matching.len(),
            2,
            "expected two warnings naming {site}, got {warnings:#?}"
        );
        assert!(matching[0].contains("running=true"), "{}", matching[0]);
        assert!(matching[0].contains("yield_if_busy"), "{}", matching[0]);
        assert!(matching[0].contains("duration_ms="), "{}", matching[0]);
        assert!(matching[1].contains("running=false"), "{}", matching[1]);
        assert!(matching[1].contains("ended after"), "{}", matching[1]);
    });
}
