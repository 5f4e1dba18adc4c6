//! The process's standard input, output and error for async code:
//! [`stdin`], [`stdout`] and [`stderr`].
//!
//! The OS offers no readiness for them that works everywhere (a terminal,
//! a file or a pipe may stand behind each), so, as tokio does, each
//! operation runs on the blocking pool ([`spawn_blocking`]), never on a
//! worker: a read that waits for a keystroke holds a blocking-pool thread,
//! not a worker.
//!
//! [`spawn_blocking`]: crate::spawn_blocking

use std::fmt;
use std::future::Future;
use std::io::{self, Read, Write};
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use crate::runtime::context;
use crate::task::JoinHandle;

/// The most bytes one blocking operation moves: a larger read asks for this
/// much, a larger write takes this much and reports it as written.
const MAX_BUF: usize = 64 * 1024;

/// A standard stream driven on the blocking pool, one operation at a time.
///
/// ## Protocol
/// The stream is `Idle` (it holds the std handle and its buffer) or `Busy`
/// (both went to a blocking-pool closure, whose `JoinHandle` gives them
/// back with the operation's outcome). Only the task that polls the stream
/// moves it between the two, so no lock is needed:
/// - a read starts when the buffer is empty: the closure reads at most the
///   caller's length into it; bytes left over from a read are handed out by
///   the next reads before another starts;
/// - a write copies the caller's bytes into the buffer, starts the closure
///   that writes all of them, and reports them written at once (as
///   tokio's standard streams do); the next operation first waits for it,
///   and reports its error if it failed;
/// - a flush waits for the write in flight, then flushes the std handle on
///   the blocking pool too (std's stdout is line-buffered).
///
/// A closure that never comes back (the runtime shut down first, or it
/// panicked) leaves the stream `Lost`: every later operation is an error.
struct Blocking<T> {
    state: State<T>,
    /// Whether bytes were written since the last flush.
    need_flush: bool,
}

enum State<T> {
    Idle(Idle<T>),
    Busy(JoinHandle<(Idle<T>, io::Result<()>)>),
    Lost,
}

/// What an idle stream holds, and what goes to the blocking pool with an
/// operation.
struct Idle<T> {
    inner: T,
    buf: Vec<u8>,
    /// Read: where the bytes not yet handed out start in `buf`.
    pos: usize,
}

impl<T: Send + 'static> Blocking<T> {
    fn new(inner: T) -> Self {
        Blocking {
            state: State::Idle(Idle {
                inner,
                buf: Vec::new(),
                pos: 0,
            }),
            need_flush: false,
        }
    }

    /// Starts `op` on the blocking pool with the idle stream, whose buffer
    /// it may change.
    fn start(
        &mut self,
        mut idle: Idle<T>,
        op: impl FnOnce(&mut Idle<T>) -> io::Result<()> + Send + 'static,
    ) -> io::Result<()> {
        let Some(handle) = context::try_current() else {
            self.state = State::Idle(idle);
            return Err(io::Error::other(
                "brigade's standard streams work only inside a brigade runtime",
            ));
        };
        self.state = State::Busy(handle.spawn_blocking(move || {
            let outcome = op(&mut idle);
            (idle, outcome)
        }));
        Ok(())
    }

    /// Waits for the operation in flight, if any; then the stream is idle,
    /// and the operation's outcome is returned.
    fn poll_idle(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let outcome = match &mut self.state {
            State::Idle(_) => return Poll::Ready(Ok(())),
            State::Lost => return Poll::Ready(Err(lost())),
            // Unconstrained: the read or write this waits for spends the
            // unit (`task/coop.rs`), not the handle too.
            State::Busy(handle) => {
                ready!(crate::task::coop::with_unconstrained(
                    || Pin::new(handle).poll(cx)
                ))
            }
        };
        Poll::Ready(match outcome {
            Ok((idle, outcome)) => {
                self.state = State::Idle(idle);
                outcome
            }
            Err(_) => {
                self.state = State::Lost;
                Err(lost())
            }
        })
    }

    /// Takes the idle stream (call after [`poll_idle`](Self::poll_idle)
    /// returned).
    fn take_idle(&mut self) -> Idle<T> {
        match std::mem::replace(&mut self.state, State::Lost) {
            State::Idle(idle) => idle,
            _ => unreachable!("the stream is idle after `poll_idle`"),
        }
    }
}

