//! Child processes, with tokio's names and semantics (`tokio::process`):
//! [`Command`] spawns a [`Child`], whose exit is awaited through the
//! runtime's reactor and whose piped standard streams ([`ChildStdin`],
//! [`ChildStdout`], [`ChildStderr`]) are non-blocking pipes read and
//! written with tokio's or `futures_io`'s `AsyncRead`/`AsyncWrite`, as
//! brigade's sockets are. A port from `tokio::process` renames the path.
//!
//! Unix only. A child's exit is seen through a pidfd on Linux
//! (`pidfd_open(2)`, registered with the reactor), or through SIGCHLD
//! ([`signal`](crate::signal)) where that is refused (kernels before 5.3,
//! seccomp filters, other Unixes): listening for SIGCHLD installs a
//! process-wide handler, as tokio does. Children are spawned, their pipes
//! and exit watch registered, in the current runtime, so spawning outside
//! one returns an error that says so.
//!
//! # Examples
//!
//! Run a command and collect its output:
//!
//! ```
//! use brigade::process::Command;
//!
//! let rt = brigade::Runtime::new()?;
//! rt.block_on(async {
//!     let output = Command::new("echo").args(["hello", "world"]).output().await?;
//!     assert!(output.status.success());
//!     assert_eq!(output.stdout, b"hello world\n");
//!     std::io::Result::Ok(())
//! })?;
//! # Ok::<(), std::io::Error>(())
//! ```
//!
//! Feed a child's input while reading its output; drop the input to end
//! it (as with tokio, `shutdown` does not close the pipe):
//!
//! ```
//! use std::process::Stdio;
//! use tokio::io::{AsyncReadExt, AsyncWriteExt};
//!
//! let rt = brigade::Runtime::new()?;
//! rt.block_on(async {
//!     let mut child = brigade::process::Command::new("sort")
//!         .stdin(Stdio::piped())
//!         .stdout(Stdio::piped())
//!         .spawn()?;
//!     let mut stdin = child.stdin.take().unwrap();
//!     let writer = brigade::spawn(async move {
//!         stdin.write_all(b"pear\napple\n").await
//!         // `stdin` is dropped here: `sort` sees the end of its input.
//!     });
//!     let mut sorted = String::new();
//!     child.stdout.take().unwrap().read_to_string(&mut sorted).await?;
//!     writer.await??;
//!     assert!(child.wait().await?.success());
//!     assert_eq!(sorted, "apple\npear\n");
//!     std::io::Result::Ok(())
//! })?;
//! # Ok::<(), std::io::Error>(())
//! ```

mod child;
mod exit;
mod orphan;
mod pipe;

use std::ffi::OsStr;
use std::fmt;
use std::future::Future;
use std::io;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command as StdCommand, ExitStatus, Output, Stdio};

pub use child::Child;
pub use pipe::{ChildStderr, ChildStdin, ChildStdout};

use crate::io::poll_evented::no_runtime_error;
use crate::runtime::context;

/// A process builder, as [`std::process::Command`] (which it wraps) and
/// tokio's `Command`: the program, its arguments, environment, working
/// directory and standard streams, then [`spawn`](Self::spawn),
/// [`output`](Self::output) or [`status`](Self::status).
///
/// The standard streams are inherited by default; [`output`](Self::output)
/// pipes stdout and stderr. Unlike std, spawning never blocks a worker
/// waiting for the child: its exit is awaited through the reactor.
///
/// # Examples
///
/// ```
/// use brigade::process::Command;
///
/// let rt = brigade::Runtime::new()?;
/// rt.block_on(async {
///     let status = Command::new("sh")
///         .arg("-c")
///         .arg("test \"$GREETING\" = hello")
///         .env("GREETING", "hello")
///         .status()
///         .await?;
///     assert!(status.success());
///
///     let missing = Command::new("/no/such/program").spawn().unwrap_err();
///     assert_eq!(missing.kind(), std::io::ErrorKind::NotFound);
///     std::io::Result::Ok(())
/// })?;
/// # Ok::<(), std::io::Error>(())
/// ```
pub struct Command {
    std: StdCommand,
    kill_on_drop: bool,
}

