//! The scheduler: where a task goes when it is spawned, woken or steps
//! aside (`placement.rs`, carried out by `schedule.rs` and
//! `worker/carry_out.rs`), the workers that run it (`worker/`, whose
//! `next_task` is the order a worker looks for work in), and the state they
//! share: who is idle (`idle.rs`), the attention holds (`attention.rs`), the
//! run-next slots seen by stealers (`run_next_slot.rs`), the shutdown flag
//! (`shutdown_flag.rs`), the current-thread flavour's slot
//! (`current_thread.rs`) and a paused clock's auto-advance
//! (`auto_advance.rs`). Every rule they apply is in `policy.rs`.

pub(crate) mod attention;
pub(crate) mod auto_advance;
pub(crate) mod current_thread;
pub(crate) mod idle;
pub(crate) mod placement;
pub(crate) mod run_next_slot;
pub(crate) mod schedule;
pub(crate) mod shutdown_flag;
pub(crate) mod worker;
