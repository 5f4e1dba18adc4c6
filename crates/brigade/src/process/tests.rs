//! The SIGCHLD path, which Linux takes only where `pidfd_open` is refused:
//! these tests take it on purpose (`Command::spawn_watching(false)`), and
//! check that Linux takes the pidfd path otherwise. The integration tests
//! (`tests/process.rs`) cover the rest through the public API.

use std::os::unix::process::ExitStatusExt;
use std::process::Stdio;
use std::time::{Duration, Instant};

use super::{Child, Command, orphan};
use crate::runtime::Builder;

/// A hang, not slowness.
const TIMEOUT: Duration = Duration::from_secs(30);

/// Runs `body` on a two-worker runtime, bounded by [`TIMEOUT`].
fn run<F: Future<Output = ()> + Send + 'static>(body: F) {
    let rt = Builder::new().worker_threads(2).build().expect("runtime");
    rt.block_on(async {
        crate::time::timeout(TIMEOUT, body)
            .await
            .expect("the test body hangs");
    });
}

fn spawn_sigchld(command: &mut Command) -> Child {
    let child = command.spawn_watching(false).expect("spawn");
    assert!(!child.uses_pidfd(), "asked for the SIGCHLD path");
    child
}

/// The process's state letter in `/proc/PID/stat`, or `None` once it is
/// gone (reaped).
fn proc_state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The name, in parentheses, may hold spaces: the state follows the last `)`.
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.trim_start().chars().next()
}

/// Waits, bounded, until `done` holds, checking every millisecond.
async fn eventually(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + TIMEOUT;
    while !done() {
        assert!(Instant::now() < deadline, "{what}: not within {TIMEOUT:?}");
        crate::time::sleep(Duration::from_millis(1)).await;
    }
}

#[test]
fn waits_for_exit_codes_through_sigchld() {
    run(async {
        let mut child = spawn_sigchld(Command::new("/bin/sh").args(["-c", "exit 7"]));
        let pid = child.id().expect("running");
        let status = child.wait().await.expect("wait");
        assert_eq!(status.code(), Some(7));
        assert_eq!(child.id(), None, "reaped");
        assert_eq!(proc_state(pid), None, "no zombie");
        // Waiting again returns the same status.
        assert_eq!(child.wait().await.expect("wait again"), status);
    });
}

#[test]
fn kills_through_sigchld() {
    run(async {
        let mut child = spawn_sigchld(Command::new("/bin/cat").stdin(Stdio::piped()));
        assert_eq!(
            child.try_wait().expect("try_wait"),
            None,
            "cat waits for input"
        );
        // Keep stdin open: `cat` ends only by the signal.
        let _stdin = child.stdin.take();
        child.kill().await.expect("kill");
        let status = child.try_wait().expect("try_wait").expect("reaped");
        assert_eq!(status.signal(), Some(libc::SIGKILL));
    });
}

/// Many exits coalesce into fewer SIGCHLD deliveries: every child's watch
/// must still see its own.
#[test]
fn concurrent_children_through_sigchld() {
    run(async {
        let children: Vec<_> = (0..20)
            .map(|code| {
                let mut child = spawn_sigchld(
                    Command::new("/bin/sh")
                        .arg("-c")
                        .arg(format!("exit {code}")),
                );
                crate::spawn(async move { child.wait().await.expect("wait").code() })
            })
            .collect();
        for (code, child) in children.into_iter().enumerate() {
            assert_eq!(child.await.expect("join"), Some(code as i32));
        }
    });
}

/// A child dropped unreaped waits in the orphan queue, and a later SIGCHLD
/// reaps it.
#[test]
fn orphans_are_reaped_on_sigchld() {
    run(async {
        let mut child = spawn_sigchld(Command::new("/bin/cat").stdin(Stdio::piped()));
        let pid = child.id().expect("running");
        let stdin = child.stdin.take().expect("piped");
        drop(child);
        assert!(orphan::is_queued(pid), "cat still runs: an orphan");
        // End its input: it exits, and its SIGCHLD wakes the reaper.
        drop(stdin);
        eventually("the orphan is reaped", || !orphan::is_queued(pid)).await;
        assert_eq!(proc_state(pid), None, "reaped: no zombie");
    });
}

#[test]
fn kill_on_drop_kills_through_sigchld() {
    run(async {
        let mut child = spawn_sigchld(
            Command::new("/bin/cat")
                .stdin(Stdio::piped())
                .kill_on_drop(true),
        );
        let pid = child.id().expect("running");
        // Held open: `cat` would run for as long as this lives.
        let _stdin = child.stdin.take();
        drop(child);
        eventually("the killed child is reaped", || proc_state(pid).is_none()).await;
        assert!(!orphan::is_queued(pid));
    });
}

#[cfg(target_os = "linux")]
#[test]
fn linux_watches_through_a_pidfd_where_the_kernel_has_them() {
    run(async {
        let mut child = Command::new("/bin/true").spawn().expect("spawn");
        if super::exit::pidfd_supported() {
            assert!(child.uses_pidfd());
        }
        assert!(child.wait().await.expect("wait").success());
    });
}

#[test]
fn a_watch_ends_with_its_runtime() {
    let rt = Builder::new_current_thread().build().expect("runtime");
    let mut child = rt.block_on(async {
        let mut command = Command::new("/bin/cat");
        command.stdin(Stdio::piped());
        command.spawn().expect("spawn")
    });
    let stdin = child.stdin.take();
    drop(rt);
    // Its exit can no longer be awaited: an error, not a hang.
    let error = futures_lite::future::block_on(child.wait()).unwrap_err();
    assert!(error.to_string().contains("shut down"), "{error}");
    // `try_wait` still reaps it, outside any runtime.
    assert_eq!(child.try_wait().expect("try_wait"), None);
    drop(stdin);
    let deadline = Instant::now() + TIMEOUT;
    let status = loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "cat did not exit at the end of its input"
        );
        std::thread::sleep(Duration::from_millis(1));
    };
    assert!(status.success());
}
