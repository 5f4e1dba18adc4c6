//! Runs a test in a child process of its own test binary, so that the OS
//! limits it lowers (`RLIMIT_NOFILE`, `RLIMIT_NPROC`) and the descriptors
//! it fills touch no other test. Bounded like every wait of the suite.
#![allow(dead_code)]

use std::io;
use std::process::{Command, Stdio};
use std::time::Duration;

/// The environment variable that tells the child which test it runs.
const CHILD_ENV: &str = "BRIGADE_LIMITS_CHILD";

/// How long a child may run: a hang, not slowness.
const CHILD_TIMEOUT: Duration = Duration::from_secs(120);

/// In the test process: runs test `name` (the path libtest prints, without
/// the crate) again in a child process and fails if it fails, with its
/// output. In that child: runs `body`.
pub(crate) fn in_child(name: &str, body: impl FnOnce()) {
    if std::env::var(CHILD_ENV).as_deref() == Ok(name) {
        body();
        return;
    }
    let exe = std::env::current_exe().expect("the test binary's path");
    let child = Command::new(exe)
        .args([
            name,
            "--exact",
            "--include-ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, name)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the child process");
    let pid = child.id();
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = sender.send(child.wait_with_output());
    });
    let output = match receiver.recv_timeout(CHILD_TIMEOUT) {
        Ok(output) => output.expect("wait for the child process"),
        Err(_) => {
            // SAFETY: `kill` with a pid this test started and has not
            // reaped (the waiting thread is still blocked on it).
            unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
            panic!("child test {name} did not finish within {CHILD_TIMEOUT:?}: something hangs");
        }
    };
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "child test {name} failed ({}):\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        output.status
    );
    assert!(
        stdout.contains("1 passed"),
        "child test {name} did not run:\n{stdout}"
    );
}

/// Sets the soft limit of `resource` (the hard one is kept, so it can be
/// raised again).
pub(crate) fn set_soft_limit(resource: libc::__rlimit_resource_t, soft: u64) {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `limit` is a valid, writable `rlimit` for the call.
    let got = unsafe { libc::getrlimit(resource, &mut limit) };
    assert_eq!(got, 0, "getrlimit: {}", io::Error::last_os_error());
    limit.rlim_cur = soft.min(limit.rlim_max);
    // SAFETY: `limit` is a valid `rlimit`; lowering the soft limit, or
    // raising it up to the hard one, needs no privilege.
    let set = unsafe { libc::setrlimit(resource, &limit) };
    assert_eq!(set, 0, "setrlimit: {}", io::Error::last_os_error());
}

/// Raises the soft limit of `resource` back to the hard one.
pub(crate) fn lift_soft_limit(resource: libc::__rlimit_resource_t) {
    set_soft_limit(resource, u64::MAX);
}

/// A field of `/proc/self/status` (such as `Threads`), as a number.
pub(crate) fn status_field(name: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    field(&status, name).unwrap_or_else(|| panic!("no field {name} in /proc/self/status"))
}

/// Threads of this process now.
pub(crate) fn threads() -> u64 {
    status_field("Threads")
}

/// Limits this process to `extra` more threads, with `RLIMIT_NPROC`.
///
/// The limit counts every task of the real user, and does not apply to
/// root at all. So a child running as root first moves to a user id of its
/// own (`PRIVATE_UID_BASE` plus its pid's low bits), where the only tasks
/// counted are its own threads and the limit is exact. A child running as
/// another user counts that user's tasks across `/proc`: other processes of
/// the same user starting or ending threads meanwhile can shift the count
/// by a few.
pub(crate) fn limit_threads(extra: u64) {
    // SAFETY: `geteuid` has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        become_private_user();
    }
    let counted = user_tasks();
    set_soft_limit(libc::RLIMIT_NPROC, counted + extra);
}

/// Lifts the thread limit of [`limit_threads`] (up to the hard limit).
pub(crate) fn lift_thread_limit() {
    lift_soft_limit(libc::RLIMIT_NPROC);
}

/// Below the 16-bit ids that user namespaces commonly map, above the usual
/// ranges of real accounts.
const PRIVATE_UID_BASE: u32 = 40_000;

/// Root only: moves the whole process (every thread: glibc applies
/// `setuid` to all of them) to a user id that no other process has, which
/// also drops root's exemption from `RLIMIT_NPROC`. Once per process.
fn become_private_user() {
    let uid = PRIVATE_UID_BASE + std::process::id() % 20_000;
    // SAFETY: `setuid` has no memory preconditions; the process is root.
    let result = unsafe { libc::setuid(uid) };
    assert_eq!(result, 0, "setuid({uid}): {}", io::Error::last_os_error());
}

/// Tasks (threads) whose real user is this process's.
fn user_tasks() -> u64 {
    // SAFETY: `getuid` has no preconditions.
    let uid = unsafe { libc::getuid() };
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return threads();
    };
    entries
        .flatten()
        .filter(|entry| {
            entry
                .file_name()
                .to_string_lossy()
                .bytes()
                .all(|b| b.is_ascii_digit())
        })
        .filter_map(|entry| std::fs::read_to_string(entry.path().join("status")).ok())
        .filter(|status| real_uid(status) == Some(uid))
        .filter_map(|status| field(&status, "Threads"))
        .sum()
}

fn real_uid(status: &str) -> Option<u32> {
    field(status, "Uid").and_then(|uid| u32::try_from(uid).ok())
}

fn field(status: &str, name: &str) -> Option<u64> {
    status
        .lines()
        .find_map(|line| line.strip_prefix(name)?.strip_prefix(':'))
        .and_then(|value| value.split_whitespace().next()?.parse().ok())
}

/// Lowers `RLIMIT_NOFILE` to a few above the highest descriptor open now,
/// then opens `/dev/null` until `EMFILE`: from then on every new descriptor
/// fails with `EMFILE` until one of the returned files is dropped.
pub(crate) fn exhaust_descriptors() -> Vec<std::fs::File> {
    let highest = std::fs::read_dir("/proc/self/fd")
        .expect("/proc/self/fd")
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u64>().ok())
        .max()
        .unwrap_or(2);
    set_soft_limit(libc::RLIMIT_NOFILE, highest + 16);
    let mut files = Vec::new();
    loop {
        match std::fs::File::open("/dev/null") {
            Ok(file) => files.push(file),
            Err(error) if error.raw_os_error() == Some(libc::EMFILE) => return files,
            Err(error) => panic!("opening /dev/null: {error}"),
        }
    }
}
