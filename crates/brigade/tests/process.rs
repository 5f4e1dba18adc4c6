//! `brigade::process`: spawning, exit statuses, pipes both ways (more than
//! a pipe holds, on one thread, so neither side may block), kills, and
//! reaping: no child is left running or as a zombie once it should not
//! be. Every wait is bounded; nothing asserts a duration. (The SIGCHLD
//! path, which Linux takes only without pidfds, is tested by the unit
//! tests of `src/process/tests.rs`.)

mod common;

use std::os::unix::process::ExitStatusExt;
use std::process::Stdio;
use std::time::{Duration, Instant};

use brigade::process::{Child, ChildStdin, ChildStdout, Command};
use common::{TIMEOUT, bounded};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The process's state letter in `/proc/PID/stat` (`Z` for a zombie), or
/// `None` once it is gone: reaped.
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
        brigade::time::sleep(Duration::from_millis(1)).await;
    }
}

/// `cat` with its stdin and stdout piped, taken out of the `Child`: `cat`
/// runs until its stdin is dropped.
fn cat_held_open(kill_on_drop: bool) -> (Child, ChildStdin, ChildStdout) {
    let mut child = Command::new("/bin/cat")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(kill_on_drop)
        .spawn()
        .expect("spawn cat");
    let stdin = child.stdin.take().expect("piped");
    let stdout = child.stdout.take().expect("piped");
    (child, stdin, stdout)
}

/// Whether `cat` still echoes: it runs.
async fn echoes(stdin: &mut ChildStdin, stdout: &mut ChildStdout) -> bool {
    let mut echoed = [0u8; 4];
    stdin.write_all(b"ping").await.is_ok()
        && stdout.read_exact(&mut echoed).await.is_ok()
        && &echoed == b"ping"
}

/// Input that is not the same byte over and over, so a lost or reordered
/// chunk shows.
fn pattern(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i % 251) as u8).collect()
}

#[brigade::test(flavor = "multi_thread", worker_threads = 2)]
async fn output_of_echo_has_its_stdout_and_status() {
    bounded(async {
        let output = Command::new("echo")
            .args(["hello", "world"])
            .output()
            .await
            .expect("output");
        assert!(output.status.success());
        assert_eq!(output.stdout, b"hello world\n");
        assert_eq!(output.stderr, b"");

        let output = Command::new("/bin/sh")
            .args(["-c", "echo out; echo err >&2; exit 4"])
            .output()
            .await
            .expect("output");
        assert_eq!(output.status.code(), Some(4));
        assert_eq!(
            (&output.stdout[..], &output.stderr[..]),
            (&b"out\n"[..], &b"err\n"[..])
        );
    })
    .await
}

#[brigade::test]
async fn false_fails_with_code_1() {
    bounded(async {
        let status = Command::new("/bin/false").status().await.expect("status");
        assert!(!status.success());
        assert_eq!(status.code(), Some(1));
        let status = Command::new("/bin/true").status().await.expect("status");
        assert!(status.success());
    })
    .await
}

#[brigade::test]
async fn env_args_and_current_dir_reach_the_child() {
    bounded(async {
        let output = Command::new("/bin/sh")
            .args(["-c", "echo \"$GREETING,$GONE\"; pwd"])
            .env_clear()
            .env("GREETING", "hello")
            .envs([("GONE", "here")])
            .env_remove("GONE")
            .current_dir("/")
            .output()
            .await
            .expect("output");
        assert_eq!(output.stdout, b"hello,\n/\n");
    })
    .await
}

#[brigade::test]
async fn piped_stdin_comes_back_from_cat() {
    bounded(async {
        let mut child = Command::new("/bin/cat")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("spawn");
        let mut stdin = child.stdin.take().expect("piped");
        stdin.write_all(b"through cat").await.expect("write");
        // As with tokio, shutdown flushes (nothing, for a pipe); the drop
        // closes the pipe and ends cat's input.
        stdin.shutdown().await.expect("shutdown");
        drop(stdin);
        let mut echoed = Vec::new();
        let mut stdout = child.stdout.take().expect("piped");
        stdout.read_to_end(&mut echoed).await.expect("read");
        assert_eq!(echoed, b"through cat");
        assert!(child.wait().await.expect("wait").success());
    })
    .await
}

