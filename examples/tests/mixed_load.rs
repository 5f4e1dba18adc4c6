//! `mixed_load` end to end with short runs, as the example drives it: the
//! default's three cases, the verdict and both charts, and `--all`. Only
//! what the runs did is checked, never how fast: these machines are too
//! noisy for timing assertions.

use brigade_examples::mixed_load::{
    self, CaseKind, Config, VARIANTS, format_verdict, render_svg, render_tradeoff_svg,
};

/// The default's settings, shortened: 0.2 s a variant, a small background.
fn quick(extra: &[&str]) -> Config {
    let mut args = vec![
        "--secs",
        "0.2",
        "--bg",
        "2",
        "--unit-us",
        "10",
        "--workers",
        "2",
    ];
    args.extend_from_slice(extra);
    Config::parse(args.into_iter().map(str::to_owned)).unwrap()
}

#[test]
fn the_default_runs_three_cases_and_ends_with_a_verdict_and_charts() {
    let config = quick(&[]);
    let results = mixed_load::run(&config).unwrap();
    let kinds: Vec<CaseKind> = results.iter().map(|result| result.case.kind).collect();
    assert_eq!(kinds, [CaseKind::Idle, CaseKind::Quiet, CaseKind::Crowded]);
    for result in &results {
        assert_eq!(result.outcomes.len(), result.case.variants.len());
        for outcome in &result.outcomes {
            assert!(outcome.foreground.sent > 0, "{} sent nothing", outcome.name);
        }
    }
    // The variants that yield properly answer every request.
    for (case, name) in [
        (0, "idle/brigade"),
        (0, "idle/tokio"),
        (1, "brigade/yield_if_busy"),
    ] {
        let outcome = results[case].outcome(name).unwrap();
        assert!(!outcome.foreground.starved, "{name} starved");
        assert_eq!(
            outcome.foreground.latencies_us.len(),
            outcome.foreground.sent
        );
    }
    let verdict = format_verdict(&results);
    // The heading, a line per case, and brigade's plain yield_now in both
    // busy cases.
    assert_eq!(verdict.lines().count(), 2 + 3 + 2, "{verdict}");
    assert!(
        verdict.contains("crowded host (1 busy neighbour):"),
        "{verdict}"
    );

    let info = mixed_load::chart_info(&config);
    for svg in [
        render_svg(&results, &info),
        render_tradeoff_svg(&results, &info),
    ] {
        assert!(svg.contains("2 background tasks × 10 µs units, 2 workers"));
        assert!(svg.contains("-core host"));
        assert!(svg.contains("better"), "the axes say which way is better");
    }
}

#[test]
fn all_runs_every_variant_once_without_neighbours() {
    let config = quick(&["--all", "--neighbours", "0", "--secs", "0.15"]);
    let results = mixed_load::run(&config).unwrap();
    let ran: Vec<&str> = results
        .iter()
        .flat_map(|result| &result.outcomes)
        .map(|outcome| outcome.name.as_str())
        .collect();
    let every: Vec<&str> = VARIANTS.iter().map(|variant| variant.name).collect();
    assert_eq!(ran, every);
}
