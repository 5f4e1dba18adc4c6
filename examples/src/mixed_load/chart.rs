//! The latency chart: p50, p99 and p99.9 foreground latency per variant,
//! a row of three horizontal bars each, grouped by case, on a linear axis
//! from 0, so that a bar 17 times as long is a latency 17 times as high.
//! Every bar carries its value. The axis ends just above the longest p99
//! ([`axis_limit`]); a bar beyond the end (a p99.9 far above every p99, or
//! a variant whose p99 reached 100 request periods, nearly starved) is cut
//! there, marked with a break and still labelled with its value. Rows keep every label on a line of its
//! own, however many variants run.

use std::fmt::Write as _;

use super::svg::{
    ChartInfo, LinearScale, STARVING_PERIODS, Svg, axis_limit, escape, format_period,
    latency_basis, text_width,
};
use super::{CaseResult, Outcome};

const WIDTH: f64 = 900.0;
/// Room right of the plot for the value at the end of the longest bar.
const RIGHT: f64 = 60.0;
/// The legend's baseline; the plot starts below it.
const LEGEND_Y: f64 = 68.0;
const TOP: f64 = 84.0;
const CASE_HEADER: f64 = 24.0;
const ROW: f64 = 36.0;
const BAR: f64 = 9.0;
const LABEL_SIZE: f64 = 11.0;
/// The size of the values at the bars' ends.
const VALUE_SIZE: f64 = 9.0;
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
    let served: Vec<[f64; 3]> = outcomes().filter_map(quantiles).collect();
    let p99s: Vec<f64> = served.iter().map(|q| q[1]).collect();
    let p999s: Vec<f64> = served.iter().map(|q| q[2]).collect();
    let starving = STARVING_PERIODS * info.period_us as f64;
    let scale = LinearScale::fit(axis_limit(&p99s, &p999s, starving), left, WIDTH - RIGHT);
    let any_cut = served.iter().any(|q| scale.is_cut(q[2]));
    let mut svg = Svg::new(WIDTH, height);
    svg.title(
        &format!("Foreground latency: {}", info.describe()),
        &format!(
            "a 1-byte request every {} while the background keeps every worker busy; \
             p50, p99 and p99.9 per variant, {}",
            format_period(info.period_us),
            latency_basis(info.rounds)
        ),
    );
    let any_starved = outcomes().any(|outcome| quantiles(outcome).is_none());
    legend(&mut svg, left, any_starved);
    latency_axis(&mut svg, &scale, bottom, any_cut);
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

/// Vertical grid lines and labels at the ticks, and the axis title, which
/// says how bars beyond the end are drawn if any are.
fn latency_axis(svg: &mut Svg, scale: &LinearScale, bottom: f64, any_cut: bool) {
    for (micros, label) in scale.ticks() {
        let x = scale.at(micros);
        let stroke = if micros == 0.0 { "#999" } else { "#ddd" };
        svg.raw(&format!(
            r#"<line x1="{x:.1}" x2="{x:.1}" y1="{TOP}" y2="{bottom:.1}" stroke="{stroke}"/>"#
        ));
        svg.text(x, bottom + 16.0, r#"text-anchor="middle""#, &label);
    }
    let title = if any_cut {
        "foreground latency, linear scale (shorter bars are better); \
         // = cut at the axis' end"
    } else {
        "foreground latency, linear scale (shorter bars are better)"
    };
    svg.text(
        (scale.low + scale.high) / 2.0,
        bottom + 38.0,
        r#"text-anchor="middle""#,
        title,
    );
}

/// One variant's row: its name, then its three bars, each with its value,
/// or the starved band.
fn row(svg: &mut Svg, scale: &LinearScale, outcome: &Outcome, y: f64) {
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
    for (index, (value, (_, _, colour))) in values.iter().zip(SERIES).enumerate() {
        bar(
            svg,
            scale,
            *value,
            colour,
            y + 4.0 + (BAR + 1.0) * index as f64,
        );
    }
}

/// One bar from the axis' 0 to `micros`, at most to the axis' end (then
/// with a break mark), and its value after it.
fn bar(svg: &mut Svg, scale: &LinearScale, micros: f64, colour: &str, top: f64) {
    let end = scale.at(micros);
    let mut element = format!(
        r#"<rect x="{:.1}" y="{top:.1}" width="{:.1}" height="{BAR}" fill="{colour}"/>"#,
        scale.low,
        (end - scale.low).max(1.0),
    );
    if scale.is_cut(micros) {
        // Two white slashes across the bar, just before its end.
        for offset in [14.0, 9.0] {
            let x = end - offset;
            let _ = write!(
                element,
                r#"<line x1="{:.1}" x2="{:.1}" y1="{:.1}" y2="{top:.1}" stroke="white" stroke-width="2"/>"#,
                x - 2.0,
                x + 2.0,
                top + BAR
            );
        }
    }
    svg.raw(&element);
    svg.raw(&format!(
        r##"<text x="{:.1}" y="{:.1}" font-size="{VALUE_SIZE}" fill="#333">{}</text>"##,
        end + 3.0,
        top + BAR - 1.0,
        escape(&super::format_ms(micros as u64))
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
        // Three bars per served row, each with its value, a band per
        // starved one, three legend swatches, the background.
        let served = rows - starved;
        assert_eq!(svg.matches("<rect").count(), 3 * served + starved + 3 + 1);
        assert_eq!(svg.matches(r#"font-size="9""#).count(), 3 * served);
        assert_eq!(svg.matches(">starved</text>").count(), starved);
        for result in &results {
            assert!(svg.contains(&escape(&result.case.label())));
        }
        assert!(svg.contains("2-core host") && svg.contains("64 background tasks × 100 µs"));
        assert!(svg.contains("linear scale (shorter bars are better)"));
        // consume_budget's 400 ms tail is cut, and the axis says so.
        assert!(svg.contains("cut at the axis") && svg.contains(">400 ms</text>"));
        assert!(svg.contains("one round") && !svg.contains("median"));
        assert_no_text_overlaps(&svg);
    }

    /// The `width` of the bar whose value reads `value`.
    fn bar_width(svg: &str, value: &str) -> f64 {
        let label = format!(">{value}</text>");
        let at = svg
            .find(&label)
            .unwrap_or_else(|| panic!("no bar of {value}"));
        let rect = &svg[svg[..at].rfind("<rect").unwrap()..at];
        let start = rect.find(" width=\"").unwrap() + 8;
        rect[start..start + rect[start..].find('"').unwrap()]
            .parse()
            .unwrap()
    }

    #[test]
    fn bar_lengths_are_proportional_to_the_values_they_carry() {
        let results = [CaseResult {
            case: crate::mixed_load::plan(crate::mixed_load::VARIANTS, 0, |_| true).remove(1),
            outcomes: vec![
                outcome("brigade/yield_if_busy", &[100, 190, 190], false, 1.0),
                outcome("tokio/yield_now", &[1_000, 3_230, 3_230], false, 0.99),
            ],
        }];
        let svg = render_svg(&results, &info());
        let ratio = bar_width(&svg, "3.2 ms") / bar_width(&svg, "0.19 ms");
        assert!((ratio - 17.0).abs() < 0.1, "{ratio}");
        assert!(!svg.contains("cut at the axis"), "nothing is cut");
        let mut three_rounds = info();
        three_rounds.rounds = 3;
        assert!(render_svg(&results, &three_rounds).contains("3 rounds pooled"));
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
