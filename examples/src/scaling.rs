//! The settings and tables of `benches/scaling.rs`, which runs brigade and
//! tokio side by side at several worker counts: which counts (the
//! `SCALING_WORKERS` list, capped at the host's CPUs), how many rounds, and
//! the markdown tables it prints. Kept here, in the library, so that the
//! parsing and formatting are unit-tested.

use std::fmt;
use std::time::Duration;

/// The variable that overrides [`DEFAULT_WORKER_COUNTS`].
pub const SCALING_WORKERS: &str = "SCALING_WORKERS";
/// The variable that overrides the number of rounds.
pub const SCALING_ROUNDS: &str = "SCALING_ROUNDS";
/// The variable that, set to `1`, asks for a short run (as `--quick` does).
pub const SCALING_QUICK: &str = "SCALING_QUICK";

/// Worker counts swept by default.
pub const DEFAULT_WORKER_COUNTS: [usize; 5] = [1, 2, 4, 8, 16];

/// Parses a comma-separated list of worker counts, e.g. `1,2,4` (spaces
/// allowed), keeping the order given and dropping repeats.
pub fn parse_worker_counts(text: &str) -> Result<Vec<usize>, String> {
    let mut counts = Vec::new();
    for item in text.split(',') {
        let count = item
            .trim()
            .parse()
            .ok()
            .filter(|&count: &usize| count > 0)
            .ok_or_else(|| {
                format!(
                    "{SCALING_WORKERS} must be a comma-separated list of positive integers \
                     (e.g. 1,2,4), got {text:?}"
                )
            })?;
        if !counts.contains(&count) {
            counts.push(count);
        }
    }
    Ok(counts)
}

/// Parses the number of rounds: a whole number of at least 3, so that a
/// median has something to reject.
pub fn parse_rounds(text: &str) -> Result<usize, String> {
    text.trim()
        .parse()
        .ok()
        .filter(|&rounds: &usize| rounds >= 3)
        .ok_or_else(|| {
            format!("{SCALING_ROUNDS} must be a whole number of at least 3, got {text:?}")
        })
}

/// The worker counts to run, and those left out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkerCounts {
    /// Counts to run, at most the host's CPUs.
    pub run: Vec<usize>,
    /// Counts above the host's CPUs, not run: more workers than CPUs would
    /// measure the OS's time slicing, not the runtimes.
    pub skipped: Vec<usize>,
}

impl WorkerCounts {
    /// Splits `counts` at `cores`.
    pub fn cap(counts: &[usize], cores: usize) -> WorkerCounts {
        let (run, skipped) = counts.iter().partition(|&&count| count <= cores);
        WorkerCounts { run, skipped }
    }

    /// The line saying what is skipped and why; `None` if nothing is.
    pub fn skipped_note(&self, cores: usize) -> Option<String> {
        if self.skipped.is_empty() {
            return None;
        }
        let list: Vec<String> = self.skipped.iter().map(usize::to_string).collect();
        Some(format!(
            "skipped worker counts {}: above the {cores} CPUs available here \
             (more workers than CPUs would measure the OS's time slicing)",
            list.join(", ")
        ))
    }
}

/// The median of `values` (the upper middle one for an even count).
///
/// # Panics
///
/// If `values` is empty.
pub fn median<T: Copy + PartialOrd>(values: &[T]) -> T {
    assert!(!values.is_empty(), "the median of nothing");
    let mut sorted = values.to_vec();
    sorted.sort_by(|a, b| a.partial_cmp(b).expect("values are comparable"));
    sorted[sorted.len() / 2]
}

/// `duration` for a table: µs below 1 ms, ms (2 decimals) below 10 s.
pub fn format_duration(duration: Duration) -> String {
    let micros = duration.as_secs_f64() * 1e6;
    if micros < 1_000.0 {
        format!("{micros:.0} µs")
    } else if micros < 10_000_000.0 {
        format!("{:.2} ms", micros / 1e3)
    } else {
        format!("{:.1} s", micros / 1e6)
    }
}

/// A rate for a table, with a k or M suffix: `1.23 M/s`.
pub fn format_rate(per_sec: f64) -> String {
    if per_sec >= 1e6 {
        format!("{:.2} M/s", per_sec / 1e6)
    } else if per_sec >= 1e3 {
        format!("{:.1} k/s", per_sec / 1e3)
    } else {
        format!("{per_sec:.0}/s")
    }
}

