//! The latency chart: p50, p99 and p99.9 foreground latency per variant,
//! a row of three horizontal bars each, grouped by case, on a logarithmic
//! axis (the variants span orders of magnitude). Rows keep every label on
//! a line of its own, however many variants run.

use std::fmt::Write as _;

use super::svg::{ChartInfo, LogScale, Svg, escape, format_period, text_width};
use super::{CaseResult, Outcome};

const WIDTH: f64 = 900.0;
/// Room right of the plot for the p99 figure at the end of the longest bar.
const RIGHT: f64 = 70.0;
/// The legend's baseline; the plot starts below it.
const LEGEND_Y: f64 = 68.0;
const TOP: f64 = 84.0;
const CASE_HEADER: f64 = 24.0;
const ROW: f64 = 36.0;
const BAR: f64 = 9.0;
const LABEL_SIZE: f64 = 11.0;
const SERIES: [(f64, &str, &str); 3] = [
    (0.50, "p50", "#9ecae1"),
    (0.99, "p99", "#2171b5"),
    (0.999, "p99.9", "#fd8d3c"),
];

/// A variant's latencies at [`SERIES`]' quantiles, or `None` if its
/// foreground starved.
fn quantiles(outcome: &Outcome) -> Option<[f64; 3]> {
    let latencies = &outcome.foreground.latencies_us;
    if outcome.foreground.starved || latencies.is_empty() {
        return None;
    }
    Some(SERIES.map(|(quantile, ..)| latencies.value_at_quantile(quantile) as f64))
}

/// Renders the chart for `results`, titled with `info`.
pub fn render_svg(results: &[CaseResult], info: &ChartInfo) -> String {
    let outcomes = || results.iter().flat_map(|result| &result.outcomes);
    let longest = outcomes()
        .map(|outcome| text_width(&outcome.name, LABEL_SIZE))
        .fold(0.0, f64::max);
    let left = (longest + 24.0).max(150.0);
    let rows = outcomes().count() as f64;
    let bottom = TOP + CASE_HEADER * results.len() as f64 + ROW * rows;
    let height = bottom + 50.0;
    let scale = LogScale::fit(
        outcomes().filter_map(quantiles).flat_map(|q| [q[0], q[2]]),
        left,
        WIDTH - RIGHT,
    );
    let mut svg = Svg::new(WIDTH, height);
    svg.title(
        &format!("Foreground latency: {}", info.describe()),
        &format!(
            "a 1-byte request every {} while the background keeps every worker busy; \
             p50, p99 and p99.9 per variant",
            format_period(info.period_us)
        ),
    );
    let any_starved = outcomes().any(|outcome| quantiles(outcome).is_none());
    legend(&mut svg, left, any_starved);
    latency_axis(&mut svg, &scale, bottom);
    let mut y = TOP;
    for result in results {
        svg.text(
            10.0,
            y + 16.0,
            r#"font-weight="bold" font-size="12""#,
            &result.case.label(),
        );
        y += CASE_HEADER;
        for outcome in &result.outcomes {
            row(&mut svg, &scale, outcome, y);
            y += ROW;
        }
        svg.raw(&format!(
            r##"<line x1="10" x2="{:.1}" y1="{y:.1}" y2="{y:.1}" stroke="#bbb"/>"##,
            WIDTH - 10.0
        ));
    }
    svg.finish()
}

/// The swatches of p50, p99 and p99.9, in a row above the plot, and what
/// "starved" means if a row says it.
fn legend(svg: &mut Svg, left: f64, any_starved: bool) {
    let mut x = left;
    for (_, name, colour) in SERIES {
        svg.raw(&format!(
            r#"<rect x="{x:.1}" y="{:.1}" width="12" height="12" fill="{colour}"/>"#,
            LEGEND_Y - 10.0
        ));
        svg.text(x + 16.0, LEGEND_Y, "", name);
        x += 16.0 + text_width(name, 12.0) + 18.0;
    }
    if any_starved {
        svg.text(
            x,
            LEGEND_Y,
            r##"fill="#c0392b""##,
            "starved: no reply within the run",
        );
    }
}

