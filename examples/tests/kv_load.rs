//! `kv_load` against the `kv` server in-process: every request is sent on
//! schedule and answered, and the client's counts match the server's.
//! Rates are modest and nothing about speed is asserted; every wait is
//! bounded (`drain`, connect timeout).

use std::net::{SocketAddr, TcpListener};
use std::time::{Duration, Instant};

use brigade_examples::kv::store::prefill_key;
use brigade_examples::kv::{self, RuntimeKind, SnapshotSettings};
use brigade_examples::kv_load::{self, Report};

const PREFILL: u64 = 2_000;

fn server_config(runtime: RuntimeKind) -> kv::Config {
    kv::Config {
        port: 0,
        workers: 2,
        runtime,
        prefill: PREFILL,
        value_size: 16,
        snapshot: Some(SnapshotSettings {
            every: Duration::ZERO,
            path: None,
        }),
        elastic: false,
        background_floor: 0.0,
        crowded_host_handoff: true,
        spread_workers: true,
        duration: None,
    }
}

fn load_config(addr: SocketAddr) -> kv_load::Config {
    kv_load::Config {
        addr,
        rate: 2_000,
        connections: 4,
        duration: Duration::from_secs(1),
        keys: PREFILL,
        ratio: (1, 1),
        value_size: 3,
        threads: 2,
        // Only a hang comes near it.
        drain: Duration::from_secs(30),
        http: false,
        http_kv: false,
        json: false,
        slow_log: None,
        slow_threshold: Duration::from_millis(1),
    }
}

/// The counts of a run in which nothing failed.
fn assert_clean(report: &Report, what: &str) {
    let tally = &report.tally;
    assert_eq!(report.planned, 2_000, "{what}");
    assert_eq!(tally.sent, report.planned, "{what}: every request sent");
    assert_eq!(tally.answered, tally.sent, "{what}: every request answered");
    assert_eq!(report.errors(), 0, "{what}: {:?}", tally.first_error);
    // Each connection alternates SET and GET: 500 requests, 250 SETs.
    assert_eq!(tally.sets, 1_000, "{what}");
    assert_eq!(
        (tally.hits, tally.misses),
        (1_000, 0),
        "{what}: keys are prefilled"
    );
    assert_eq!(tally.latency_ns.len(), tally.answered, "{what}");
    assert_eq!(tally.send_lag_ns.len(), tally.sent, "{what}");
    assert!(report.clean(), "{what}");
}

#[test]
fn every_request_is_answered_on_both_runtimes() {
    for runtime in RuntimeKind::ALL {
        let server = kv::start(&server_config(runtime)).unwrap();
        let report = kv_load::run(&load_config(server.addr())).unwrap();
        assert_clean(&report, runtime.name());
        assert_eq!(server.commands(), report.tally.answered, "{runtime}");
        // The SETs wrote "xxx" over some prefilled values: at most one
        // key per SET.
        let overwritten = (0..PREFILL)
            .filter(|&index| server.store().get(&prefill_key(index)).as_deref() == Some(b"xxx"))
            .count();
        assert!(
            (1..=1_000).contains(&overwritten),
            "{runtime}: {overwritten}"
        );
        assert!(
            report
                .summary()
                .contains("2000 sent, 2000 answered, 0 errors")
        );
        assert_eq!(report.json()["unanswered"], 0);
        server.shutdown();
    }
}

#[test]
fn with_a_zero_threshold_every_reply_goes_to_the_slow_log() {
    let server = kv::start(&server_config(RuntimeKind::Brigade)).unwrap();
    let path = std::env::temp_dir().join(format!("kv_load_test_slow_{}.txt", std::process::id()));
    let config = kv_load::Config {
        slow_log: Some(path.clone()),
        slow_threshold: Duration::ZERO,
        ..load_config(server.addr())
    };
    let report = kv_load::run(&config).unwrap();
    assert_clean(&report, "slow log");
    server.shutdown();
    assert_eq!(report.tally.slow.len() as u64, report.tally.answered);
    kv_load::slow_log::write(&path, &report.tally.slow).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some(kv_load::slow_log::HEADER));
    let mut previous_due = 0;
    let mut rows = 0;
    for line in lines {
        let (due, reply) = line.split_once(' ').unwrap();
        let (due, reply): (u64, u64) = (due.parse().unwrap(), reply.parse().unwrap());
        assert!(due < reply && due >= previous_due, "{line}");
        previous_due = due;
        rows += 1;
    }
    assert_eq!(rows, report.tally.answered);
}

