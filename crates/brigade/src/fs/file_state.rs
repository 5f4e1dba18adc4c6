//! A `File`'s state machine: at most one blocking operation in flight,
//! and the buffer it reads into or writes from.
//!
//! ## Protocol
//! The state is `Idle` (it holds the buffer) or `Busy` (the buffer went
//! to a blocking-pool closure, whose `JoinHandle` gives it back with the
//! operation's outcome). Every operation first *settles* a `Busy` state:
//! it waits for the closure and takes the outcome. A closure that never
//! ran (the runtime shut down first, and its pool dropped it) is an error
//! for the operation that settles it, once; the file is idle again, with
//! an empty buffer, and usable from another runtime. A write's closure is
//! never dropped that way once queued (`AtShutdown::Run`: the pool runs it
//! at shutdown), since its caller was told the bytes were taken; only one
//! started after the shutdown began is refused, and reported so.
//! - A read is answered from the buffer's unread bytes if it holds some;
//!   else a closure reads once, at most `min(len, max_buf_size)` bytes,
//!   into the buffer, and the read is answered from it. The file's cursor
//!   is then ahead of what was handed out by the unread bytes.
//! - A write copies at most `max_buf_size` bytes into the buffer, starts
//!   a closure that writes them all and returns `Ready(n)` at once, as
//!   tokio's does. Unread bytes from a read are given up first: the
//!   closure seeks back over them, so the write lands where the reader
//!   stopped.
//! - A write's outcome is settled by the next operation. Its error is
//!   returned by the next write, flush or shutdown (and `sync_all`,
//!   `sync_data`, `set_len`), which settle it themselves or find it in
//!   `write_error`, where a read or seek that settled it left it: an error
//!   is never lost, except when the file is dropped with it unreported.
//! - A seek (`start_seek`, `poll_complete`) needs an idle file; the unread
//!   bytes count in a `SeekFrom::Current` offset and are given up.

use std::cmp;
use std::fs::File as StdFile;
use std::future::Future;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};

use super::{AtShutdown, lost};
use crate::task::JoinHandle;
use crate::task::coop::{budgeted, with_unconstrained};

/// The most bytes one blocking read or write moves by default (tokio's).
pub(super) const DEFAULT_MAX_BUF_SIZE: usize = 2 * 1024 * 1024;

pub(super) struct Inner {
    state: State,
    /// A background write's error, settled by a read or seek, not yet
    /// returned.
    write_error: Option<io::Error>,
    /// Where the last seek put the cursor: what `poll_complete` returns
    /// when no seek is in flight (as tokio's does).
    pos: u64,
    /// A seek started by `futures_io::AsyncSeek::poll_seek` is in flight.
    seek_in_flight: bool,
}

enum State {
    Idle(Buf),
    Busy(JoinHandle<(Operation, Buf)>),
}

/// What a blocking-pool closure did.
enum Operation {
    Read(io::Result<()>),
    Write(io::Result<()>),
    Seek(io::Result<u64>),
    SetLen(io::Result<()>),
}

/// The bytes of the last read, or those of a write on their way.
///
/// `bytes` only grows (zeroed once, when it does): `bytes[pos..end]` is
/// the part in use.
#[derive(Default)]
struct Buf {
    bytes: Vec<u8>,
    pos: usize,
    end: usize,
}

impl Buf {
    fn unread(&self) -> &[u8] {
        &self.bytes[self.pos..self.end]
    }

    /// Hands the unread bytes to `put`, which takes some of them.
    fn hand_out(&mut self, put: &mut impl FnMut(&[u8]) -> usize) -> usize {
        let taken = put(self.unread());
        self.pos += taken;
        taken
    }

    /// Gives up the unread bytes: how far the file's cursor is ahead of
    /// the reader (zero or negative).
    fn discard_unread(&mut self) -> i64 {
        let ahead = self.unread().len();
        self.pos = 0;
        self.end = 0;
        -i64::try_from(ahead).expect("a buffer of at most isize::MAX bytes")
    }

    fn make_room(&mut self, len: usize) {
        if self.bytes.len() < len {
            self.bytes.resize(len, 0);
        }
        self.pos = 0;
        self.end = 0;
    }

    /// Takes at most `max` bytes of `src`; returns how many.
    fn fill_from(&mut self, src: &[u8], max: usize) -> usize {
        let len = cmp::min(src.len(), max);
        self.make_room(len);
        self.bytes[..len].copy_from_slice(&src[..len]);
        self.end = len;
        len
    }

    /// One read of at most `len` bytes (retried if interrupted).
    fn read_from(&mut self, mut file: &StdFile, len: usize) -> io::Result<()> {
        self.make_room(len);
        let read = loop {
            match file.read(&mut self.bytes[..len]) {
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                read => break read?,
            }
        };
        self.end = read;
        Ok(())
    }

