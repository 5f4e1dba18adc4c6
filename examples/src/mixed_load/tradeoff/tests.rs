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
fn the_share_axis_runs_from_0_to_1() {
    let scale = ShareScale;
    assert_eq!(scale.x(0.0), LEFT);
    assert_eq!(scale.x(1.0), PLOT_RIGHT);
    assert_eq!(scale.x(1.03), PLOT_RIGHT, "no share beyond 1");
    assert!((scale.x(0.5) - (LEFT + PLOT_RIGHT) / 2.0).abs() < 1e-9);
    let labels: Vec<String> = scale.ticks().into_iter().map(|t| t.1).collect();
    assert_eq!(labels.first().unwrap(), "0");
    assert_eq!(labels.last().unwrap(), "1.0");
    assert_eq!(labels.len(), 11);
}

#[test]
fn labels_go_where_there_is_room_else_shorter_else_nowhere() {
    let texts = |long: &str, short: &str| vec![long.to_owned(), short.to_owned()];
    let area = [0.0, 0.0, 400.0, 300.0];
    let markers = [
        // Room on the right.
        (
            100.0,
            100.0,
            texts("brigade/yield_if_busy 0.18 ms", "0.18 ms"),
        ),
        // At the right edge: the label goes left.
        (398.0, 200.0, texts("tokio/yield_now 3.2 ms", "3.2 ms")),
        // Boxed in by the first marker's label and the area's top: only
        // the short text fits, below.
        (110.0, 12.0, texts("brigade/yield_now 0.23 ms", "0.23 ms")),
    ];
    let labels = place_labels(&markers, area);
    let first = labels[0].as_ref().unwrap();
    assert_eq!(
        (first.anchor, first.text.as_str()),
        ("start", "brigade/yield_if_busy 0.18 ms")
    );
    let second = labels[1].as_ref().unwrap();
    assert_eq!(
        (second.anchor, second.x),
        ("end", 398.0 - MARKER_REACH - 3.0)
    );
    let placed: Vec<Area> = labels.iter().flatten().map(Label::area).collect();
    for (index, a) in placed.iter().enumerate() {
        assert!(a[0] >= 0.0 && a[2] <= 400.0 && a[1] >= 0.0 && a[3] <= 300.0);
        for b in &placed[index + 1..] {
            assert!(!overlaps(a, b), "{a:?} {b:?}");
        }
    }
    // A marker with no room at all gets no label.
    let crowded = [(5.0, 5.0, texts("a long label that cannot fit", "x y z"))];
    assert_eq!(place_labels(&crowded, [0.0, 0.0, 12.0, 12.0]), [None]);
}

#[test]
fn the_demo_s_markers_are_all_labelled_with_name_and_p99() {
    use crate::mixed_load::report::tests::outcome;
    let flat =
        |name: &str, micros: u64, share: f64| outcome(name, &vec![micros; 200], false, share);
    let plan = crate::mixed_load::plan(&crate::mixed_load::demo_variants(), 1, |_| true);
    let outcomes = [
        vec![flat("idle/brigade", 220, 0.0), flat("idle/tokio", 230, 0.0)],
        vec![
            flat("brigade/yield_if_busy", 180, 1.0),
            flat("brigade/yield_now", 230, 0.99),
            flat("tokio/yield_now", 3_200, 0.99),
        ],
        vec![
            flat("brigade/yield_if_busy", 290, 0.64),
            flat("brigade/yield_now", 420, 0.63),
            flat("tokio/yield_now", 6_600, 0.65),
        ],
    ];
    let results: Vec<CaseResult> = plan
        .into_iter()
        .zip(outcomes)
        .map(|(case, outcomes)| CaseResult { case, outcomes })
        .collect();
    let svg = render_tradeoff_svg(&results, &info());
    for label in [
        "brigade/yield_if_busy 0.18 ms",
        "brigade/yield_now 0.23 ms",
        "tokio/yield_now 3.2 ms",
        "brigade/yield_if_busy 0.29 ms",
        "brigade/yield_now 0.42 ms",
        "tokio/yield_now 6.6 ms",
    ] {
        assert!(svg.contains(&format!(">{label}</text>")), "{label} missing");
    }
    for tick in [
        "100 µs", "200 µs", "500 µs", "1 ms", "2 ms", "5 ms", "10 ms",
    ] {
        assert!(svg.contains(&format!(">{tick}</text>")), "tick {tick}");
    }
    assert!(svg.contains("one round") && !svg.contains("median"));
    assert!(!svg.contains(">1.1</text>"), "no share beyond 1");
    assert_no_text_overlaps(&svg);
}