#[test]
fn gets_of_missing_keys_are_misses_not_errors() {
    let server = kv::start(&server_config(RuntimeKind::Brigade)).unwrap();
    let mut config = load_config(server.addr());
    (config.ratio, config.keys, config.connections) = ((0, 1), PREFILL * 1_000, 3);
    let report = kv_load::run(&config).unwrap();
    let tally = &report.tally;
    assert_eq!((tally.sent, tally.answered, tally.sets), (2_000, 2_000, 0));
    assert_eq!(tally.hits + tally.misses, 2_000);
    assert!(tally.misses > tally.hits, "{tally:?}");
    assert!(report.clean());
    server.shutdown();
}

#[test]
fn a_server_that_goes_away_leaves_broken_connections_and_counts_that_add_up() {
    let server = kv::start(&server_config(RuntimeKind::Brigade)).unwrap();
    let mut config = load_config(server.addr());
    (config.duration, config.drain) = (Duration::from_secs(3), Duration::from_secs(1));
    let load = std::thread::spawn(move || kv_load::run(&config).unwrap());
    // Shut down once the load is under way.
    let deadline = Instant::now() + Duration::from_secs(60);
    while server.commands() < 100 {
        assert!(Instant::now() < deadline, "the load never started");
        std::thread::sleep(Duration::from_millis(5));
    }
    let totals = server.shutdown();
    let report = load.join().unwrap();
    let tally = &report.tally;
    assert_eq!(tally.broken_connections, 4, "{tally:?}");
    assert!(tally.sent < report.planned, "{tally:?}");
    assert!(tally.answered <= tally.sent && tally.answered <= totals.commands);
    assert_eq!(tally.sets + tally.hits + tally.misses, tally.answered);
    assert_eq!(report.unanswered(), tally.sent - tally.answered);
    assert!(!report.clean() && report.errors() == 4);
    assert!(tally.first_error.is_some());
    assert!(
        report.warning().is_none(),
        "the client kept up; the server went"
    );
}

#[test]
fn no_server_is_a_clear_error() {
    let addr = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    // The listener is gone: nothing listens at `addr`.
    let error = kv_load::run(&load_config(addr)).unwrap_err();
    assert!(error.to_string().contains(&addr.to_string()), "{error}");
}

/// `--http` against `http_import` (import on): every `GET /` is sent on
/// schedule and answered with a 200, pipelined where replies lag, and the
/// server counted each one.
#[test]
fn with_http_every_get_is_answered_by_http_import_on_both_runtimes() {
    use brigade_examples::http_import::{self, ImportMode};
    for runtime in RuntimeKind::ALL {
        let server = http_import::start(&http_import::Config {
            port: 0,
            workers: 2,
            import: ImportMode::Yielding,
            tasks: 4,
            runtime,
            ..http_import::Config::default()
        })
        .unwrap();
        let mut config = load_config(server.addr());
        config.http = true;
        let report = kv_load::run(&config).unwrap();
        let tally = &report.tally;
        assert_eq!((tally.sent, tally.answered), (2_000, 2_000), "{runtime}");
        assert_eq!(tally.http_ok, 2_000, "{runtime}: {:?}", tally.first_error);
        assert_eq!((tally.sets, tally.hits, tally.misses), (0, 0, 0));
        assert!(report.clean(), "{runtime}");
        assert_eq!(report.json()["http_ok"], 2_000);
        assert_eq!(server.requests(), 2_000, "{runtime}");
        let totals = server.shutdown();
        assert!(totals.rows > 0, "{runtime}: the import ran");
    }
}

/// `--http-kv` against `axum_service` (bulk job on): every `PUT /kv/KEY`
/// and `GET /kv/KEY` is sent on schedule and answered with a 200 (every key
/// is prefilled, so no GET misses), and the server counted each one.
#[test]
fn with_http_kv_every_put_and_get_is_answered_by_axum_service_on_both_runtimes() {
    use brigade_examples::service::{self, Config};
    for runtime in RuntimeKind::ALL {
        let server = service::http::start(&Config {
            runtime,
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            workers: 2,
            bulk: 2,
            elastic: true,
            background_floor: 0.0,
            keys: PREFILL,
            duration: None,
        })
        .unwrap();
        let mut config = load_config(server.addr());
        config.http_kv = true;
        let report = kv_load::run(&config).unwrap();
        let tally = &report.tally;
        assert_eq!((tally.sent, tally.answered), (2_000, 2_000), "{runtime}");
        assert_eq!(report.errors(), 0, "{runtime}: {:?}", tally.first_error);
        assert_eq!((tally.sets, tally.hits, tally.misses), (1_000, 1_000, 0));
        assert_eq!(tally.http_ok, 2_000, "{runtime}");
        assert!(report.clean(), "{runtime}");
        assert_eq!(server.stats().requests(), 2_000, "{runtime}");
        let totals = server.shutdown();
        assert!(totals.units > 0, "{runtime}: the bulk job ran");
        assert_eq!(totals.off_worker, 0, "{runtime}");
    }
}
