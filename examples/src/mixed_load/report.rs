//! The report: each variant's outcome, the results table and the relative
//! background throughput.

use std::fmt::Write as _;

use super::ForegroundReport;

/// The variants whose background throughput the others are compared with.
const THROUGHPUT_REFERENCES: [&str; 2] = ["no_yield", "no_yield+thread_server"];

/// The result of one variant, over every round.
pub struct Outcome {
    /// The variant's name.
    pub name: String,
    /// Foreground latencies of every round together.
    pub foreground: ForegroundReport,
    /// Background CPU share of each round: units × unit time / (elapsed ×
    /// workers). Zero without background load.
    pub background_shares: Vec<f64>,
    /// Background work per second of each round, in [`spin`](super::spin) iterations.
    /// Unlike the share, it does not depend on the calibration, so the
    /// throughput of two variants is compared with it.
    pub background_rates: Vec<f64>,
}

impl Outcome {
    /// The median background CPU share over the rounds.
    pub fn background_share(&self) -> f64 {
        median(&self.background_shares)
    }

    /// Adds a later round of the same variant.
    pub fn merge(&mut self, round: Outcome) {
        self.foreground.merge(round.foreground);
        self.background_shares.extend(round.background_shares);
        self.background_rates.extend(round.background_rates);
    }
}

/// The median of `values` (the upper one of the middle two for an even
/// count), or 0 for none.
pub fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted.get(sorted.len() / 2).copied().unwrap_or(0.0)
}

/// `micros` for a table: in µs below 10 ms, in ms (one decimal) above.
pub fn format_micros(micros: u64) -> String {
    if micros >= 10_000 {
        format!("{:.1} ms", micros as f64 / 1000.0)
    } else {
        format!("{micros} µs")
    }
}

/// Background throughput of each variant relative to the `no_yield`
/// variant of the same runtime (the cost of the yield points and of serving
/// the foreground) and to the `no_yield+thread_server` variant (the cost of
/// the yield points alone), a line per pair that ran. Each round is
/// compared with the same round's reference, run moments apart, and the
/// line gives the median (and the range, over several rounds).
pub fn format_relative_throughput(outcomes: &[Outcome]) -> String {
    let mut lines = String::new();
    for outcome in outcomes {
        let Some((runtime, kind)) = outcome.name.split_once('/') else {
            continue;
        };
        if THROUGHPUT_REFERENCES.contains(&kind) {
            continue;
        }
        for reference in THROUGHPUT_REFERENCES {
            let reference = format!("{runtime}/{reference}");
            if let Some(reference) = outcomes
                .iter()
                .find(|candidate| candidate.name == reference)
            {
                write_relative_line(&mut lines, outcome, reference);
            }
        }
    }
    lines
}

fn write_relative_line(lines: &mut String, outcome: &Outcome, reference: &Outcome) {
    let ratios: Vec<f64> = outcome
        .background_rates
        .iter()
        .zip(&reference.background_rates)
        .filter(|&(&rate, &reference_rate)| rate > 0.0 && reference_rate > 0.0)
        .map(|(rate, reference_rate)| rate / reference_rate)
        .collect();
    if ratios.is_empty() {
        return;
    }
    let _ = write!(
        lines,
        "{:<30} {:.3} of {}",
        outcome.name,
        median(&ratios),
        reference.name
    );
    if ratios.len() > 1 {
        let (low, high) = ratios
            .iter()
            .fold((f64::MAX, f64::MIN), |(low, high), &ratio| {
                (low.min(ratio), high.max(ratio))
            });
        let _ = write!(
            lines,
            " (median of {} rounds, {low:.3}–{high:.3})",
            ratios.len()
        );
    }
    lines.push('\n');
}

