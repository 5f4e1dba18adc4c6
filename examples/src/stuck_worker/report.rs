//! The stuck-worker demo's figures: one summary per runtime and round,
//! their median over the rounds, and the markdown tables.

use std::fmt::Write as _;
use std::time::Duration;

use hdrhistogram::Histogram;

use super::{Config, Contender};
use crate::mixed_load::{format_micros, median};

/// A latency histogram's p50, p99, p99.9 and max, in µs (0 when empty).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Percentiles {
    /// The median.
    pub p50: u64,
    /// The 99th percentile.
    pub p99: u64,
    /// The 99.9th percentile.
    pub p999: u64,
    /// The largest value.
    pub max: u64,
}

impl Percentiles {
    /// The percentiles of `histogram` (in µs), as hdrhistogram defines
    /// them: the smallest recorded value that at least that fraction of
    /// the values do not exceed.
    pub fn of(histogram: &Histogram<u64>) -> Percentiles {
        if histogram.is_empty() {
            return Percentiles::default();
        }
        let at = |quantile| histogram.value_at_quantile(quantile);
        Percentiles {
            p50: at(0.50),
            p99: at(0.99),
            p999: at(0.999),
            max: histogram.max(),
        }
    }

    /// Each percentile's median over `rounds`, taken separately.
    fn median_of(rounds: &[Percentiles]) -> Percentiles {
        Percentiles {
            p50: median_u64(rounds.iter().map(|round| round.p50)),
            p99: median_u64(rounds.iter().map(|round| round.p99)),
            p999: median_u64(rounds.iter().map(|round| round.p999)),
            max: median_u64(rounds.iter().map(|round| round.max)),
        }
    }
}

/// The median of whole numbers, through [`median`] (exact below 2^53).
fn median_u64(values: impl Iterator<Item = u64>) -> u64 {
    median(&values.map(|value| value as f64).collect::<Vec<_>>()) as u64
}

/// The median of counts that only brigade has (`None` for tokio).
fn median_option(values: impl Iterator<Item = Option<u64>>) -> Option<u64> {
    let values: Option<Vec<u64>> = values.collect();
    values.map(|values| median_u64(values.into_iter()))
}

/// One runtime's part 1 in one round: how long after its spawn each task
/// started running while every worker was stuck.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpawnSummary {
    /// Spawn-to-start delays, in µs.
    pub delay: Percentiles,
    /// Tasks that started before the run gave up waiting.
    pub measured: u64,
    /// Tasks spawned.
    pub spawned: u64,
    /// brigade's `compensations()` at the end of the run.
    pub compensations: Option<u64>,
}

impl SpawnSummary {
    /// Each figure's median over `rounds`.
    pub fn median_of(rounds: &[SpawnSummary]) -> SpawnSummary {
        SpawnSummary {
            delay: Percentiles::median_of(&rounds.iter().map(|r| r.delay).collect::<Vec<_>>()),
            measured: median_u64(rounds.iter().map(|round| round.measured)),
            spawned: median_u64(rounds.iter().map(|round| round.spawned)),
            compensations: median_option(rounds.iter().map(|round| round.compensations)),
        }
    }
}

/// One runtime's part 2 in one round: the echo client's latencies while
/// tasks blocked the workers now and then.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EchoSummary {
    /// Round-trip latencies in µs, counted as `mixed_load` counts them:
    /// from when the request was due, or from the previous reply if that
    /// came later. A stall therefore shows as one long request (the client
    /// has one connection, and sends the requests that fell due meanwhile
    /// back to back once it is answered).
    pub latency: Percentiles,
    /// The p99 after hdrhistogram's correction for coordinated omission:
    /// each request of L µs also counts the requests due during it, at
    /// L − period, L − 2 × period, … µs. It is the p99 that requests sent
    /// on schedule would have seen, so a stall's full length shows up.
    pub corrected_p99: u64,
    /// Requests answered.
    pub served: u64,
    /// Blocking calls the blocking tasks made.
    pub blocking_calls: u64,
    /// brigade's `compensations()` at the end of the run.
    pub compensations: Option<u64>,
}

impl EchoSummary {
    /// Summarises a run: `latencies_us` from `measure_open_loop`, requests
    /// sent every `period`.
    pub fn of(
        latencies_us: &Histogram<u64>,
        period: Duration,
        blocking_calls: u64,
        compensations: Option<u64>,
    ) -> EchoSummary {
        let mut corrected = Histogram::new_from(latencies_us);
        let period_us = (period.as_micros() as u64).max(1);
        // Same bounds on both sides, and `measure_open_loop` records with
        // saturation, so the correction cannot go out of range.
        let _ = corrected.add_correct(latencies_us, period_us);
        EchoSummary {
            latency: Percentiles::of(latencies_us),
            corrected_p99: Percentiles::of(&corrected).p99,
            served: latencies_us.len(),
            blocking_calls,
            compensations,
        }
    }

