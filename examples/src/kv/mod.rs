//! A small key-value server speaking the Redis protocol, with a background
//! snapshot of the whole map, on brigade or (for comparison) on tokio:
//! enough of Redis for `redis-cli` and `redis-benchmark -t get,set`.
//!
//! - **Protocol** ([`resp`]): RESP arrays of bulk strings and inline
//!   commands, pipelined or split across reads.
//! - **Commands** ([`command`]): PING, GET, SET key value, DEL, INCR,
//!   CONFIG GET (an empty array: redis-benchmark asks for `save` and
//!   `appendonly` at start-up), COMMAND / COMMAND DOCS (an empty array),
//!   INFO (memory: heap in use and RSS, for `scripts/soak.sh --kv`), QUIT.
//! - **Store** ([`store`]): 8,192 shards, each a `HashMap` behind a mutex,
//!   prefilled with `--prefill` keys (default 1,000,000 keys of 100 bytes,
//!   about 250 MB) so that a snapshot is a real bulk job.
//! - **Snapshot** ([`snapshot`], bytes in [`snapshot_format`]): every `--snapshot-every-ms` (or back to
//!   back) one task serialises the whole map into a reused buffer, a chunk
//!   of whole shards (at least 64 keys; one shard of about 120 keys, some
//!   20 µs, at the default prefill) at a time with a yield point after each
//!   chunk:
//!   - brigade: a task spawned with `spawn` (`spawn_elastic` with
//!     `--elastic`), `yield_if_busy().await` after each chunk: it steps
//!     aside only when requests are waiting for a worker;
//!   - tokio: `tokio::spawn`, `tokio::task::yield_now().await` after each
//!     chunk, tokio's closest equivalent: it gives way at every chunk as
//!     `yield_if_busy` does when requests wait. `consume_budget()` would
//!     yield only once the task has spent its budget of 128 units, a few
//!     milliseconds of chunks here, which would handicap tokio (see
//!     docs/decisions.md#mixed-load).
//!
//! This is the "mini-redis under bulk load" case of tokio's discussion of
//! time-based yielding (tokio PR #8343): a server whose bulk background job
//! must not hold up its requests.
//!
//! [`start`] starts a runtime with the server and the snapshot;
//! `examples/kv.rs` is the command-line front end ([`run`]).

use std::io;
use std::time::{Duration, Instant};

pub mod command;
mod config;
pub mod connection;
pub mod resp;
mod server;
pub mod snapshot;
pub mod snapshot_format;
pub mod store;

pub use config::{Config, HELP, RuntimeKind};
pub use server::{Server, Totals, describe_snapshot, start};
pub use snapshot::{SnapshotReport, SnapshotSettings};

const MB: f64 = 1e6;

/// The command-line front end: fills the map, starts the server, prints
/// its address and settings, then a line of commands/s and snapshot
/// throughput every second (and one per finished snapshot), until
/// `config.duration` (printing totals) or forever.
pub fn run(config: &Config) -> io::Result<()> {
    let server = start(config)?;
    println!(
        "kv listening on {} ({}, {} workers; {} keys of {} bytes prefilled in {} ms, RSS {}; snapshot: {})",
        server.addr(),
        config.runtime.name(),
        config.workers,
        config.prefill,
        config.value_size,
        server.prefill_time().as_millis(),
        resident_memory().unwrap_or_else(|| "unknown".to_owned()),
        describe_snapshot(config),
    );
    let started = Instant::now();
    let mut last = Sample::take(&server, started);
    for second in 1u32.. {
        let due = started + Duration::from_secs(second.into());
        let end = config.duration.map(|duration| started + duration);
        let next = end.map_or(due, |end| end.min(due));
        std::thread::sleep(next.saturating_duration_since(Instant::now()));
        let now = Sample::take(&server, started);
        now.print_rates(&last);
        if now.snapshots > last.snapshots
            && let Some(report) = server.snapshots().last()
        {
            print_snapshot(&report);
        }
        last = now;
        if end.is_some_and(|end| Instant::now() >= end) {
            break;
        }
    }
    let counters = server.brigade_counters();
    let totals = server.shutdown();
    let secs = totals.elapsed.as_secs_f64();
    if let Some(counters) = counters {
        println!("brigade counters: {counters}");
    }
    println!(
        "total: {} commands ({:.0}/s) on {} connections, {} snapshots, {:.2} M keys/s, {:.1} MB/s serialised, in {secs:.1} s",
        totals.commands,
        totals.commands as f64 / secs,
        totals.connections,
        totals.snapshots,
        totals.keys_serialised as f64 / secs / 1e6,
        totals.bytes_serialised as f64 / secs / MB,
    );
    Ok(())
}

/// The counters at one moment, for the per-second lines.
struct Sample {
    at: Duration,
    commands: u64,
    keys: u64,
    bytes: u64,
    snapshots: u64,
}

impl Sample {
    fn take(server: &Server, started: Instant) -> Sample {
        let snapshots = server.snapshots();
        Sample {
            at: started.elapsed(),
            commands: server.commands(),
            keys: snapshots.keys(),
            bytes: snapshots.bytes(),
            snapshots: snapshots.done(),
        }
    }

    /// `  3.0 s     85123 commands/s  snapshot   2.31 M keys/s    290.1 MB/s  (4 done)`
    fn print_rates(&self, before: &Sample) {
        let secs = (self.at - before.at).as_secs_f64().max(1e-9);
        println!(
            "{:>6.1} s {:>9.0} commands/s  snapshot {:>6.2} M keys/s {:>8.1} MB/s  ({} done)",
            self.at.as_secs_f64(),
            (self.commands - before.commands) as f64 / secs,
            (self.keys - before.keys) as f64 / secs / 1e6,
            (self.bytes - before.bytes) as f64 / secs / MB,
            self.snapshots,
        );
    }
}

fn print_snapshot(report: &SnapshotReport) {
    let secs = report.duration.as_secs_f64().max(1e-9);
    println!(
        "snapshot {}: {} keys, {:.1} MB in {} ms ({:.2} M keys/s, {:.1} MB/s), {} chunks, {:.1} µs each on average, longest {} µs",
        report.number,
        report.keys,
        report.bytes as f64 / MB,
        report.duration.as_millis(),
        report.keys as f64 / secs / 1e6,
        report.bytes as f64 / secs / MB,
        report.chunks,
        report.serialising.as_secs_f64() * 1e6 / report.chunks.max(1) as f64,
        report.longest_chunk.as_micros(),
    );
}

/// The process's resident memory (Linux: `VmRSS` in /proc/self/status).
fn resident_memory() -> Option<String> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with("VmRSS:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(format!("{} MB", kib / 1024))
}
