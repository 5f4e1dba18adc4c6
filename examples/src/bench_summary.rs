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
mod tests;
