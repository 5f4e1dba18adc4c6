//! The burst cases of `examples/bursts.rs` at a modest size, on both
//! runtimes: every task completes and none stays alive, every aborted sleep
//! is cancelled and brigade's timer count returns to 0, every connection is
//! established and echoes every byte, all of them open at once. (The
//! descriptor count is the example's to report: other tests in this process
//! open and close descriptors meanwhile.) Only semantics are asserted, never
//! memory or speed. Every wait is bounded by `LIMIT`.

use std::time::Duration;

use brigade_examples::bursts::{connections, tasks, timers};
use brigade_examples::harness::{Brigade, RuntimeKind, Tokio};

const LIMIT: Duration = Duration::from_secs(60);
const WORKERS: usize = 2;

#[test]
fn every_task_of_a_burst_completes() {
    let brigade = tasks::run::<Brigade>(WORKERS, 20_000, LIMIT);
    let tokio = tasks::run::<Tokio>(WORKERS, 20_000, LIMIT);
    for (name, outcome) in [("brigade", brigade), ("tokio", tokio)] {
        assert_eq!(outcome.started, 20_000, "{name}: {outcome:?}");
        assert_eq!(outcome.completed, 20_000, "{name}: {outcome:?}");
        assert_eq!(outcome.alive_after, 0, "{name}: {outcome:?}");
    }
}

#[test]
fn aborted_sleeps_are_cancelled_and_their_timers_removed() {
    let brigade = timers::run::<Brigade>(WORKERS, 20_000, LIMIT);
    assert_eq!(brigade.registered, Some(20_000), "{brigade:?}");
    assert_eq!(brigade.timers_after, Some(0), "{brigade:?}");
    let tokio = timers::run::<Tokio>(WORKERS, 20_000, LIMIT);
    for (name, outcome) in [("brigade", brigade), ("tokio", tokio)] {
        assert_eq!(outcome.pending, 20_000, "{name}: {outcome:?}");
        assert_eq!(outcome.cancelled, 20_000, "{name}: {outcome:?}");
        assert_eq!(outcome.alive_after, 0, "{name}: {outcome:?}");
    }
}

#[test]
fn every_connection_echoes_every_byte() {
    const CONNECTIONS: usize = 200;
    const ROUNDS: usize = 3;
    for kind in RuntimeKind::ALL {
        let outcome = connections::run(kind, WORKERS, 0, CONNECTIONS, LIMIT, |addr| {
            connections::client(addr, CONNECTIONS, ROUNDS, LIMIT)
        })
        .expect("the server starts");
        let expected = connections::ClientReport {
            established: CONNECTIONS,
            echoed: (CONNECTIONS * ROUNDS * connections::MESSAGE) as u64,
            ..connections::ClientReport::default()
        };
        assert_eq!(outcome.client, expected, "{kind}: {outcome:?}");
        assert_eq!(outcome.accepted, CONNECTIONS, "{kind}: {outcome:?}");
        assert_eq!(outcome.max_open, CONNECTIONS, "{kind}: {outcome:?}");
        assert_eq!(outcome.server_errors, 0, "{kind}: {outcome:?}");
    }
}
