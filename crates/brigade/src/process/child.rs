//! [`Child`]: a spawned process, its exit awaited through the reactor.

use std::fmt;
use std::future::poll_fn;
use std::io;
use std::mem;
use std::process::{Child as StdChild, ExitStatus, Output};
use std::task::{Context, Poll, ready};

use super::exit::Watched;
use super::orphan;
use super::pipe::{ChildStderr, ChildStdin, ChildStdout};

/// A child process spawned by [`Command::spawn`](super::Command::spawn),
/// as tokio's `Child`.
///
/// [`wait`](Self::wait) completes when the process exits, woken by the
/// runtime's reactor (a pidfd on Linux, SIGCHLD elsewhere), and reaps it.
/// The pipes asked for with [`Stdio::piped`](std::process::Stdio::piped)
/// are in the public fields; `take()` them to use them apart from the
/// `Child`.
///
/// Dropping a `Child` does not wait for the process, nor kill it unless
/// [`kill_on_drop`](super::Command::kill_on_drop) was set. Either way the
/// runtime reaps it once it exits, so no zombie is left: a child dropped
/// unreaped is kept on a list that is reaped whenever one of them exits,
/// at each spawn, and at a runtime's shutdown. A child still running when
/// its runtime shuts down is reaped by a later spawn's pass, or is reaped
/// by the system when this process exits.
///
/// # Examples
///
/// ```
/// use std::process::Stdio;
/// use tokio::io::AsyncReadExt;
///
/// let rt = brigade::Runtime::new()?;
/// rt.block_on(async {
///     let mut child = brigade::process::Command::new("sh")
///         .args(["-c", "echo out; exit 3"])
///         .stdout(Stdio::piped())
///         .spawn()?;
///     let mut out = String::new();
///     child.stdout.take().unwrap().read_to_string(&mut out).await?;
///     let status = child.wait().await?;
///     assert_eq!((out.as_str(), status.code()), ("out\n", Some(3)));
///     std::io::Result::Ok(())
/// })?;
/// # Ok::<(), std::io::Error>(())
/// ```
pub struct Child {
    state: State,
    /// The write end of the child's standard input, if it was piped.
    /// [`wait`](Self::wait) drops it first, so the child sees the end of
    /// its input.
    pub stdin: Option<ChildStdin>,
    /// The read end of the child's standard output, if it was piped.
    pub stdout: Option<ChildStdout>,
    /// The read end of the child's standard error, if it was piped.
    pub stderr: Option<ChildStderr>,
}

/// `Running` until the exit is reaped; `Dropped` only inside `drop`.
enum State {
    Running {
        watched: Watched,
        /// Whether dropping the `Child` kills the process: the command's
        /// `kill_on_drop`, cleared once it was killed.
        kill_on_drop: bool,
    },
    Reaped(ExitStatus),
    Dropped,
}

