//! The comparison harness shared by the benches and the examples that put
//! brigade next to tokio: which runtime ([`RuntimeKind`]), the runtime
//! abstraction that lets a workload be written once for both ([`Rt`], with
//! [`Brigade`] and [`Tokio`]), either runtime held as one value and shut
//! down ([`Runtime`], [`Handle`]), and the benches' environment settings
//! ([`bench_workers`], [`latency_sample_every`]).
//!
//! The calibrated busy work both sides run is in [`crate::busy`].

mod rt;
mod runtime;

pub use rt::{Brigade, Rt, Tokio};
pub use runtime::{Handle, Runtime, brigade_builder, tokio_builder};

/// The variable that sets the benches' worker count.
pub const BENCH_WORKERS: &str = "BENCH_WORKERS";

/// The variable that sets brigade's scheduling-latency sampling in the
/// benches (`Builder::latency_sample_every`; 0 turns sampling off).
pub const BENCH_LATENCY_SAMPLE_EVERY: &str = "BENCH_LATENCY_SAMPLE_EVERY";

/// Which runtime runs a workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RuntimeKind {
    /// brigade's multi-thread runtime.
    Brigade,
    /// tokio's multi-thread runtime.
    Tokio,
}

impl RuntimeKind {
    /// Both runtimes, brigade first.
    pub const ALL: [RuntimeKind; 2] = [RuntimeKind::Brigade, RuntimeKind::Tokio];

    /// The runtime's name, as `--runtime` spells it and reports show it.
    pub fn name(self) -> &'static str {
        match self {
            RuntimeKind::Brigade => "brigade",
            RuntimeKind::Tokio => "tokio",
        }
    }

    /// Parses `text`, the value of `flag` (e.g. `--runtime`): `brigade` or
    /// `tokio`. The error names the flag and the accepted values.
    pub fn parse(flag: &str, text: &str) -> Result<RuntimeKind, String> {
        RuntimeKind::ALL
            .into_iter()
            .find(|kind| kind.name() == text)
            .ok_or_else(|| format!("{flag} must be brigade or tokio, got {text:?}"))
    }
}

impl std::fmt::Display for RuntimeKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Makes a bench or example whose output is piped into `head` end quietly,
/// with status 0, once `head` has read enough, as any Unix filter does:
/// Rust ignores `SIGPIPE`, so the next `println!` (criterion's, or the
/// bench's own) panics on the closed pipe; this panic hook exits the
/// process right there instead of unwinding, which would print a panic
/// message and could wait on runtimes whose background load never ends.
/// Other panics go to the hook that was installed before. The benches call
/// it first thing in `main`; `cargo bench -- --list | head` then ends with
/// every bench reporting success.
pub fn end_quietly_on_closed_pipe() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let message = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied());
        if message.is_some_and(is_closed_output) {
            std::process::exit(0);
        }
        previous(info);
    }));
}

/// Whether a panic `message` is std's on printing to a closed pipe:
/// "failed printing to stdout: Broken pipe (os error 32)".
pub fn is_closed_output(message: &str) -> bool {
    message.starts_with("failed printing to std") && message.contains("Broken pipe")
}

/// Prints a bench's usage and exits if its arguments ask for help (`-h`,
/// `--help`), before criterion parses them: criterion 0.5, built without
/// clap's help, would only answer "unexpected argument". `settings` names
/// the environment variables the bench reads.
pub fn exit_on_help(bench: &str, settings: &str) {
    if std::env::args()
        .skip(1)
        .any(|arg| arg == "--help" || arg == "-h")
    {
        println!("{}", bench_usage(bench, settings));
        std::process::exit(0);
    }
}

/// The usage [`exit_on_help`] prints.
pub fn bench_usage(bench: &str, settings: &str) -> String {
    format!(
        "usage: cargo bench -p brigade-benches --bench {bench} -- [FILTER] [--list] [OPTIONS]\n\n\
         FILTER runs only the benchmarks whose id contains it; --list names them and runs\n\
         nothing. OPTIONS are criterion's: --warm-up-time S, --measurement-time S,\n\
         --sample-size N, --save-baseline NAME, --baseline NAME, --noplot.\n\
         environment: {settings}"
    )
}

/// The number of CPUs this process may use (1 if that cannot be told): the
/// default worker count of the examples and of some benches.
pub fn available_cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Worker threads for both runtimes of a bench: [`BENCH_WORKERS`] if set,
/// else `default`.
///
/// # Panics
///
/// If [`BENCH_WORKERS`] is set but not a positive integer: a bench that
/// silently ran on another worker count would report misleading figures.
pub fn bench_workers(default: usize) -> usize {
    parse_bench_workers(env_value(BENCH_WORKERS).as_deref(), default)
        .unwrap_or_else(|message| panic!("{message}"))
}

