//! The trade-off chart: foreground p99 against background CPU share, a
//! marker per variant and busy case. Latency alone hides half the story: a
//! variant can keep the foreground fast by starving the background
//! (elastic admission while its limit is low), or keep the background busy
//! by starving the foreground. The corner to reach is the bottom right: low
//! p99, full share.
//!
//! Colours name the variants and shapes the cases, in a legend beside the
//! plot, so no label sits among the markers. Markers that land on one
//! another are drawn smaller in turn, so each stays visible. A starved
//! variant has no p99: its marker sits in a band above the plot, at its
//! share. The idle references (no background, so no share) are dashed
//! horizontal lines at their p99.

use super::svg::{ChartInfo, LogScale, Svg, colour};
use super::{CaseKind, CaseResult, Outcome, verdict::p99};

const WIDTH: f64 = 900.0;
const LEFT: f64 = 80.0;
const PLOT_RIGHT: f64 = 630.0;
const LEGEND_X: f64 = 652.0;
const STRIP_TOP: f64 = 60.0;
const STRIP_BOTTOM: f64 = 84.0;
const TOP: f64 = 92.0;
/// The plot's bottom unless the legend needs more room.
const MIN_BOTTOM: f64 = 430.0;
const LEGEND_ROW: f64 = 18.0;
const RADIUS: f64 = 8.0;

/// The share axis: `low` to `high`, ticks every `step`.
struct ShareScale {
    low: f64,
    high: f64,
    step: f64,
}

impl ShareScale {
    /// From a little below the lowest share to 1 (or a little above the
    /// highest, for shares above 1 from the calibration's error), in
    /// twentieths, with room for the markers at either end.
    fn fit(shares: impl IntoIterator<Item = f64>) -> ShareScale {
        let (min, max) = shares
            .into_iter()
            .fold((1.0f64, 0.0f64), |(min, max), share| {
                (min.min(share), max.max(share))
            });
        // The nudges keep 1.05 × 20 = 21.000000000000004 from rounding up.
        let low = (((min - 0.02) * 20.0 + 1e-9).floor() / 20.0).max(0.0);
        let high = (((max + 0.02) * 20.0 - 1e-9).ceil() / 20.0).max(1.0);
        let step = [0.01, 0.02, 0.05, 0.1, 0.2, 0.25]
            .into_iter()
            .find(|step| (high - low) / step <= 8.0 + 1e-9)
            .unwrap_or(0.25);
        ShareScale { low, high, step }
    }

    fn x(&self, share: f64) -> f64 {
        let fraction = (share.clamp(self.low, self.high) - self.low) / (self.high - self.low);
        LEFT + (PLOT_RIGHT - LEFT) * fraction
    }

    /// The multiples of the step on the axis.
    fn ticks(&self) -> Vec<f64> {
        let first = (self.low / self.step - 1e-9).ceil() as i64;
        let last = (self.high / self.step + 1e-9).floor() as i64;
        (first..=last)
            .map(|multiple| multiple as f64 * self.step)
            .collect()
    }
}

