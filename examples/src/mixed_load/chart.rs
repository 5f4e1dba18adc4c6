//! The SVG chart: p50, p99 and p99.9 foreground latency per variant, on a
//! logarithmic axis (the variants span five orders of magnitude).

use std::fmt::Write as _;

use super::Outcome;

pub(super) const WIDTH: f64 = 900.0;
pub(super) const HEIGHT: f64 = 460.0;
pub(super) const LEFT: f64 = 80.0;
pub(super) const RIGHT: f64 = 20.0;
pub(super) const TOP: f64 = 50.0;
pub(super) const BOTTOM: f64 = 110.0;
/// The axis spans 10 µs to 10 s.
const MIN_EXP: f64 = 1.0;
const MAX_EXP: f64 = 7.0;
const SERIES: [(f64, &str, &str); 3] = [
    (0.50, "p50", "#4e79a7"),
    (0.99, "p99", "#f28e2b"),
    (0.999, "p99.9", "#e15759"),
];

/// The y coordinate of `micros` on the logarithmic latency axis.
pub(super) fn y_for(micros: f64) -> f64 {
    let exponent = micros.max(1.0).log10().clamp(MIN_EXP, MAX_EXP);
    let plot_height = HEIGHT - TOP - BOTTOM;
    TOP + plot_height * (1.0 - (exponent - MIN_EXP) / (MAX_EXP - MIN_EXP))
}

/// Escapes text for SVG.
pub(super) fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// An SVG document's opening, white background and `title`.
pub(super) fn svg_start(title: &str) -> String {
    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(svg, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        svg,
        r#"<text x="{}" y="24" text-anchor="middle" font-size="15">{}</text>"#,
        WIDTH / 2.0,
        escape(title)
    );
    svg
}

/// Draws the logarithmic latency axis: decade grid lines, labels and the
/// axis title.
pub(super) fn latency_axis(svg: &mut String) {
    let labels = ["10 µs", "100 µs", "1 ms", "10 ms", "100 ms", "1 s", "10 s"];
    for (index, label) in labels.iter().enumerate() {
        let y = y_for(10f64.powi(index as i32 + 1));
        let _ = writeln!(
            svg,
            r##"<line x1="{LEFT}" x2="{}" y1="{y:.1}" y2="{y:.1}" stroke="#ddd"/><text x="{}" y="{:.1}" text-anchor="end">{label}</text>"##,
            WIDTH - RIGHT,
            LEFT - 6.0,
            y + 4.0
        );
    }
    let _ = writeln!(
        svg,
        r#"<text transform="translate(18,{:.1}) rotate(-90)" text-anchor="middle">foreground latency (log scale)</text>"#,
        (TOP + HEIGHT - BOTTOM) / 2.0
    );
}

/// Renders the chart; `title` goes on top.
pub fn render_svg(outcomes: &[Outcome], title: &str) -> String {
    let mut svg = svg_start(title);
    latency_axis(&mut svg);
    // Bars.
    let group_width = (WIDTH - LEFT - RIGHT) / outcomes.len().max(1) as f64;
    let bar_width = group_width * 0.8 / SERIES.len() as f64;
    let baseline = y_for(1.0);
    for (index, outcome) in outcomes.iter().enumerate() {
        let group_x = LEFT + group_width * index as f64 + group_width * 0.1;
        let latencies = &outcome.foreground.latencies_us;
        if outcome.foreground.starved || latencies.is_empty() {
            let _ = writeln!(
                svg,
                r##"<text x="{:.1}" y="{:.1}" text-anchor="middle" fill="#e15759">starved</text>"##,
                group_x + group_width * 0.4,
                baseline - 8.0
            );
        } else {
            for (series, (quantile, _, colour)) in SERIES.iter().enumerate() {
                let y = y_for(latencies.value_at_quantile(*quantile) as f64);
                let _ = writeln!(
                    svg,
                    r#"<rect x="{:.1}" y="{y:.1}" width="{:.1}" height="{:.1}" fill="{colour}"/>"#,
                    group_x + bar_width * series as f64,
                    bar_width - 1.0,
                    (baseline - y).max(0.5)
                );
            }
        }
        let label_x = group_x + group_width * 0.4;
        let label_y = baseline + 14.0;
        let _ = writeln!(
            svg,
            r#"<text x="{label_x:.1}" y="{label_y:.1}" text-anchor="end" transform="rotate(-30 {label_x:.1} {label_y:.1})">{}</text>"#,
            escape(&outcome.name)
        );
    }
    // Legend.
    for (index, (_, name, colour)) in SERIES.iter().enumerate() {
        let x = WIDTH - RIGHT - 210.0 + 70.0 * index as f64;
        let _ = writeln!(
            svg,
            r#"<rect x="{x}" y="34" width="12" height="12" fill="{colour}"/><text x="{}" y="44">{name}</text>"#,
            x + 16.0
        );
    }
    svg.push_str("</svg>\n");
    svg
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mixed_load::report::tests::outcome;

    #[test]
    fn chart_is_an_svg_with_bars_and_labels() {
        let svg = render_svg(
            &[
                outcome("a<b", &[100, 200, 5000], false, 0.5),
                outcome("starving", &[], true, 0.9),
            ],
            "title & more",
        );
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        assert_eq!(
            svg.matches("<rect x=").count(),
            3 + 3,
            "three bars and three legend swatches"
        );
        assert!(
            svg.contains("a&lt;b") && svg.contains("title &amp; more") && svg.contains("starved")
        );
    }
}
