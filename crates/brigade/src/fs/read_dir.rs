//! [`read_dir`], [`ReadDir`] and [`DirEntry`]: a directory's entries, read
//! on the blocking pool a chunk at a time.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::fs::{FileType, Metadata};
use std::future::{Future, poll_fn};
use std::io;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};

use super::{AtShutdown, asyncify, lost};
use crate::task::JoinHandle;
use crate::task::coop::{budgeted, with_unconstrained};

/// Entries read per trip to the blocking pool (tokio's number).
const CHUNK_SIZE: usize = 32;

/// Opens the directory `path` and returns its entries as a [`ReadDir`]
/// ([`std::fs::read_dir`]). The first entries are read in the same
/// blocking call; `.` and `..` are not listed, and the order is the file
/// system's.
///
/// # Errors
/// `NotFound`, `NotADirectory`, `PermissionDenied`, ... as
/// [`std::fs::read_dir`]; an entry that cannot be read is an error from
/// [`ReadDir::next_entry`].
///
/// # Examples
///
/// ```
/// let dir = std::env::temp_dir().join(format!("brigade-fs-read-dir-{}", std::process::id()));
/// let rt = brigade::Runtime::new()?;
/// rt.block_on(async {
///     brigade::fs::create_dir_all(&dir).await?;
///     brigade::fs::write(dir.join("a.txt"), "a").await?;
///     brigade::fs::write(dir.join("b.txt"), "bb").await?;
///     let mut names = Vec::new();
///     let mut entries = brigade::fs::read_dir(&dir).await?;
///     while let Some(entry) = entries.next_entry().await? {
///         assert!(entry.file_type().await?.is_file());
///         names.push(entry.file_name());
///     }
///     names.sort();
///     assert_eq!(names, ["a.txt", "b.txt"]);
///     brigade::fs::remove_dir_all(&dir).await
/// })?;
/// # Ok::<(), std::io::Error>(())
/// ```
pub async fn read_dir(path: impl AsRef<Path>) -> io::Result<ReadDir> {
    let path = path.as_ref().to_owned();
    let chunk = asyncify("brigade::fs::read_dir", move || {
        let mut chunk = Chunk {
            entries: VecDeque::with_capacity(CHUNK_SIZE),
            std: std::fs::read_dir(path)?,
            done: false,
        };
        chunk.fill();
        Ok(chunk)
    })
    .await?;
    Ok(ReadDir {
        state: State::Idle(Some(chunk)),
    })
}

/// A directory's entries, from [`read_dir`], in place of
/// `tokio::fs::ReadDir`: [`next_entry`](Self::next_entry) hands them out,
/// reading 32 more on the blocking pool whenever those
/// read are out.
///
/// ## Protocol
/// `Idle` holds the std iterator and the entries read; `Busy` lent them
/// to a closure that reads the next chunk; `Idle(None)` means that closure
/// never came back (the runtime shut down): an error, then the end.
#[derive(Debug)]
pub struct ReadDir {
    state: State,
}

#[derive(Debug)]
enum State {
    Idle(Option<Chunk>),
    Busy(JoinHandle<Chunk>),
}

#[derive(Debug)]
struct Chunk {
    entries: VecDeque<io::Result<DirEntry>>,
    std: std::fs::ReadDir,
    /// The std iterator has ended.
    done: bool,
}

impl Chunk {
    /// Reads up to [`CHUNK_SIZE`] entries (blocks).
    fn fill(&mut self) {
        while self.entries.len() < CHUNK_SIZE {
            let Some(entry) = self.std.next() else {
                self.done = true;
                return;
            };
            self.entries.push_back(entry.map(DirEntry::new));
        }
    }
}

impl ReadDir {
    /// The next entry, or `None` once every entry was handed out.
    ///
    /// Cancel safe: an entry is never lost by dropping this future.
    pub async fn next_entry(&mut self) -> io::Result<Option<DirEntry>> {
        poll_fn(|cx| self.poll_next_entry(cx)).await
    }

    /// Polls for the next entry (see [`next_entry`](Self::next_entry)):
    /// `Pending` while a chunk is being read, then the waker in `cx` is
    /// woken. Spends a unit of the task's cooperative budget per entry.
    pub fn poll_next_entry(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<Option<DirEntry>>> {
        budgeted(cx, |cx| {
            loop {
                match &mut self.state {
                    State::Idle(None) => return Poll::Ready(Ok(None)),
                    State::Idle(Some(chunk)) => {
                        if let Some(entry) = chunk.entries.pop_front() {
                            return Poll::Ready(entry.map(Some));
                        }
                        if chunk.done {
                            return Poll::Ready(Ok(None));
                        }
                        let Some(mut chunk) = self.take_chunk() else {
                            unreachable!("the state holds a chunk")
                        };
                        let handle = super::spawn_blocking(
                            "brigade::fs::ReadDir",
                            AtShutdown::Dropped,
                            move || {
                                chunk.fill();
                                chunk
                            },
                        );
                        self.state = State::Busy(handle);
                    }
                    State::Busy(handle) => {
                        let read = ready!(with_unconstrained(|| Pin::new(handle).poll(cx)));
                        match read {
                            Ok(chunk) => self.state = State::Idle(Some(chunk)),
                            Err(_) => {
                                self.state = State::Idle(None);
                                return Poll::Ready(Err(lost()));
                            }
                        }
                    }
                }
            }
        })
    }

    fn take_chunk(&mut self) -> Option<Chunk> {
        match std::mem::replace(&mut self.state, State::Idle(None)) {
            State::Idle(chunk) => chunk,
            State::Busy(_) => None,
        }
    }
}

/// An entry of a directory, from [`ReadDir`], in place of
/// `tokio::fs::DirEntry`: its name and path at once; its type at once
/// too where the directory listing gave it (most file systems on Linux),
/// else on the blocking pool, as its metadata.
#[derive(Debug)]
pub struct DirEntry {
    std: Arc<std::fs::DirEntry>,
    /// Read with the entry: `readdir(3)` tells most types without a
    /// `stat`.
    file_type: Option<FileType>,
}

impl DirEntry {
    fn new(std: std::fs::DirEntry) -> DirEntry {
        DirEntry {
            file_type: std.file_type().ok(),
            std: Arc::new(std),
        }
    }

    /// The directory's path joined with the entry's name.
    pub fn path(&self) -> PathBuf {
        self.std.path()
    }

    /// The entry's name, without its directory.
    pub fn file_name(&self) -> OsString {
        self.std.file_name()
    }

    /// The entry's inode number, as the directory listing gave it. Unix
    /// only.
    #[cfg(unix)]
    #[cfg_attr(docsrs, doc(cfg(unix)))]
    pub fn ino(&self) -> u64 {
        std::os::unix::fs::DirEntryExt::ino(&*self.std)
    }

    /// The entry's metadata, not following a symbolic link
    /// ([`std::fs::DirEntry::metadata`]).
    pub async fn metadata(&self) -> io::Result<Metadata> {
        let std = self.std.clone();
        asyncify("brigade::fs::DirEntry::metadata", move || std.metadata()).await
    }

    /// The entry's type, not following a symbolic link
    /// ([`std::fs::DirEntry::file_type`]).
    pub async fn file_type(&self) -> io::Result<FileType> {
        if let Some(file_type) = self.file_type {
            return Ok(file_type);
        }
        let std = self.std.clone();
        asyncify("brigade::fs::DirEntry::file_type", move || std.file_type()).await
    }
}
