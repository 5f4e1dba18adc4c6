//! What both charts draw with: an SVG document with a fitted title, the
//! logarithmic latency scale, the variants' colours and a text-width
//! estimate that keeps labels apart.

use std::fmt::Write as _;

/// What a chart says about the run in its title.
#[derive(Debug, Clone, PartialEq)]
pub struct ChartInfo {
    /// The background workload, e.g. "64 background tasks × 100 µs units".
    pub workload: String,
    /// Worker threads of each runtime.
    pub workers: usize,
    /// CPUs of the host (available parallelism).
    pub cores: usize,
    /// µs between foreground requests.
    pub period_us: u64,
}

impl ChartInfo {
    /// "64 background tasks × 100 µs units, 2 workers, 2-core host".
    pub fn describe(&self) -> String {
        format!(
            "{}, {} worker{}, {}-core host",
            self.workload,
            self.workers,
            if self.workers == 1 { "" } else { "s" },
            self.cores
        )
    }
}

/// The time between requests: `1 ms`, `250 µs`.
pub(super) fn format_period(micros: u64) -> String {
    if micros >= 1000 && micros.is_multiple_of(1000) {
        format!("{} ms", micros / 1000)
    } else {
        format!("{micros} µs")
    }
}

/// Width of `text` at font size `size`, estimated on the generous side
/// (sans-serif glyphs average about 0.55 em), so that text placed apart by
/// this estimate does not touch.
pub(super) fn text_width(text: &str, size: f64) -> f64 {
    text.chars().count() as f64 * size * 0.6
}

/// Escapes text for SVG.
pub(super) fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The colour of variant `name`, the same in every chart; names this does
/// not know get a grey.
pub(super) fn colour(name: &str) -> &'static str {
    match name {
        "idle/brigade" | "brigade/yield_if_busy" => "#1f77b4",
        "idle/tokio" | "tokio/yield_now" => "#ff7f0e",
        "brigade/yield_now" => "#17becf",
        "brigade/elastic+yield_if_busy" => "#2ca02c",
        "brigade/no_yield" => "#9467bd",
        "brigade/no_yield+thread_server" => "#8c564b",
        "tokio/consume_budget" => "#d62728",
        "tokio/no_yield" => "#e377c2",
        "tokio/no_yield+thread_server" => "#bcbd22",
        _ => "#7f7f7f",
    }
}

/// An SVG document being drawn.
pub(super) struct Svg {
    body: String,
    width: f64,
    height: f64,
}

impl Svg {
    /// An empty white document.
    pub(super) fn new(width: f64, height: f64) -> Svg {
        let mut body = String::new();
        let _ = writeln!(
            body,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0}" height="{height:.0}" viewBox="0 0 {width:.0} {height:.0}" font-family="sans-serif" font-size="12">"#
        );
        let _ = writeln!(body, r#"<rect width="100%" height="100%" fill="white"/>"#);
        Svg {
            body,
            width,
            height,
        }
    }

