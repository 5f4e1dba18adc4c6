//! The verdict: a few words per case that say what the tables show,
//! brigade's `yield_if_busy` against tokio's `yield_now` (the call it
//! replaces), e.g. "quiet host: foreground p99: brigade 0.21 ms, tokio 3.3
//! ms (15× lower) at background share 0.94 against 0.97", and brigade's
//! plain `yield_now` (code written for tokio) on a line of its own.

use std::fmt::Write as _;

use super::{CaseKind, CaseResult, Outcome};

/// The first lines of the verdict: what is compared, and which way is
/// better.
pub const VERDICT_HEADING: &str = "\
verdict: foreground p99 (lower is better) and the background's share of the workers' CPU
(higher is better); brigade = yield_if_busy, tokio = yield_now after each background unit:";

/// A latency in ms with two significant digits or so: `0.21 ms`, `3.3 ms`,
/// `398 ms`, `1.2 s`.
pub fn format_ms(micros: u64) -> String {
    let ms = micros as f64 / 1000.0;
    match ms {
        ms if ms < 1.0 => format!("{ms:.2} ms"),
        ms if ms < 10.0 => format!("{ms:.1} ms"),
        ms if ms < 1000.0 => format!("{ms:.0} ms"),
        ms => format!("{:.1} s", ms / 1000.0),
    }
}

/// The foreground p99 in µs, or `None` if the foreground starved.
pub fn p99(outcome: &Outcome) -> Option<u64> {
    let latencies = &outcome.foreground.latencies_us;
    (!outcome.foreground.starved && !latencies.is_empty())
        .then(|| latencies.value_at_quantile(0.99))
}

/// How brigade's p99 compares with tokio's: `15× lower`, `1.3× higher`,
/// or `level` within 10 %.
pub fn compare(brigade_us: u64, tokio_us: u64) -> String {
    let ratio = tokio_us.max(1) as f64 / brigade_us.max(1) as f64;
    let times = |ratio: f64| {
        if ratio < 10.0 {
            format!("{ratio:.1}×")
        } else {
            format!("{ratio:.0}×")
        }
    };
    if ratio >= 1.1 {
        format!("{} lower", times(ratio))
    } else if ratio <= 1.0 / 1.1 {
        format!("{} higher", times(1.0 / ratio))
    } else {
        "level".to_owned()
    }
}

fn latency(outcome: &Outcome) -> String {
    p99(outcome).map_or_else(|| "starved".to_owned(), format_ms)
}

/// The verdict on one case: its label and a line or two, or `None` if
/// none of the variants it compares ran.
pub fn case_verdict(result: &CaseResult) -> Option<(String, Vec<String>)> {
    let busy = result.case.kind != CaseKind::Idle;
    let (brigade, tokio) = if busy {
        ("brigade/yield_if_busy", "tokio/yield_now")
    } else {
        ("idle/brigade", "idle/tokio")
    };
    let sides: Vec<(&str, &Outcome)> = [("brigade", brigade), ("tokio", tokio)]
        .into_iter()
        .filter_map(|(runtime, name)| Some((runtime, result.outcome(name)?)))
        .collect();
    let mut lines = Vec::new();
    if !sides.is_empty() {
        lines.push(main_line(&sides, busy));
    }
    if busy && let Some(plain) = result.outcome("brigade/yield_now") {
        lines.push(format!(
            "brigade's plain yield_now: {} at background share {:.2}",
            latency(plain),
            plain.background_share()
        ));
    }
    (!lines.is_empty()).then(|| (result.case.label(), lines))
}

/// `foreground p99: brigade 0.21 ms, tokio 3.3 ms (15× lower) at background
/// share 0.94 against 0.97`, for the sides that ran.
fn main_line(sides: &[(&str, &Outcome)], busy: bool) -> String {
    let latencies: Vec<String> = sides
        .iter()
        .map(|(runtime, outcome)| format!("{runtime} {}", latency(outcome)))
        .collect();
    let mut segment = format!("foreground p99: {}", latencies.join(", "));
    if let [(_, brigade), (_, tokio)] = sides
        && let (Some(brigade_us), Some(tokio_us)) = (p99(brigade), p99(tokio))
    {
        let _ = write!(segment, " ({})", compare(brigade_us, tokio_us));
    }
    if busy {
        let shares: Vec<String> = sides
            .iter()
            .map(|(_, outcome)| format!("{:.2}", outcome.background_share()))
            .collect();
        let _ = write!(segment, " at background share {}", shares.join(" against "));
    }
    segment
}