/// 1 MiB each way through `cat`, far more than a pipe holds (64 KiB), on a
/// current-thread runtime: the writer fills the pipe to cat, which blocks
/// writing to the pipe back until the reader empties it, so the test
/// completes only if neither side ever blocks the one thread.
#[brigade::test]
async fn more_than_a_pipe_buffer_both_ways_on_one_thread() {
    bounded(async {
        let input = pattern(1 << 20);
        let mut child = Command::new("/bin/cat")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("spawn");
        let mut stdin = child.stdin.take().expect("piped");
        let sent = input.clone();
        let writer = brigade::spawn(async move {
            stdin.write_all(&sent).await?;
            stdin.shutdown().await
            // Dropped: cat sees the end of its input.
        });
        let mut echoed = Vec::new();
        let mut stdout = child.stdout.take().expect("piped");
        stdout.read_to_end(&mut echoed).await.expect("read");
        writer.await.expect("join").expect("write");
        assert_eq!(echoed.len(), input.len());
        assert!(echoed == input, "the bytes came back changed");
        assert!(child.wait().await.expect("wait").success());
    })
    .await
}

/// `wait_with_output` reads both streams while it waits: a child that
/// writes more than a pipe holds to each still finishes.
#[brigade::test]
async fn wait_with_output_drains_both_pipes_while_waiting() {
    bounded(async {
        let child = Command::new("/bin/sh")
            .args([
                "-c",
                "head -c 1048576 /dev/zero; head -c 300000 /dev/zero >&2",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn");
        let output = child.wait_with_output().await.expect("wait_with_output");
        assert!(output.status.success());
        assert_eq!(output.stdout.len(), 1 << 20);
        assert_eq!(output.stderr.len(), 300_000);
        assert!(output.stdout.iter().chain(&output.stderr).all(|&b| b == 0));
    })
    .await
}

/// The futures-io traits, and a pipe handed on as another child's stdin
/// (`TryInto<Stdio>`): `echo | cat`.
#[brigade::test]
async fn pipelines_and_futures_io() {
    bounded(async {
        let mut echo = Command::new("echo")
            .arg("piped along")
            .stdout(Stdio::piped())
            .spawn()
            .expect("spawn echo");
        let echo_out: Stdio = echo
            .stdout
            .take()
            .expect("piped")
            .try_into()
            .expect("into Stdio");
        let mut cat = Command::new("/bin/cat")
            .stdin(echo_out)
            .stdout(Stdio::piped())
            .spawn()
            .expect("spawn cat");
        let mut text = String::new();
        let mut cat_out = cat.stdout.take().expect("piped");
        futures_lite::AsyncReadExt::read_to_string(&mut cat_out, &mut text)
            .await
            .expect("read");
        assert_eq!(text, "piped along\n");
        assert!(echo.wait().await.expect("wait echo").success());
        assert!(cat.wait().await.expect("wait cat").success());
    })
    .await
}

#[brigade::test]
async fn kill_then_wait_is_a_signal_exit() {
    bounded(async {
        let (mut child, _stdin, _stdout) = cat_held_open(false);
        let pid = child.id().expect("running");
        child.kill().await.expect("kill");
        let status = child.wait().await.expect("wait");
        assert!(!status.success());
        assert_eq!(
            (status.code(), status.signal()),
            (None, Some(libc::SIGKILL))
        );
        assert_eq!(child.id(), None, "reaped");
        assert_eq!(proc_state(pid), None, "no zombie");
        // Killing a reaped child does nothing.
        child.start_kill().expect("start_kill after the exit");
    })
    .await
}

#[brigade::test]
async fn try_wait_before_and_after_the_exit() {
    bounded(async {
        let (mut child, stdin, _stdout) = cat_held_open(false);
        assert_eq!(
            child.try_wait().expect("try_wait"),
            None,
            "cat waits for input"
        );
        drop(stdin);
        let status = child.wait().await.expect("wait");
        assert!(status.success());
        assert_eq!(child.try_wait().expect("try_wait"), Some(status));

        // `try_wait` alone sees an exit, and reaps it.
        let mut child = Command::new("/bin/true").spawn().expect("spawn");
        let pid = child.id().expect("running");
        let mut seen = None;
        eventually("try_wait sees /bin/true exit", || {
            seen = child.try_wait().expect("try_wait");
            seen.is_some()
        })
        .await;
        assert!(seen.expect("exited").success());
        assert_eq!(proc_state(pid), None, "no zombie");
    })
    .await
}

/// `wait` drops stdin first, so a child reading it to the end exits.
#[brigade::test]
async fn wait_closes_stdin() {
    bounded(async {
        let mut child = Command::new("/bin/cat")
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .expect("spawn");
        assert!(child.stdin.is_some());
        assert!(child.wait().await.expect("wait").success());
        assert!(child.stdin.is_none());
    })
    .await
}

#[brigade::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_on_drop_kills_the_child() {
    bounded(async {
        let (child, mut stdin, mut stdout) = cat_held_open(true);
        let pid = child.id().expect("running");
        assert!(echoes(&mut stdin, &mut stdout).await);
        drop(child);
        // Its stdin is still open: only the kill ends it; and it is reaped.
        eventually("the killed child is gone", || proc_state(pid).is_none()).await;
        assert!(!echoes(&mut stdin, &mut stdout).await);
    })
    .await
}

/// A dropped child runs on (no `kill_on_drop`), and is reaped once it
/// exits: no zombie is left.
#[brigade::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_zombie_after_dropping_an_unwaited_child() {
    bounded(async {
        let (child, mut stdin, mut stdout) = cat_held_open(false);
        let pid = child.id().expect("running");
        drop(child);
        assert!(
            echoes(&mut stdin, &mut stdout).await,
            "a dropped child runs on"
        );
        drop(stdin);
        // Gone, not a zombie: reaped.
        eventually("the exited orphan is reaped", || proc_state(pid).is_none()).await;

        // One that exits at once, dropped at once.
        let child = Command::new("/bin/true").spawn().expect("spawn");
        let pid = child.id().expect("running");
        drop(child);
        // Gone, not a zombie: reaped.
        eventually("the exited orphan is reaped", || proc_state(pid).is_none()).await;
    })
    .await
}