/// Vertical grid lines at the ticks, decade labels under the plot and the
/// axis title.
fn latency_axis(svg: &mut Svg, scale: &LogScale, bottom: f64) {
    for (micros, label) in scale.ticks() {
        let x = scale.at(micros);
        let stroke = if label.is_some() { "#ccc" } else { "#eee" };
        svg.raw(&format!(
            r#"<line x1="{x:.1}" x2="{x:.1}" y1="{TOP}" y2="{bottom:.1}" stroke="{stroke}"/>"#
        ));
        if let Some(label) = label {
            svg.text(x, bottom + 16.0, r#"text-anchor="middle""#, &label);
        }
    }
    svg.text(
        (scale.low + scale.high) / 2.0,
        bottom + 38.0,
        r#"text-anchor="middle""#,
        "foreground latency, log scale (shorter bars are better)",
    );
}

/// One variant's row: its name, then its three bars and the p99 figure, or
/// the starved band.
fn row(svg: &mut Svg, scale: &LogScale, outcome: &Outcome, y: f64) {
    svg.text(
        scale.low - 8.0,
        y + ROW / 2.0 + 4.0,
        &format!(r#"text-anchor="end" font-size="{LABEL_SIZE}""#),
        &outcome.name,
    );
    let Some(values) = quantiles(outcome) else {
        svg.raw(&format!(
            r##"<rect x="{:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="#e15759" fill-opacity="0.15"/>"##,
            scale.low,
            y + 4.0,
            scale.high - scale.low,
            ROW - 8.0
        ));
        svg.text(
            scale.low + 8.0,
            y + ROW / 2.0 + 4.0,
            r##"fill="#c0392b""##,
            "starved",
        );
        return;
    };
    let mut bars = String::new();
    for (index, (value, (_, _, colour))) in values.iter().zip(SERIES).enumerate() {
        let bar_y = y + 4.0 + (BAR + 1.0) * index as f64;
        let _ = write!(
            bars,
            r#"<rect x="{:.1}" y="{bar_y:.1}" width="{:.1}" height="{BAR}" fill="{colour}"/>"#,
            scale.low,
            (scale.at(*value) - scale.low).max(1.0),
        );
    }
    svg.raw(&bars);
    let p99 = values[1];
    svg.raw(&format!(
        r##"<text x="{:.1}" y="{:.1}" font-size="10" fill="#2171b5">{}</text>"##,
        scale.at(p99) + 4.0,
        y + 4.0 + BAR + 1.0 + BAR - 1.0,
        escape(&super::format_ms(p99 as u64))
    ));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mixed_load::report::tests::outcome;
    use crate::mixed_load::svg::tests::assert_no_text_overlaps;
    use crate::mixed_load::tests::{every_variant_results, info};

    #[test]
    fn a_row_per_variant_with_three_bars_and_a_starved_band() {
        let results = every_variant_results();
        let svg = render_svg(&results, &info());
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        let rows: usize = results.iter().map(|result| result.outcomes.len()).sum();
        let starved = results
            .iter()
            .flat_map(|result| &result.outcomes)
            .filter(|outcome| outcome.foreground.starved)
            .count();
        assert!(starved > 0);
        // Three bars per served row, a band per starved one, three legend
        // swatches, the background.
        assert_eq!(
            svg.matches("<rect").count(),
            3 * (rows - starved) + starved + 3 + 1
        );
        assert_eq!(svg.matches(">starved</text>").count(), starved);
        for result in &results {
            assert!(svg.contains(&escape(&result.case.label())));
        }
        assert!(svg.contains("2-core host") && svg.contains("64 background tasks × 100 µs"));
        assert!(svg.contains("shorter bars are better"));
        assert_no_text_overlaps(&svg);
    }

    #[test]
    fn names_are_escaped_and_long_ones_widen_the_label_column() {
        let results = [CaseResult {
            case: crate::mixed_load::plan(crate::mixed_load::VARIANTS, 0, |_| true).remove(1),
            outcomes: vec![outcome(
                "a<b/with_a_much_longer_name_than_any_variant_has",
                &[100, 200, 5000],
                false,
                0.5,
            )],
        }];
        let svg = render_svg(&results, &info());
        assert!(svg.contains("a&lt;b/with"));
        assert_no_text_overlaps(&svg);
    }
}
