//! One brigade/tokio table across the criterion benches: what
//! `scripts/bench_summary.sh` prints after `cargo bench`, so that the
//! comparison can be read without opening criterion's folders.
//!
//! Criterion keeps each benchmark's latest result in
//! `target/criterion/<group>/<benchmark>/new/`: `benchmark.json` names it,
//! `estimates.json` holds the time per iteration. Within each group, a
//! brigade benchmark is paired with the tokio benchmark whose id is the same
//! apart from the runtime's name (`spawn_many_local/brigade` with
//! `spawn_many_local/tokio`, `idle/brigade` with `idle/tokio`,
//! `brigade_yield_now` with `tokio_yield_now`), and brigade's
//! `yield_if_busy` in any of its cases (`brigade_yield_if_busy/idle_worker`,
//! `brigade/elastic+yield_if_busy`) with tokio's `yield_now`, the call it
//! replaces. Benchmarks of one runtime only (`tokio/consume_budget`) have
//! no row of their own; brigade's are summed up below the table
//! ([`brigade_alone`]): the background throughput with `yield_if_busy`
//! against none (`yield_throughput`), and what the fast path adds to an
//! empty await (`yield_call`).

use std::io;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::harness::RuntimeKind;
use crate::scaling::Table;

/// One benchmark's result.
#[derive(Debug, Clone, PartialEq)]
pub struct Estimate {
    /// The criterion group, e.g. `spawn_many_local`.
    pub group: String,
    /// The benchmark's id within the group: its function id and parameter,
    /// joined by `/`, e.g. `brigade` or `register_and_cancel/tokio`.
    pub id: String,
    /// Criterion's estimate of the time per iteration (the slope where it
    /// fitted one, else the mean), in ns: the figure its report prints.
    pub nanos: f64,
}

/// Reads one benchmark from the contents of its `benchmark.json` and
/// `estimates.json`.
pub fn parse_estimate(benchmark: &str, estimates: &str) -> Result<Estimate, String> {
    let benchmark: Value =
        serde_json::from_str(benchmark).map_err(|error| format!("benchmark.json: {error}"))?;
    let estimates: Value =
        serde_json::from_str(estimates).map_err(|error| format!("estimates.json: {error}"))?;
    let group = benchmark["group_id"]
        .as_str()
        .ok_or("benchmark.json has no group_id")?
        .to_owned();
    let parts: Vec<&str> = ["function_id", "value_str"]
        .iter()
        .filter_map(|key| benchmark[key].as_str())
        .collect();
    if parts.is_empty() {
        return Err("benchmark.json has neither function_id nor value_str".to_owned());
    }
    // Criterion's own choice for the figure it reports.
    let typical = match &estimates["slope"] {
        Value::Null => &estimates["mean"],
        slope => slope,
    };
    let nanos = typical["point_estimate"]
        .as_f64()
        .filter(|nanos| nanos.is_finite() && *nanos > 0.0)
        .ok_or("estimates.json has no positive point_estimate")?;
    Ok(Estimate {
        group,
        id: parts.join("/"),
        nanos,
    })
}

/// Every benchmark result under `root` (criterion's folder), sorted by
/// group and id, and a line for each one that could not be read.
pub fn read_estimates(root: &Path) -> io::Result<(Vec<Estimate>, Vec<String>)> {
    let mut folders = Vec::new();
    find_new_folders(root, &mut folders)?;
    let mut estimates = Vec::new();
    let mut problems = Vec::new();
    for folder in folders {
        let read = |name: &str| std::fs::read_to_string(folder.join(name));
        let parsed = match (read("benchmark.json"), read("estimates.json")) {
            (Ok(benchmark), Ok(values)) => parse_estimate(&benchmark, &values),
            (Err(error), _) | (_, Err(error)) => Err(error.to_string()),
        };
        match parsed {
            Ok(estimate) => estimates.push(estimate),
            Err(error) => problems.push(format!("{}: {error}", folder.display())),
        }
    }
    estimates.sort_by(|a, b| (&a.group, &a.id).cmp(&(&b.group, &b.id)));
    Ok((estimates, problems))
}

