//! A hint for the commonest panic of code ported from tokio: a tokio API
//! called in a brigade task, with no tokio runtime around it.
//!
//! tokio's resources look for a tokio runtime in a thread-local context and
//! panic when there is none ("there is no reactor running, must be called
//! from the context of a Tokio 1.x runtime"), or when the runtime found
//! lacks the driver they need ("A Tokio 1.x context was found, but timers
//! are disabled"). The message names tokio, not the brigade module that
//! replaces the call, so a task that panics with one of them gets one more
//! line naming it: in its [`JoinError`](super::JoinError)'s `Display`, and
//! in a `tracing` warning (target `brigade::tokio_hint`) when the task
//! panics, which a detached task's panic gets too.
//!
//! Only the panic's message is there to go by: the panic's location, which
//! tokio's `#[track_caller]` functions set to the caller's line, is seen by
//! the panic hook alone. So the hint names a module when the message does
//! (timers, I/O, `spawn_local`), and every replacement otherwise.
//!
//! `block_on` catches no panic: its future's panic unwinds to the caller as
//! it was raised, with no hint.

use super::{Panic, TaskMeta};

/// The `tracing` target of the warning.
const TARGET: &str = "brigade::tokio_hint";

/// What a tokio message says is missing, and where brigade has it. The
/// first entry whose pattern the message contains wins.
const HINTS: &[(&str, &str)] = &[
    (
        "timers are disabled",
        "tokio::time needs a tokio runtime with timers: brigade::time \
         (sleep, timeout, interval) replaces it",
    ),
    (
        "the timer is shutdown",
        "tokio::time needs a running tokio runtime: brigade::time \
         (sleep, timeout, interval) replaces it",
    ),
    (
        "IO is disabled",
        "tokio's I/O needs a tokio runtime with I/O: brigade::net (TCP, UDP, \
         Unix sockets), brigade::io::unix::AsyncFd, brigade::process and \
         brigade::signal replace tokio::net, tokio::io::unix::AsyncFd, \
         tokio::process and tokio::signal",
    ),
    (
        "`spawn_local` called from outside of a `task::LocalSet`",
        "tokio::task::spawn_local needs tokio's LocalSet: brigade::task::spawn_local \
         inside a brigade::task::LocalSet replaces both",
    ),
    (
        "must be called from the context of a Tokio 1.x runtime",
        EVERY_REPLACEMENT,
    ),
    ("A Tokio 1.x context was found", EVERY_REPLACEMENT),
    (
        "The Tokio context thread-local variable has been destroyed",
        EVERY_REPLACEMENT,
    ),
];

/// The hint of a tokio message that does not say what was called.
const EVERY_REPLACEMENT: &str = "tokio code needs a tokio runtime: brigade::spawn, \
     brigade::task::spawn_blocking, brigade::time, brigade::net, brigade::fs, \
     brigade::process, brigade::signal, brigade::io::unix::AsyncFd and \
     brigade::io::{stdin, stdout, stderr} replace tokio::spawn, \
     tokio::task::spawn_blocking, tokio::time, tokio::net, tokio::fs, \
     tokio::process, tokio::signal, tokio::io::unix::AsyncFd and \
     tokio::io::{stdin, stdout, stderr}";

/// How to run the tokio code as it is instead.
#[cfg(not(feature = "tokio-compat"))]
const COMPAT: &str = "or turn on brigade's `tokio-compat` feature, under which tokio \
     code (and crates built on it) runs in brigade tasks";

/// The same, with the feature on: so the code ran outside the compat
/// runtime's context.
#[cfg(feature = "tokio-compat")]
const COMPAT: &str = "brigade's `tokio-compat` feature is on, but this ran outside its \
     tokio runtime: on a runtime built with `Builder::tokio_compat(false)`, or \
     on a thread that brigade did not start";

/// The hint line for a panic whose message is `message`, if it is one of
/// tokio's context panics: `hint: ...`, with no line break.
pub(crate) fn for_message(message: &str) -> Option<String> {
    let (_, replacement) = HINTS
        .iter()
        .find(|(pattern, _)| message.contains(pattern))?;
    Some(format!("hint: {replacement}; {COMPAT}"))
}

/// The message of a panic payload, when it is a string (what `panic!`
/// with a message, `expect` and `unwrap` raise).
pub(crate) fn message_of(payload: &Panic) -> Option<&str> {
    payload
        .downcast_ref::<&'static str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
}

/// From the task harness, when task `task`, spawned at `spawned_at`,
/// panics: warns with the hint if the panic is one of tokio's. Panics are
/// rare, so the look at the message costs nothing that matters.
pub(crate) fn on_task_panic(task: &TaskMeta, payload: &Panic) {
    let Some(hint) = message_of(payload).and_then(for_message) else {
        return;
    };
    tracing::warn!(
        target: TARGET,
        task = task.id(),
        task.name = task.name(),
        spawned_at = %task.location(),
        hint = %hint,
        "a task panicked calling tokio outside a tokio runtime"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_tokio_message_gets_the_module_it_names() {
        let cases = [
            (
                "A Tokio 1.x context was found, but timers are disabled. Call `enable_time` on \
                 the runtime builder to enable timers.",
                "brigade::time",
            ),
            (
                "timer error: the timer is shutdown, must be called from the context of Tokio \
                 runtime",
                "brigade::time",
            ),
            (
                "A Tokio 1.x context was found, but IO is disabled. Call `enable_io` on the \
                 runtime builder to enable IO.",
                "brigade::net",
            ),
            (
                "`spawn_local` called from outside of a `task::LocalSet` or `runtime::LocalRuntime`",
                "brigade::task::LocalSet",
            ),
            (
                "there is no reactor running, must be called from the context of a Tokio 1.x \
                 runtime",
                "brigade::fs",
            ),
            (
                "A Tokio 1.x context was found, but it is being shutdown.",
                "brigade::spawn",
            ),
        ];
        for (message, module) in cases {
            let hint = for_message(message).unwrap_or_else(|| panic!("no hint for {message:?}"));
            assert!(hint.starts_with("hint: "), "{hint}");
            assert!(hint.contains(module), "{message:?} gave {hint:?}");
            assert!(hint.contains("`tokio-compat`"), "{hint}");
            assert!(!hint.contains('\n'), "one line: {hint:?}");
        }
        // The timer message is not taken for the I/O one, nor the reverse.
        let timers = for_message(cases[0].0).unwrap();
        assert!(!timers.contains("brigade::net"), "{timers}");
        let io = for_message(cases[2].0).unwrap();
        assert!(!io.contains("brigade::time"), "{io}");
    }

    #[test]
    fn other_panics_get_no_hint() {
        for message in ["boom", "called `Option::unwrap()` on a `None` value", ""] {
            assert_eq!(for_message(message), None, "{message:?}");
        }
    }

    #[test]
    fn a_payload_message_is_read_from_str_and_string() {
        let from_str: Panic = Box::new("static");
        let from_string: Panic = Box::new(String::from("owned"));
        let other: Panic = Box::new(7u32);
        assert_eq!(message_of(&from_str), Some("static"));
        assert_eq!(message_of(&from_string), Some("owned"));
        assert_eq!(message_of(&other), None);
    }
}