/// The results table.
pub fn format_table(outcomes: &[Outcome]) -> String {
    let mut table = String::new();
    let _ = writeln!(
        table,
        "{:<30} {:>10} {:>10} {:>10} {:>10} {:>9} {:>9}",
        "variant", "p50", "p99", "p99.9", "max", "requests", "bg share"
    );
    for outcome in outcomes {
        let latencies = &outcome.foreground.latencies_us;
        let cells: [String; 4] = if latencies.is_empty() {
            std::array::from_fn(|_| "-".to_owned())
        } else {
            [0.50, 0.99, 0.999, 1.0].map(|q| format_micros(latencies.value_at_quantile(q)))
        };
        let requests = if outcome.foreground.starved {
            "STARVED".to_owned()
        } else {
            outcome.foreground.sent.to_string()
        };
        let share = if outcome.background_share() > 0.0 {
            format!("{:.3}", outcome.background_share())
        } else {
            "-".to_owned()
        };
        let _ = writeln!(
            table,
            "{:<30} {:>10} {:>10} {:>10} {:>10} {:>9} {:>9}",
            outcome.name, cells[0], cells[1], cells[2], cells[3], requests, share
        );
    }
    table
}

/// Why the elastic variant's share is low in a short run: the demo prints
/// it under its tables when that variant ran.
pub const ELASTIC_NOTE: &str = "\n\
elastic: admission's limit starts at 0.05 of the workers and rises by 0.03 a second while
the foreground p99 stays under its 1 ms target, so a run of a few seconds measures the
ramp-up, not the share it settles at (see ElasticConfig; examples/admission.rs runs long
enough to see the limit climb).
";

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use hdrhistogram::Histogram;

    pub(crate) fn outcome(name: &str, latencies: &[u64], starved: bool, share: f64) -> Outcome {
        let mut histogram = Histogram::new_with_bounds(1, 60_000_000, 3).unwrap();
        for &latency in latencies {
            histogram.record(latency).unwrap();
        }
        Outcome {
            name: name.to_owned(),
            foreground: ForegroundReport {
                latencies_us: histogram,
                sent: latencies.len() as u64,
                starved,
            },
            background_shares: vec![share],
            background_rates: vec![share * 1e9],
        }
    }

    #[test]
    fn table_has_a_row_per_variant_with_percentiles() {
        let latencies: Vec<u64> = (1..=1000).collect();
        let table = format_table(&[
            outcome("idle/brigade", &latencies, false, 0.0),
            outcome("tokio/consume_budget", &[], true, 0.99),
        ]);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines.len(), 3, "{table}");
        assert!(lines[0].starts_with("variant"));
        assert!(lines[1].starts_with("idle/brigade"));
        assert!(
            lines[1].contains("500 µs") && lines[1].contains("990 µs"),
            "{table}"
        );
        assert!(
            lines[2].contains("STARVED") && lines[2].contains("0.990"),
            "{table}"
        );
        assert_eq!(format_micros(12_345), "12.3 ms");
    }

    #[test]
    fn relative_throughput_compares_with_the_same_runtimes_reference() {
        let outcomes = [
            outcome("brigade/yield_if_busy", &[100], false, 0.9),
            outcome("tokio/yield_now", &[100], false, 0.8),
            outcome("brigade/no_yield", &[], true, 1.0),
            outcome("idle/brigade", &[100], false, 0.0),
        ];
        let text = format_relative_throughput(&outcomes);
        assert_eq!(text.lines().count(), 1, "{text}");
        assert!(
            text.contains("brigade/yield_if_busy") && text.contains("0.900 of brigade/no_yield"),
            "{text}"
        );
    }

    #[test]
    fn rounds_pool_latencies_and_compare_each_round_with_its_own_reference() {
        let mut busy = outcome("brigade/yield_if_busy", &[100, 200], false, 0.90);
        busy.merge(outcome("brigade/yield_if_busy", &[300], false, 0.50));
        busy.merge(outcome("brigade/yield_if_busy", &[400], true, 0.97));
        assert_eq!(busy.foreground.sent, 4);
        assert_eq!(busy.foreground.latencies_us.len(), 4);
        assert!(busy.foreground.starved, "a starved round marks the variant");
        assert_eq!(busy.background_share(), 0.90, "the median round");

        let mut reference = outcome("brigade/no_yield", &[], true, 1.0);
        reference.merge(outcome("brigade/no_yield", &[], true, 0.5));
        reference.merge(outcome("brigade/no_yield", &[], true, 1.0));
        // Per round: 0.90, 1.00, 0.97; the middle one of the sorted ratios.
        let text = format_relative_throughput(&[busy, reference]);
        assert!(
            text.contains("0.970 of brigade/no_yield (median of 3 rounds, 0.900–1.000)"),
            "{text}"
        );
    }
}
