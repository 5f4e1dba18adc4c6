use super::*;

/// The box of one unrotated `<text>`: (left, top, right, bottom, text).
type TextBox = (f64, f64, f64, f64, String);

fn attribute(element: &str, name: &str) -> Option<String> {
    let start = element.find(&format!(" {name}=\""))? + name.len() + 3;
    let end = start + element[start..].find('"')?;
    Some(element[start..end].to_owned())
}

/// The boxes of `svg`'s text elements, by [`text_width`]'s estimate,
/// and the document's width; rotated text is left out.
fn text_boxes(svg: &str) -> (Vec<TextBox>, f64) {
    let width: f64 = attribute(svg, "width").unwrap().parse().unwrap();
    let mut boxes = Vec::new();
    for piece in svg.split("<text").skip(1) {
        let (element, rest) = piece.split_once('>').unwrap();
        if element.contains("transform") {
            continue;
        }
        let text = rest.split_once("</text>").unwrap().0;
        let text = text
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&amp;", "&");
        let number = |name| attribute(element, name).map(|v| v.parse::<f64>().unwrap());
        let (x, y) = (number("x").unwrap(), number("y").unwrap());
        let size = number("font-size").unwrap_or(12.0);
        let length = text_width(&text, size);
        let left = match attribute(element, "text-anchor").as_deref() {
            Some("middle") => x - length / 2.0,
            Some("end") => x - length,
            _ => x,
        };
        boxes.push((left, y - 0.8 * size, left + length, y + 0.25 * size, text));
    }
    (boxes, width)
}

/// Asserts that no two texts of `svg` overlap and that every text lies
/// within the document's width.
pub(crate) fn assert_no_text_overlaps(svg: &str) {
    let (boxes, width) = text_boxes(svg);
    for (index, a) in boxes.iter().enumerate() {
        assert!(a.0 >= 0.0 && a.2 <= width, "{:?} leaves the chart", a.4);
        for b in &boxes[index + 1..] {
            let apart = a.2 <= b.0 || b.2 <= a.0 || a.3 <= b.1 || b.3 <= a.1;
            assert!(apart, "{:?} overlaps {:?}", a.4, b.4);
        }
    }
}

#[test]
fn the_scale_spans_whole_decades_around_the_values() {
    let scale = LogScale::fit([150.0, 3_300.0], 0.0, 300.0);
    assert_eq!((scale.min_exp, scale.max_exp), (2, 4));
    assert_eq!(scale.at(100.0), 0.0);
    assert_eq!(scale.at(10_000.0), 300.0);
    assert!((scale.at(1_000.0) - 150.0).abs() < 1e-9);
    assert_eq!(scale.at(1e9), 300.0, "clamped");
    let labels: Vec<String> = scale.ticks().into_iter().map(|t| t.1).collect();
    assert_eq!(
        labels,
        [
            "100 µs", "200 µs", "500 µs", "1 ms", "2 ms", "5 ms", "10 ms"
        ]
    );
    assert_eq!(
        LogScale::fit([100.0], 0.0, 1.0).max_exp,
        3,
        "one decade at least"
    );
    assert_eq!(LogScale::fit([], 0.0, 1.0).min_exp, 1);
}

#[test]
fn the_linear_axis_ends_at_a_round_value_and_lengths_are_proportional() {
    let scale = LinearScale::fit(3_300.0, 100.0, 900.0);
    assert_eq!((scale.max, scale.step), (3_500.0, 500.0));
    assert_eq!(scale.at(0.0), 100.0);
    assert_eq!(scale.at(3_500.0), 900.0);
    // 17 times the value, 17 times the bar.
    let bar = |micros: f64| scale.at(micros) - scale.low;
    assert!((bar(3_230.0) / bar(190.0) - 17.0).abs() < 1e-9);
    assert!(!scale.is_cut(3_500.0) && scale.is_cut(3_600.0));
    assert_eq!(scale.at(1e9), 900.0, "cut at the end");
    let labels: Vec<String> = scale.ticks().into_iter().map(|t| t.1).collect();
    assert_eq!(
        labels,
        [
            "0", "0.5 ms", "1.0 ms", "1.5 ms", "2.0 ms", "2.5 ms", "3.0 ms", "3.5 ms"
        ]
    );
    for (limit, max, step) in [
        (6_600.0, 7_000.0, 1_000.0),
        (250.0, 250.0, 50.0),
        (1_000.0, 1_000.0, 200.0),
        (40_000.0, 40_000.0, 5_000.0),
        (7.0, 7.0, 1.0),
    ] {
        let scale = LinearScale::fit(limit, 0.0, 1.0);
        assert_eq!((scale.max, scale.step), (max, step), "limit {limit}");
        assert!(scale.ticks().len() <= 9);
    }
    assert_eq!(LinearScale::fit(0.0, 0.0, 1.0).max, 1_000.0);
    assert_eq!(tick_label(50.0, 50.0), "50 µs");
    assert_eq!(tick_label(4_000.0, 1_000.0), "4 ms");
}

#[test]
fn the_axis_holds_every_p99_but_the_nearly_starved() {
    let starving = 100_000.0;
    // The demo's quiet and crowded hosts: every p99 and p99.9 fits.
    let p99s = [180.0, 230.0, 3_200.0, 290.0, 420.0, 6_600.0];
    assert_eq!(
        axis_limit(&p99s, &[400.0, 5_000.0, 9_000.0], starving),
        9_000.0
    );
    // A p99.9 beyond twice the longest p99 is cut instead.
    assert_eq!(axis_limit(&p99s, &[20_000.0], starving), 6_600.0);
    // tokio at 23 times brigade is drawn in full: that is the point.
    assert_eq!(axis_limit(&[290.0, 6_600.0], &[], starving), 6_600.0);
    // consume_budget's 400 ms p99s would squash the rest: they are cut.
    let with_starving = [180.0, 400_000.0, 3_200.0, 600_000.0];
    assert_eq!(axis_limit(&with_starving, &[], starving), 3_200.0);
    assert_eq!(axis_limit(&[400_000.0], &[900_000.0], starving), 900_000.0);
    assert_eq!(axis_limit(&[], &[300.0], starving), 300.0);
}

#[test]
fn rounds_are_named_as_they_ran() {
    assert_eq!(share_basis(1), "one round");
    assert_eq!(share_basis(3), "median of 3 rounds");
    assert_eq!(latency_basis(1), "one round");
    assert_eq!(latency_basis(5), "5 rounds pooled");
}

#[test]
fn periods_read_in_ms_when_whole() {
    assert_eq!(format_period(1000), "1 ms");
    assert_eq!(format_period(10_000), "10 ms");
    assert_eq!(format_period(1500), "1500 µs");
    assert_eq!(format_period(250), "250 µs");
}

#[test]
fn decades_read_in_their_unit() {
    let labels: Vec<String> = (0..8).map(decade_label).collect();
    assert_eq!(
        labels,
        [
            "1 µs", "10 µs", "100 µs", "1 ms", "10 ms", "100 ms", "1 s", "10 s"
        ]
    );
}

#[test]
fn long_titles_shrink_to_fit() {
    assert_eq!(fit("short", 16.0, 800.0), 16.0);
    let long = "x".repeat(200);
    let size = fit(&long, 16.0, 800.0);
    assert!(size < 16.0 && text_width(&long, size) <= 800.0 + 1e-9);
}
