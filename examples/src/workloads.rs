//! Workloads written once against [`Rt`](crate::harness::Rt) and run on
//! both runtimes by the benches: tokio's own scheduler-benchmark workloads
//! ([`SuiteWorkload`], `benches/rt_compare.rs` and `benches/scaling.rs`) and
//! a workload that keeps the yield queue busy ([`yield_heavy`],
//! `benches/scaling.rs`).

mod suite;
pub mod yield_heavy;

pub use suite::SuiteWorkload;