impl<T: Read + Send + 'static> Blocking<T> {
    /// Spends a unit of the task's cooperative budget per read
    /// (`task/coop.rs`).
    fn poll_read(&mut self, cx: &mut Context<'_>, dst: &mut [u8]) -> Poll<io::Result<usize>> {
        crate::task::coop::budgeted(cx, |cx| self.poll_read_buffered(cx, dst))
    }

    fn poll_read_buffered(
        &mut self,
        cx: &mut Context<'_>,
        dst: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        loop {
            // A read that just completed is answered even if it read
            // nothing: that is the end of input.
            let completed = matches!(self.state, State::Busy(_));
            ready!(self.poll_idle(cx))?;
            let State::Idle(idle) = &mut self.state else {
                unreachable!("the stream is idle after `poll_idle`")
            };
            let left = &idle.buf[idle.pos..];
            if !left.is_empty() || dst.is_empty() || completed {
                let len = left.len().min(dst.len());
                dst[..len].copy_from_slice(&left[..len]);
                idle.pos += len;
                return Poll::Ready(Ok(len));
            }
            let len = dst.len().min(MAX_BUF);
            let idle = self.take_idle();
            self.start(idle, move |idle| read_into(idle, len))?;
        }
    }
}

/// Reads at most `len` bytes into the idle stream's buffer (none at the
/// end of input).
fn read_into<T: Read>(idle: &mut Idle<T>, len: usize) -> io::Result<()> {
    idle.buf.resize(len, 0);
    idle.pos = 0;
    let read = loop {
        match idle.inner.read(&mut idle.buf) {
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            read => break read,
        }
    };
    idle.buf.truncate(*read.as_ref().unwrap_or(&0));
    read.map(drop)
}

impl<T: Write + Send + 'static> Blocking<T> {
    /// Spends a unit of the task's cooperative budget per write
    /// (`task/coop.rs`).
    fn poll_write(&mut self, cx: &mut Context<'_>, src: &[u8]) -> Poll<io::Result<usize>> {
        crate::task::coop::budgeted(cx, |cx| self.poll_write_buffered(cx, src))
    }

    fn poll_write_buffered(&mut self, cx: &mut Context<'_>, src: &[u8]) -> Poll<io::Result<usize>> {
        ready!(self.poll_idle(cx))?;
        if src.is_empty() {
            return Poll::Ready(Ok(0));
        }
        let mut idle = self.take_idle();
        let len = src.len().min(MAX_BUF);
        idle.buf.clear();
        idle.buf.extend_from_slice(&src[..len]);
        self.start(idle, |idle| idle.inner.write_all(&idle.buf))?;
        self.need_flush = true;
        Poll::Ready(Ok(len))
    }

    fn poll_flush(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        loop {
            ready!(self.poll_idle(cx))?;
            if !self.need_flush {
                return Poll::Ready(Ok(()));
            }
            self.need_flush = false;
            let idle = self.take_idle();
            self.start(idle, |idle| idle.inner.flush())?;
        }
    }
}

fn lost() -> io::Error {
    io::Error::other(
        "a standard stream's operation on the blocking pool did not complete \
         (the runtime is shutting down)",
    )
}

impl<T> fmt::Debug for Blocking<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = match self.state {
            State::Idle(_) => "idle",
            State::Busy(_) => "busy",
            State::Lost => "lost",
        };
        f.debug_struct("Blocking").field("state", &state).finish()
    }
}

/// The process's standard input, read on the blocking pool (see
/// [`stdin`]).
#[derive(Debug)]
pub struct Stdin(Blocking<io::Stdin>);

/// The process's standard output, written on the blocking pool (see
/// [`stdout`]).
#[derive(Debug)]
pub struct Stdout(Blocking<io::Stdout>);

/// The process's standard error, written on the blocking pool (see
/// [`stderr`]).
#[derive(Debug)]
pub struct Stderr(Blocking<io::Stderr>);

