//! Bursts: what a runtime does with a sudden load far beyond the usual,
//! on brigade and on tokio, each case in a fresh child process so that its
//! memory figures start clean.
//!
//! - **tasks** ([`tasks`]): 10 million small tasks spawned in one burst,
//!   all alive at once, then released: peak resident memory per task, and
//!   what is left once they have finished.
//! - **connections** ([`connections`]): as many concurrent TCP connections
//!   as the descriptor limit allows (soft limit raised to the hard one),
//!   with echo traffic checked byte for byte.
//! - **timers** ([`timers`]): 1 million pending sleeps whose tasks are all
//!   aborted at once: do the tasks, the timers and the memory go away?
//!
//! Memory: `VmRSS` and `VmHWM` from `/proc/self/status`, and the heap in
//! use as glibc counts it ([`crate::memory::heap_in_use`]). "RSS after
//! trim" is read after `malloc_trim(0)`, which hands the allocator's free
//! memory back to the kernel: the heap figure says what is still
//! allocated, the RSS figures what the process holds. Times are rough.

use std::io;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::flags::{parse_number, parse_positive};
use crate::harness::{Brigade, RuntimeKind, Tokio, available_cores};
use crate::memory::{heap_in_use, mib, raise_fd_limit, rss_bytes};

pub mod connections;
pub mod rt;
pub mod tasks;
pub mod timers;

/// Descriptors kept back from the connection count for the runtime, the
/// listener and the standard streams.
const FD_RESERVE: u64 = 64;

/// Usage text.
pub const HELP: &str = "\
usage: bursts [--runtime brigade|tokio|both] [--case tasks|connections|timers|all]
              [--tasks N] [--timers N] [--connections N] [--rounds R]
              [--workers W] [--limit-secs S]

  --runtime R       brigade, tokio or both (default both), each case in a child process
  --case C          tasks, connections, timers or all (default all)
  --tasks N         tasks in the task burst (default 10000000)
  --timers N        sleeps in the timer burst (default 1000000)
  --connections N   connections (default: the descriptor limit, raised to the hard
                    limit, less 64, and at most the local port range)
  --rounds R        64-byte echoes per connection (default 10)
  --workers W       worker threads (default: available parallelism)
  --limit-secs S    bound on each wait (default 300)";

/// A table row, one cell per column.
pub type Row = Vec<String>;

/// Which burst.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Case {
    /// Millions of tasks.
    Tasks,
    /// As many connections as descriptors allow.
    Connections,
    /// A million sleeps, aborted.
    Timers,
}

impl Case {
    const ALL: [Case; 3] = [Case::Tasks, Case::Connections, Case::Timers];

    fn name(self) -> &'static str {
        match self {
            Case::Tasks => "tasks",
            Case::Connections => "connections",
            Case::Timers => "timers",
        }
    }
}

/// Resident memory and heap in use at one moment.
#[derive(Debug, Clone, Copy)]
pub struct Memory {
    /// `VmRSS`, bytes.
    pub rss: u64,
    /// Heap in use (glibc), bytes.
    pub heap: Option<u64>,
}

impl Memory {
    /// The figures now.
    pub fn now() -> Memory {
        Memory {
            rss: rss_bytes().unwrap_or(0),
            heap: heap_in_use(),
        }
    }

    /// `RSS / heap`, in MiB, for tables.
    fn text(&self) -> String {
        let heap = self.heap.map_or("n/a".to_owned(), mib);
        format!("{} / {heap}", mib(self.rss))
    }
}

/// The settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// The runtimes to run.
    pub runtimes: Vec<RuntimeKind>,
    /// The cases to run.
    pub cases: Vec<Case>,
    /// Tasks in the task burst.
    pub tasks: usize,
    /// Sleeps in the timer burst.
    pub timers: usize,
    /// Connections; `None`: as many as descriptors allow.
    pub connections: Option<usize>,
    /// Echoes per connection.
    pub rounds: usize,
    /// Worker threads.
    pub workers: usize,
    /// Bound on each wait.
    pub limit: Duration,
    /// Internal: run one case on one runtime in this process.
    child: bool,
    /// Internal: be the connection client for this address.
    client: Option<std::net::SocketAddr>,
}

impl Config {
    /// Parses the flags (without the program name); `Err` holds the message
    /// to print, which is [`HELP`] itself for `--help`.
    pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Config, String> {
        let mut config = Config {
            runtimes: RuntimeKind::ALL.to_vec(),
            cases: Case::ALL.to_vec(),
            tasks: 10_000_000,
            timers: 1_000_000,
            connections: None,
            rounds: 10,
            workers: available_cores(),
            limit: Duration::from_secs(300),
            child: false,
            client: None,
        };
        let mut args = args.into_iter();
        while let Some(flag) = args.next() {
            if flag == "--help" || flag == "-h" {
                return Err(HELP.to_owned());
            }
            if flag == "--child" {
                config.child = true;
                continue;
            }
            let value = args
                .next()
                .ok_or_else(|| format!("{flag} needs a value\n\n{HELP}"))?;
            config.set(&flag, &value)?;
        }
        Ok(config)
    }

