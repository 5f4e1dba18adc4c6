//! `--slow-log`: the requests slower than a threshold, one line each,
//! `DUE_NS REPLY_NS`, in `CLOCK_MONOTONIC` nanoseconds.
//!
//! That is the clock `perf record -k CLOCK_MONOTONIC` stamps its samples
//! with, so a slow request can be set beside what every thread of the
//! server was doing between its due time and its reply (who ran on which
//! CPU, who waited for one): `scripts/tail_episodes.py` does that.
//!
//! `Instant` is `CLOCK_MONOTONIC` on Linux but does not expose its
//! reading, so each `Instant` is placed by its distance from one pair of
//! readings taken together.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::time::{Duration, Instant};

/// The header line of the file.
pub const HEADER: &str = "# due_ns reply_ns (CLOCK_MONOTONIC)";

/// Writes `slow` (due time, reply time), sorted by due time, to `path`.
pub fn write(path: &Path, slow: &[(Instant, Instant)]) -> io::Result<()> {
    let clock = MonotonicClock::now();
    let mut sorted = slow.to_vec();
    sorted.sort_unstable();
    let mut out = BufWriter::new(File::create(path)?);
    writeln!(out, "{HEADER}")?;
    for (due, reply) in sorted {
        writeln!(out, "{} {}", clock.nanos(due), clock.nanos(reply))?;
    }
    out.flush()
}

/// One `Instant` and the `CLOCK_MONOTONIC` reading taken with it.
#[derive(Debug, Clone, Copy)]
struct MonotonicClock {
    instant: Instant,
    nanos: u64,
}

impl MonotonicClock {
    fn now() -> MonotonicClock {
        let mut now = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `now` is a valid, writable `timespec`; CLOCK_MONOTONIC
        // exists on every Linux, so the call cannot fail.
        unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut now) };
        MonotonicClock {
            instant: Instant::now(),
            nanos: now.tv_sec as u64 * 1_000_000_000 + now.tv_nsec as u64,
        }
    }

    /// `at` on `CLOCK_MONOTONIC`, in ns.
    fn nanos(&self, at: Instant) -> u64 {
        let whole = |d: Duration| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        match at.checked_duration_since(self.instant) {
            Some(after) => self.nanos.saturating_add(whole(after)),
            None => self.nanos.saturating_sub(whole(self.instant - at)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_sorted_and_keep_each_latency() {
        let base = Instant::now();
        let ms = Duration::from_millis;
        let slow = [(base + ms(5), base + ms(7)), (base, base + ms(3))];
        let path = std::env::temp_dir().join(format!("kv_load_slow_{}.txt", std::process::id()));
        write(&path, &slow).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        let mut lines = text.lines();
        assert_eq!(lines.next(), Some(HEADER));
        let rows: Vec<(u64, u64)> = lines
            .map(|line| {
                let (due, reply) = line.split_once(' ').unwrap();
                (due.parse().unwrap(), reply.parse().unwrap())
            })
            .collect();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].1 - rows[0].0, 3_000_000);
        assert_eq!(rows[1].1 - rows[1].0, 2_000_000);
        assert_eq!(rows[1].0 - rows[0].0, 5_000_000);
    }

    #[test]
    fn an_instant_lands_between_the_readings_around_it() {
        let clock = MonotonicClock::now();
        let later = Instant::now();
        let after = MonotonicClock::now().nanos;
        // `clock.nanos` was read before `later`, `after` after it: the
        // placed reading lies between them, however long each step took.
        let placed = clock.nanos(later);
        assert!(
            clock.nanos <= placed && placed <= after,
            "{} <= {placed} <= {after}",
            clock.nanos
        );
    }
}