/// The rule of [`bench_workers`], on the variable's value (`None`: unset):
/// a positive integer (surrounding spaces allowed), else an error naming
/// the variable.
pub fn parse_bench_workers(value: Option<&str>, default: usize) -> Result<usize, String> {
    let Some(value) = value else {
        return Ok(default);
    };
    value
        .trim()
        .parse()
        .ok()
        .filter(|&workers: &usize| workers > 0)
        .ok_or_else(|| format!("{BENCH_WORKERS} must be a positive integer, got {value:?}"))
}

/// brigade's scheduling-latency sampling in the benches:
/// [`BENCH_LATENCY_SAMPLE_EVERY`] if set (0 turns sampling off, to measure
/// its cost), else [`brigade::DEFAULT_LATENCY_SAMPLE_EVERY`].
///
/// # Panics
///
/// If the variable is set but not a whole number.
pub fn latency_sample_every() -> u32 {
    parse_latency_sample_every(env_value(BENCH_LATENCY_SAMPLE_EVERY).as_deref())
        .unwrap_or_else(|message| panic!("{message}"))
}

/// The rule of [`latency_sample_every`], on the variable's value (`None`:
/// unset).
pub fn parse_latency_sample_every(value: Option<&str>) -> Result<u32, String> {
    let Some(value) = value else {
        return Ok(brigade::DEFAULT_LATENCY_SAMPLE_EVERY);
    };
    value.trim().parse().map_err(|_| {
        format!(
            "{BENCH_LATENCY_SAMPLE_EVERY} must be a whole number (0 turns sampling off), \
             got {value:?}"
        )
    })
}

/// The value of environment variable `name`; one that is not valid
/// Unicode is passed on lossily, so that parsing rejects it by name.
fn env_value(name: &str) -> Option<String> {
    std::env::var_os(name).map(|value| value.to_string_lossy().into_owned())
}

#[cfg(test)]
mod tests {
    #[test]
    fn only_a_print_to_a_closed_pipe_ends_the_process_quietly() {
        assert!(super::is_closed_output(
            "failed printing to stdout: Broken pipe (os error 32)"
        ));
        assert!(super::is_closed_output(
            "failed printing to stderr: Broken pipe (os error 32)"
        ));
        assert!(!super::is_closed_output(
            "failed printing to stdout: No space left on device"
        ));
        assert!(!super::is_closed_output("assertion failed: Broken pipe"));
        assert!(super::bench_usage("timers", "BENCH_WORKERS=N").contains("--bench timers"));
    }

    use super::*;

    #[test]
    fn runtime_kinds_parse_their_names() {
        for kind in RuntimeKind::ALL {
            assert_eq!(RuntimeKind::parse("--runtime", kind.name()), Ok(kind));
            assert_eq!(kind.to_string(), kind.name());
        }
        assert_eq!(RuntimeKind::Brigade.name(), "brigade");
        assert_eq!(RuntimeKind::Tokio.name(), "tokio");
    }

    #[test]
    fn a_bad_runtime_names_the_flag_and_the_choices() {
        for text in ["async-std", "", "Tokio", " brigade"] {
            let error = RuntimeKind::parse("--runtime", text).unwrap_err();
            assert_eq!(
                error,
                format!("--runtime must be brigade or tokio, got {text:?}")
            );
        }
    }

    #[test]
    fn bench_workers_default_when_unset() {
        assert_eq!(parse_bench_workers(None, 4), Ok(4));
    }

    #[test]
    fn bench_workers_take_a_positive_integer() {
        assert_eq!(parse_bench_workers(Some("1"), 4), Ok(1));
        assert_eq!(parse_bench_workers(Some("16"), 4), Ok(16));
        assert_eq!(parse_bench_workers(Some(" 2\n"), 4), Ok(2));
    }

    #[test]
    fn bad_bench_workers_are_an_error_naming_the_variable() {
        for value in ["0", "-1", "two", "", "2.5", "2,4"] {
            let error = parse_bench_workers(Some(value), 4).unwrap_err();
            assert_eq!(
                error,
                format!("BENCH_WORKERS must be a positive integer, got {value:?}")
            );
        }
    }

    #[test]
    fn latency_sampling_defaults_and_parses() {
        assert_eq!(
            parse_latency_sample_every(None),
            Ok(brigade::DEFAULT_LATENCY_SAMPLE_EVERY)
        );
        assert_eq!(parse_latency_sample_every(Some("0")), Ok(0));
        assert_eq!(parse_latency_sample_every(Some("64")), Ok(64));
        let error = parse_latency_sample_every(Some("often")).unwrap_err();
        assert!(
            error.starts_with("BENCH_LATENCY_SAMPLE_EVERY must be a whole number"),
            "{error}"
        );
    }

    #[test]
    fn there_is_at_least_one_core() {
        assert!(available_cores() >= 1);
    }
}