    fn set(&mut self, flag: &str, value: &str) -> Result<(), String> {
        match flag {
            "--runtime" if value == "both" => self.runtimes = RuntimeKind::ALL.to_vec(),
            "--runtime" => self.runtimes = vec![RuntimeKind::parse(flag, value)?],
            "--case" if value == "all" => self.cases = Case::ALL.to_vec(),
            "--case" => {
                let case = Case::ALL.into_iter().find(|case| case.name() == value);
                let message =
                    || format!("--case must be tasks, connections, timers or all, got {value:?}");
                self.cases = vec![case.ok_or_else(message)?];
            }
            "--tasks" => self.tasks = parse_positive(flag, value)?,
            "--timers" => self.timers = parse_positive(flag, value)?,
            "--connections" => self.connections = Some(parse_positive(flag, value)?),
            "--rounds" => self.rounds = parse_number(flag, value)?,
            "--workers" => self.workers = parse_positive(flag, value)?,
            "--limit-secs" => self.limit = Duration::from_secs(parse_positive(flag, value)?),
            "--client" => {
                let addr = value
                    .parse()
                    .map_err(|_| format!("--client needs an address, got {value:?}"));
                self.client = Some(addr?);
            }
            _ => return Err(format!("unknown flag {flag:?}\n\n{HELP}")),
        }
        Ok(())
    }

    /// The flags that give a child these settings, for `case` on `kind`.
    fn child_args(&self, case: Case, kind: RuntimeKind) -> Vec<String> {
        let mut args = vec!["--child".to_owned()];
        let mut flag = |name: &str, value: String| args.extend([name.to_owned(), value]);
        flag("--case", case.name().to_owned());
        flag("--runtime", kind.name().to_owned());
        flag("--tasks", self.tasks.to_string());
        flag("--timers", self.timers.to_string());
        flag("--rounds", self.rounds.to_string());
        flag("--workers", self.workers.to_string());
        flag("--limit-secs", self.limit.as_secs().to_string());
        if let Some(connections) = self.connections {
            flag("--connections", connections.to_string());
        }
        args
    }
}

/// Runs what `config` asks for: the parent prints one table per case,
/// running each row in a child process; a child runs its row and prints it
/// as the last line of its output; a client serves the connection case.
///
/// # Errors
/// If a child cannot be started or fails, or a row cannot be measured.
pub fn run(config: &Config) -> io::Result<()> {
    if let Some(addr) = config.client {
        raise_fd_limit()?;
        let connections = config.connections.unwrap_or(0);
        let report = connections::client(addr, connections, config.rounds, config.limit)?;
        println!("{}", report.to_line());
        return Ok(());
    }
    if config.child {
        let row = run_row(config, config.cases[0], config.runtimes[0])?;
        println!("{}", format_row(&row));
        return Ok(());
    }
    for &case in &config.cases {
        let header: &[&str] = match case {
            Case::Tasks => &tasks::HEADER,
            Case::Connections => &connections::HEADER,
            Case::Timers => &timers::HEADER,
        };
        println!("\n{} ({} workers):\n", case.name(), config.workers);
        println!(
            "{}",
            format_row(&header.iter().map(|cell| (*cell).to_owned()).collect())
        );
        println!("{}", format_row(&vec!["---".to_owned(); header.len()]));
        for &kind in &config.runtimes {
            println!("{}", run_child(config, case, kind)?);
        }
    }
    Ok(())
}

/// Runs `case` on `kind` in a fresh child process; its table row.
fn run_child(config: &Config, case: Case, kind: RuntimeKind) -> io::Result<String> {
    let output = Command::new(std::env::current_exe()?)
        .args(config.child_args(case, kind))
        .stderr(Stdio::inherit())
        .output()?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    match stdout.lines().last() {
        Some(row) if output.status.success() && row.starts_with('|') => Ok(row.to_owned()),
        _ => Err(io::Error::other(format!(
            "the {} child on {kind} failed ({}): {stdout}",
            case.name(),
            output.status
        ))),
    }
}

