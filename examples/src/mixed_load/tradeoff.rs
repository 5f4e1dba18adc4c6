//! The trade-off chart: foreground p99 against background CPU share, a
//! marker per variant and busy case. Latency alone hides half the story: a
//! variant can keep the foreground fast by starving the background
//! (elastic admission while its limit is low), or keep the background busy
//! by starving the foreground. The corner to reach is the bottom right: low
//! p99, full share.
//!
//! The share axis runs from 0 to 1 (a share cannot exceed 1; a measured
//! share above it, from the calibration's error, is drawn at 1). The p99
//! axis is logarithmic, labelled at 1, 2 and 5 of each decade. Colours
//! name the variants and shapes the cases, in a legend beside the plot;
//! each marker is labelled with its variant and p99 where there is room
//! ([`place_labels`]), with its p99 alone where there is less, and left to
//! the legend where there is none. Markers that land on one another are
//! drawn smaller in turn, so each stays visible. A starved variant has no
//! p99: its marker sits in a band above the plot, at its share. The idle
//! references (no background, so no share) are dashed horizontal lines at
//! their p99.

use super::svg::{ChartInfo, LogScale, Svg, colour, latency_basis, share_basis, text_width};
use super::{CaseKind, CaseResult, Outcome, format_ms, verdict::p99};

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
/// The size of the markers' labels.
const LABEL_SIZE: f64 = 10.0;
/// Half the side of the square each marker is taken to cover when labels
/// are placed (the crowded host's triangle reaches 1.25 × [`RADIUS`]).
const MARKER_REACH: f64 = 10.0;

/// The share axis: 0 to 1, the whole range a share can take.
struct ShareScale;

impl ShareScale {
    /// The x of `share`; shares above 1 (the calibration's error) at 1.
    fn x(&self, share: f64) -> f64 {
        LEFT + (PLOT_RIGHT - LEFT) * share.clamp(0.0, 1.0)
    }

    /// Every tenth, with its label: `0`, `0.1`, ..., `1.0`.
    fn ticks(&self) -> Vec<(f64, String)> {
        (0..=10)
            .map(|tenth| {
                let share = f64::from(tenth) / 10.0;
                let label = if tenth == 0 {
                    "0".to_owned()
                } else {
                    format!("{share:.1}")
                };
                (share, label)
            })
            .collect()
    }
}

/// A text box: left, top, right, bottom.
type Area = [f64; 4];

/// A label placed beside a marker: where its text goes, how it is anchored.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Label {
    pub(super) x: f64,
    pub(super) y: f64,
    pub(super) anchor: &'static str,
    pub(super) text: String,
}

impl Label {
    /// The box its text covers, by [`text_width`]'s estimate.
    fn area(&self) -> Area {
        let width = text_width(&self.text, LABEL_SIZE);
        let left = match self.anchor {
            "end" => self.x - width,
            "middle" => self.x - width / 2.0,
            _ => self.x,
        };
        [
            left,
            self.y - 0.8 * LABEL_SIZE,
            left + width,
            self.y + 0.25 * LABEL_SIZE,
        ]
    }
}

fn overlaps(a: &Area, b: &Area) -> bool {
    a[0] < b[2] && b[0] < a[2] && a[1] < b[3] && b[1] < a[3]
}