/// brigade's figure over tokio's, two decimals.
pub fn format_ratio(brigade: f64, tokio: f64) -> String {
    format!("{:.2}", brigade / tokio)
}

/// A markdown table with a title line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Table {
    title: String,
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// An empty table under `title`, with these column names.
    pub fn new(title: impl Into<String>, header: &[&str]) -> Table {
        Table {
            title: title.into(),
            header: header.iter().map(|name| name.to_string()).collect(),
            rows: Vec::new(),
        }
    }

    /// Adds a row. Panics if it has not one cell per column.
    pub fn row(&mut self, cells: Vec<String>) {
        assert_eq!(cells.len(), self.header.len(), "one cell per column");
        self.rows.push(cells);
    }
}

impl fmt::Display for Table {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{}", self.title)?;
        writeln!(f)?;
        writeln!(f, "| {} |", self.header.join(" | "))?;
        writeln!(f, "|{}", "---|".repeat(self.header.len()))?;
        for row in &self.rows {
            writeln!(f, "| {} |", row.join(" | "))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worker_lists_parse_in_order_without_repeats() {
        assert_eq!(parse_worker_counts("1,2"), Ok(vec![1, 2]));
        assert_eq!(parse_worker_counts(" 8, 2 ,8"), Ok(vec![8, 2]));
        assert_eq!(parse_worker_counts("16"), Ok(vec![16]));
    }

    #[test]
    fn bad_worker_lists_are_a_clear_error() {
        for text in ["", "0", "1,,2", "two", "1;2", "-1"] {
            let error = parse_worker_counts(text).unwrap_err();
            assert!(
                error.starts_with("SCALING_WORKERS must be a comma-separated list"),
                "{text:?}: {error}"
            );
            assert!(error.ends_with(&format!("got {text:?}")), "{error}");
        }
    }

    #[test]
    fn rounds_are_at_least_three() {
        assert_eq!(parse_rounds("3"), Ok(3));
        assert_eq!(parse_rounds(" 7 "), Ok(7));
        for text in ["2", "0", "x", ""] {
            let error = parse_rounds(text).unwrap_err();
            assert!(error.starts_with("SCALING_ROUNDS must be"), "{error}");
        }
    }

    #[test]
    fn counts_above_the_cores_are_skipped_and_said_so() {
        let counts = WorkerCounts::cap(&DEFAULT_WORKER_COUNTS, 2);
        assert_eq!(counts.run, vec![1, 2]);
        assert_eq!(counts.skipped, vec![4, 8, 16]);
        let note = counts.skipped_note(2).unwrap();
        assert!(
            note.starts_with("skipped worker counts 4, 8, 16: above the 2 CPUs"),
            "{note}"
        );
        let all = WorkerCounts::cap(&DEFAULT_WORKER_COUNTS, 64);
        assert_eq!(all.run, DEFAULT_WORKER_COUNTS);
        assert_eq!(all.skipped_note(64), None);
    }

    #[test]
    fn medians() {
        assert_eq!(median(&[3, 1, 2]), 2);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 3.0);
        assert_eq!(
            median(&[Duration::from_millis(5)]),
            Duration::from_millis(5)
        );
    }

    #[test]
    fn formats() {
        assert_eq!(format_duration(Duration::from_micros(250)), "250 µs");
        assert_eq!(format_duration(Duration::from_micros(12_345)), "12.35 ms");
        assert_eq!(format_duration(Duration::from_secs(12)), "12.0 s");
        assert_eq!(format_rate(1_234_567.0), "1.23 M/s");
        assert_eq!(format_rate(45_600.0), "45.6 k/s");
        assert_eq!(format_rate(12.0), "12/s");
        assert_eq!(format_ratio(1.0, 4.0), "0.25");
    }

    #[test]
    fn tables_are_markdown() {
        let mut table = Table::new("title", &["workers", "ratio"]);
        table.row(vec!["1".into(), "0.50".into()]);
        assert_eq!(
            table.to_string(),
            "title\n\n| workers | ratio |\n|---|---|\n| 1 | 0.50 |\n"
        );
    }
}