impl Child {
    /// Watches `child`'s exit (through a pidfd if `prefer_pidfd` and the
    /// kernel allows) and registers its pipes. On failure the process is
    /// killed, and reaped by the orphan queue: nobody could wait for it.
    pub(super) fn spawned(
        mut child: StdChild,
        kill_on_drop: bool,
        prefer_pidfd: bool,
    ) -> io::Result<Child> {
        let (stdin, stdout, stderr) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take());
        let mut spawned = Child {
            // Until handed out, an error drops it, which kills it.
            state: State::Running {
                watched: Watched::unwatched(child),
                kill_on_drop: true,
            },
            stdin: None,
            stdout: None,
            stderr: None,
        };
        if let State::Running { watched, .. } = &mut spawned.state {
            watched.watch(prefer_pidfd)?;
        }
        spawned.stdin = stdin.map(ChildStdin::from_std).transpose()?;
        spawned.stdout = stdout.map(ChildStdout::from_std).transpose()?;
        spawned.stderr = stderr.map(ChildStderr::from_std).transpose()?;
        if let State::Running {
            kill_on_drop: kill, ..
        } = &mut spawned.state
        {
            *kill = kill_on_drop;
        }
        Ok(spawned)
    }

    /// The process id, while the child is not reaped; `None` once
    /// [`wait`](Self::wait) or [`try_wait`](Self::try_wait) returned its
    /// status (the id may then belong to another process).
    pub fn id(&self) -> Option<u32> {
        match &self.state {
            State::Running { watched, .. } => Some(watched.id()),
            _ => None,
        }
    }

    /// Whether the exit is watched through a pidfd.
    #[cfg(test)]
    pub(super) fn uses_pidfd(&self) -> bool {
        matches!(&self.state, State::Running { watched, .. } if watched.uses_pidfd())
    }

    /// Sends SIGKILL to the child, without waiting for it to exit; see
    /// [`kill`](Self::kill). `Ok(())` if it was reaped already.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::os::unix::process::ExitStatusExt;
    ///
    /// let rt = brigade::Runtime::new()?;
    /// rt.block_on(async {
    ///     let mut child = brigade::process::Command::new("sleep").arg("100").spawn()?;
    ///     child.start_kill()?;
    ///     assert_eq!(child.wait().await?.signal(), Some(libc::SIGKILL));
    ///     std::io::Result::Ok(())
    /// })?;
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn start_kill(&mut self) -> io::Result<()> {
        match &mut self.state {
            State::Running {
                watched,
                kill_on_drop,
            } => {
                watched.kill()?;
                *kill_on_drop = false;
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// Kills the child (SIGKILL) and waits for it to exit, reaping it.
    ///
    /// Cancel safe as [`wait`](Self::wait) is: once the signal is sent, a
    /// dropped call leaves the child to be waited for (or to the orphan
    /// queue, if the `Child` is dropped too).
    pub async fn kill(&mut self) -> io::Result<()> {
        self.start_kill()?;
        self.wait().await.map(drop)
    }

    /// Waits for the child to exit and returns its status; the child is
    /// reaped. Drops [`stdin`](Self::stdin) first, so that a child reading
    /// its input to the end is not left waiting for more. Later calls
    /// return the same status.
    ///
    /// Cancel safe: dropping the future loses nothing.
    ///
    /// # Errors
    /// If the runtime the child was spawned in has shut down while the
    /// child still runs: its exit can no longer be awaited
    /// ([`try_wait`](Self::try_wait) still sees it). Or if `waitpid` fails,
    /// as when the program reaped the child itself (`waitpid(-1, ...)`).
    pub async fn wait(&mut self) -> io::Result<ExitStatus> {
        drop(self.stdin.take());
        poll_fn(|cx| self.poll_wait(cx)).await
    }

    fn poll_wait(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<ExitStatus>> {
        let status = match &mut self.state {
            State::Running { watched, .. } => ready!(watched.poll_exit(cx))?,
            State::Reaped(status) => *status,
            State::Dropped => unreachable!("a dropped `Child` is not polled"),
        };
        // Drops the watch: the pidfd or the SIGCHLD stream goes.
        self.state = State::Reaped(status);
        Poll::Ready(Ok(status))
    }

    /// The exit status if the child has exited (it is reaped then), or
    /// `None` if it still runs, without waiting. Does not touch
    /// [`stdin`](Self::stdin).
    pub fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        let status = match &mut self.state {
            State::Running { watched, .. } => match watched.try_wait()? {
                Some(status) => status,
                None => return Ok(None),
            },
            State::Reaped(status) => return Ok(Some(*status)),
            State::Dropped => unreachable!("a dropped `Child` is not used"),
        };
        self.state = State::Reaped(status);
        Ok(Some(status))
    }

    /// Waits for the child to exit while reading its standard output and
    /// error to their ends (each only if piped; an unpiped one is empty),
    /// and returns all three. Drops [`stdin`](Self::stdin) first, as
    /// [`wait`](Self::wait) does.
    ///
    /// The streams are read at the same time as the exit is awaited, so a
    /// child that writes more than a pipe holds is not blocked. Like
    /// tokio's, this waits for the ends of the streams too: a grandchild
    /// that keeps one open keeps this waiting.
    pub async fn wait_with_output(mut self) -> io::Result<Output> {
        drop(self.stdin.take());
        let mut stdout = ReadToEnd::new(self.stdout.take());
        let mut stderr = ReadToEnd::new(self.stderr.take());
        let mut status = None;
        let status = poll_fn(|cx| {
            if status.is_none()
                && let Poll::Ready(exited) = self.poll_wait(cx)
            {
                status = Some(exited?);
            }
            let out = stdout.poll(cx, ChildStdout::poll_read_to_end)?;
            let err = stderr.poll(cx, ChildStderr::poll_read_to_end)?;
            match status {
                Some(status) if out.is_ready() && err.is_ready() => {
                    Poll::Ready(Ok::<_, io::Error>(status))
                }
                _ => Poll::Pending,
            }
        })
        .await?;
        Ok(Output {
            status,
            stdout: stdout.buf,
            stderr: stderr.buf,
        })
    }
}

/// One stream of [`Child::wait_with_output`]: read until its end, then
/// dropped.
struct ReadToEnd<P> {
    pipe: Option<P>,
    buf: Vec<u8>,
}

impl<P> ReadToEnd<P> {
    fn new(pipe: Option<P>) -> ReadToEnd<P> {
        ReadToEnd {
            pipe,
            buf: Vec::new(),
        }
    }

    /// Ready once the stream ended (at once if there was none).
    fn poll(
        &mut self,
        cx: &mut Context<'_>,
        read: fn(&P, &mut Context<'_>, &mut Vec<u8>) -> Poll<io::Result<()>>,
    ) -> Poll<io::Result<()>> {
        let Some(pipe) = &self.pipe else {
            return Poll::Ready(Ok(()));
        };
        ready!(read(pipe, cx, &mut self.buf))?;
        self.pipe = None;
        Poll::Ready(Ok(()))
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        if let State::Running {
            mut watched,
            kill_on_drop,
        } = mem::replace(&mut self.state, State::Dropped)
        {
            if kill_on_drop {
                // An error says it is gone already: the queue reaps it.
                let _ = watched.kill();
            }
            orphan::adopt(watched);
        }
    }
}

impl fmt::Debug for Child {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Child")
            .field("pid", &self.id())
            .field("stdin", &self.stdin)
            .field("stdout", &self.stdout)
            .field("stderr", &self.stderr)
            .finish()
    }
}