    /// Each figure's median over `rounds`.
    pub fn median_of(rounds: &[EchoSummary]) -> EchoSummary {
        EchoSummary {
            latency: Percentiles::median_of(&rounds.iter().map(|r| r.latency).collect::<Vec<_>>()),
            corrected_p99: median_u64(rounds.iter().map(|round| round.corrected_p99)),
            served: median_u64(rounds.iter().map(|round| round.served)),
            blocking_calls: median_u64(rounds.iter().map(|round| round.blocking_calls)),
            compensations: median_option(rounds.iter().map(|round| round.compensations)),
        }
    }
}

/// One runtime's results in both parts, a summary per round.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// The runtime.
    pub contender: Contender,
    /// Part 1, one summary per round.
    pub spawn: Vec<SpawnSummary>,
    /// Part 2, one summary per round.
    pub echo: Vec<EchoSummary>,
}

/// A run's length for the tables' headings: in seconds (one decimal) from
/// 1 s, in ms below, where one decimal of a second would round `--quick`'s
/// 150 ms away.
fn format_span(span: Duration) -> String {
    if span >= Duration::from_secs(1) {
        format!("{:.1} s", span.as_secs_f64())
    } else {
        format!("{} ms", span.as_millis())
    }
}

/// A count for the tables; `-` where the runtime has none.
fn format_count(count: Option<u64>) -> String {
    count.map_or_else(|| "-".to_owned(), |count| count.to_string())
}

