//! The summary's parsing, pairing and formatting, on made-up criterion results.

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
