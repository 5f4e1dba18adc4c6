//! Model-checks the hold accounting with `loom`: run with
//! `RUSTFLAGS="--cfg loom" cargo test -p brigade --lib --release`.

use super::*;
use loom::sync::Arc;
use loom::thread;

/// Two aborts race with the harness dropping the future: every hold
/// taken is given back exactly once (the debug assertion in
/// `Attention::release` catches a count going below zero).
#[test]
fn aborts_race_with_the_future_being_dropped() {
    loom::model(|| {
        let host = Arc::new(AttentionOnly::new());
        let state = Arc::new(CancelState::new());
        let aborts: Vec<_> = (0..2)
            .map(|_| {
                let (host, state) = (host.clone(), state.clone());
                thread::spawn(move || state.cancel(Some(&*host)))
            })
            .collect();
        state.future_dropped(Some(&*host));
        let cancelled = aborts
            .into_iter()
            .map(|abort| abort.join().unwrap())
            .filter(|&cancelled| cancelled)
            .count();
        assert!(cancelled <= 1);
        assert!(!host.attention_held());
        assert!(!state.is_cancelled());
    });
}