/// Both markdown tables, the median round of every runtime (rows in
/// [`Contender::ALL`]'s order, whatever order they ran in).
pub fn format_tables(config: &Config, rows: &[Row]) -> String {
    let mut rows: Vec<&Row> = rows.iter().collect();
    rows.sort_by_key(|row| row.contender as usize);
    let rounds = match config.rounds {
        1 => "one round".to_owned(),
        rounds => format!("median of {rounds} rounds"),
    } + if config.driver_thread {
        "; brigade with its fallback driver thread"
    } else {
        ""
    };
    let mut text = String::new();
    let _ = writeln!(
        text,
        "Spawn-to-start delay while {} stuck in a {} ms \
         std::thread::sleep (a spawn every {} ms; {rounds}):\n",
        match config.workers {
            1 => "the only worker is".to_owned(),
            workers => format!("all {workers} workers are"),
        },
        config.stall.as_millis(),
        config.spawn_period.as_millis(),
    );
    let _ = writeln!(
        text,
        "| runtime | p50 | p99 | max | tasks measured | compensations |"
    );
    let _ = writeln!(text, "|---|---|---|---|---|---|");
    for row in &rows {
        let median = SpawnSummary::median_of(&row.spawn);
        let measured = if median.measured < median.spawned {
            format!("{} of {}", median.measured, median.spawned)
        } else {
            median.measured.to_string()
        };
        let _ = writeln!(
            text,
            "| {} | {} | {} | {} | {measured} | {} |",
            row.contender.name(),
            format_micros(median.delay.p50),
            format_micros(median.delay.p99),
            format_micros(median.delay.max),
            format_count(median.compensations),
        );
    }
    let _ = writeln!(
        text,
        "\nEcho round trips (a request every {} µs for {}) while one task per \
         worker blocks it for {} ms every {} ms ({rounds}):\n",
        config.request_period.as_micros(),
        format_span(config.echo_duration),
        config.block.as_millis(),
        config.block_every.as_millis(),
    );
    let _ = writeln!(
        text,
        "| runtime | p50 | p99 | p99.9 | max | p99 CO-corrected | served | compensations |"
    );
    let _ = writeln!(text, "|---|---|---|---|---|---|---|---|");
    for row in &rows {
        let median = EchoSummary::median_of(&row.echo);
        let _ = writeln!(
            text,
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            row.contender.name(),
            format_micros(median.latency.p50),
            format_micros(median.latency.p99),
            format_micros(median.latency.p999),
            format_micros(median.latency.max),
            format_micros(median.corrected_p99),
            median.served,
            format_count(median.compensations),
        );
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn histogram(values: impl IntoIterator<Item = u64>) -> Histogram<u64> {
        let mut histogram = Histogram::new_with_bounds(1, 60_000_000, 3).unwrap();
        for value in values {
            histogram.record(value).unwrap();
        }
        histogram
    }

    #[test]
    fn percentiles_follow_hdrhistogram() {
        let percentiles = Percentiles::of(&histogram(1..=1000));
        assert_eq!(
            percentiles,
            Percentiles {
                p50: 500,
                p99: 990,
                p999: 999,
                max: 1000
            }
        );
        assert_eq!(Percentiles::of(&histogram([])), Percentiles::default());
        // Five stalls among 5,000 requests stay above the p99.9.
        let five_stalls = Percentiles::of(&histogram(
            std::iter::repeat_n(100, 4995).chain(std::iter::repeat_n(200_000, 5)),
        ));
        // hdrhistogram keeps 3 significant digits: 200 ms reads 200.063 ms.
        assert_eq!((five_stalls.p999, five_stalls.max), (100, 200_063));
    }

    #[test]
    fn coordinated_omission_correction_counts_the_requests_a_stall_held_up() {
        // 1,000 requests of 100 µs and one of 200 ms, a request due every
        // millisecond: the stall held up 199 more, at 199 ms, 198 ms, …
        let latencies = histogram(std::iter::repeat_n(100, 1000).chain([200_000]));
        let summary = EchoSummary::of(&latencies, Duration::from_millis(1), 4, Some(2));
        assert_eq!(summary.served, 1001);
        assert_eq!(summary.latency.p99, 100);
        assert_eq!(summary.latency.max, 200_063);
        // 1,200 values, the top 12 are 189–200 ms.
        let p99 = summary.corrected_p99;
        assert!((188_000..=190_000).contains(&p99), "{p99}");
        assert_eq!(
            (summary.blocking_calls, summary.compensations),
            (4, Some(2))
        );
    }

    fn spawn_round(p99: u64, measured: u64, compensations: Option<u64>) -> SpawnSummary {
        SpawnSummary {
            delay: Percentiles {
                p50: p99 / 2,
                p99,
                p999: p99,
                max: p99 * 2,
            },
            measured,
            spawned: 1000,
            compensations,
        }
    }

    #[test]
    fn the_median_round_is_taken_figure_by_figure() {
        let median = SpawnSummary::median_of(&[
            spawn_round(300, 1000, Some(2)),
            spawn_round(100, 900, Some(4)),
            spawn_round(200, 950, Some(3)),
        ]);
        assert_eq!(median.delay.p99, 200);
        assert_eq!(median.delay.max, 400);
        assert_eq!(median.measured, 950);
        assert_eq!(median.compensations, Some(3));
        assert_eq!(median_option([Some(1), None].into_iter()), None);
        assert_eq!(median_u64([7].into_iter()), 7);
    }

    #[test]
    fn tables_have_a_row_per_runtime_in_a_fixed_order() {
        let latencies = histogram(std::iter::repeat_n(120, 100).chain([15_000]));
        let echo = EchoSummary::of(&latencies, Duration::from_millis(1), 3, None);
        let rows: Vec<Row> = [
            Contender::Tokio,
            Contender::Brigade,
            Contender::BrigadeUncompensated,
        ]
        .into_iter()
        .map(|contender| {
            let compensations = (contender != Contender::Tokio).then_some(2);
            Row {
                contender,
                spawn: vec![spawn_round(2_400_000, 900, compensations)],
                echo: vec![EchoSummary {
                    compensations,
                    ..echo
                }],
            }
        })
        .collect();
        let config = Config {
            rounds: 1,
            ..Config::default()
        };
        let text = format_tables(&config, &rows);
        let lines: Vec<&str> = text.lines().filter(|line| line.starts_with('|')).collect();
        assert_eq!(lines.len(), 2 * (2 + 3), "{text}");
        assert_eq!(
            lines[2],
            "| brigade (compensation on) | 1200.0 ms | 2400.0 ms | 4800.0 ms | 900 of 1000 | 2 |"
        );
        assert!(
            lines[3].starts_with("| brigade (compensation off) |"),
            "{text}"
        );
        assert!(
            lines[4].starts_with("| tokio |") && lines[4].ends_with("| - |"),
            "{text}"
        );
        assert_eq!(
            lines[7],
            "| brigade (compensation on) | 120 µs | 120 µs | 15.0 ms | 15.0 ms | 14.0 ms | 101 | 2 |"
        );
        assert!(
            text.contains("all 2 workers are stuck in a 2500 ms") && text.contains("one round")
        );
        let one_worker = Config {
            workers: 1,
            rounds: 3,
            driver_thread: true,
            ..Config::default()
        };
        let text = format_tables(&one_worker, &rows);
        assert!(text.contains("while the only worker is stuck"), "{text}");
        assert!(text.contains("for 5.0 s) while"), "{text}");
        assert_eq!(format_span(Duration::from_millis(150)), "150 ms");
        assert!(
            text.contains("median of 3 rounds; brigade with its fallback driver thread"),
            "{text}"
        );
    }
}