/// A marker's shape, by case: a circle on the quiet host, a triangle on the
/// crowded one.
fn marker(kind: CaseKind, x: f64, y: f64, radius: f64, fill: &str) -> String {
    let style = format!(r#"fill="{fill}" stroke="white" stroke-width="1""#);
    match kind {
        CaseKind::Crowded => {
            let r = radius * 1.25;
            format!(
                r#"<polygon points="{x:.1},{:.1} {:.1},{:.1} {:.1},{:.1}" {style}/>"#,
                y - r,
                x - r * 0.9,
                y + r * 0.6,
                x + r * 0.9,
                y + r * 0.6
            )
        }
        _ => format!(r#"<circle cx="{x:.1}" cy="{y:.1}" r="{radius:.1}" {style}/>"#),
    }
}

/// Renders the chart for `results`, titled with `info`.
pub fn render_tradeoff_svg(results: &[CaseResult], info: &ChartInfo) -> String {
    let busy: Vec<&CaseResult> = results
        .iter()
        .filter(|result| result.case.kind != CaseKind::Idle)
        .collect();
    let idle: Vec<&Outcome> = results
        .iter()
        .filter(|result| result.case.kind == CaseKind::Idle)
        .flat_map(|result| &result.outcomes)
        .collect();
    let points = || busy.iter().flat_map(|result| &result.outcomes);
    let legend = Legend::new(&busy, &idle);
    let bottom = MIN_BOTTOM.max(TOP + legend.height());
    let shares = ShareScale::fit(points().map(Outcome::background_share));
    let latencies = LogScale::fit(
        points()
            .chain(idle.iter().copied())
            .filter_map(p99)
            .map(|us| us as f64),
        bottom,
        TOP,
    );
    let mut svg = Svg::new(WIDTH, bottom + 54.0);
    svg.title(
        &format!(
            "Foreground p99 against background share: {}",
            info.describe()
        ),
        "one marker per variant and host; best: bottom right (low p99, full share)",
    );
    axes(&mut svg, &shares, &latencies, bottom);
    if points().any(|outcome| p99(outcome).is_none()) {
        starved_band(&mut svg);
    }
    for outcome in &idle {
        if let Some(us) = p99(outcome) {
            let y = latencies.at(us as f64);
            svg.raw(&format!(
                r#"<line x1="{LEFT}" x2="{PLOT_RIGHT}" y1="{y:.1}" y2="{y:.1}" stroke="{}" stroke-width="1.5" stroke-dasharray="6 4"/>"#,
                colour(&outcome.name)
            ));
        }
    }
    let mut drawn: Vec<(f64, f64)> = Vec::new();
    for result in &busy {
        for outcome in &result.outcomes {
            let x = shares.x(outcome.background_share());
            let y = p99(outcome).map_or((STRIP_TOP + STRIP_BOTTOM) / 2.0, |us| {
                latencies.at(us as f64)
            });
            // Each marker already within reach makes this one smaller, so
            // that coinciding markers nest instead of hiding each other.
            let under = drawn
                .iter()
                .filter(|(other_x, other_y)| (other_x - x).hypot(other_y - y) < RADIUS * 1.5)
                .count();
            let radius = (RADIUS - 3.0 * under as f64).max(2.5);
            svg.raw(&marker(
                result.case.kind,
                x,
                y,
                radius,
                colour(&outcome.name),
            ));
            drawn.push((x, y));
        }
    }
    legend.draw(&mut svg);
    svg.finish()
}

/// Grid, tick labels and titles of both axes.
fn axes(svg: &mut Svg, shares: &ShareScale, latencies: &LogScale, bottom: f64) {
    for share in shares.ticks() {
        let x = shares.x(share);
        svg.raw(&format!(
            r##"<line x1="{x:.1}" x2="{x:.1}" y1="{TOP}" y2="{bottom:.1}" stroke="#e4e4e4"/>"##
        ));
        svg.text(
            x,
            bottom + 20.0,
            r#"text-anchor="middle""#,
            &format!("{share:.2}"),
        );
    }
    for (micros, label) in latencies.ticks() {
        let y = latencies.at(micros);
        let stroke = if label.is_some() { "#ccc" } else { "#eee" };
        svg.raw(&format!(
            r#"<line x1="{LEFT}" x2="{PLOT_RIGHT}" y1="{y:.1}" y2="{y:.1}" stroke="{stroke}"/>"#
        ));
        if let Some(label) = label {
            svg.text(LEFT - 6.0, y + 4.0, r#"text-anchor="end""#, &label);
        }
    }
    svg.raw(&format!(
        r##"<rect x="{LEFT}" y="{TOP}" width="{:.1}" height="{:.1}" fill="none" stroke="#999"/>"##,
        PLOT_RIGHT - LEFT,
        bottom - TOP
    ));
    svg.text(
        (LEFT + PLOT_RIGHT) / 2.0,
        bottom + 40.0,
        r#"text-anchor="middle""#,
        "background CPU share of the workers, median round (higher is better →)",
    );
    svg.raw(&format!(
        r#"<text transform="translate(18,{:.1}) rotate(-90)" text-anchor="middle">foreground p99, log scale (lower is better ↓)</text>"#,
        (TOP + bottom) / 2.0
    ));
}

/// The band above the plot where starved variants sit.
fn starved_band(svg: &mut Svg) {
    svg.raw(&format!(
        r##"<rect x="{LEFT}" y="{STRIP_TOP}" width="{:.1}" height="{:.1}" fill="#e15759" fill-opacity="0.12"/>"##,
        PLOT_RIGHT - LEFT,
        STRIP_BOTTOM - STRIP_TOP
    ));
    svg.text(
        LEFT - 6.0,
        (STRIP_TOP + STRIP_BOTTOM) / 2.0 + 4.0,
        r##"text-anchor="end" fill="#c0392b""##,
        "starved",
    );
}

/// The legend beside the plot: a colour per variant, a shape per case, the
/// idle references' lines, and how to read the chart.
struct Legend {
    /// Rows of (swatch element, text); a `None` swatch is a heading.
    rows: Vec<(Option<String>, String)>,
}

impl Legend {
    fn new(busy: &[&CaseResult], idle: &[&Outcome]) -> Legend {
        let mut rows = vec![(None, "variants".to_owned())];
        let mut names: Vec<&str> = Vec::new();
        for outcome in busy.iter().flat_map(|result| &result.outcomes) {
            if !names.contains(&outcome.name.as_str()) {
                names.push(&outcome.name);
            }
        }
        for name in names {
            let swatch = |x: f64, y: f64| marker(CaseKind::Quiet, x, y, 5.0, colour(name));
            rows.push((Some(swatch(0.0, 0.0)), name.to_owned()));
        }
        rows.push((None, "hosts".to_owned()));
        for result in busy {
            let swatch = marker(result.case.kind, 0.0, 0.0, 5.0, "#555");
            rows.push((Some(swatch), result.case.label()));
        }
        if !idle.is_empty() {
            rows.push((None, "foreground alone (p99)".to_owned()));
            for outcome in idle {
                let line = format!(
                    r#"<line x1="-8" x2="8" y1="0" y2="0" stroke="{}" stroke-width="1.5" stroke-dasharray="6 4"/>"#,
                    colour(&outcome.name)
                );
                rows.push((Some(line), outcome.name.clone()));
            }
        }
        Legend { rows }
    }

    fn height(&self) -> f64 {
        LEGEND_ROW * self.rows.len() as f64 + 8.0
    }

    /// Draws the rows top down from the plot's top; each swatch is drawn
    /// around (0, 0) and moved into place.
    fn draw(&self, svg: &mut Svg) {
        let mut y = TOP + 12.0;
        for (swatch, text) in &self.rows {
            match swatch {
                None => svg.text(LEGEND_X, y, r#"font-weight="bold" font-size="11""#, text),
                Some(swatch) => {
                    svg.raw(&format!(
                        r#"<g transform="translate({:.1},{:.1})">{swatch}</g>"#,
                        LEGEND_X + 8.0,
                        y - 4.0
                    ));
                    svg.text(LEGEND_X + 20.0, y, r#"font-size="11""#, text);
                }
            }
            y += LEGEND_ROW;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mixed_load::svg::tests::assert_no_text_overlaps;
    use crate::mixed_load::tests::{every_variant_results, info};

    #[test]
    fn a_marker_per_busy_outcome_starved_ones_in_the_band() {
        let results = every_variant_results();
        let svg = render_tradeoff_svg(&results, &info());
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        let busy: Vec<&Outcome> = results
            .iter()
            .filter(|result| result.case.kind != CaseKind::Idle)
            .flat_map(|result| &result.outcomes)
            .collect();
        let quiet = results[1].outcomes.len();
        let crowded = results[2].outcomes.len();
        let variants = quiet;
        // Markers plus legend swatches: a circle per variant, a shape per case.
        assert_eq!(svg.matches("<circle").count(), quiet + variants + 1);
        assert_eq!(svg.matches("<polygon").count(), crowded + 1);
        assert_eq!(busy.len(), quiet + crowded);
        // Starved variants are not plotted at an invented latency: they sit
        // in the band, which says so.
        assert!(busy.iter().any(|outcome| p99(outcome).is_none()));
        assert!(svg.contains(">starved</text>"));
        assert!(
            !svg.contains("10 s<"),
            "the axis ends above the largest p99"
        );
        assert_eq!(svg.matches("stroke-dasharray").count(), 2 * 2, "idle lines");
        assert!(svg.contains("lower is better") && svg.contains("higher is better"));
        assert!(svg.contains("2-core host"));
        assert_no_text_overlaps(&svg);
    }

    #[test]
    fn the_share_axis_zooms_in_on_the_shares() {
        let scale = ShareScale::fit([0.93, 0.97]);
        assert_eq!((scale.low, scale.high, scale.step), (0.9, 1.0, 0.02));
        assert_eq!(scale.ticks().len(), 6);
        let scale = ShareScale::fit([0.13, 1.03]);
        assert_eq!((scale.low, scale.high, scale.step), (0.1, 1.05, 0.2));
        let ticks: Vec<String> = scale.ticks().iter().map(|t| format!("{t:.2}")).collect();
        assert_eq!(ticks, ["0.20", "0.40", "0.60", "0.80", "1.00"]);
        assert_eq!(ShareScale::fit([]).high, 1.0);
    }
}