/// The `new` folders under `folder` that hold a `benchmark.json`.
fn find_new_folders(folder: &Path, found: &mut Vec<PathBuf>) -> io::Result<()> {
    for entry in std::fs::read_dir(folder)? {
        let path = entry?.path();
        if !path.is_dir() {
            continue;
        }
        if path.file_name().is_some_and(|name| name == "new")
            && path.join("benchmark.json").is_file()
        {
            found.push(path);
        } else {
            find_new_folders(&path, found)?;
        }
    }
    Ok(())
}

/// The runtime a benchmark id names, and the id without it: `brigade` in
/// `idle/brigade` leaves `idle`, `tokio_yield_now` leaves `yield_now`.
/// `None` if it names neither.
pub fn split_runtime(id: &str) -> Option<(RuntimeKind, String)> {
    let segments: Vec<&str> = id.split('/').collect();
    for (index, segment) in segments.iter().enumerate() {
        for kind in RuntimeKind::ALL {
            let rest = if *segment == kind.name() {
                None
            } else if let Some(rest) = segment
                .strip_prefix(kind.name())
                .and_then(|rest| rest.strip_prefix('_'))
            {
                Some(rest)
            } else {
                continue;
            };
            let mut others: Vec<&str> = segments.clone();
            match rest {
                Some(rest) => others[index] = rest,
                None => {
                    others.remove(index);
                }
            }
            return Some((kind, others.join("/")));
        }
    }
    None
}

/// A brigade benchmark and the tokio benchmark it is compared with.
#[derive(Debug, Clone, PartialEq)]
pub struct Pair {
    /// The criterion group both are in.
    pub group: String,
    /// What is compared, without the runtimes' names: `yield_now`,
    /// `yield_if_busy vs yield_now`, or empty where the group is the
    /// workload.
    pub variant: String,
    /// brigade's time per iteration, in ns.
    pub brigade_nanos: f64,
    /// tokio's time per iteration, in ns.
    pub tokio_nanos: f64,
}

/// The pairs among `estimates` (see the module docs), in their order.
pub fn pairs(estimates: &[Estimate]) -> Vec<Pair> {
    let split: Vec<(&Estimate, RuntimeKind, String)> = estimates
        .iter()
        .filter_map(|estimate| {
            let (kind, rest) = split_runtime(&estimate.id)?;
            Some((estimate, kind, rest))
        })
        .collect();
    let tokio_with = |group: &str, rest: &str| {
        split.iter().find(|(estimate, kind, other)| {
            *kind == RuntimeKind::Tokio && estimate.group == group && other == rest
        })
    };
    let mut pairs = Vec::new();
    for (brigade, _, rest) in split
        .iter()
        .filter(|(_, kind, _)| *kind == RuntimeKind::Brigade)
    {
        let Some((tokio, _, tokio_rest)) = partners(rest)
            .iter()
            .find_map(|candidate| tokio_with(&brigade.group, candidate))
        else {
            continue;
        };
        let variant = if rest == tokio_rest {
            rest.clone()
        } else {
            format!("{rest} vs {tokio_rest}")
        };
        pairs.push(Pair {
            group: brigade.group.clone(),
            variant,
            brigade_nanos: brigade.nanos,
            tokio_nanos: tokio.nanos,
        });
    }
    pairs
}

/// The ids, without the runtime, that a brigade benchmark's `rest` is
/// compared with, best first: the same; then with `yield_if_busy` read as
/// `yield_now` (`yield_if_busy/all_busy` → `yield_now/all_busy`); then
/// without its case (`yield_now`), and for a variant that adds to
/// `yield_if_busy` (`elastic+yield_if_busy`), `yield_now` alone.
pub fn partners(rest: &str) -> Vec<String> {
    let mut candidates = vec![rest.to_owned()];
    if rest.contains("yield_if_busy") {
        let replaced = rest.replace("yield_if_busy", "yield_now");
        let mut segments: Vec<&str> = replaced.split('/').collect();
        candidates.push(replaced.clone());
        while segments.len() > 1 {
            segments.pop();
            candidates.push(segments.join("/"));
        }
        candidates.push("yield_now".to_owned());
    }
    candidates.dedup();
    candidates
}