    /// The title (line 1) and the subtitle (line 2), centred, each shrunk
    /// to fit the width; both sit above y = 52, which charts keep clear.
    pub(super) fn title(&mut self, title: &str, subtitle: &str) {
        for (text, size, y, extra) in [
            (title, 16.0, 24.0, r#" font-weight="bold""#),
            (subtitle, 12.0, 44.0, r##" fill="#444""##),
        ] {
            let size = fit(text, size, self.width - 20.0);
            let _ = writeln!(
                self.body,
                r#"<text x="{:.1}" y="{y}" text-anchor="middle" font-size="{size:.1}"{extra}>{}</text>"#,
                self.width / 2.0,
                escape(text)
            );
        }
    }

    /// Text at (`x`, `y`); `attributes` are added to the element as they
    /// are (anchor, size, colour, rotation).
    pub(super) fn text(&mut self, x: f64, y: f64, attributes: &str, text: &str) {
        let _ = writeln!(
            self.body,
            r#"<text x="{x:.1}" y="{y:.1}" {attributes}>{}</text>"#,
            escape(text)
        );
    }

    /// Any element, written as it is.
    pub(super) fn raw(&mut self, element: &str) {
        self.body.push_str(element);
        self.body.push('\n');
    }

    /// The finished document.
    pub(super) fn finish(mut self) -> String {
        debug_assert!(self.height > 0.0);
        self.body.push_str("</svg>\n");
        self.body
    }
}

/// The font size at most `size` at which `text` fits in `width`.
pub(super) fn fit(text: &str, size: f64, width: f64) -> f64 {
    let natural = text_width(text, size);
    if natural <= width {
        size
    } else {
        size * width / natural
    }
}

/// A latency axis, logarithmic, whole decades from below the smallest
/// value to above the largest; `low` and `high` are its pixel ends.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct LogScale {
    /// The lowest decade, as a power of ten of µs.
    pub(super) min_exp: i32,
    /// The highest decade.
    pub(super) max_exp: i32,
    /// Pixel position of the lowest decade.
    pub(super) low: f64,
    /// Pixel position of the highest decade.
    pub(super) high: f64,
}

impl LogScale {
    /// The decades that hold `micros` (at least one decade; 10 µs to 10 ms
    /// if there are no values).
    pub(super) fn fit(micros: impl IntoIterator<Item = f64>, low: f64, high: f64) -> LogScale {
        let (min, max) = micros
            .into_iter()
            .filter(|value| value.is_finite() && *value > 0.0)
            .fold((f64::MAX, f64::MIN), |(min, max), value| {
                (min.min(value), max.max(value))
            });
        let (min_exp, max_exp) = if min > max {
            (1, 4)
        } else {
            let min_exp = min.log10().floor() as i32;
            (min_exp, (max.log10().ceil() as i32).max(min_exp + 1))
        };
        LogScale {
            min_exp,
            max_exp,
            low,
            high,
        }
    }

    /// The pixel position of `micros`, clamped to the axis.
    pub(super) fn at(&self, micros: f64) -> f64 {
        let exponent = micros
            .max(1e-3)
            .log10()
            .clamp(f64::from(self.min_exp), f64::from(self.max_exp));
        let fraction =
            (exponent - f64::from(self.min_exp)) / f64::from(self.max_exp - self.min_exp);
        self.low + (self.high - self.low) * fraction
    }

    /// Every tick: (µs, label for whole decades, `None` for the 2 and 5
    /// between them).
    pub(super) fn ticks(&self) -> Vec<(f64, Option<String>)> {
        let mut ticks = Vec::new();
        for exp in self.min_exp..=self.max_exp {
            let decade = 10f64.powi(exp);
            ticks.push((decade, Some(decade_label(exp))));
            if exp < self.max_exp {
                ticks.push((2.0 * decade, None));
                ticks.push((5.0 * decade, None));
            }
        }
        ticks
    }
}

/// `10^exp` µs as a label: `1 µs`, `100 µs`, `1 ms`, `10 s`.
pub(super) fn decade_label(exp: i32) -> String {
    let (unit, shift) = match exp {
        exp if exp < 3 => ("µs", 0),
        exp if exp < 6 => ("ms", 3),
        _ => ("s", 6),
    };
    let value = 10f64.powi(exp - shift);
    if value >= 1.0 {
        format!("{value:.0} {unit}")
    } else {
        format!("{value} {unit}")
    }
}

#[cfg(test)]
pub(super) mod tests {
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
        let labels: Vec<String> = scale.ticks().into_iter().filter_map(|t| t.1).collect();
        assert_eq!(labels, ["100 µs", "1 ms", "10 ms"]);
        assert_eq!(
            LogScale::fit([100.0], 0.0, 1.0).max_exp,
            3,
            "one decade at least"
        );
        assert_eq!(LogScale::fit([], 0.0, 1.0).min_exp, 1);
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
}
