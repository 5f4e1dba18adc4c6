//! What the demo runs: the cases (host conditions) and the variants run in
//! each.
//!
//! By default three cases show where the choice of runtime matters:
//! - **foreground alone**: the idle references, no background load, the
//!   floor of the foreground's latency on this host;
//! - **quiet host**: the background load on every worker, nothing else on
//!   the machine;
//! - **crowded host**: the same with busy neighbour processes beside the run
//!   (`crate::neighbours`), as a load generator or another service would be.
//!
//! In the busy cases the default runs brigade's `yield_if_busy`, brigade's
//! plain `yield_now` (code written for tokio) and tokio's `yield_now`;
//! `--all` runs every [`VARIANTS`] entry, `--only` picks from all of them.

use super::{Outcome, VARIANTS, Variant, YieldKind};

/// The variants of the default demo (without `--all` or `--only`).
pub const DEMO_VARIANTS: [&str; 5] = [
    "idle/brigade",
    "idle/tokio",
    "brigade/yield_if_busy",
    "brigade/yield_now",
    "tokio/yield_now",
];

/// The host condition of a case.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CaseKind {
    /// No background load: the foreground alone, on a quiet host.
    Idle,
    /// The background load, nothing else on the host.
    Quiet,
    /// The background load beside busy neighbour processes.
    Crowded,
}

/// One case of the demo: a host condition and the variants run in it.
#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    /// The host condition.
    pub kind: CaseKind,
    /// Busy neighbour processes beside each run (0 but for [`CaseKind::Crowded`]).
    pub neighbours: usize,
    /// The variants, in the order they run.
    pub variants: Vec<Variant>,
}

impl Case {
    /// The case's name in tables, charts and the verdict.
    pub fn label(&self) -> String {
        match self.kind {
            CaseKind::Idle => "foreground alone".to_owned(),
            CaseKind::Quiet => "quiet host".to_owned(),
            CaseKind::Crowded => format!(
                "crowded host ({} busy neighbour{})",
                self.neighbours,
                if self.neighbours == 1 { "" } else { "s" }
            ),
        }
    }
}

/// The outcomes of one case, in the order of its variants.
pub struct CaseResult {
    /// The case.
    pub case: Case,
    /// One outcome per variant of the case.
    pub outcomes: Vec<Outcome>,
}

impl CaseResult {
    /// The outcome of the variant called `name`, if it ran.
    pub fn outcome(&self, name: &str) -> Option<&Outcome> {
        self.outcomes.iter().find(|outcome| outcome.name == name)
    }
}

/// The cases to run: the idle references, then the quiet host, then (with
/// `neighbours` above 0) the crowded host, each with the variants of
/// `pool` that `selects` keeps. Cases left without variants are left out.
pub fn plan(pool: &[Variant], neighbours: usize, selects: impl Fn(&str) -> bool) -> Vec<Case> {
    let (idle, busy): (Vec<Variant>, Vec<Variant>) = pool
        .iter()
        .filter(|variant| selects(variant.name))
        .partition(|variant| variant.yield_kind == YieldKind::NoBackground);
    let mut cases = Vec::new();
    if !idle.is_empty() {
        cases.push(Case {
            kind: CaseKind::Idle,
            neighbours: 0,
            variants: idle,
        });
    }
    if !busy.is_empty() {
        cases.push(Case {
            kind: CaseKind::Quiet,
            neighbours: 0,
            variants: busy.clone(),
        });
        if neighbours > 0 {
            cases.push(Case {
                kind: CaseKind::Crowded,
                neighbours,
                variants: busy,
            });
        }
    }
    cases
}

/// The variants of [`DEMO_VARIANTS`], in [`VARIANTS`]' order.
pub fn demo_variants() -> Vec<Variant> {
    VARIANTS
        .iter()
        .filter(|variant| DEMO_VARIANTS.contains(&variant.name))
        .copied()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(case: &Case) -> Vec<&'static str> {
        case.variants.iter().map(|variant| variant.name).collect()
    }

    #[test]
    fn the_default_plan_is_the_idle_references_then_quiet_then_crowded() {
        let cases = plan(&demo_variants(), 1, |_| true);
        let kinds: Vec<CaseKind> = cases.iter().map(|case| case.kind).collect();
        assert_eq!(kinds, [CaseKind::Idle, CaseKind::Quiet, CaseKind::Crowded]);
        assert_eq!(names(&cases[0]), ["idle/brigade", "idle/tokio"]);
        let busy = [
            "brigade/yield_if_busy",
            "brigade/yield_now",
            "tokio/yield_now",
        ];
        assert_eq!(names(&cases[1]), busy);
        assert_eq!(names(&cases[2]), busy);
        assert_eq!((cases[1].neighbours, cases[2].neighbours), (0, 1));
        assert_eq!(cases[2].label(), "crowded host (1 busy neighbour)");
    }

    #[test]
    fn no_neighbours_drops_the_crowded_case_and_selection_drops_empty_cases() {
        let cases = plan(VARIANTS, 0, |_| true);
        assert_eq!(cases.len(), 2);
        assert_eq!(cases[1].variants.len(), VARIANTS.len() - 2);
        let cases = plan(VARIANTS, 3, |name| name.contains("tokio/"));
        let kinds: Vec<CaseKind> = cases.iter().map(|case| case.kind).collect();
        assert_eq!(kinds, [CaseKind::Quiet, CaseKind::Crowded]);
        assert_eq!(cases[1].label(), "crowded host (3 busy neighbours)");
        assert!(plan(VARIANTS, 1, |_| false).is_empty());
    }
}
