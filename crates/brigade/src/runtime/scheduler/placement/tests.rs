//! [`place`] against a table of situations: each row is what the worker
//! would answer, and where the task must go.

use std::cell::RefCell;

use super::*;

/// One situation: the answers [`place`] may ask for, and the questions it
/// asked, in order.
#[derive(Clone, Copy)]
struct Row {
    on_worker: bool,
    shutdown: bool,
    class: WakeClass,
    budget_yield: bool,
    mode: WakeMode,
    turn: BackgroundTurn,
    may_run_next: bool,
    deque_empty: bool,
    block_on: bool,
}

/// A worker's situation in the usual case: a foreground task woken by
/// another task's poll, nothing special going on.
const WORKER: Row = Row {
    on_worker: true,
    shutdown: false,
    class: WakeClass::Foreground,
    budget_yield: false,
    mode: WakeMode::Notify,
    turn: BackgroundTurn::RunsOn,
    may_run_next: false,
    deque_empty: false,
    block_on: false,
};

struct Asked {
    row: Row,
    questions: RefCell<Vec<&'static str>>,
}

impl Asked {
    fn ask(&self, question: &'static str) {
        let mut questions = self.questions.borrow_mut();
        assert!(
            !questions.contains(&question),
            "{question} asked twice: {questions:?}"
        );
        questions.push(question);
    }
}

impl Situation for Asked {
    fn on_worker(&self) -> bool {
        self.ask("on_worker");
        self.row.on_worker
    }
    fn is_shutdown(&self) -> bool {
        self.ask("is_shutdown");
        self.row.shutdown
    }
    fn classify(&self, self_wake: bool) -> WakeClass {
        self.ask(if self_wake {
            "classify(self)"
        } else {
            "classify"
        });
        self.row.class
    }
    fn take_budget_yield(&self) -> bool {
        self.ask("take_budget_yield");
        self.row.budget_yield
    }
    fn wake_mode(&self) -> WakeMode {
        self.ask("wake_mode");
        self.row.mode
    }
    fn background_turn(&self) -> BackgroundTurn {
        self.ask("background_turn");
        self.row.turn
    }
    fn may_run_next(&self) -> bool {
        self.ask("may_run_next");
        self.row.may_run_next
    }
    fn deque_is_empty(&self) -> bool {
        self.ask("deque_is_empty");
        self.row.deque_empty
    }
    fn runs_block_on(&self) -> bool {
        self.ask("runs_block_on");
        self.row.block_on
    }
}

fn placed(arrival: Arrival, row: Row) -> (Placement, Vec<&'static str>) {
    let asked = Asked {
        row,
        questions: RefCell::new(Vec::new()),
    };
    let placement = place(arrival, &asked);
    (placement, asked.questions.into_inner())
}

fn back(notify: Notify, injector_first: bool) -> Placement {
    Placement::Here {
        spot: Spot::Back(notify),
        injector_first,
    }
}

fn spot(spot: Spot, injector_first: bool) -> Placement {
    Placement::Here {
        spot,
        injector_first,
    }
}

use Arrival::{SelfWoken, Spawned, Woken};
use WakeClass::{Background, Demoted, Foreground, Promoted};