#[brigade::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_concurrent_children_all_complete() {
    bounded(async {
        let children: Vec<_> = (0..50)
            .map(|n| {
                brigade::spawn(async move {
                    let output = Command::new("/bin/sh")
                        .arg("-c")
                        .arg(format!("echo {n}; exit {}", n % 7))
                        .output()
                        .await
                        .expect("output");
                    (output.status.code(), output.stdout)
                })
            })
            .collect();
        for (n, child) in children.into_iter().enumerate() {
            let (code, stdout) = child.await.expect("join");
            assert_eq!(code, Some((n % 7) as i32));
            assert_eq!(stdout, format!("{n}\n").into_bytes());
        }
    })
    .await
}

#[brigade::test]
async fn a_missing_program_is_not_found() {
    bounded(async {
        let error = Command::new("/no/such/program").spawn().unwrap_err();
        assert_eq!(error.kind(), std::io::ErrorKind::NotFound);
        let error = Command::new("brigade-no-such-program-on-path")
            .output()
            .await
            .unwrap_err();
        assert_eq!(error.kind(), std::io::ErrorKind::NotFound);
    })
    .await
}

#[test]
fn spawning_outside_a_runtime_says_so() {
    let error = Command::new("/bin/true").spawn().unwrap_err();
    let message = error.to_string();
    assert!(
        message.contains("brigade::process::Command::spawn")
            && message.contains("inside a brigade runtime"),
        "{message}"
    );
}

#[test]
fn kill_on_drop_is_reported() {
    let mut command = Command::new("/bin/true");
    assert!(!command.get_kill_on_drop());
    command.kill_on_drop(true);
    assert!(command.get_kill_on_drop());
    assert_eq!(command.as_std().get_program(), "/bin/true");
}
