//! What a run counted and measured, and its summary (a line or JSON).

use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use serde_json::json;

/// Below this share of the target rate, the client did not keep up.
pub const KEEP_UP: f64 = 0.95;

/// Counts and latencies of one client thread, or of the run (merged).
#[derive(Debug, Clone)]
pub struct Tally {
    /// Requests written (or queued to be written) to a connection.
    pub sent: u64,
    /// Replies read, of any kind.
    pub answered: u64,
    /// Replies to SET that were `+OK`.
    pub sets: u64,
    /// Replies to GET with a value.
    pub hits: u64,
    /// Replies to GET without one (`$-1`).
    pub misses: u64,
    /// HTTP responses with status 200 (`--http`, `--http-kv`).
    pub http_ok: u64,
    /// Error replies, and replies of the wrong kind for the command.
    pub error_replies: u64,
    /// Connections that broke (closed by the server, I/O or protocol error).
    pub broken_connections: u64,
    /// The first error reply or broken connection, for the user.
    pub first_error: Option<String>,
    /// From each request's due time to its reply, in ns.
    pub latency_ns: Histogram<u64>,
    /// From each request's due time to the time it went out, in ns: the
    /// client's own lateness.
    pub send_lag_ns: Histogram<u64>,
    /// From the start to the last send.
    pub sending: Duration,
    /// Requests slower than this are kept in `slow` (`--slow-log`).
    pub slow_threshold: Option<Duration>,
    /// Each slow request's due time and reply time.
    pub slow: Vec<(Instant, Instant)>,
}

impl Default for Tally {
    fn default() -> Self {
        let histogram =
            || Histogram::new_with_bounds(1, 600_000_000_000, 3).expect("constant bounds");
        Tally {
            sent: 0,
            answered: 0,
            sets: 0,
            hits: 0,
            misses: 0,
            http_ok: 0,
            error_replies: 0,
            broken_connections: 0,
            first_error: None,
            latency_ns: histogram(),
            send_lag_ns: histogram(),
            sending: Duration::ZERO,
            slow_threshold: None,
            slow: Vec::new(),
        }
    }
}

impl Tally {
    /// Records `error`, keeping the first message.
    pub fn note_error(&mut self, error: impl FnOnce() -> String) {
        if self.first_error.is_none() {
            self.first_error = Some(error());
        }
    }

    /// Records a reply that arrived at `arrived` to a request due at `due`.
    pub fn record_latency(&mut self, due: Instant, arrived: Instant) {
        let latency = arrived.saturating_duration_since(due);
        self.latency_ns.saturating_record(nanos(latency));
        if self
            .slow_threshold
            .is_some_and(|threshold| latency > threshold)
        {
            self.slow.push((due, arrived));
        }
    }

    /// Adds another thread's tally.
    pub fn merge(&mut self, other: &Tally) {
        self.sent += other.sent;
        self.answered += other.answered;
        self.sets += other.sets;
        self.hits += other.hits;
        self.misses += other.misses;
        self.http_ok += other.http_ok;
        self.error_replies += other.error_replies;
        self.broken_connections += other.broken_connections;
        if self.first_error.is_none() {
            self.first_error.clone_from(&other.first_error);
        }
        self.latency_ns.add(&other.latency_ns).expect("same bounds");
        self.send_lag_ns
            .add(&other.send_lag_ns)
            .expect("same bounds");
        self.sending = self.sending.max(other.sending);
        self.slow.extend_from_slice(&other.slow);
    }
}

/// `duration` in whole ns for a histogram: at least 1, at most `u64::MAX`.
pub(super) fn nanos(duration: Duration) -> u64 {
    u64::try_from(duration.as_nanos())
        .unwrap_or(u64::MAX)
        .max(1)
}

/// The run's result.
#[derive(Debug, Clone)]
pub struct Report {
    /// The target, requests/s.
    pub rate: u64,
    /// Requests the schedule held.
    pub planned: u64,
    /// The whole run's tally.
    pub tally: Tally,
}

impl Report {
    /// Requests sent per second of sending.
    pub fn achieved_rate(&self) -> f64 {
        self.tally.sent as f64 / self.tally.sending.as_secs_f64().max(1e-9)
    }

    /// Whether the client sent at [`KEEP_UP`] of the target rate or more.
    pub fn kept_up(&self) -> bool {
        self.achieved_rate() >= KEEP_UP * self.rate as f64
    }

    /// Requests sent and never answered.
    pub fn unanswered(&self) -> u64 {
        self.tally.sent - self.tally.answered
    }

    /// Error replies and broken connections.
    pub fn errors(&self) -> u64 {
        self.tally.error_replies + self.tally.broken_connections
    }

