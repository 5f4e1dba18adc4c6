//! The trade-off chart: foreground p99 against background CPU share, one
//! point per variant. Latency alone hides half the story: a variant can
//! keep the foreground fast by starving the background (elastic admission
//! while its limit is low), or keep the background busy by starving the
//! foreground. The corner to reach is the bottom right: low p99, full share.

use std::fmt::Write as _;

use super::Outcome;
use super::chart::{
    BOTTOM, HEIGHT, LEFT, RIGHT, TOP, WIDTH, escape, latency_axis, svg_start, y_for,
};

/// The share axis spans 0 to this.
const MAX_SHARE: f64 = 1.1;

fn x_for(share: f64) -> f64 {
    LEFT + (WIDTH - LEFT - RIGHT) * (share.clamp(0.0, MAX_SHARE) / MAX_SHARE)
}

/// brigade's variants in blue, tokio's in orange.
fn colour(name: &str) -> &'static str {
    if name.contains("tokio") {
        "#f28e2b"
    } else {
        "#4e79a7"
    }
}

fn share_axis(svg: &mut String) {
    let bottom = HEIGHT - BOTTOM;
    for tick in [0.0, 0.25, 0.5, 0.75, 1.0] {
        let x = x_for(tick);
        let _ = writeln!(
            svg,
            r##"<line x1="{x:.1}" x2="{x:.1}" y1="{TOP}" y2="{bottom}" stroke="#eee"/><text x="{x:.1}" y="{:.1}" text-anchor="middle">{tick:.2}</text>"##,
            bottom + 16.0
        );
    }
    let _ = writeln!(
        svg,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">background CPU share (median round) →  better</text>"#,
        (LEFT + WIDTH - RIGHT) / 2.0,
        bottom + 40.0
    );
}

/// Renders the chart; `title` goes on top. Variants without background
/// work sit at share 0; starved ones at the top, marked.
pub fn render_tradeoff_svg(outcomes: &[Outcome], title: &str) -> String {
    let mut svg = svg_start(title);
    latency_axis(&mut svg);
    share_axis(&mut svg);
    for outcome in outcomes {
        let latencies = &outcome.foreground.latencies_us;
        let starved = outcome.foreground.starved || latencies.is_empty();
        let y = if starved {
            y_for(1e7)
        } else {
            y_for(latencies.value_at_quantile(0.99) as f64)
        };
        let x = x_for(outcome.background_share());
        let label = if starved {
            format!("{} (starved)", outcome.name)
        } else {
            outcome.name.clone()
        };
        let _ = writeln!(
            svg,
            r#"<circle cx="{x:.1}" cy="{y:.1}" r="5" fill="{}"/><text x="{:.1}" y="{:.1}" font-size="11">{}</text>"#,
            colour(&outcome.name),
            x + 8.0,
            y - 6.0,
            escape(&label)
        );
    }
    let _ = writeln!(
        svg,
        r#"<text x="{:.1}" y="44" text-anchor="end" font-size="11">foreground p99 (lower is better); best: bottom right</text>"#,
        WIDTH - RIGHT
    );
    svg.push_str("</svg>\n");
    svg
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mixed_load::report::tests::outcome;

    #[test]
    fn one_point_per_variant_and_starved_ones_are_marked() {
        let svg = render_tradeoff_svg(
            &[
                outcome("brigade/a", &[100, 200, 5000], false, 0.95),
                outcome("tokio/b", &[], true, 1.0),
            ],
            "t",
        );
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        assert_eq!(svg.matches("<circle").count(), 2);
        assert!(svg.contains("tokio/b (starved)"));
        assert!(svg.contains("#4e79a7") && svg.contains("#f28e2b"));
    }
}
