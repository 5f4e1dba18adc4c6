//! The verdict: a few words per case that say what the tables show,
//! brigade's `yield_if_busy` against tokio's `yield_now` (the call it
//! replaces), e.g. "quiet host: foreground p99: brigade 0.19 ms, tokio 3.2
//! ms: tokio's p99 is 17× brigade's; background share: brigade 1.00, tokio
//! 0.99", and brigade's plain `yield_now` (code written for tokio) on a
//! line of its own, which says so plainly when `yield_if_busy` did worse
//! than it in the run.

use std::fmt::Write as _;

use super::{CaseKind, CaseResult, Outcome};

/// Below this ratio two p99s are called level.
const LEVEL: f64 = 1.1;

/// The first two lines of the verdict of a run of `rounds` rounds: what is
/// compared, over what, and which way is better.
pub fn verdict_heading(rounds: usize) -> String {
    let over = match rounds {
        0 | 1 => "one round".to_owned(),
        rounds => format!("{rounds} rounds: latencies pooled, shares the median round"),
    };
    format!(
        "verdict ({over}): foreground p99 (lower is better) and the background's share of\n\
         the workers' CPU (higher is better); brigade = yield_if_busy, tokio = yield_now:"
    )
}

/// A latency with two significant digits or so: `14 µs`, `0.21 ms`,
/// `3.3 ms`, `398 ms`, `1.2 s` (in µs below 0.1 ms, where two decimals of
/// a ms would say too little).
pub fn format_ms(micros: u64) -> String {
    let ms = micros as f64 / 1000.0;
    match ms {
        _ if micros < 100 => format!("{micros} µs"),
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

/// How two p99s compare, the higher named first: `tokio's p99 is 17×
/// brigade's`, `brigade's p99 is 1.5× tokio's`, or `level (within 10%)`.
pub fn compare(a: (&str, u64), b: (&str, u64)) -> String {
    let ((high_name, high), (low_name, low)) = if a.1 >= b.1 { (a, b) } else { (b, a) };
    let ratio = high.max(1) as f64 / low.max(1) as f64;
    if ratio < LEVEL {
        return "level (within 10%)".to_owned();
    }
    let times = if ratio < 10.0 {
        format!("{ratio:.1}×")
    } else {
        format!("{ratio:.0}×")
    };
    format!("{high_name}'s p99 is {times} {low_name}'s")
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
        lines.push(plain_line(plain, result.outcome(brigade)));
    }
    (!lines.is_empty()).then(|| (result.case.label(), lines))
}

/// `foreground p99: brigade 0.19 ms, tokio 3.2 ms: tokio's p99 is 17×
/// brigade's; background share: brigade 1.00, tokio 0.99`, for the sides
/// that ran.
fn main_line(sides: &[(&str, &Outcome)], busy: bool) -> String {
    let latencies: Vec<String> = sides
        .iter()
        .map(|(runtime, outcome)| format!("{runtime} {}", latency(outcome)))
        .collect();
    let mut segment = format!("foreground p99: {}", latencies.join(", "));
    if let [(_, brigade), (_, tokio)] = sides
        && let (Some(brigade_us), Some(tokio_us)) = (p99(brigade), p99(tokio))
    {
        let _ = write!(
            segment,
            ": {}",
            compare(("brigade", brigade_us), ("tokio", tokio_us))
        );
    }
    if busy {
        let shares: Vec<String> = sides
            .iter()
            .map(|(runtime, outcome)| format!("{runtime} {:.2}", outcome.background_share()))
            .collect();
        let _ = write!(segment, "; background share: {}", shares.join(", "));
    }
    segment
}

/// brigade's plain `yield_now` beside its `yield_if_busy` (if that ran):
/// `brigade's plain yield_now: p99 0.23 ms, background share 0.94;
/// yield_now's p99 is 1.2× yield_if_busy's`, or, where `yield_if_busy` did
/// worse, a sentence that says so first.
fn plain_line(plain: &Outcome, if_busy: Option<&Outcome>) -> String {
    let mut line = format!(
        "brigade's plain yield_now: p99 {}, background share {:.2}",
        latency(plain),
        plain.background_share()
    );
    let (Some(plain_us), Some(if_busy_us)) = (p99(plain), if_busy.and_then(p99)) else {
        return line;
    };
    let comparison = compare(("yield_if_busy", if_busy_us), ("yield_now", plain_us));
    if if_busy_us as f64 >= plain_us as f64 * LEVEL {
        let _ = write!(
            line,
            "; yield_if_busy did worse than plain yield_now in this run: {comparison}"
        );
    } else {
        let _ = write!(line, "; {comparison}");
    }
    line
}

/// The number of rounds behind `results`: the most any variant ran.
pub fn rounds(results: &[CaseResult]) -> usize {
    results
        .iter()
        .flat_map(|result| &result.outcomes)
        .map(|outcome| outcome.background_shares.len())
        .max()
        .unwrap_or(0)
}

/// The verdict: [`verdict_heading`], then each case that has something to
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
    let mut text = format!("{}\n", verdict_heading(rounds(results)));
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
        assert_eq!(format_ms(14), "14 µs");
        assert_eq!(format_ms(100), "0.10 ms");
        assert_eq!(format_ms(210), "0.21 ms");
        assert_eq!(format_ms(3_300), "3.3 ms");
        assert_eq!(format_ms(398_000), "398 ms");
        assert_eq!(format_ms(1_250_000), "1.2 s");
    }

    #[test]
    fn comparisons_name_the_higher_p99_first() {
        assert_eq!(
            compare(("brigade", 190), ("tokio", 3_230)),
            "tokio's p99 is 17× brigade's"
        );
        assert_eq!(
            compare(("brigade", 300), ("tokio", 200)),
            "brigade's p99 is 1.5× tokio's"
        );
        assert_eq!(
            compare(("brigade", 200), ("tokio", 300)),
            "tokio's p99 is 1.5× brigade's"
        );
        assert_eq!(
            compare(("brigade", 200), ("tokio", 210)),
            "level (within 10%)"
        );
        assert_eq!(compare(("brigade", 0), ("tokio", 0)), "level (within 10%)");
    }

    #[test]
    fn the_heading_names_the_rounds() {
        assert!(verdict_heading(1).starts_with("verdict (one round):"));
        assert!(verdict_heading(3).starts_with("verdict (3 rounds: latencies pooled"));
        assert_eq!(verdict_heading(1).lines().count(), 2);
    }

    #[test]
    fn yield_if_busy_worse_than_plain_yield_now_is_said_plainly() {
        // The crowded host of 2026-11-26: 0.42 ms against 0.23 ms.
        let result = CaseResult {
            case: case(CaseKind::Crowded),
            outcomes: vec![
                flat("brigade/yield_if_busy", 420, 0.64),
                flat("brigade/yield_now", 230, 0.63),
                flat("tokio/yield_now", 6_600, 0.65),
            ],
        };
        let (_, lines) = case_verdict(&result).unwrap();
        assert_eq!(
            lines[1],
            "brigade's plain yield_now: p99 0.23 ms, background share 0.63; \
             yield_if_busy did worse than plain yield_now in this run: \
             yield_if_busy's p99 is 1.8× yield_now's"
        );
        // Level, or better: no such sentence.
        let mut level = result;
        level.outcomes[0] = flat("brigade/yield_if_busy", 240, 0.64);
        let (_, lines) = case_verdict(&level).unwrap();
        assert_eq!(
            lines[1],
            "brigade's plain yield_now: p99 0.23 ms, background share 0.63; level (within 10%)"
        );
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
                "foreground p99: brigade 0.21 ms, tokio 3.3 ms: tokio's p99 is 16× brigade's; \
                 background share: brigade 0.94, tokio 0.97",
                "brigade's plain yield_now: p99 0.23 ms, background share 0.94; \
                 level (within 10%)"
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
            ["foreground p99: brigade 0.17 ms, tokio 0.18 ms: level (within 10%)"]
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
                    "foreground p99: brigade 0.19 ms, tokio starved; \
                     background share: brigade 1.00, tokio 0.99"
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
            ["brigade's plain yield_now: p99 0.50 ms, background share 0.90"]
        );
        let nothing = CaseResult {
            case: case(CaseKind::Quiet),
            outcomes: vec![flat("tokio/consume_budget", 500, 0.9)],
        };
        assert_eq!(case_verdict(&nothing), None);
        assert_eq!(format_verdict(&[nothing]), "");
        let verdict = format_verdict(&[only_plain]);
        assert!(verdict.starts_with(&verdict_heading(1)), "{verdict}");
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
                "  foreground alone:  foreground p99: brigade 0.17 ms, tokio 0.18 ms: \
                 level (within 10%)",
                "  quiet host:        foreground p99: brigade 0.21 ms, tokio 3.3 ms: \
                 tokio's p99 is 16× brigade's; background share: brigade 0.94, tokio 0.97",
                "                     brigade's plain yield_now: p99 0.23 ms, background share \
                 0.94; level (within 10%)",
            ]
        );
    }
}
