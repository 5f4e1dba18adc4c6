//! Tasks and their expected outcomes.

#[allow(unused_imports)]
use super::*;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Expect {
    /// Completes with this value.
    Value(u64),
    /// Panics.
    Panic,
    /// Never ends by itself.
    Never,
    /// Any outcome, or none before the runtime's end (its TCP peer was
    /// aborted, maybe before it connected).
    Any,
}

pub(crate) struct Task {
    pub(crate) handle: JoinHandle<Out>,
    pub(crate) name: String,
    pub(crate) expect: Expect,
    pub(crate) aborted: bool,
    /// `is_finished()` was true when it was first aborted: the abort must
    /// not turn its outcome into a cancellation.
    pub(crate) finished_at_abort: bool,
    /// Tasks that depend on each other (a TCP server and its client).
    pub(crate) group: Option<usize>,
    /// Its outcome depends on other tasks (its TCP peer, its children),
    /// which the runtime's end may cancel before its last poll: once the
    /// runtime has ended, any outcome is accepted.
    pub(crate) dependent: bool,
    /// A plain (not elastic) task looping on `yield_if_busy()`: the subject
    /// of the known bugs (a) and (b) (see [`bug_hint`]).
    pub(crate) ybl_loop: bool,
    /// Calls `yield_if_busy()` before it completes, so it may step aside
    /// into the yield queue, which a worker serves only when it has nothing
    /// else to do (as the README says). With as many never-ending loops as
    /// workers (on `yield_now()`, which always keep a task waiting, or on
    /// `yield_if_busy()`, which never give their worker up to the yield
    /// queue) no worker ever has nothing else to do, and such a task may wait
    /// for as long as the loops run. (An abort still reaches it: the abort
    /// wakes it out of the yield queue.)
    pub(crate) uses_ybl: bool,
}

/// Checks one resolved `JoinHandle` against what its operation promised.
/// `ended`: the runtime is gone, so any unfinished task may be cancelled.
pub(crate) fn check_outcome(
    name: &str,
    expect: Expect,
    aborted: bool,
    finished_at_abort: bool,
    ended: bool,
    result: &Result<Out, JoinError>,
) -> Result<(), String> {
    let problem = match result {
        Ok(out) => match expect {
            Expect::Value(value) if out.value == value => None,
            Expect::Any => None,
            _ => Some(format!("resolved as Ok({})", out.value)),
        },
        Err(error) if error.is_panic() => match expect {
            Expect::Panic | Expect::Any => None,
            _ => Some(format!("panicked: {error}")),
        },
        Err(error) if error.is_cancelled() => {
            if finished_at_abort {
                Some("was cancelled although it had finished before its abort".to_owned())
            } else if aborted || ended {
                None
            } else {
                Some("was cancelled without an abort or the runtime's end".to_owned())
            }
        }
        Err(error) => Some(format!(
            "failed neither by panic nor by cancellation: {error}"
        )),
    };
    match problem {
        None => Ok(()),
        Some(problem) => Err(format!(
            "task {name} (expected {expect:?}, aborted: {aborted}, runtime ended: {ended}) {problem}"
        )),
    }
}

/// The bugs a failure may be about, if a task looping on `yield_if_busy()`
/// was live (both fixed in 0534744; this test reproduces them on the commit
/// before).
pub(crate) fn bug_hint(ybl_loops: &[String]) -> String {
    if ybl_loops.is_empty() {
        String::new()
    } else {
        format!(
            " [tasks looping on yield_if_busy() were live: {}. Known bugs of such loops: \
             (a) dropping the runtime hung while a task looped on yield_if_busy(); (b) \
             JoinHandle::abort never took effect on a task looping on yield_if_busy()]",
            ybl_loops.join(", ")
        )
    }
}