/// A time per iteration with three significant digits: `623 ps`, `812 ns`,
/// `4.07 µs`, `31.2 ms`, `1.20 s`; below a nanosecond in ps, so that
/// `yield_if_busy`'s fast path keeps its digits.
pub fn format_nanos(nanos: f64) -> String {
    let (value, unit) = match nanos {
        nanos if nanos < 1.0 => (nanos * 1e3, "ps"),
        nanos if nanos < 1e3 => (nanos, "ns"),
        nanos if nanos < 1e6 => (nanos / 1e3, "µs"),
        nanos if nanos < 1e9 => (nanos / 1e6, "ms"),
        nanos => (nanos / 1e9, "s"),
    };
    let decimals = match value {
        value if value < 10.0 => 2,
        value if value < 100.0 => 1,
        _ => 0,
    };
    format!("{value:.decimals$} {unit}")
}

/// brigade's time over tokio's with three significant digits (`0.0155`,
/// `0.97`, `1.23`), so that a ratio far below 1 keeps its digits.
pub fn format_time_ratio(brigade: f64, tokio: f64) -> String {
    let ratio = brigade / tokio;
    if ratio >= 0.1 || !ratio.is_normal() {
        format!("{ratio:.2}")
    } else {
        let decimals = (2.0 - ratio.log10().floor()).max(0.0) as usize;
        format!("{ratio:.decimals$}")
    }
}

/// Which runtime took less time, and by how much: `brigade 1.5×`,
/// `tokio 1.2×`, or `level` within 5 %.
pub fn faster(pair: &Pair) -> String {
    let ratio = pair.brigade_nanos / pair.tokio_nanos;
    if ratio <= 1.0 / 1.05 {
        format!("brigade {:.1}×", 1.0 / ratio)
    } else if ratio >= 1.05 {
        format!("tokio {ratio:.1}×")
    } else {
        "level".to_owned()
    }
}

/// The summary table of `pairs`.
pub fn format_summary(pairs: &[Pair]) -> String {
    let mut table = Table::new(
        format!(
            "brigade against tokio: criterion's time per iteration (lower is better), \
             {} comparisons",
            pairs.len()
        ),
        &[
            "group",
            "variant",
            "brigade",
            "tokio",
            "brigade / tokio",
            "faster",
        ],
    );
    for pair in pairs {
        table.row(vec![
            pair.group.clone(),
            if pair.variant.is_empty() {
                "-".to_owned()
            } else {
                pair.variant.clone()
            },
            format_nanos(pair.brigade_nanos),
            format_nanos(pair.tokio_nanos),
            format_time_ratio(pair.brigade_nanos, pair.tokio_nanos),
            faster(pair),
        ]);
    }
    table.to_string()
}