/// A label for each marker at (x, y), where one fits: each marker's texts
/// (longest first) are tried right of it, left of it, at its four corners,
/// above and below, and
/// the first that stays inside `area` and clear of every marker and every
/// label placed so far is taken; `None` where none fits.
pub(super) fn place_labels(markers: &[(f64, f64, Vec<String>)], area: Area) -> Vec<Option<Label>> {
    let reach = |&(x, y, _): &(f64, f64, Vec<String>)| {
        [
            x - MARKER_REACH,
            y - MARKER_REACH,
            x + MARKER_REACH,
            y + MARKER_REACH,
        ]
    };
    let taken_by_markers: Vec<Area> = markers.iter().map(reach).collect();
    let mut taken_by_labels: Vec<Area> = Vec::new();
    let gap = MARKER_REACH + 3.0;
    markers
        .iter()
        .map(|(x, y, texts)| {
            let candidates = texts.iter().flat_map(|text| {
                let (above, below) = (y - gap, y + gap + 0.8 * LABEL_SIZE);
                [
                    (x + gap, y + 4.0, "start"),
                    (x - gap, y + 4.0, "end"),
                    (x - gap, above, "end"),
                    (x - gap, below, "end"),
                    (x + gap, above, "start"),
                    (x + gap, below, "start"),
                    (*x, above - 2.0, "middle"),
                    (*x, below, "middle"),
                ]
                .map(|(x, y, anchor)| Label {
                    x,
                    y,
                    anchor,
                    text: text.clone(),
                })
            });
            let placed = candidates.into_iter().find(|label| {
                let [left, top, right, bottom] = label.area();
                let inside =
                    left >= area[0] && top >= area[1] && right <= area[2] && bottom <= area[3];
                inside
                    && taken_by_markers
                        .iter()
                        .chain(&taken_by_labels)
                        .all(|taken| !overlaps(&label.area(), taken))
            })?;
            taken_by_labels.push(placed.area());
            Some(placed)
        })
        .collect()
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
    let shares = ShareScale;
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
        &format!(
            "one marker per variant and host, labelled with its p99 ({}); \
             best: bottom right (low p99, full share)",
            latency_basis(info.rounds)
        ),
    );
    axes(&mut svg, &shares, &latencies, bottom, info.rounds);
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
    let mut to_label: Vec<(f64, f64, Vec<String>)> = Vec::new();
    let mut label_colours: Vec<&str> = Vec::new();
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
            if let Some(us) = p99(outcome) {
                let value = format_ms(us);
                to_label.push((x, y, vec![format!("{} {value}", outcome.name), value]));
                label_colours.push(colour(&outcome.name));
            }
        }
    }
    let area = [LEFT + 2.0, TOP + 2.0, PLOT_RIGHT - 2.0, bottom - 2.0];
    // A label takes its marker's colour, so that it reads as that marker's
    // where markers crowd; the white outline (drawn under the glyphs) keeps
    // it legible where it crosses a grid line or an idle reference.
    let labels = place_labels(&to_label, area);
    for (label, fill) in labels.iter().zip(label_colours) {
        let Some(label) = label else { continue };
        svg.raw(&format!(
            r#"<text x="{:.1}" y="{:.1}" text-anchor="{}" font-size="{LABEL_SIZE}" fill="{fill}" stroke="white" stroke-width="3" paint-order="stroke">{}</text>"#,
            label.x,
            label.y,
            label.anchor,
            super::svg::escape(&label.text)
        ));
    }
    legend.draw(&mut svg);
    svg.finish()
}

/// Grid, tick labels and titles of both axes.
fn axes(svg: &mut Svg, shares: &ShareScale, latencies: &LogScale, bottom: f64, rounds: usize) {
    for (share, label) in shares.ticks() {
        let x = shares.x(share);
        svg.raw(&format!(
            r##"<line x1="{x:.1}" x2="{x:.1}" y1="{TOP}" y2="{bottom:.1}" stroke="#e4e4e4"/>"##
        ));
        svg.text(x, bottom + 20.0, r#"text-anchor="middle""#, &label);
    }
    for (micros, label) in latencies.ticks() {
        let y = latencies.at(micros);
        let stroke = if label.starts_with('1') {
            "#ccc"
        } else {
            "#eee"
        };
        svg.raw(&format!(
            r#"<line x1="{LEFT}" x2="{PLOT_RIGHT}" y1="{y:.1}" y2="{y:.1}" stroke="{stroke}"/>"#
        ));
        svg.text(LEFT - 6.0, y + 4.0, r#"text-anchor="end""#, &label);
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
        &format!(
            "background share of the workers' CPU, 1 = all ({}; higher is better →)",
            share_basis(rounds)
        ),
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
mod tests;
