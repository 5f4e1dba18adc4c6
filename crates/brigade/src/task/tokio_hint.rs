//! A hint for the most common porting mistake: tokio code that needs a
//! tokio runtime (`tokio::net`, `tokio::time`, `tokio::fs`,
//! `tokio::process`, `tokio::signal`, `tokio::spawn`) called in a brigade
//! task, where it panics with tokio's "must be called from the context of a
//! Tokio 1.x runtime". The panic names no way out; the task's `JoinError`
//! and a `tracing` event add one line that does ([`for_message`],
//! [`report`]).
//!
//! tokio's message does not say which call panicked (that is the panic's
//! location, which only a panic hook sees), so the line names each
//! replacement, and the `tokio-compat` feature that runs the code as it is.

use super::Panic;

/// Substrings of tokio's panics for a call made outside a tokio runtime,
/// or inside one built without the driver the call needs.
const TOKIO_CONTEXT_PANICS: &[&str] = &[
    "must be called from the context of a Tokio 1.x runtime",
    "A Tokio 1.x context was found, but",
];

/// The hint's line, for a build with the `tokio-compat` feature (off on
/// this runtime, or the call ran on a thread outside it).
#[cfg(feature = "tokio-compat")]
const HINT: &str = "hint: this is tokio code outside a tokio runtime. brigade replaces it: \
     tokio::net -> brigade::net, tokio::time -> brigade::time, tokio::fs -> brigade::fs, \
     tokio::process -> brigade::process, tokio::signal -> brigade::signal, \
     tokio::io::unix::AsyncFd -> brigade::io::unix::AsyncFd, tokio::spawn -> brigade::spawn; \
     or leave Builder::tokio_compat on (the default) to run it as it is";

/// The hint's line, for a build without the `tokio-compat` feature.
#[cfg(not(feature = "tokio-compat"))]
const HINT: &str = "hint: this is tokio code outside a tokio runtime. brigade replaces it: \
     tokio::net -> brigade::net, tokio::time -> brigade::time, tokio::fs -> brigade::fs, \
     tokio::process -> brigade::process, tokio::signal -> brigade::signal, \
     tokio::io::unix::AsyncFd -> brigade::io::unix::AsyncFd, tokio::spawn -> brigade::spawn; \
     or enable brigade's `tokio-compat` feature to run it as it is";

/// The hint for a task that panicked with `message`, if the message is
/// one of tokio's context panics.
pub(crate) fn for_message(message: &str) -> Option<&'static str> {
    TOKIO_CONTEXT_PANICS
        .iter()
        .any(|panic| message.contains(panic))
        .then_some(HINT)
}

/// A panic payload's message, when it is a string (as `panic!` makes it).
pub(crate) fn message(payload: &Panic) -> Option<&str> {
    payload
        .downcast_ref::<&'static str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
}

/// The `tracing` event for a task `id` that panicked with `payload`, if
/// it was one of tokio's context panics (other panics reach the caller
/// through its `JoinHandle` alone, as in tokio).
pub(crate) fn report(id: u64, payload: &Panic) {
    let Some(message) = message(payload) else {
        return;
    };
    if let Some(hint) = for_message(message) {
        tracing::warn!(
            target: "brigade::task",
            task = id,
            panic = message,
            "a task panicked calling tokio outside a tokio runtime\n{hint}"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_tokio_context_panics_get_the_hint() {
        let no_reactor = "there is no reactor running, must be called from the context of a \
                          Tokio 1.x runtime";
        assert_eq!(for_message(no_reactor), Some(HINT));
        let disabled = "A Tokio 1.x context was found, but timers are disabled. Call \
                        `enable_time` on the runtime builder to enable timers.";
        assert_eq!(for_message(disabled), Some(HINT));
        assert_eq!(for_message("index out of bounds"), None);
    }

    #[test]
    fn messages_of_both_string_payloads_are_read() {
        let literal: Panic = Box::new("static message");
        assert_eq!(message(&literal), Some("static message"));
        let formatted: Panic = Box::new(format!("formatted {}", 1));
        assert_eq!(message(&formatted), Some("formatted 1"));
        let other: Panic = Box::new(7u32);
        assert_eq!(message(&other), None);
    }
}
