//! Busy neighbours: CPU hogs in processes of their own, to crowd the host on
//! purpose (`mixed_load --neighbours N`, `BENCH_NEIGHBOURS=N` for
//! `foreground_latency`, `NEIGHBOURS=N` for `scripts/kv_bench.sh`).
//!
//! A crowded host is where schedulers differ: a worker that sleeps in the
//! driver, or one the OS descheduled, waits for a CPU slice before it runs
//! (brigade issue #24). A neighbour is a separate process, as a load
//! generator, a sidecar or another service on the same machine would be, so
//! the runtime under test cannot see or schedule it.
//!
//! Each neighbour is one `sh` busy loop (one busy thread). They end:
//! - when [`Neighbours`] is dropped, also while a panic unwinds (killed and
//!   reaped);
//! - on ctrl-c, which the terminal sends to the whole foreground process
//!   group, neighbours included;
//! - on their own shortly after this process dies in any other way: every
//!   100,000 rounds (a fraction of a second) the loop checks that its parent
//!   is still alive (`kill -0 $PPID`) and exits if not.

use std::io;
use std::process::{Child, Command, Stdio};

/// The variable that sets the benches' busy neighbour processes
/// (see [`bench_neighbours`]).
pub const BENCH_NEIGHBOURS: &str = "BENCH_NEIGHBOURS";

/// The busy loop each neighbour runs: spins, and exits once its parent (the
/// process that started it) is gone.
const BUSY_LOOP: &str = "\
i=0
while :; do
  i=$((i + 1))
  if [ \"$i\" -ge 100000 ]; then
    i=0
    kill -0 \"$PPID\" 2>/dev/null || exit 0
  fi
done";

/// Running busy neighbour processes; dropping it ends them.
#[derive(Debug, Default)]
pub struct Neighbours {
    children: Vec<Child>,
}

impl Neighbours {
    /// Starts `count` busy neighbour processes (none for 0). If one cannot
    /// start, those already started are ended and the error returned.
    pub fn start(count: usize) -> io::Result<Neighbours> {
        let mut neighbours = Neighbours::default();
        for _ in 0..count {
            let child = Command::new("sh")
                .args(["-c", BUSY_LOOP])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()?;
            neighbours.children.push(child);
        }
        Ok(neighbours)
    }

    /// How many neighbours run.
    pub fn len(&self) -> usize {
        self.children.len()
    }

    /// Whether none runs.
    pub fn is_empty(&self) -> bool {
        self.children.is_empty()
    }

    /// Whether every neighbour is still running (none exited early).
    pub fn all_running(&mut self) -> bool {
        self.children
            .iter_mut()
            .all(|child| matches!(child.try_wait(), Ok(None)))
    }
}

impl Drop for Neighbours {
    fn drop(&mut self) {
        for child in &mut self.children {
            // Fails only if it exited already; it is reaped either way.
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// The benches' busy neighbours: [`BENCH_NEIGHBOURS`] of them if set, else
/// none. Keep the value alive for as long as they should run.
///
/// # Panics
///
/// If the variable is set but not a whole number, or a neighbour cannot
/// start: a bench that silently ran on a quiet host would report misleading
/// figures.
pub fn bench_neighbours() -> Neighbours {
    let count = match std::env::var(BENCH_NEIGHBOURS) {
        Ok(value) => value
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{BENCH_NEIGHBOURS} must be a whole number, got {value:?}")),
        Err(_) => 0,
    };
    if count > 0 {
        eprintln!("{count} busy neighbour process(es) crowd the host ({BENCH_NEIGHBOURS})");
    }
    Neighbours::start(count)
        .unwrap_or_else(|error| panic!("could not start the busy neighbours: {error}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn neighbours_run_until_dropped() {
        let mut neighbours = Neighbours::start(2).unwrap();
        assert_eq!(neighbours.len(), 2);
        assert!(neighbours.all_running());
        let ids: Vec<u32> = neighbours.children.iter().map(Child::id).collect();
        drop(neighbours);
        // Killed and reaped: no such process any more (a reused id would
        // belong to another parent, hence the check of /proc's ppid below).
        for id in ids {
            let stat = std::fs::read_to_string(format!("/proc/{id}/stat"));
            let ours = stat.is_ok_and(|stat| {
                stat.rsplit(')')
                    .next()
                    .and_then(|rest| rest.split_whitespace().nth(1))
                    .is_some_and(|ppid| ppid == std::process::id().to_string())
            });
            assert!(!ours, "neighbour {id} still runs");
        }
        assert!(Neighbours::start(0).unwrap().is_empty());
    }
}