/// The figures of brigade's benchmarks that have no tokio partner, a line
/// each, where both of their benchmarks ran: the background's throughput
/// with `yield_if_busy` after each unit against none (group
/// `yield_throughput`: the time without over the time with), and what
/// `yield_if_busy`'s fast path adds to an empty await (group `yield_call`).
pub fn brigade_alone(estimates: &[Estimate]) -> Vec<String> {
    let find = |group: &str, id: &str| {
        estimates
            .iter()
            .find(|estimate| estimate.group == group && estimate.id == id)
            .map(|estimate| estimate.nanos)
    };
    let mut lines = Vec::new();
    if let (Some(with), Some(without)) = (
        find("yield_throughput", "yield_if_busy"),
        find("yield_throughput", "no_yield"),
    ) {
        lines.push(format!(
            "yield_throughput: background throughput with yield_if_busy after each unit \
             {:.3} of none's ({} against {} a run)",
            without / with,
            format_nanos(with),
            format_nanos(without)
        ));
    }
    if let (Some(fast), Some(floor)) = (
        find("yield_call", "brigade_yield_if_busy/idle_worker"),
        find("yield_call", "empty_await"),
    ) {
        let added = if fast > floor {
            format!("adds {}", format_nanos(fast - floor))
        } else {
            "adds nothing measurable".to_owned()
        };
        lines.push(format!(
            "yield_call: yield_if_busy with an idle worker {} a call, an empty await {} \
             (the fast path {added})",
            format_nanos(fast),
            format_nanos(floor),
        ));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    fn benchmark(group: &str, function: Option<&str>, value: Option<&str>) -> String {
        serde_json::json!({
            "group_id": group,
            "function_id": function,
            "value_str": value,
            "throughput": null,
            "full_id": "ignored",
            "directory_name": "ignored",
            "title": "ignored",
        })
        .to_string()
    }

    fn estimates(mean: f64, slope: Option<f64>) -> String {
        let estimate = |value: f64| {
            serde_json::json!({
                "confidence_interval": {
                    "confidence_level": 0.95,
                    "lower_bound": value * 0.9,
                    "upper_bound": value * 1.1,
                },
                "point_estimate": value,
                "standard_error": value * 0.01,
            })
        };
        serde_json::json!({
            "mean": estimate(mean),
            "median": estimate(mean * 0.99),
            "median_abs_dev": estimate(mean * 0.05),
            "slope": slope.map(estimate),
            "std_dev": estimate(mean * 0.1),
        })
        .to_string()
    }

    fn estimate(group: &str, id: &str, nanos: f64) -> Estimate {
        Estimate {
            group: group.to_owned(),
            id: id.to_owned(),
            nanos,
        }
    }

    #[test]
    fn estimates_use_the_slope_else_the_mean() {
        let flat = parse_estimate(
            &benchmark("ping_pong", Some("brigade"), None),
            &estimates(2_000.0, None),
        );
        assert_eq!(flat, Ok(estimate("ping_pong", "brigade", 2_000.0)));
        let linear = parse_estimate(
            &benchmark("timers_fire_100k", Some("register_and_fire"), Some("tokio")),
            &estimates(2_000.0, Some(1_500.0)),
        );
        assert_eq!(
            linear,
            Ok(estimate(
                "timers_fire_100k",
                "register_and_fire/tokio",
                1_500.0
            ))
        );
    }

    #[test]
    fn malformed_files_are_an_error_that_names_them() {
        let good = estimates(1.0, None);
        for (benchmark, estimates, needle) in [
            ("{", good.as_str(), "benchmark.json"),
            (r#"{"function_id": "x"}"#, good.as_str(), "group_id"),
            (r#"{"group_id": "g"}"#, good.as_str(), "neither"),
            (
                r#"{"group_id": "g", "function_id": "x"}"#,
                "{}",
                "point_estimate",
            ),
            (
                r#"{"group_id": "g", "function_id": "x"}"#,
                "[",
                "estimates.json",
            ),
        ] {
            let error = parse_estimate(benchmark, estimates).unwrap_err();
            assert!(error.contains(needle), "{error}");
        }
    }

    #[test]
    fn runtimes_are_found_in_any_segment_or_as_a_prefix() {
        let split = |id| split_runtime(id).map(|(kind, rest)| (kind.name(), rest));
        assert_eq!(split("brigade"), Some(("brigade", String::new())));
        assert_eq!(split("idle/tokio"), Some(("tokio", "idle".to_owned())));
        assert_eq!(
            split("brigade_yield_if_busy/all_busy"),
            Some(("brigade", "yield_if_busy/all_busy".to_owned()))
        );
        assert_eq!(
            split("register_and_cancel/brigade"),
            Some(("brigade", "register_and_cancel".to_owned()))
        );
        assert_eq!(split("empty_await"), None);
        assert_eq!(split("brigadeish"), None);
    }

    /// The shapes of the suites' ids: rt_compare, foreground_latency,
    /// yield_overhead, timers and coopsched.
    fn suites() -> Vec<Estimate> {
        vec![
            estimate("ping_pong", "brigade", 1_000.0),
            estimate("ping_pong", "tokio", 2_000.0),
            estimate("foreground_rtt_unit10us", "idle/brigade", 50_000.0),
            estimate("foreground_rtt_unit10us", "idle/tokio", 50_500.0),
            estimate("foreground_rtt_unit10us", "brigade/yield_if_busy", 60_000.0),
            estimate("foreground_rtt_unit10us", "brigade/yield_now", 70_000.0),
            estimate(
                "foreground_rtt_unit10us",
                "brigade/elastic+yield_if_busy",
                1.0,
            ),
            estimate("foreground_rtt_unit10us", "tokio/yield_now", 90_000.0),
            estimate("foreground_rtt_unit10us", "tokio/consume_budget", 1.0),
            estimate("yield_call", "empty_await", 0.41),
            estimate("yield_call", "brigade_yield_if_busy/idle_worker", 0.62),
            estimate("yield_call", "brigade_yield_now", 80.0),
            estimate("yield_call", "tokio_yield_now", 40.0),
            estimate("timers_pending_1m", "register_and_cancel/brigade", 3e8),
            estimate("timers_pending_1m", "register_and_cancel/tokio", 2e8),
            estimate("yield_throughput", "yield_if_busy", 1.02e6),
            estimate("yield_throughput", "no_yield", 1.0e6),
            // A tokio benchmark of another group is no partner.
            estimate("coopsched_cpu", "brigade_yield_if_busy", 1e9),
            estimate("coopsched_wait", "tokio_yield_now", 1e9),
        ]
    }

    #[test]
    fn pairs_match_the_same_id_and_yield_if_busy_with_yield_now() {
        let found: Vec<(String, String, f64, f64)> = pairs(&suites())
            .into_iter()
            .map(|pair| {
                (
                    pair.group,
                    pair.variant,
                    pair.brigade_nanos,
                    pair.tokio_nanos,
                )
            })
            .collect();
        let rtt = "foreground_rtt_unit10us".to_owned();
        assert_eq!(
            found,
            [
                ("ping_pong".to_owned(), String::new(), 1_000.0, 2_000.0),
                (rtt.clone(), "idle".to_owned(), 50_000.0, 50_500.0),
                (
                    rtt.clone(),
                    "yield_if_busy vs yield_now".to_owned(),
                    60_000.0,
                    90_000.0
                ),
                (rtt.clone(), "yield_now".to_owned(), 70_000.0, 90_000.0),
                (
                    rtt,
                    "elastic+yield_if_busy vs yield_now".to_owned(),
                    1.0,
                    90_000.0
                ),
                (
                    "yield_call".to_owned(),
                    "yield_if_busy/idle_worker vs yield_now".to_owned(),
                    0.62,
                    40.0
                ),
                ("yield_call".to_owned(), "yield_now".to_owned(), 80.0, 40.0),
                (
                    "timers_pending_1m".to_owned(),
                    "register_and_cancel".to_owned(),
                    3e8,
                    2e8
                ),
            ]
        );
    }

    #[test]
    fn the_summary_is_a_markdown_table_with_ratios() {
        let summary = format_summary(&pairs(&suites()));
        let lines: Vec<&str> = summary.lines().collect();
        assert!(lines[0].contains("8 comparisons") && lines[0].contains("lower is better"));
        assert_eq!(
            lines[2],
            "| group | variant | brigade | tokio | brigade / tokio | faster |"
        );
        assert_eq!(
            lines[4],
            "| ping_pong | - | 1.00 µs | 2.00 µs | 0.50 | brigade 2.0× |"
        );
        assert_eq!(
            lines[5],
            "| foreground_rtt_unit10us | idle | 50.0 µs | 50.5 µs | 0.99 | level |"
        );
        // yield_if_busy's sub-nanosecond fast path keeps its digits, and so
        // does its ratio to tokio's yield_now.
        assert_eq!(
            lines[9],
            "| yield_call | yield_if_busy/idle_worker vs yield_now | 620 ps | 40.0 ns | 0.0155 \
             | brigade 64.5× |"
        );
        assert_eq!(
            lines[10],
            "| yield_call | yield_now | 80.0 ns | 40.0 ns | 2.00 | tokio 2.0× |"
        );
        assert_eq!(lines.len(), 4 + 8);
    }

    #[test]
    fn brigade_s_own_figures_give_the_throughput_ratio_and_the_fast_path() {
        let lines = brigade_alone(&suites());
        assert_eq!(
            lines,
            [
                "yield_throughput: background throughput with yield_if_busy after each unit \
                 0.980 of none's (1.02 ms against 1.00 ms a run)",
                "yield_call: yield_if_busy with an idle worker 620 ps a call, an empty await \
                 410 ps (the fast path adds 210 ps)",
            ]
        );
        let level = [
            estimate("yield_call", "brigade_yield_if_busy/idle_worker", 0.4),
            estimate("yield_call", "empty_await", 0.41),
        ];
        assert!(brigade_alone(&level)[0].ends_with("(the fast path adds nothing measurable)"));
        assert!(brigade_alone(&[]).is_empty());
    }

    #[test]
    fn yield_if_busy_is_compared_with_the_call_it_replaces() {
        assert_eq!(
            partners("yield_if_busy/all_busy"),
            ["yield_if_busy/all_busy", "yield_now/all_busy", "yield_now"]
        );
        assert_eq!(
            partners("elastic+yield_if_busy"),
            ["elastic+yield_if_busy", "elastic+yield_now", "yield_now"]
        );
        assert_eq!(partners("idle"), ["idle"]);
    }

    #[test]
    fn ratios_keep_three_digits_far_below_1() {
        assert_eq!(format_time_ratio(0.62, 40.0), "0.0155");
        assert_eq!(format_time_ratio(1.0, 2.0), "0.50");
        assert_eq!(format_time_ratio(3.0, 2.0), "1.50");
        assert_eq!(format_time_ratio(0.0, 2.0), "0.00");
    }

    #[test]
    fn times_read_in_their_unit() {
        assert_eq!(format_nanos(0.623), "623 ps");
        assert_eq!(format_nanos(0.0456), "45.6 ps");
        assert_eq!(format_nanos(812.4), "812 ns");
        assert_eq!(format_nanos(4_070.0), "4.07 µs");
        assert_eq!(format_nanos(31_240_000.0), "31.2 ms");
        assert_eq!(format_nanos(1.2e9), "1.20 s");
    }

    #[test]
    fn a_criterion_folder_is_read_and_its_bad_entries_reported() {
        let root = std::env::temp_dir().join(format!("brigade-summary-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let write = |path: &str, benchmark: &str, values: &str| {
            let folder = root.join(path).join("new");
            std::fs::create_dir_all(&folder).unwrap();
            std::fs::write(folder.join("benchmark.json"), benchmark).unwrap();
            std::fs::write(folder.join("estimates.json"), values).unwrap();
        };
        write(
            "ping_pong/tokio",
            &benchmark("ping_pong", Some("tokio"), None),
            &estimates(2_000.0, None),
        );
        write(
            "ping_pong/brigade",
            &benchmark("ping_pong", Some("brigade"), None),
            &estimates(1_000.0, None),
        );
        write("broken/brigade", "{", "{}");
        // Criterion's previous run and its HTML report are not results.
        std::fs::create_dir_all(root.join("ping_pong/brigade/base")).unwrap();
        std::fs::create_dir_all(root.join("report")).unwrap();
        let (estimates, problems) = read_estimates(&root).unwrap();
        std::fs::remove_dir_all(&root).unwrap();
        assert_eq!(
            estimates,
            [
                estimate("ping_pong", "brigade", 1_000.0),
                estimate("ping_pong", "tokio", 2_000.0)
            ]
        );
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].contains("broken"), "{problems:?}");
        assert!(read_estimates(Path::new("/nonexistent/criterion")).is_err());
    }
}