/// The verdict: [`VERDICT_HEADING`], then each case that has something to
/// compare, its label in a column of its own.
pub fn format_verdict(results: &[CaseResult]) -> String {
    let verdicts: Vec<(String, Vec<String>)> = results.iter().filter_map(case_verdict).collect();
    if verdicts.is_empty() {
        return String::new();
    }
    let width = verdicts
        .iter()
        .map(|(label, _)| label.chars().count() + 1)
        .max()
        .unwrap_or(0);
    let mut text = format!("{VERDICT_HEADING}\n");
    for (label, lines) in verdicts {
        for (index, line) in lines.iter().enumerate() {
            let label = if index == 0 {
                format!("{label}:")
            } else {
                String::new()
            };
            let _ = writeln!(text, "  {label:<width$}  {line}");
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mixed_load::report::tests::outcome;
    use crate::mixed_load::{Case, demo_variants, plan};

    /// `count` requests at `micros` µs each: every percentile is `micros`.
    fn flat(name: &str, micros: u64, share: f64) -> Outcome {
        outcome(name, &vec![micros; 200], false, share)
    }

    fn case(kind: CaseKind) -> Case {
        plan(&demo_variants(), 1, |_| true)
            .into_iter()
            .find(|case| case.kind == kind)
            .unwrap()
    }

    #[test]
    fn latencies_read_in_ms_with_two_digits() {
        assert_eq!(format_ms(210), "0.21 ms");
        assert_eq!(format_ms(3_300), "3.3 ms");
        assert_eq!(format_ms(398_000), "398 ms");
        assert_eq!(format_ms(1_250_000), "1.2 s");
    }

    #[test]
    fn comparisons_say_lower_higher_or_level() {
        assert_eq!(compare(210, 3_300), "16× lower");
        assert_eq!(compare(200, 300), "1.5× lower");
        assert_eq!(compare(300, 200), "1.5× higher");
        assert_eq!(compare(200, 210), "level");
        assert_eq!(compare(0, 0), "level");
    }

    #[test]
    fn a_busy_case_compares_yield_if_busy_with_tokio_and_names_plain_yield_now() {
        let result = CaseResult {
            case: case(CaseKind::Quiet),
            outcomes: vec![
                flat("brigade/yield_if_busy", 210, 0.94),
                flat("brigade/yield_now", 230, 0.935),
                flat("tokio/yield_now", 3_300, 0.97),
            ],
        };
        let (label, lines) = case_verdict(&result).unwrap();
        assert_eq!(label, "quiet host");
        assert_eq!(
            lines,
            [
                "foreground p99: brigade 0.21 ms, tokio 3.3 ms (16× lower) \
                 at background share 0.94 against 0.97",
                "brigade's plain yield_now: 0.23 ms at background share 0.94"
            ]
        );
    }

    #[test]
    fn the_idle_case_has_no_share_and_a_starved_side_no_ratio() {
        let idle = CaseResult {
            case: case(CaseKind::Idle),
            outcomes: vec![flat("idle/brigade", 170, 0.0), flat("idle/tokio", 180, 0.0)],
        };
        assert_eq!(
            case_verdict(&idle).unwrap().1,
            ["foreground p99: brigade 0.17 ms, tokio 0.18 ms (level)"]
        );
        let crowded = CaseResult {
            case: case(CaseKind::Crowded),
            outcomes: vec![
                flat("brigade/yield_if_busy", 190, 1.0),
                outcome("tokio/yield_now", &[], true, 0.99),
            ],
        };
        assert_eq!(
            case_verdict(&crowded).unwrap(),
            (
                "crowded host (1 busy neighbour)".to_owned(),
                vec![
                    "foreground p99: brigade 0.19 ms, tokio starved \
                     at background share 1.00 against 0.99"
                        .to_owned()
                ]
            )
        );
    }

    #[test]
    fn cases_without_the_compared_variants_are_left_out() {
        let only_plain = CaseResult {
            case: case(CaseKind::Quiet),
            outcomes: vec![flat("brigade/yield_now", 500, 0.9)],
        };
        assert_eq!(
            case_verdict(&only_plain).unwrap().1,
            ["brigade's plain yield_now: 0.50 ms at background share 0.90"]
        );
        let nothing = CaseResult {
            case: case(CaseKind::Quiet),
            outcomes: vec![flat("tokio/consume_budget", 500, 0.9)],
        };
        assert_eq!(case_verdict(&nothing), None);
        assert_eq!(format_verdict(&[nothing]), "");
        let verdict = format_verdict(&[only_plain]);
        assert!(verdict.starts_with(VERDICT_HEADING), "{verdict}");
        assert_eq!(verdict.lines().count(), 3, "{verdict}");
    }

    #[test]
    fn the_verdict_aligns_the_cases_lines() {
        let idle = CaseResult {
            case: case(CaseKind::Idle),
            outcomes: vec![flat("idle/brigade", 170, 0.0), flat("idle/tokio", 180, 0.0)],
        };
        let quiet = CaseResult {
            case: case(CaseKind::Quiet),
            outcomes: vec![
                flat("brigade/yield_if_busy", 210, 0.94),
                flat("brigade/yield_now", 230, 0.935),
                flat("tokio/yield_now", 3_300, 0.97),
            ],
        };
        let verdict = format_verdict(&[idle, quiet]);
        let lines: Vec<&str> = verdict.lines().skip(2).collect();
        assert_eq!(
            lines,
            [
                "  foreground alone:  foreground p99: brigade 0.17 ms, tokio 0.18 ms (level)",
                "  quiet host:        foreground p99: brigade 0.21 ms, tokio 3.3 ms (16× lower) \
                 at background share 0.94 against 0.97",
                "                     brigade's plain yield_now: 0.23 ms at background share 0.94",
            ]
        );
    }
}
