//! The long-poll detector: a task that runs past the threshold without
//! yielding is reported while it runs and again when it ends, by `tracing`
//! warnings naming the file and line it was spawned at, and counted once in
//! `long_polls()`. The long polls block on a channel until the test has
//! seen them counted, so no wait here depends on the host's speed. Its own
//! test binary, because it installs a global `tracing` subscriber (the
//! warning comes from the runtime's monitor thread).

mod common;

use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use common::{TIMEOUT, TIMEOUT_SECS, wait_until, with_timeout};
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

impl Warnings {
    /// The warnings collected so far that name `site`.
    fn naming(&self, site: &str) -> Vec<String> {
        let warnings = self.0.lock().unwrap();
        warnings
            .iter()
            .filter(|warning| warning.contains(site))
            .cloned()
            .collect()
    }
}

/// Spawns a task whose one poll blocks its worker until `release` sends,
/// so it is a long poll however fast or slow the host is. Every task
/// spawned through here has the same spawn location: returns its line.
fn spawn_blocked(rt: &brigade::Runtime) -> (brigade::JoinHandle<()>, mpsc::Sender<()>, u32) {
    let (release, released) = mpsc::channel::<()>();
    #[rustfmt::skip]
    let (task, line) = (rt.spawn(async move { released.recv_timeout(TIMEOUT).expect("released in time") }), line!());
    (task, release, line)
}

fn site(line: u32) -> String {
    format!("tests/long_poll.rs:{line}")
}

#[test]
fn a_long_poll_is_reported_once_with_its_spawn_location() {
    let warnings = Warnings::default();
    tracing::subscriber::set_global_default(tracing_subscriber::registry().with(warnings.clone()))
        .expect("install the capturing subscriber");
    with_timeout(TIMEOUT_SECS, move || {
        let rt = brigade::Builder::new()
            .worker_threads(2)
            .long_poll_threshold(Some(Duration::from_millis(50)))
            // A spare would change nothing here but the noise.
            .compensation_threshold(None)
            .build()
            .unwrap();
        let metrics = rt.metrics();
        // Three long polls from one spawn site, one after the other: each
        // counted once, while it runs; warned about at most once a second
        // per site (while it runs, and once more when it ends).
        let started = Instant::now();
        let mut line = 0;
        for counted in 1..=3 {
            let (task, release, at) = spawn_blocked(&rt);
            line = at;
            wait_until("the long poll is counted", || {
                metrics.long_polls() == counted
            });
            assert!(!task.is_finished(), "counted while it still runs");
            release.send(()).unwrap();
            rt.block_on(task).unwrap();
            if counted == 1 {
                // The first one is warned about, so its end is reported:
                // once it is, the monitor has seen it end, and a second
                // count would show.
                wait_until("the end of the first long poll is reported", || {
                    warnings
                        .naming(&site(line))
                        .iter()
                        .any(|warning| warning.contains("running=false"))
                });
                assert_eq!(metrics.long_polls(), 1, "counted again when it ended");
            }
        }
        // Under 10× the threshold in all: no stretch was long enough to be
        // reported again, and the three fell within one rate-limit second.
        let quick = started.elapsed() < Duration::from_millis(450);
        // Short polls are not reported.
        #[rustfmt::skip]
        let short_line = { rt.block_on(async { for _ in 0..100 { brigade::spawn(async {}).await.unwrap(); } }); line!() };
        // A last long poll from another site: once the monitor warns about
        // it, it has seen the others end (it samples every watch in turn),
        // so any second count or report of them would show by now.
        let (marker, release, marker_line) = {
            let (release, released) = mpsc::channel::<()>();
            #[rustfmt::skip]
            let (task, line) = (rt.spawn(async move { released.recv_timeout(TIMEOUT).expect("released") }), line!());
            (task, release, line)
        };
        wait_until("the last long poll is reported", || {
            !warnings.naming(&site(marker_line)).is_empty()
        });
        assert_eq!(metrics.long_polls(), 4, "each long poll counted once");
        release.send(()).unwrap();
        rt.block_on(marker).unwrap();
        assert!(
            warnings.naming(&site(short_line)).is_empty(),
            "a short poll was reported"
        );
        let matching = warnings.naming(&site(line));
        let all = warnings.0.lock().unwrap().clone();
        // The first stretch is always warned about: once while it ran,
        // once with its total when it ended. Within a second the rate
        // limit skips the other two; on a host slow enough to spread them
        // over more (or to hold one past 10× the threshold), more may come.
        if quick {
            assert_eq!(
                matching.len(),
                2,
                "expected two warnings naming line {line}, got {all:#?}"
            );
        } else {
            assert!(matching.len() >= 2, "{all:#?}");
        }
        assert!(matching[0].contains("running=true"), "{}", matching[0]);
        assert!(matching[0].contains("yield_if_busy"), "{}", matching[0]);
        assert!(matching[0].contains("duration_ms="), "{}", matching[0]);
        assert!(matching[1].contains("running=false"), "{}", matching[1]);
        assert!(matching[1].contains("ended after"), "{}", matching[1]);
    });
}
