//! What both charts draw with: an SVG document with a fitted title, the
//! latency scales (linear for the bars, whose lengths must mean what they
//! show; logarithmic for the trade-off chart's markers), the words for the
//! number of rounds, the variants' colours and a text-width estimate that
//! keeps labels apart.

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
    /// How many rounds each variant ran (`--rounds`).
    pub rounds: usize,
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

/// What the background shares are taken from: `one round`, or `median of
/// 3 rounds`.
pub(super) fn share_basis(rounds: usize) -> String {
    match rounds {
        0 | 1 => "one round".to_owned(),
        rounds => format!("median of {rounds} rounds"),
    }
}

/// What the latencies are taken from: `one round`, or `3 rounds pooled`.
pub(super) fn latency_basis(rounds: usize) -> String {
    match rounds {
        0 | 1 => "one round".to_owned(),
        rounds => format!("{rounds} rounds pooled"),
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

/// A latency axis, linear from 0 µs, so that a bar twice as long is a
/// latency twice as high. It ends at a round value at or above `limit`;
/// longer values are cut there (see [`LinearScale::is_cut`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct LinearScale {
    /// The value at the axis' end, in µs: a whole number of steps.
    pub(super) max: f64,
    /// µs between ticks: 1, 2 or 5 times a power of ten.
    pub(super) step: f64,
    /// Pixel position of 0.
    pub(super) low: f64,
    /// Pixel position of [`LinearScale::max`].
    pub(super) high: f64,
}

/// At most this many steps on a linear axis.
const MAX_STEPS: f64 = 8.0;

impl LinearScale {
    /// An axis from 0 to the first round value at or above `limit` µs (1 ms
    /// without a positive limit), with at most eight steps.
    pub(super) fn fit(limit: f64, low: f64, high: f64) -> LinearScale {
        let limit = if limit.is_finite() && limit > 0.0 {
            limit
        } else {
            1000.0
        };
        let mut magnitude = 10f64.powf((limit / MAX_STEPS).log10().floor());
        let step = loop {
            if let Some(step) = [1.0, 2.0, 5.0]
                .into_iter()
                .map(|factor| factor * magnitude)
                .find(|step| (limit / step - 1e-9).ceil() <= MAX_STEPS)
            {
                break step;
            }
            magnitude *= 10.0;
        };
        LinearScale {
            max: (limit / step - 1e-9).ceil().max(1.0) * step,
            step,
            low,
            high,
        }
    }

    /// The pixel position of `micros`, at most the axis' end.
    pub(super) fn at(&self, micros: f64) -> f64 {
        let fraction = (micros / self.max).clamp(0.0, 1.0);
        self.low + (self.high - self.low) * fraction
    }

    /// Whether `micros` lies beyond the axis' end, so that its bar is cut.
    pub(super) fn is_cut(&self, micros: f64) -> bool {
        micros > self.max * (1.0 + 1e-9)
    }

    /// Every tick, from 0 to the end, with its label.
    pub(super) fn ticks(&self) -> Vec<(f64, String)> {
        let steps = (self.max / self.step).round() as u64;
        (0..=steps)
            .map(|index| {
                let micros = index as f64 * self.step;
                (micros, tick_label(micros, self.step))
            })
            .collect()
    }
}

/// A linear axis' tick at `micros`, with as many decimals as its `step`
/// needs: `0`, `50 µs`, `0.5 ms`, `2 ms`.
pub(super) fn tick_label(micros: f64, step: f64) -> String {
    if micros == 0.0 {
        "0".to_owned()
    } else if step >= 1000.0 {
        format!("{:.0} ms", micros / 1000.0)
    } else if step >= 100.0 {
        format!("{:.1} ms", micros / 1000.0)
    } else {
        format!("{micros:.0} µs")
    }
}

/// Where a linear latency axis should end, in µs: at the longest p99 (the
/// headline figure) and any p99.9 up to twice that, so that those bars keep
/// their true length. p99s above `starving` (a variant that nearly starved,
/// such as tokio's `consume_budget` at 400 ms) are left beyond the end, so
/// that they do not squash every other bar to a sliver; their bars are cut.
pub(super) fn axis_limit(p99s: &[f64], p999s: &[f64], starving: f64) -> f64 {
    let valid = |value: &f64| value.is_finite() && *value > 0.0;
    let longest = p99s
        .iter()
        .copied()
        .filter(valid)
        .filter(|value| *value <= starving)
        .fold(0.0, f64::max);
    if longest == 0.0 {
        // Every p99 nearly starved: the axis holds them all.
        return p99s
            .iter()
            .chain(p999s)
            .copied()
            .filter(valid)
            .fold(0.0, f64::max);
    }
    p999s
        .iter()
        .copied()
        .filter(|value| *value <= 2.0 * longest)
        .fold(longest, f64::max)
}

/// A foreground whose p99 is this many request periods has nearly starved
/// ([`axis_limit`]): 100 ms at the default 1 ms.
pub(super) const STARVING_PERIODS: f64 = 100.0;

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

    /// Every tick, each with its label: 1, 2 and 5 times each decade
    /// (`100 µs`, `200 µs`, `500 µs`, `1 ms`, ...), up to the last decade.
    pub(super) fn ticks(&self) -> Vec<(f64, String)> {
        let mut ticks = Vec::new();
        for exp in self.min_exp..=self.max_exp {
            let decade = 10f64.powi(exp);
            ticks.push((decade, decade_label(exp)));
            if exp < self.max_exp {
                for factor in [2.0, 5.0] {
                    let label = decade_label(exp).replacen('1', &format!("{factor}"), 1);
                    ticks.push((factor * decade, label));
                }
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
pub(super) mod tests;