/// Runs one case on one runtime in this process.
fn run_row(config: &Config, case: Case, kind: RuntimeKind) -> io::Result<Row> {
    let (workers, limit) = (config.workers, config.limit);
    Ok(match (case, kind) {
        (Case::Tasks, RuntimeKind::Brigade) => {
            tasks::run::<Brigade>(workers, config.tasks, limit).row(kind.name())
        }
        (Case::Tasks, RuntimeKind::Tokio) => {
            tasks::run::<Tokio>(workers, config.tasks, limit).row(kind.name())
        }
        (Case::Timers, RuntimeKind::Brigade) => {
            timers::run::<Brigade>(workers, config.timers, limit).row(kind.name())
        }
        (Case::Timers, RuntimeKind::Tokio) => {
            timers::run::<Tokio>(workers, config.timers, limit).row(kind.name())
        }
        (Case::Connections, _) => run_connections(config, kind)?.row(kind.name()),
    })
}

/// The connection case, with the client in a child process.
fn run_connections(
    config: &Config,
    kind: RuntimeKind,
) -> io::Result<connections::ConnectionsOutcome> {
    let fd_limit = raise_fd_limit()?;
    let target = config.connections.unwrap_or_else(|| {
        let by_fds = fd_limit.saturating_sub(FD_RESERVE);
        let ports = local_port_count().map_or(by_fds, |ports| ports.saturating_sub(FD_RESERVE));
        by_fds.min(ports) as usize
    });
    connections::run(
        kind,
        config.workers,
        fd_limit,
        target,
        config.limit,
        |addr| {
            let output = Command::new(std::env::current_exe()?)
                .args([
                    "--client",
                    &addr.to_string(),
                    "--connections",
                    &target.to_string(),
                ])
                .args(["--rounds", &config.rounds.to_string()])
                .args(["--limit-secs", &config.limit.as_secs().to_string()])
                .stderr(Stdio::inherit())
                .output()?;
            let stdout = String::from_utf8_lossy(&output.stdout);
            stdout
                .lines()
                .find_map(connections::ClientReport::parse)
                .ok_or_else(|| {
                    io::Error::other(format!("the client failed ({}): {stdout}", output.status))
                })
        },
    )
}

/// Ports in the kernel's ephemeral range: the most connections one client
/// address can open to one server address.
fn local_port_count() -> Option<u64> {
    let range = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range").ok()?;
    let mut ends = range.split_whitespace().map(|end| end.parse::<u64>().ok());
    let (low, high) = (ends.next()??, ends.next()??);
    Some(high.saturating_sub(low) + 1)
}

fn format_row(row: &Row) -> String {
    format!("| {} |", row.join(" | "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Config, String> {
        Config::parse(args.iter().map(|arg| (*arg).to_owned()))
    }

    #[test]
    fn defaults_and_flags() {
        let config = parse(&[]).unwrap();
        assert_eq!(config.runtimes, RuntimeKind::ALL);
        assert_eq!(config.cases, Case::ALL);
        assert_eq!(
            (config.tasks, config.timers, config.connections),
            (10_000_000, 1_000_000, None)
        );
        let config = parse(&[
            "--runtime",
            "tokio",
            "--case",
            "timers",
            "--timers",
            "5",
            "--connections",
            "7",
        ])
        .unwrap();
        assert_eq!(config.runtimes, [RuntimeKind::Tokio]);
        assert_eq!(config.cases, [Case::Timers]);
        assert_eq!((config.timers, config.connections), (5, Some(7)));
        let child = Config::parse(config.child_args(Case::Tasks, RuntimeKind::Brigade)).unwrap();
        assert!(child.child);
        assert_eq!(
            (child.cases[0], child.runtimes[0]),
            (Case::Tasks, RuntimeKind::Brigade)
        );
        assert_eq!(
            (child.timers, child.connections, child.workers),
            (5, Some(7), config.workers)
        );
    }

    #[test]
    fn bad_flags_are_refused_by_name() {
        for (args, needle) in [
            (&["--case", "forks"][..], "--case must be"),
            (&["--runtime", "smol"][..], "--runtime must be"),
            (&["--tasks", "0"][..], "--tasks must be at least 1"),
            (&["--timers"][..], "--timers needs a value"),
            (&["--client", "x"][..], "--client needs an address"),
            (&["--frobnicate", "1"][..], "unknown flag"),
        ] {
            let error = parse(args).unwrap_err();
            assert!(error.contains(needle), "{args:?}: {error}");
        }
        assert_eq!(parse(&["--help"]).unwrap_err(), HELP);
    }

    #[test]
    fn client_reports_round_trip() {
        let report = connections::ClientReport {
            established: 3,
            connect_errors: 1,
            echoed: 640,
            echo_errors: 0,
            first_error: Some("Connection refused (os error 111)".to_owned()),
        };
        assert_eq!(
            connections::ClientReport::parse(&report.to_line()),
            Some(report)
        );
        let clean = connections::ClientReport::default();
        assert_eq!(
            connections::ClientReport::parse(&clean.to_line()),
            Some(clean)
        );
    }
}
