//! An open-loop load for the `kv` example (or any Redis-protocol server):
//! SET and GET requests at a fixed rate, whatever the server's answers;
//! with `--http`, HTTP/1.1 `GET /` at a fixed rate instead (for
//! `http_import`, where `wrk` is the closed loop); with `--http-kv`,
//! HTTP/1.1 `PUT /kv/KEY` (a JSON body) and `GET /kv/KEY` per `--ratio` (for
//! `axum_service`).
//!
//! `redis-benchmark` is a closed loop: each connection sends its next
//! request when the last is answered, so a faster server makes the client
//! send (and burn CPU) faster. Here the rate is fixed, so two servers are
//! compared at equal load: their latency, and what CPU they leave for the
//! snapshot.
//!
//! - **Schedule** ([`schedule`]): `--rate` requests/s over `--connections`
//!   connections, evenly staggered; a connection whose replies lag keeps
//!   sending on schedule (its requests pipeline).
//! - **Latency**: from the time each request was *due* to its reply, so
//!   that a client or server stall counts for every request it delayed
//!   (no coordinated omission). The send lag (due to actually sent) shows
//!   the client's own lateness.
//! - **Client** ([`driver`]): plain threads, each an event loop on
//!   non-blocking sockets (`--threads`, default 1: at most one core).
//! - **Report** ([`report`]): sent, answered, errors, latency percentiles;
//!   a warning when the client sent under 95% of the target rate.
//! - **Slow requests** ([`slow_log`], `--slow-log`): each request over a
//!   threshold, with its due and reply times on the clock `perf` traces
//!   can use, so a tail can be lined up with what the server's threads did.
//!
//! `examples/kv_load.rs` is the command-line front end;
//! `scripts/kv_bench.sh --client open` runs it against `kv` on both
//! runtimes.

use std::io;
use std::net::TcpStream;
use std::time::{Duration, Instant};

mod config;
pub mod driver;
pub mod http_reply;
pub mod reply;
pub mod report;
pub mod schedule;
pub mod slow_log;

pub use config::{Config, HELP};
pub use report::{Report, Tally};

use driver::Connection;
use schedule::Schedule;

/// How long connecting to the server may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// Time between connecting and the first request, to start the threads.
const START_DELAY: Duration = Duration::from_millis(20);

/// Connects, sends `config.rate` requests/s for `config.duration`, waits
/// for the replies (at most `config.drain` after the last send) and
/// returns the counts and latencies.
pub fn run(config: &Config) -> io::Result<Report> {
    let streams = (0..config.connections)
        .map(|_| TcpStream::connect_timeout(&config.addr, CONNECT_TIMEOUT))
        .collect::<io::Result<Vec<_>>>()
        .map_err(|error| io::Error::new(error.kind(), format!("{}: {error}", config.addr)))?;
    let start = Instant::now() + START_DELAY;
    // Connection c goes to thread c % threads.
    let mut shares: Vec<Vec<Connection>> = (0..config.threads).map(|_| Vec::new()).collect();
    for (index, stream) in streams.into_iter().enumerate() {
        let schedule = Schedule::new(config, index, start);
        shares[index % config.threads].push(Connection::new(stream, schedule)?);
    }
    let value = vec![b'x'; config.value_size];
    let tallies = std::thread::scope(|scope| {
        let threads: Vec<_> = shares
            .into_iter()
            .enumerate()
            .map(|(index, share)| {
                let value = &value;
                std::thread::Builder::new()
                    .name(format!("kv-load-{index}"))
                    .spawn_scoped(scope, move || {
                        let slow = config.slow_log.is_some().then_some(config.slow_threshold);
                        driver::run(share, value, start, config.drain, slow)
                    })
            })
            .collect::<io::Result<Vec<_>>>()?;
        threads
            .into_iter()
            .map(|thread| thread.join().expect("a client thread panicked"))
            .collect::<io::Result<Vec<Tally>>>()
    })?;
    let mut tally = Tally::default();
    for other in &tallies {
        tally.merge(other);
    }
    Ok(Report {
        rate: config.rate,
        planned: config.planned(),
        tally,
    })
}
