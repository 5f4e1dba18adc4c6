//! The variants of the experiment: which runtime, and which yield point after
//! each background unit.

use crate::harness::RuntimeKind;

/// The yield point after each background unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum YieldKind {
    /// No background load at all (the idle baseline).
    NoBackground,
    /// `brigade::yield_if_busy()`.
    IfBusy,
    /// `brigade::yield_if_busy()` in tasks spawned with `spawn_elastic`.
    ElasticIfBusy,
    /// `brigade::yield_now()`.
    BrigadeYieldNow,
    /// `tokio::task::yield_now()`.
    TokioYieldNow,
    /// `tokio::task::consume_budget()`.
    TokioConsumeBudget,
    /// No yield point at all: the reference for background throughput (the
    /// foreground starves).
    NoYield,
    /// No yield point in the background, and the foreground served by a
    /// blocking OS thread outside the runtime, which the OS preempts the
    /// workers for. The background pays for the foreground's CPU (client,
    /// loopback TCP, context switches) as in the variants that serve it, so
    /// this is the reference that isolates the cost of the yield points.
    NoYieldThreadServer,
}

impl YieldKind {
    /// Whether the runtime under test answers the foreground at all.
    pub fn serves_foreground(self) -> bool {
        self != YieldKind::NoYield
    }
}

/// One configuration of the experiment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Variant {
    /// Name in the report.
    pub name: &'static str,
    /// The runtime under test.
    pub runtime: RuntimeKind,
    /// The background loops' yield point.
    pub yield_kind: YieldKind,
}

/// Every variant, in the order the demo runs them.
pub const VARIANTS: &[Variant] = &[
    Variant {
        name: "idle/brigade",
        runtime: RuntimeKind::Brigade,
        yield_kind: YieldKind::NoBackground,
    },
    Variant {
        name: "idle/tokio",
        runtime: RuntimeKind::Tokio,
        yield_kind: YieldKind::NoBackground,
    },
    Variant {
        name: "brigade/yield_if_busy",
        runtime: RuntimeKind::Brigade,
        yield_kind: YieldKind::IfBusy,
    },
    Variant {
        name: "brigade/elastic+yield_if_busy",
        runtime: RuntimeKind::Brigade,
        yield_kind: YieldKind::ElasticIfBusy,
    },
    Variant {
        name: "brigade/yield_now",
        runtime: RuntimeKind::Brigade,
        yield_kind: YieldKind::BrigadeYieldNow,
    },
    Variant {
        name: "tokio/yield_now",
        runtime: RuntimeKind::Tokio,
        yield_kind: YieldKind::TokioYieldNow,
    },
    Variant {
        name: "tokio/consume_budget",
        runtime: RuntimeKind::Tokio,
        yield_kind: YieldKind::TokioConsumeBudget,
    },
    Variant {
        name: "brigade/no_yield",
        runtime: RuntimeKind::Brigade,
        yield_kind: YieldKind::NoYield,
    },
    Variant {
        name: "tokio/no_yield",
        runtime: RuntimeKind::Tokio,
        yield_kind: YieldKind::NoYield,
    },
    Variant {
        name: "brigade/no_yield+thread_server",
        runtime: RuntimeKind::Brigade,
        yield_kind: YieldKind::NoYieldThreadServer,
    },
    Variant {
        name: "tokio/no_yield+thread_server",
        runtime: RuntimeKind::Tokio,
        yield_kind: YieldKind::NoYieldThreadServer,
    },
];