    /// Writes every byte in use, after seeking by `seek` if given.
    fn write_to(&mut self, mut file: &StdFile, seek: Option<SeekFrom>) -> io::Result<()> {
        let written = match seek {
            Some(seek) => file.seek(seek).map(drop),
            None => Ok(()),
        }
        .and_then(|()| file.write_all(self.unread()));
        self.pos = 0;
        self.end = 0;
        written
    }
}

impl Inner {
    pub(super) fn new() -> Self {
        Inner {
            state: State::Idle(Buf::default()),
            write_error: None,
            pos: 0,
            seek_in_flight: false,
        }
    }

    /// Waits for the operation in flight, if any, and returns its outcome;
    /// the file is idle after `Ready(Ok(_))`.
    fn poll_settle(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<Option<Operation>>> {
        let outcome = match &mut self.state {
            State::Idle(_) => return Poll::Ready(Ok(None)),
            // Unconstrained: the read or write this waits for spends the
            // unit (`budgeted` below), not the handle too.
            State::Busy(handle) => ready!(with_unconstrained(|| Pin::new(handle).poll(cx))),
        };
        Poll::Ready(match outcome {
            Ok((operation, buf)) => {
                self.state = State::Idle(buf);
                if let Operation::Seek(Ok(pos)) = operation {
                    self.pos = pos;
                }
                Ok(Some(operation))
            }
            Err(_) => {
                self.state = State::Idle(Buf::default());
                Err(lost())
            }
        })
    }

    /// Settles the operation in flight, keeping a write's error for the
    /// next write or flush, and returns the rest of its outcome.
    fn poll_settle_keeping_errors(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<Option<Operation>>> {
        let settled = ready!(self.poll_settle(cx))?;
        if let Some(Operation::Write(Err(error))) = settled {
            // Only one write is in flight at a time, and the next write
            // returns the kept error before it starts another.
            self.write_error.get_or_insert(error);
            return Poll::Ready(Ok(None));
        }
        Poll::Ready(Ok(settled))
    }

    fn buf(&mut self) -> &mut Buf {
        match &mut self.state {
            State::Idle(buf) => buf,
            _ => unreachable!("the file is idle once settled"),
        }
    }

    /// Starts `op` on the blocking pool with the (idle) file's buffer;
    /// `at_shutdown` says whether a shutdown that finds it queued runs it.
    fn start(
        &mut self,
        std: &Arc<StdFile>,
        at_shutdown: AtShutdown,
        op: impl FnOnce(&StdFile, &mut Buf) -> Operation + Send + 'static,
    ) {
        // Panics outside a runtime before the buffer is taken.
        let runtime = super::current("brigade::fs::File");
        let idle = std::mem::replace(&mut self.state, State::Idle(Buf::default()));
        let State::Idle(mut buf) = idle else {
            unreachable!("an operation starts on an idle file")
        };
        let std = std.clone();
        let op = move || {
            let operation = op(&std, &mut buf);
            (operation, buf)
        };
        self.state = State::Busy(match at_shutdown {
            AtShutdown::Dropped => runtime.spawn_blocking(op),
            AtShutdown::Run => runtime.spawn_mandatory_blocking(op),
        });
    }

    /// Reads at most `want` bytes: hands them to `put`, which copies
    /// what it takes and returns how many (so a `ReadBuf` is filled
    /// without zeroing it first). Spends a unit of the task's cooperative
    /// budget per read, as every brigade resource does (`task/coop.rs`).
    pub(super) fn poll_read(
        &mut self,
        cx: &mut Context<'_>,
        std: &Arc<StdFile>,
        max_buf_size: usize,
        want: usize,
        mut put: impl FnMut(&[u8]) -> usize,
    ) -> Poll<io::Result<usize>> {
        budgeted(cx, |cx| {
            loop {
                match ready!(self.poll_settle_keeping_errors(cx))? {
                    Some(Operation::Read(Err(error))) => return Poll::Ready(Err(error)),
                    // A read that just completed answers, even with nothing:
                    // that is the end of the file.
                    Some(Operation::Read(Ok(()))) => {
                        return Poll::Ready(Ok(self.buf().hand_out(&mut put)));
                    }
                    _ => {}
                }
                let buf = self.buf();
                if !buf.unread().is_empty() || want == 0 {
                    return Poll::Ready(Ok(buf.hand_out(&mut put)));
                }
                let len = cmp::min(want, max_buf_size.max(1));
                self.start(std, AtShutdown::Dropped, move |std, buf| {
                    Operation::Read(buf.read_from(std, len))
                });
            }
        })
    }

    /// Spends a unit of the budget per write (see [`poll_read`](Self::poll_read)).
    pub(super) fn poll_write(
        &mut self,
        cx: &mut Context<'_>,
        std: &Arc<StdFile>,
        max_buf_size: usize,
        src: &[u8],
    ) -> Poll<io::Result<usize>> {
        budgeted(cx, |cx| {
            if let Some(error) = self.write_error.take() {
                return Poll::Ready(Err(error));
            }
            if let Some(Operation::Write(Err(error))) = ready!(self.poll_settle(cx))? {
                return Poll::Ready(Err(error));
            }
            if src.is_empty() {
                return Poll::Ready(Ok(0));
            }
            let buf = self.buf();
            let ahead = buf.discard_unread();
            let seek = (ahead != 0).then_some(SeekFrom::Current(ahead));
            let len = buf.fill_from(src, max_buf_size.max(1));
            // Run even if the runtime shuts down first: `Ready(len)` told
            // the caller the bytes were taken (`AtShutdown::Run`).
            self.start(std, AtShutdown::Run, move |std, buf| {
                Operation::Write(buf.write_to(std, seek))
            });
            Poll::Ready(Ok(len))
        })
    }

    /// Waits for the write in flight and returns its error, or the one a
    /// read or seek kept.
    pub(super) fn poll_flush(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if let Some(error) = self.write_error.take() {
            return Poll::Ready(Err(error));
        }
        Poll::Ready(match ready!(self.poll_settle(cx))? {
            Some(Operation::Write(Err(error))) => Err(error),
            _ => Ok(()),
        })
    }

    /// tokio's `AsyncSeek::start_seek`: needs an idle file.
    pub(super) fn start_seek(&mut self, std: &Arc<StdFile>, mut pos: SeekFrom) -> io::Result<()> {
        let buf = match &mut self.state {
            State::Idle(buf) => buf,
            State::Busy(_) => {
                return Err(io::Error::other(
                    "another file operation is in flight: call poll_complete before start_seek",
                ));
            }
        };
        let ahead = buf.discard_unread();
        if let SeekFrom::Current(offset) = &mut pos {
            *offset = offset.checked_add(ahead).ok_or_else(|| {
                io::Error::new(io::ErrorKind::InvalidInput, "seek offset overflows an i64")
            })?;
        }
        self.start(std, AtShutdown::Dropped, move |mut std, _| {
            Operation::Seek(std.seek(pos))
        });
        Ok(())
    }

    /// tokio's `AsyncSeek::poll_complete`: the outcome of the seek in
    /// flight, or where the last seek left the cursor.
    pub(super) fn poll_complete(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<u64>> {
        budgeted(cx, |cx| {
            if let Some(Operation::Seek(result)) = ready!(self.poll_settle_keeping_errors(cx))? {
                self.seek_in_flight = false;
                return Poll::Ready(result);
            }
            Poll::Ready(Ok(self.pos))
        })
    }

    /// `futures_io::AsyncSeek::poll_seek`: settles, starts the seek, and
    /// waits for it, across polls.
    pub(super) fn poll_seek(
        &mut self,
        cx: &mut Context<'_>,
        std: &Arc<StdFile>,
        pos: SeekFrom,
    ) -> Poll<io::Result<u64>> {
        if !self.seek_in_flight {
            ready!(self.poll_settle_keeping_errors(cx))?;
            self.start_seek(std, pos)?;
            self.seek_in_flight = true;
        }
        self.poll_complete(cx)
    }

    /// Starts `set_len(size)` on an idle file (the caller flushed), after
    /// seeking back over unread bytes.
    pub(super) fn start_set_len(&mut self, std: &Arc<StdFile>, size: u64) {
        let ahead = self.buf().discard_unread();
        self.start(std, AtShutdown::Dropped, move |mut std, _| {
            let seek = match ahead {
                0 => Ok(0),
                ahead => std.seek(SeekFrom::Current(ahead)),
            };
            Operation::SetLen(seek.and_then(|_| std.set_len(size)))
        });
    }

    /// The outcome of the `set_len` started by [`start_set_len`](Self::start_set_len).
    pub(super) fn poll_set_len(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(match ready!(self.poll_settle(cx))? {
            Some(Operation::SetLen(result)) => result,
            _ => Ok(()),
        })
    }

    /// Waits until nothing is in flight, keeping a write's error (for
    /// `into_std`, which drops it with the file).
    pub(super) fn poll_idle(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        let _settled = ready!(self.poll_settle_keeping_errors(cx));
        Poll::Ready(())
    }

    /// Whether nothing is in flight and no error waits to be returned:
    /// the std file can be handed out as it is (`try_into_std`).
    pub(super) fn is_settled(&self) -> bool {
        matches!(self.state, State::Idle(_)) && self.write_error.is_none()
    }

    /// Gives up the unread bytes, seeking the std file back over them so
    /// its cursor is where the reader stopped (for `into_std`). The file
    /// is settled.
    pub(super) fn rewind_unread(&mut self, mut std: &StdFile) -> io::Result<()> {
        let State::Idle(buf) = &mut self.state else {
            unreachable!("the file is settled")
        };
        match buf.discard_unread() {
            0 => Ok(()),
            ahead => std.seek(SeekFrom::Current(ahead)).map(drop),
        }
    }
}