#[test]
fn the_table() {
    let off = Row {
        on_worker: false,
        ..WORKER
    };
    let rows: &[(&str, Arrival, Row, Placement)] = &[
        // A1: off the workers.
        ("off, woken", Woken, off, Placement::Injector),
        ("off, spawned", Spawned, off, Placement::Injector),
        (
            "off, background self-wake",
            SelfWoken,
            Row {
                class: Background,
                ..off
            },
            Placement::Injector,
        ),
        (
            "off, shutdown",
            Woken,
            Row {
                shutdown: true,
                ..off
            },
            Placement::CancelLater,
        ),
        // Shutdown on a worker.
        (
            "worker, shutdown",
            SelfWoken,
            Row {
                shutdown: true,
                budget_yield: true,
                ..WORKER
            },
            Placement::CancelLater,
        ),
        // A6: woken by another task, not for the slot.
        ("woken", Woken, WORKER, back(Notify::Now, false)),
        (
            "woken, promoted",
            Woken,
            Row {
                class: Promoted,
                ..WORKER
            },
            back(Notify::Now, false),
        ),
        // A5: the run-next slot.
        (
            "woken, for the slot",
            Woken,
            Row {
                may_run_next: true,
                ..WORKER
            },
            spot(Spot::RunNext, false),
        ),
        (
            "spawned, for the slot",
            Spawned,
            Row {
                may_run_next: true,
                ..WORKER
            },
            spot(Spot::RunNext, false),
        ),
        // A6: a spawn into an empty deque is announced later.
        (
            "spawned into an empty deque",
            Spawned,
            Row {
                deque_empty: true,
                ..WORKER
            },
            back(Notify::Deferred, false),
        ),
        (
            "spawned behind others",
            Spawned,
            WORKER,
            back(Notify::Now, false),
        ),
        // Woken while the worker dispatches what it runs itself.
        (
            "woken, silent",
            Woken,
            Row {
                mode: WakeMode::Silent,
                may_run_next: true,
                ..WORKER
            },
            back(Notify::Never, false),
        ),
        (
            "spawned, silent",
            Spawned,
            Row {
                mode: WakeMode::Silent,
                deque_empty: true,
                ..WORKER
            },
            back(Notify::Never, false),
        ),
        // A4: a self-wake.
        ("self-wake", SelfWoken, WORKER, back(Notify::Now, true)),
        (
            "self-wake, for the slot: never the slot",
            SelfWoken,
            Row {
                may_run_next: true,
                ..WORKER
            },
            back(Notify::Now, true),
        ),
        (
            "self-wake on a current-thread runtime",
            SelfWoken,
            Row {
                block_on: true,
                ..WORKER
            },
            spot(Spot::BlockOnTurn, true),
        ),
        (
            "self-wake, silent",
            SelfWoken,
            Row {
                mode: WakeMode::Silent,
                ..WORKER
            },
            back(Notify::Never, true),
        ),
        // A3: a background self-wake.
        (
            "background self-wake, runs on",
            SelfWoken,
            Row {
                class: Background,
                ..WORKER
            },
            back(Notify::Now, true),
        ),
        (
            "background self-wake, steps aside",
            SelfWoken,
            Row {
                class: Background,
                turn: BackgroundTurn::StepsAside,
                ..WORKER
            },
            Placement::YieldQueue,
        ),
        (
            "demoting self-wake, takes turns",
            SelfWoken,
            Row {
                class: Demoted,
                turn: BackgroundTurn::TakesTurns,
                ..WORKER
            },
            Placement::TakeTurns,
        ),
        // A deferred wake-up handed back runs, whatever its class.
        (
            "handed back",
            Woken,
            Row {
                mode: WakeMode::HandBack,
                class: Background,
                turn: BackgroundTurn::StepsAside,
                ..WORKER
            },
            spot(Spot::HandBack, false),
        ),
        // C6: the budget's yield goes to the back, whatever the class.
        (
            "budget yield",
            SelfWoken,
            Row {
                budget_yield: true,
                class: Background,
                turn: BackgroundTurn::StepsAside,
                ..WORKER
            },
            back(Notify::Now, true),
        ),
        (
            "budget yield on a current-thread runtime",
            SelfWoken,
            Row {
                budget_yield: true,
                block_on: true,
                ..WORKER
            },
            spot(Spot::BlockOnTurn, true),
        ),
    ];
    for (name, arrival, row, expected) in rows {
        let (placement, questions) = placed(*arrival, *row);
        assert_eq!(placement, *expected, "{name}: asked {questions:?}");
    }
}

#[test]
fn asks_only_what_the_rules_need_in_their_order() {
    let background = Row {
        class: Background,
        ..WORKER
    };
    let cases: &[(&str, Arrival, Row, &[&str])] = &[
        (
            "off the workers: no worker state",
            Woken,
            Row {
                on_worker: false,
                ..WORKER
            },
            &["on_worker", "is_shutdown", "classify"],
        ),
        (
            "shutdown: nothing classified",
            Woken,
            Row {
                shutdown: true,
                ..WORKER
            },
            &["on_worker", "is_shutdown"],
        ),
        (
            "a foreground self-wake: no turn",
            SelfWoken,
            WORKER,
            &[
                "on_worker",
                "is_shutdown",
                "wake_mode",
                "take_budget_yield",
                "classify(self)",
                "runs_block_on",
            ],
        ),
        (
            "a budget yield: not classified",
            SelfWoken,
            Row {
                budget_yield: true,
                ..background
            },
            &[
                "on_worker",
                "is_shutdown",
                "wake_mode",
                "take_budget_yield",
                "runs_block_on",
            ],
        ),
        (
            "a background self-wake: its turn",
            SelfWoken,
            Row {
                turn: BackgroundTurn::StepsAside,
                ..background
            },
            &[
                "on_worker",
                "is_shutdown",
                "wake_mode",
                "take_budget_yield",
                "classify(self)",
                "background_turn",
            ],
        ),
        (
            "a wake-up handed back counts as the task's own, and has no turn",
            Woken,
            Row {
                mode: WakeMode::HandBack,
                ..background
            },
            &["on_worker", "is_shutdown", "wake_mode", "classify(self)"],
        ),
        (
            "a wake by another task: no budget question",
            Woken,
            WORKER,
            &[
                "on_worker",
                "is_shutdown",
                "wake_mode",
                "classify",
                "may_run_next",
            ],
        ),
        (
            "a spawn for the slot: the deque not looked at",
            Spawned,
            Row {
                may_run_next: true,
                ..WORKER
            },
            &[
                "on_worker",
                "is_shutdown",
                "wake_mode",
                "classify",
                "may_run_next",
            ],
        ),
    ];
    for (name, arrival, row, expected) in cases {
        let (_, questions) = placed(*arrival, *row);
        assert_eq!(&questions[..], *expected, "{name}");
    }
}

#[test]
fn a_background_self_wake_is_never_sent_to_the_slot() {
    for turn in [BackgroundTurn::RunsOn, BackgroundTurn::StepsAside] {
        for class in [Background, Demoted, Foreground] {
            let row = Row {
                class,
                turn,
                may_run_next: true,
                ..WORKER
            };
            let (placement, _) = placed(SelfWoken, row);
            assert_ne!(placement, spot(Spot::RunNext, true));
            assert_ne!(placement, spot(Spot::RunNext, false));
        }
    }
}
