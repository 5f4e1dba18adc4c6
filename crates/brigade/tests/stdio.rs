//! `brigade::io::{stdin, stdout, stderr}`: this test binary runs itself
//! again as a child whose standard streams are pipes. The child, inside a
//! brigade runtime, reads all its standard input (through tokio's and
//! futures' traits) until the end of input, and writes it back, changed,
//! to its standard output and error. The parent checks every byte arrived,
//! in order, and that the child saw the end of its input.

mod common;

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Duration;

/// Tells the child which side it plays.
const CHILD_ENV: &str = "BRIGADE_STDIO_CHILD";

/// How long the child may run: a hang, not slowness.
const CHILD_TIMEOUT: Duration = Duration::from_secs(120);

/// Input larger than one blocking read or write (64 KiB), so several of
/// each run in order; every line differs from the next.
fn input() -> Vec<u8> {
    (0..20_000u32)
        .flat_map(|line| format!("line {line} of the input\n").into_bytes())
        .collect()
}

/// The child's side: reads stdin to its end with tokio's `AsyncReadExt`,
/// writes it back upper-cased to stdout with tokio's `AsyncWriteExt`, and
/// writes its length to stderr with futures' `AsyncWriteExt`.
fn child() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    let rt = brigade::Builder::new()
        .worker_threads(1)
        .build()
        .expect("runtime");
    rt.block_on(async {
        let mut input = Vec::new();
        let mut stdin = brigade::io::stdin();
        stdin.read_to_end(&mut input).await.expect("read stdin");
        // At the end of input, reads keep returning 0.
        let mut more = [0u8; 16];
        assert_eq!(stdin.read(&mut more).await.expect("read after EOF"), 0);
        let mut stdout = brigade::io::stdout();
        stdout
            .write_all(&input.to_ascii_uppercase())
            .await
            .expect("write stdout");
        stdout.flush().await.expect("flush stdout");
        let mut stderr = brigade::io::stderr();
        let message = format!("read {} bytes\n", input.len());
        futures_lite::AsyncWriteExt::write_all(&mut stderr, message.as_bytes())
            .await
            .expect("write stderr");
        futures_lite::AsyncWriteExt::close(&mut stderr)
            .await
            .expect("close stderr");
    });
}

/// Starts this test binary again, running only `test` as a child, with
/// piped standard streams.
fn start_child(test: &str) -> std::process::Child {
    let exe = std::env::current_exe().expect("the test binary's path");
    Command::new(exe)
        .args([
            test,
            "--exact",
            "--quiet",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the child process")
}

/// Waits for the child's end and output, for at most [`CHILD_TIMEOUT`].
fn finish(process: std::process::Child) -> std::process::Output {
    let pid = process.id();
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = sender.send(process.wait_with_output());
    });
    match receiver.recv_timeout(CHILD_TIMEOUT) {
        Ok(output) => output.expect("wait for the child process"),
        Err(_) => {
            // SAFETY: `kill` with a pid this test started and has not
            // reaped (the waiting thread is still blocked on it).
            unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
            panic!("the child did not finish within {CHILD_TIMEOUT:?}: something hangs");
        }
    }
}

#[test]
fn standard_streams_carry_every_byte_through_pipes() {
    if std::env::var_os(CHILD_ENV).is_some() {
        return child();
    }
    let mut process = start_child("standard_streams_carry_every_byte_through_pipes");
    let input = input();
    let mut stdin = process.stdin.take().unwrap();
    let writer = {
        let input = input.clone();
        // Closing the pipe after the last byte is the child's end of input.
        std::thread::spawn(move || stdin.write_all(&input))
    };
    let output = finish(process);
    writer.join().unwrap().expect("write the child's input");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "child failed: {stderr}");
    // libtest's own output (`--quiet`) comes before and after the child's.
    let expected = input.to_ascii_uppercase();
    let stdout = &output.stdout;
    let start = stdout
        .windows(expected.len().min(64))
        .position(|window| window == &expected[..window.len()])
        .expect("the upper-cased input on stdout");
    assert_eq!(
        &stdout[start..start + expected.len()],
        &expected[..],
        "every byte, in order"
    );
    assert!(
        stderr.contains(&format!("read {} bytes\n", input.len())),
        "stderr: {stderr}"
    );
}

#[test]
fn standard_streams_outside_a_runtime_are_an_error() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    // Polled with no brigade runtime around: an error, no panic.
    let mut stdout = brigade::io::stdout();
    let error =
        common::local_block_on(stdout.write_all(b"never written\n")).expect_err("no runtime");
    assert!(error.to_string().contains("brigade runtime"), "{error}");
    let mut buf = [0u8; 8];
    let error =
        common::local_block_on(brigade::io::stdin().read(&mut buf)).expect_err("no runtime");
    assert!(error.to_string().contains("brigade runtime"), "{error}");
    // The stream stays usable: inside a runtime, it writes.
    let rt = brigade::Builder::new()
        .worker_threads(1)
        .build()
        .expect("runtime");
    rt.block_on(async {
        stdout.write_all(b"").await.unwrap();
        stdout.flush().await.unwrap();
    });
}

#[test]
fn a_failed_write_is_reported_not_lost() {
    use tokio::io::AsyncWriteExt;
    if std::env::var_os(CHILD_ENV).is_some() {
        // For a while the child's stdout is a pipe nobody reads: a write
        // fails (EPIPE; Rust ignores SIGPIPE), and the next operation on the
        // stream says so. (Then libtest gets its stdout back.)
        let saved = redirect_stdout_to_a_closed_pipe();
        let rt = brigade::Builder::new()
            .worker_threads(1)
            .build()
            .expect("runtime");
        let error = rt.block_on(async {
            let mut stdout = brigade::io::stdout();
            let chunk = vec![b'x'; 64 * 1024];
            for _ in 0..1024 {
                stdout.write_all(&chunk).await?;
            }
            stdout.flush().await
        });
        restore_stdout(saved);
        let error = error.expect_err("the pipe has no reader");
        assert_eq!(error.kind(), std::io::ErrorKind::BrokenPipe, "{error}");
        eprintln!("reported: {error}");
        return;
    }
    let mut process = start_child("a_failed_write_is_reported_not_lost");
    drop(process.stdin.take());
    let output = finish(process);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "child failed: {stderr}");
    assert!(stderr.contains("reported: "), "stderr: {stderr}");
}

/// Points descriptor 1 at a pipe whose read end is closed; returns a copy
/// of the old descriptor 1.
fn redirect_stdout_to_a_closed_pipe() -> i32 {
    let mut ends = [0; 2];
    // SAFETY: plain descriptor calls on this process's own descriptors;
    // `ends` is a valid place for the two new ones.
    unsafe {
        let saved = libc::dup(1);
        assert!(saved >= 0 && libc::pipe(ends.as_mut_ptr()) == 0);
        libc::close(ends[0]);
        assert_eq!(libc::dup2(ends[1], 1), 1);
        libc::close(ends[1]);
        saved
    }
}

/// Puts back the descriptor 1 that [`redirect_stdout_to_a_closed_pipe`]
/// saved.
fn restore_stdout(saved: i32) {
    // SAFETY: `saved` is the copy of descriptor 1 made above, closed here
    // once it is back in place.
    unsafe {
        assert_eq!(libc::dup2(saved, 1), 1);
        libc::close(saved);
    }
}