    /// Whether every planned request was sent and answered without error.
    pub fn clean(&self) -> bool {
        self.tally.sent == self.planned && self.unanswered() == 0 && self.errors() == 0
    }

    /// The latency percentile `q` (0..=100) in ms.
    fn ms(histogram: &Histogram<u64>, q: f64) -> f64 {
        histogram.value_at_percentile(q) as f64 / 1e6
    }

    /// One line: rates, counts, latency percentiles.
    pub fn summary(&self) -> String {
        let (t, latency) = (&self.tally, &self.tally.latency_ns);
        let ms = |q| Self::ms(latency, q);
        format!(
            "kv_load: target {} req/s, sent {:.0} req/s; {} sent, {} answered, {} errors, {} unanswered; \
             latency ms p50 {:.3} p90 {:.3} p99 {:.3} p99.9 {:.3} max {:.3}; send lag p99 {:.3} ms",
            self.rate,
            self.achieved_rate(),
            t.sent,
            t.answered,
            self.errors(),
            self.unanswered(),
            ms(50.0),
            ms(90.0),
            ms(99.0),
            ms(99.9),
            latency.max() as f64 / 1e6,
            Self::ms(&t.send_lag_ns, 99.0),
        )
    }

    /// The summary as one JSON object.
    pub fn json(&self) -> serde_json::Value {
        let (t, latency) = (&self.tally, &self.tally.latency_ns);
        let ms = |q| Self::ms(latency, q);
        json!({
            "target_rate": self.rate,
            "achieved_rate": self.achieved_rate().round(),
            "kept_up": self.kept_up(),
            "planned": self.planned,
            "sent": t.sent,
            "answered": t.answered,
            "unanswered": self.unanswered(),
            "errors": self.errors(),
            "error_replies": t.error_replies,
            "broken_connections": t.broken_connections,
            "first_error": t.first_error,
            "sets": t.sets,
            "get_hits": t.hits,
            "get_misses": t.misses,
            "http_ok": t.http_ok,
            "p50_ms": ms(50.0),
            "p90_ms": ms(90.0),
            "p99_ms": ms(99.0),
            "p999_ms": ms(99.9),
            "max_ms": latency.max() as f64 / 1e6,
            "send_lag_p99_ms": Self::ms(&t.send_lag_ns, 99.0),
        })
    }

    /// The warning when the client fell behind, else `None`. (With a
    /// broken connection the rate fell for want of it, and the errors say
    /// so.)
    pub fn warning(&self) -> Option<String> {
        (!self.kept_up() && self.tally.broken_connections == 0).then(|| {
            format!(
                "WARNING: kv_load sent {:.0} req/s, {:.0}% of the target {}: the client cannot keep up \
                 (too few cores or --threads), so the load was lower than asked",
                self.achieved_rate(),
                100.0 * self.achieved_rate() / self.rate as f64,
                self.rate
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(sent: u64, answered: u64, sending_ms: u64) -> Report {
        let mut tally = Tally {
            sent,
            answered,
            sets: answered,
            sending: Duration::from_millis(sending_ms),
            ..Tally::default()
        };
        for ms in 1..=100 {
            tally.latency_ns.record(ms * 1_000_000).unwrap();
        }
        Report {
            rate: 1000,
            planned: 1000,
            tally,
        }
    }

    #[test]
    fn a_clean_run() {
        let report = report(1000, 1000, 1000);
        assert!(report.kept_up() && report.clean() && report.warning().is_none());
        let line = report.summary();
        assert!(
            line.contains("1000 sent, 1000 answered, 0 errors, 0 unanswered"),
            "{line}"
        );
        let json = report.json();
        assert_eq!(json["p50_ms"].as_f64().unwrap().round(), 50.0);
        assert_eq!(json["max_ms"].as_f64().unwrap().round(), 100.0);
        assert_eq!(json["achieved_rate"], 1000.0);
    }

    #[test]
    fn a_client_that_falls_behind_says_so() {
        // All sent, but over 1.25 s: 800/s of 1000/s.
        let report = report(1000, 990, 1250);
        assert!(!report.kept_up() && !report.clean());
        assert_eq!(report.unanswered(), 10);
        assert!(report.warning().unwrap().contains("cannot keep up"));
        assert_eq!(report.json()["kept_up"], false);
    }

    #[test]
    fn merging_adds_counts_and_latencies() {
        let mut total = report(600, 600, 900).tally;
        let mut other = report(400, 399, 1000).tally;
        other.broken_connections = 1;
        other.note_error(|| "first".into());
        other.note_error(|| "second".into());
        total.merge(&other);
        assert_eq!((total.sent, total.answered), (1000, 999));
        assert_eq!(total.latency_ns.len(), 200);
        assert_eq!(total.sending, Duration::from_millis(1000));
        assert_eq!(total.first_error.as_deref(), Some("first"));
    }
}