/// A handle to the process's standard input, for brigade tasks, in place of
/// `tokio::io::stdin` (which needs tokio's runtime).
///
/// It implements tokio's `AsyncRead` (feature `tokio-io`, on by default),
/// so `tokio::io::AsyncReadExt`, `BufReader` and tokio-util's codecs work
/// on it, and `futures_io::AsyncRead`. Each read runs on the blocking pool
/// ([`spawn_blocking`](crate::spawn_blocking)) and returns what one read of
/// `std::io::Stdin` returns, at most 64 KiB.
///
/// Polled outside a brigade runtime, it returns an error.
///
/// A read in flight cannot be cancelled: dropping the handle leaves its
/// blocking-pool thread waiting for input, and the runtime's shutdown waits
/// for that thread (use
/// [`Runtime::shutdown_timeout`](crate::Runtime::shutdown_timeout) when
/// stdin is a terminal). Interactive programs often read stdin on a thread
/// of their own instead.
///
/// # Examples
///
/// Counts the lines of the standard input:
///
/// ```no_run
/// use tokio::io::{AsyncBufReadExt, BufReader};
///
/// #[brigade::main]
/// async fn main() -> std::io::Result<()> {
///     let mut lines = BufReader::new(brigade::io::stdin()).lines();
///     let mut count = 0;
///     while lines.next_line().await?.is_some() {
///         count += 1;
///     }
///     println!("{count} lines");
///     Ok(())
/// }
/// ```
pub fn stdin() -> Stdin {
    Stdin(Blocking::new(io::stdin()))
}

/// A handle to the process's standard output, for brigade tasks, in place
/// of `tokio::io::stdout` (which needs tokio's runtime).
///
/// It implements tokio's `AsyncWrite` (feature `tokio-io`, on by default)
/// and `futures_io::AsyncWrite`. Each write runs on the blocking pool
/// ([`spawn_blocking`](crate::spawn_blocking)), one at a time: a write
/// copies the bytes (at most 64 KiB at a time) and returns at once, the
/// next operation waits for it to complete and reports its error. So
/// **flush before you rely on the output** (`AsyncWriteExt::flush`, or
/// `shutdown`): a flush waits for the last write and flushes std's stdout,
/// which is line-buffered. Writes from several handles, or from `println!`
/// at the same time, may interleave.
///
/// Polled outside a brigade runtime, it returns an error.
///
/// # Examples
///
/// ```
/// use tokio::io::AsyncWriteExt;
///
/// #[brigade::main]
/// async fn main() -> std::io::Result<()> {
///     let mut out = brigade::io::stdout();
///     out.write_all(b"hello from a brigade task\n").await?;
///     out.flush().await?;
///     Ok(())
/// }
/// ```
pub fn stdout() -> Stdout {
    Stdout(Blocking::new(io::stdout()))
}

/// A handle to the process's standard error, for brigade tasks, in place of
/// `tokio::io::stderr`. Written as [`stdout`] is (on the blocking pool,
/// one write at a time; flush before you rely on the output).
///
/// # Examples
///
/// ```
/// use tokio::io::AsyncWriteExt;
///
/// #[brigade::main]
/// async fn main() -> std::io::Result<()> {
///     let mut err = brigade::io::stderr();
///     err.write_all(b"a warning\n").await?;
///     err.flush().await?;
///     Ok(())
/// }
/// ```
pub fn stderr() -> Stderr {
    Stderr(Blocking::new(io::stderr()))
}

impl futures_io::AsyncRead for Stdin {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        self.get_mut().0.poll_read(cx, buf)
    }
}

/// `futures_io::AsyncWrite` and, with `tokio-io`, tokio's `AsyncWrite` for
/// an output stream.
macro_rules! impl_write {
    ($ty:ty) => {
        impl futures_io::AsyncWrite for $ty {
            fn poll_write(
                self: Pin<&mut Self>,
                cx: &mut Context<'_>,
                buf: &[u8],
            ) -> Poll<io::Result<usize>> {
                self.get_mut().0.poll_write(cx, buf)
            }

            fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
                self.get_mut().0.poll_flush(cx)
            }

            fn poll_close(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
                self.get_mut().0.poll_flush(cx)
            }
        }

        #[cfg(feature = "tokio-io")]
        impl tokio::io::AsyncWrite for $ty {
            fn poll_write(
                self: Pin<&mut Self>,
                cx: &mut Context<'_>,
                buf: &[u8],
            ) -> Poll<io::Result<usize>> {
                self.get_mut().0.poll_write(cx, buf)
            }

            fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
                self.get_mut().0.poll_flush(cx)
            }

            fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
                self.get_mut().0.poll_flush(cx)
            }
        }
    };
}

impl_write!(Stdout);
impl_write!(Stderr);

#[cfg(feature = "tokio-io")]
impl tokio::io::AsyncRead for Stdin {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let read = ready!(self.get_mut().0.poll_read(cx, buf.initialize_unfilled()))?;
        buf.advance(read);
        Poll::Ready(Ok(()))
    }
}