impl Command {
    /// A command that runs `program` (looked up in `PATH` unless it is a
    /// path), with no arguments, the parent's environment and working
    /// directory, and inherited standard streams.
    pub fn new<S: AsRef<OsStr>>(program: S) -> Command {
        Command::from(StdCommand::new(program))
    }

    /// The standard-library command inside.
    pub fn as_std(&self) -> &StdCommand {
        &self.std
    }

    /// The standard-library command inside, to change.
    pub fn as_std_mut(&mut self) -> &mut StdCommand {
        &mut self.std
    }

    /// The standard-library command inside (`kill_on_drop` is lost).
    pub fn into_std(self) -> StdCommand {
        self.std
    }

    /// Adds an argument.
    pub fn arg<S: AsRef<OsStr>>(&mut self, arg: S) -> &mut Command {
        self.std.arg(arg);
        self
    }

    /// Adds arguments, in order.
    pub fn args<I, S>(&mut self, args: I) -> &mut Command
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.std.args(args);
        self
    }

    /// Sets an environment variable for the child.
    pub fn env<K, V>(&mut self, key: K, val: V) -> &mut Command
    where
        K: AsRef<OsStr>,
        V: AsRef<OsStr>,
    {
        self.std.env(key, val);
        self
    }

    /// Sets environment variables for the child.
    pub fn envs<I, K, V>(&mut self, vars: I) -> &mut Command
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<OsStr>,
        V: AsRef<OsStr>,
    {
        self.std.envs(vars);
        self
    }

    /// Removes an environment variable from the child's environment.
    pub fn env_remove<K: AsRef<OsStr>>(&mut self, key: K) -> &mut Command {
        self.std.env_remove(key);
        self
    }

    /// Clears the child's environment: it gets only the variables set
    /// after this.
    pub fn env_clear(&mut self) -> &mut Command {
        self.std.env_clear();
        self
    }

    /// Sets the child's working directory.
    pub fn current_dir<P: AsRef<Path>>(&mut self, dir: P) -> &mut Command {
        self.std.current_dir(dir);
        self
    }

    /// Sets the child's standard input: [`Stdio::piped`] makes
    /// [`Child::stdin`] a [`ChildStdin`].
    pub fn stdin<T: Into<Stdio>>(&mut self, cfg: T) -> &mut Command {
        self.std.stdin(cfg);
        self
    }

    /// Sets the child's standard output: [`Stdio::piped`] makes
    /// [`Child::stdout`] a [`ChildStdout`].
    pub fn stdout<T: Into<Stdio>>(&mut self, cfg: T) -> &mut Command {
        self.std.stdout(cfg);
        self
    }

    /// Sets the child's standard error: [`Stdio::piped`] makes
    /// [`Child::stderr`] a [`ChildStderr`].
    pub fn stderr<T: Into<Stdio>>(&mut self, cfg: T) -> &mut Command {
        self.std.stderr(cfg);
        self
    }

    /// Whether dropping the [`Child`] (or the future of
    /// [`output`](Self::output) or [`status`](Self::status)) before the
    /// child was reaped kills it with SIGKILL. Off by default, as with
    /// tokio: a dropped child runs on. Either way it is reaped once it
    /// exits (see [`Child`]).
    pub fn kill_on_drop(&mut self, kill_on_drop: bool) -> &mut Command {
        self.kill_on_drop = kill_on_drop;
        self
    }

    /// What [`kill_on_drop`](Self::kill_on_drop) was set to (`false` by
    /// default).
    pub fn get_kill_on_drop(&self) -> bool {
        self.kill_on_drop
    }

    /// Sets the child's user id (`setuid(2)` in the child).
    pub fn uid(&mut self, id: u32) -> &mut Command {
        self.std.uid(id);
        self
    }

    /// Sets the child's group id (`setgid(2)` in the child).
    pub fn gid(&mut self, id: u32) -> &mut Command {
        self.std.gid(id);
        self
    }

    /// Sets the child's `argv[0]`, which is the program by default.
    pub fn arg0<S: AsRef<OsStr>>(&mut self, arg: S) -> &mut Command {
        self.std.arg0(arg);
        self
    }

    /// Puts the child in the process group `pgroup` (`setpgid(2)`); 0
    /// makes a new group, led by the child.
    pub fn process_group(&mut self, pgroup: i32) -> &mut Command {
        self.std.process_group(pgroup);
        self
    }

    /// Runs `f` in the child after `fork` and before `exec`, as
    /// [`std::os::unix::process::CommandExt::pre_exec`].
    ///
    /// # Safety
    /// As for std's: `f` runs in a copy of the process that has one
    /// thread, where locks held by the parent's other threads stay locked,
    /// so it must do only what is async-signal-safe (no allocation, no
    /// locks, no memory the other threads may have left inconsistent).
    pub unsafe fn pre_exec<F>(&mut self, f: F) -> &mut Command
    where
        F: FnMut() -> io::Result<()> + Send + Sync + 'static,
    {
        // SAFETY: the caller upholds std's contract, which this one
        // repeats.
        unsafe { self.std.pre_exec(f) };
        self
    }

    /// Spawns the child in the current runtime and returns its handle,
    /// whose pipes and exit watch are registered with the runtime's
    /// reactor.
    ///
    /// A [`Child`] dropped unreaped is reaped once it exits (and killed
    /// first if [`kill_on_drop`](Self::kill_on_drop) was set); see
    /// [`Child`].
    ///
    /// # Errors
    /// - std's: `NotFound` for a program that does not exist,
    ///   `PermissionDenied` for one that may not be run, `WouldBlock` (on
    ///   Linux) at the system's process limit.
    /// - Outside a brigade runtime (a task, `Runtime::block_on`, or a
    ///   `spawn_blocking` closure): an error that says so, before any
    ///   process is started. (tokio panics there instead.)
    /// - Registering with the reactor failed (out of file descriptors, or
    ///   the runtime is shutting down): the child is then killed.
    pub fn spawn(&mut self) -> io::Result<Child> {
        self.spawn_watching(true)
    }

    /// [`spawn`](Self::spawn), watching the exit through a pidfd if
    /// `prefer_pidfd` and the kernel allows, else through SIGCHLD (unit
    /// tests pass `false` to take that path on Linux).
    fn spawn_watching(&mut self, prefer_pidfd: bool) -> io::Result<Child> {
        if context::current_driver().is_none() {
            return Err(no_runtime_error("brigade::process::Command::spawn"));
        }
        // Orphans that exited while nobody looked.
        orphan::reap();
        let child = self.std.spawn()?;
        Child::spawned(child, self.kill_on_drop, prefer_pidfd)
    }

    /// Spawns the child (now, when called) and returns a future of its
    /// exit status. The standard streams are inherited by default; any
    /// set to [`Stdio::piped`] is closed at once, so the child does not
    /// wait on a pipe nobody reads.
    ///
    /// Dropping the future before it completes leaves the child running
    /// (reaped once it exits), or kills it with
    /// [`kill_on_drop`](Self::kill_on_drop).
    ///
    /// # Errors
    /// Those of [`spawn`](Self::spawn) and [`Child::wait`].
    pub fn status(&mut self) -> impl Future<Output = io::Result<ExitStatus>> + use<> {
        let child = self.spawn();
        async move {
            let mut child = child?;
            // Closed so that the child cannot block on a pipe we hold.
            drop(child.stdin.take());
            drop(child.stdout.take());
            drop(child.stderr.take());
            child.wait().await
        }
    }

    /// Spawns the child (now, when called) and returns a future of its
    /// exit status and everything it wrote to stdout and stderr.
    ///
    /// As tokio's (and unlike std's), this always pipes stdout and stderr,
    /// even if they were set otherwise; stdin is as set (inherited by
    /// default). Dropping the future behaves as for
    /// [`status`](Self::status).
    ///
    /// # Errors
    /// Those of [`spawn`](Self::spawn) and [`Child::wait_with_output`].
    pub fn output(&mut self) -> impl Future<Output = io::Result<Output>> + use<> {
        self.std.stdout(Stdio::piped());
        self.std.stderr(Stdio::piped());
        let child = self.spawn();
        async move { child?.wait_with_output().await }
    }
}

impl From<StdCommand> for Command {
    fn from(std: StdCommand) -> Command {
        Command {
            std,
            kill_on_drop: false,
        }
    }
}

impl fmt::Debug for Command {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.std.fmt(f)
    }
}

#[cfg(test)]
mod tests;
