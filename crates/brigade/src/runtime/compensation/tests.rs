//! Unit tests of the compensation bookkeeping.

use super::spare_slots::{AfterRest, Start};
use super::*;
use std::time::Duration;

#[test]
fn spares_follow_covers_within_the_bound() {
    let compensation = Compensation::new(2, vec!['a', 'b']);
    assert!(compensation.start_spare().is_none(), "nothing covered");
    assert!(compensation.cover(0, BLOCK_IN_PLACE, 0, None));
    assert!(
        !compensation.cover(0, BLOCK_IN_PLACE, 0, None),
        "covered once"
    );
    let Some(Start::Spawn {
        slot: 2,
        local: 'a',
    }) = compensation.start_spare()
    else {
        panic!("expected slot 2 to need a thread");
    };
    assert!(compensation.start_spare().is_none(), "one cover, one spare");
    assert!(compensation.cover(1, BLOCK_IN_PLACE, 0, None));
    assert!(
        compensation.cover(2, BLOCK_IN_PLACE, 0, None),
        "a spare can be stuck too"
    );
    assert!(matches!(
        compensation.start_spare(),
        Some(Start::Spawn { slot: 3, .. })
    ));
    assert!(
        compensation.start_spare().is_none(),
        "bounded by max_spares"
    );
    assert_eq!(compensation.serving(), 2);
    assert_eq!(compensation.started(), 2);
    // Two of three covers end: one spare is surplus, and only one steps down.
    assert!(compensation.uncover(0).is_some());
    assert!(compensation.uncover(0).is_none());
    assert!(!compensation.is_surplus());
    assert!(compensation.uncover(1).is_some());
    assert!(compensation.is_surplus());
    assert!(compensation.try_step_down(3));
    assert!(!compensation.try_step_down(2));
    // A new cover wakes the resting spare rather than a new thread.
    assert!(compensation.cover(0, BLOCK_IN_PLACE, 0, None));
    assert!(matches!(
        compensation.start_spare(),
        Some(Start::Woken { slot: 3 })
    ));
    assert!(matches!(
        compensation.rest(3, 'b', Duration::from_secs(1)),
        AfterRest::Serve('b')
    ));
}

#[test]
fn a_resting_spare_exits_after_its_keep_alive_or_at_close() {
    let compensation = Compensation::new(1, vec!['a']);
    assert!(compensation.cover(0, BLOCK_IN_PLACE, 0, None));
    let Some(Start::Spawn { slot, local }) = compensation.start_spare() else {
        panic!("expected a thread to start");
    };
    assert!(compensation.uncover(0).is_some());
    assert!(compensation.try_step_down(slot));
    assert_eq!(compensation.threads(), (1, 1));
    assert!(matches!(
        compensation.rest(slot, local, Duration::from_millis(1)),
        AfterRest::Exit
    ));
    compensation.thread_exited();
    assert_eq!(compensation.threads(), (0, 0));
    // The vacant slot kept its deque for the next thread.
    assert!(compensation.cover(0, BLOCK_IN_PLACE, 0, None));
    let Some(Start::Spawn { local: 'a', slot }) = compensation.start_spare() else {
        panic!("expected the deque back");
    };
    compensation.close();
    assert!(matches!(
        compensation.rest(slot, 'a', Duration::from_secs(60)),
        AfterRest::Exit
    ));
    compensation.thread_exited();
    assert!(compensation.wait_exited(0, None));
}

#[test]
fn an_ended_cover_charges_only_cpu_time() {
    let ended = CoverEnded {
        at_nanos: 1_000,
        cpu_at_nanos: Some(50),
    };
    // 9 µs covered, 2 µs of them on a CPU.
    assert_eq!(ended.uncharged(0, 10_000, Some(2_050)), 7_000);
    // A cover that began before the poll counts from the poll's start.
    assert_eq!(ended.uncharged(4_000, 10_000, Some(2_050)), 4_000);
    // CPU time unknown: charged in full.
    assert_eq!(ended.uncharged(0, 10_000, None), 0);
}

#[test]
fn the_sweep_ends_covers_whose_stretch_ended() {
    let compensation = Compensation::new(2, vec!['a']);
    assert_eq!(
        compensation.end_stale_covers(|_| unreachable!("nothing covered")),
        0
    );
    // Slot 0 covered for stretch 7, slot 1 by block_in_place.
    assert!(compensation.cover(0, 7, 0, None));
    assert!(compensation.cover_for_block_in_place(1, 0, None));
    assert_eq!(
        compensation.end_stale_covers(|_| 7),
        0,
        "stretch 7 still runs"
    );
    assert_eq!(compensation.end_stale_covers(|_| 9), 1, "stretch 7 ended");
    assert!(!compensation.is_covered(0));
    assert!(
        compensation.is_covered(1),
        "block_in_place ends its own cover"
    );
}

#[test]
fn block_in_place_takes_over_a_monitor_cover() {
    let compensation = Compensation::new(1, vec!['a']);
    // The monitor covers stretch 5; block_in_place takes the cover over
    // (no second cover counted), so the monitor's sweep and take-back no
    // longer touch it once the stretch moves on.
    assert!(compensation.cover(0, 5, 0, None));
    assert!(!compensation.cover_for_block_in_place(0, 0, None));
    assert_eq!(compensation.end_stale_covers(|_| 6), 0);
    assert_eq!(
        compensation.cover_running(0, 5, || 6, 0, None),
        MonitorCover::Taken
    );
    assert!(compensation.is_covered(0));
    assert!(compensation.uncover(0).is_some());
    assert!(!compensation.lacks_spares() && !compensation.is_surplus());
    // A cover whose stretch ended as it landed is taken back.
    assert_eq!(
        compensation.cover_running(0, 7, || 8, 0, None),
        MonitorCover::TakenBack
    );
    assert!(!compensation.is_covered(0));
}
