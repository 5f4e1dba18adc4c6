//! The `tracing` events the scheduler produces: for a stuck worker,
//! long-poll warnings while the stretch runs (at the threshold, past 10×
//! and 100× it) and when it ends, naming the spawn site, and an info event
//! for each compensation; for a task that changes class, a debug event at
//! its demotion and at its promotion; for a spawn site whose tasks the
//! cooperative budget makes yield, one debug event; the runtime's start,
//! shutdown, worker and monitor events under their documented targets. Its own test binary, because it
//! installs a global `tracing` subscriber (the events come from the
//! runtime's threads).

mod common;

use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use common::{TIMEOUT_SECS, wait_until, with_timeout};
use tracing::field::{Field, Visit};
use tracing_subscriber::layer::SubscriberExt;

/// Collects `target level fields` of every event from brigade at info or
/// above, and of the task-class events (debug).
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
        let wanted = *metadata.level() <= tracing::Level::INFO
            || ["brigade::class", "brigade::coop"].contains(&metadata.target())
            || LIFECYCLE_TARGETS.contains(&metadata.target());
        if metadata.target().starts_with("brigade") && wanted {
            let mut fields = Fields(format!("{} {} ", metadata.target(), metadata.level()));
            event.record(&mut fields);
            self.0.lock().unwrap().push(fields.0);
        }
    }
}

/// The targets of the runtime's start, shutdown, worker and monitor events,
/// as the crate docs list them: a filter written against them must go on
/// working whichever file emits the event.
const LIFECYCLE_TARGETS: [&str; 4] = [
    "brigade::runtime::start",
    "brigade::runtime::worker",
    "brigade::runtime::monitor",
    "brigade::runtime::shutdown",
];

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
    let events = events();
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
        let site = format!("tests/scheduler_events.rs:{line}");
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

#[test]
fn a_demotion_and_a_promotion_are_reported_with_the_spawn_site() {
    let events = events();
    with_timeout(TIMEOUT_SECS, move || {
        let rt = brigade::Builder::new().worker_threads(1).build().unwrap();
        let demote_then_wait = async {
            for _ in 0..10 {
                brigade::yield_now().await;
            }
            brigade::time::sleep(Duration::from_millis(1)).await;
        };
        let (task, line) = (rt.spawn(demote_then_wait), line!());
        rt.block_on(task).unwrap();
        let site = format!("tests/scheduler_events.rs:{line}");
        let demoted = [
            "brigade::class DEBUG",
            "demoted to background",
            site.as_str(),
        ];
        let promoted = [
            "brigade::class DEBUG",
            "promoted to foreground",
            site.as_str(),
        ];
        assert_eq!(events.matching(&demoted).len(), 1);
        assert_eq!(events.matching(&promoted).len(), 1);
    });
}

#[test]
fn a_spawn_site_whose_tasks_the_budget_makes_yield_is_reported_once() {
    let events = events();
    with_timeout(TIMEOUT_SECS, move || {
        let rt = brigade::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let line = rt.block_on(async {
            // Two tasks from one site, each spending ten budgets while the
            // other waits for the one thread: many forced yields each.
            let spend = || async {
                for _ in 0..10 * 128 {
                    brigade::task::consume_budget().await;
                }
            };
            let mut tasks = Vec::new();
            let mut line = 0;
            for _ in 0..2 {
                let (task, at) = (brigade::spawn(spend()), line!());
                tasks.push(task);
                line = at;
            }
            for task in tasks {
                task.await.unwrap();
            }
            line
        });
        assert!(rt.metrics().budget_forced_yields() > 2);
        let site = format!("tests/scheduler_events.rs:{line}");
        let reported = ["brigade::coop DEBUG", "budget spent", site.as_str()];
        assert_eq!(events.matching(&reported).len(), 1);
    });
}

#[test]
fn the_start_shutdown_worker_and_monitor_events_keep_their_targets() {
    let events = events();
    with_timeout(TIMEOUT_SECS, move || {
        let rt = brigade::Builder::new().worker_threads(1).build().unwrap();
        assert_eq!(
            rt.block_on(async { brigade::spawn(async { 7 }).await.unwrap() }),
            7
        );
        let monitor = ["brigade::runtime::monitor DEBUG", "monitor thread started"];
        wait_until("the monitor thread runs", || {
            !events.matching(&monitor).is_empty()
        });
        drop(rt);
        for (target, message) in [
            ("brigade::runtime::start DEBUG", "runtime started"),
            ("brigade::runtime::worker DEBUG", "worker started"),
            ("brigade::runtime::worker DEBUG", "worker stopped"),
            ("brigade::runtime::shutdown DEBUG", "runtime shutting down"),
            ("brigade::runtime::shutdown DEBUG", "runtime shut down"),
        ] {
            assert!(
                !events.matching(&[target, message]).is_empty(),
                "no `{message}` event under {target}"
            );
        }
    });
}
