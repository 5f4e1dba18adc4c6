//! [`File`]: an open file, read and written on the blocking pool
//! (`file_state.rs` holds its state machine, `file_lock.rs` the lock of
//! its `&self` methods).

use std::fmt;
use std::fs::{File as StdFile, Metadata, Permissions};
use std::future::poll_fn;
use std::io::{self, SeekFrom};
use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use super::file_lock::FileLock;
use super::file_state::{DEFAULT_MAX_BUF_SIZE, Inner};
use super::{OpenOptions, asyncify};

/// An open file, in place of `tokio::fs::File`: read, written and sought
/// with tokio's `AsyncRead`/`AsyncWrite`/`AsyncSeek` (feature `tokio-io`,
/// on by default, so `AsyncReadExt`, `AsyncWriteExt`, `AsyncSeekExt` and
/// `BufReader` work) or `futures_io`'s.
///
/// Each operation runs on the runtime's blocking pool, one at a time, as
/// tokio's do. A read moves at most [`max_buf_size`](Self::max_buf_size)
/// bytes (2 MiB by default), or the caller's length if shorter, in one
/// blocking call, and keeps what the caller did not take for the next
/// reads. A write copies at most that many bytes and **returns at once**,
/// before the bytes reach the file; the next operation waits for it.
///
/// # Flush before you rely on a write
/// A write's error is returned by the next write, by
/// `AsyncWriteExt::flush` or `shutdown` (which wait
/// for the write in flight), or by [`sync_all`](Self::sync_all),
/// [`sync_data`](Self::sync_data) and [`set_len`](Self::set_len), which
/// flush first. A read or seek in between keeps it for them. **A file
/// dropped with a write in flight finishes that write in the background,
/// and its error is lost**, as with tokio: flush before dropping a file
/// whose writes matter. Flushing does not make the bytes durable: that is
/// what [`sync_all`](Self::sync_all) is for.
///
/// # Examples
///
/// ```
/// use std::io::SeekFrom;
/// use tokio::io::{AsyncReadExt, AsyncSeekExt, AsyncWriteExt};
///
/// let path = std::env::temp_dir().join(format!("brigade-fs-file-{}", std::process::id()));
/// let rt = brigade::Runtime::new()?;
/// rt.block_on(async {
///     let mut file = brigade::fs::File::options()
///         .read(true)
///         .write(true)
///         .create(true)
///         .truncate(true)
///         .open(&path)
///         .await?;
///     file.write_all(b"hello, file").await?;
///     file.flush().await?;
///     file.seek(SeekFrom::Start(7)).await?;
///     let mut end = String::new();
///     file.read_to_string(&mut end).await?;
///     assert_eq!(end, "file");
///     brigade::fs::remove_file(&path).await
/// })?;
/// # Ok::<(), std::io::Error>(())
/// ```
pub struct File {
    std: Arc<StdFile>,
    inner: FileLock<Inner>,
    max_buf_size: usize,
}

impl File {
    /// Opens the file at `path` for reading ([`std::fs::File::open`]).
    ///
    /// # Errors
    /// `NotFound` if there is no such file, and the other errors of
    /// [`OpenOptions::open`].
    pub async fn open(path: impl AsRef<Path>) -> io::Result<File> {
        let path = path.as_ref().to_owned();
        let std = asyncify("brigade::fs::File::open", move || StdFile::open(path)).await?;
        Ok(File::from_std(std))
    }

    /// Opens the file at `path` for writing, created if missing and
    /// truncated if not ([`std::fs::File::create`]).
    pub async fn create(path: impl AsRef<Path>) -> io::Result<File> {
        let path = path.as_ref().to_owned();
        let std = asyncify("brigade::fs::File::create", move || StdFile::create(path)).await?;
        Ok(File::from_std(std))
    }

    /// Creates a new file at `path`, opened for reading and writing;
    /// `AlreadyExists` if there is one already ([`std::fs::File::create_new`]).
    pub async fn create_new(path: impl AsRef<Path>) -> io::Result<File> {
        OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(path)
            .await
    }

    /// An [`OpenOptions`] with every option off, as
    /// [`OpenOptions::new`].
    pub fn options() -> OpenOptions {
        OpenOptions::new()
    }

    /// Wraps a std file (opening it may have blocked: do that on the
    /// blocking pool, or use [`open`](Self::open)). Needs no runtime; its
    /// operations do.
    pub fn from_std(std: StdFile) -> File {
        File {
            std: Arc::new(std),
            inner: FileLock::new(Inner::new()),
            max_buf_size: DEFAULT_MAX_BUF_SIZE,
        }
    }

    /// Waits for the operation in flight, then gives back the std file,
    /// its cursor where this file's reader or writer stopped. The
    /// in-flight write's error is dropped: `AsyncWriteExt::flush`
    /// first to see it.
    pub async fn into_std(mut self) -> StdFile {
        let inner = self.inner.get_mut();
        poll_fn(|cx| inner.poll_idle(cx)).await;
        let _ = inner.rewind_unread(&self.std);
        let mut std = self.std;
        loop {
            match Arc::try_unwrap(std) {
                Ok(file) => return file,
                // A cancelled `&self` call (`metadata`, ...) still holds the
                // file on the blocking pool: the same open file, through a
                // second descriptor, serves as well.
                Err(shared) => match shared.try_clone() {
                    Ok(file) => return file,
                    Err(_) => std = shared,
                },
            }
            crate::yield_now().await;
        }
    }

    /// Gives back the std file at once, if no operation is in flight and
    /// no write's error waits to be returned; else gives back `self`.
    pub fn try_into_std(mut self) -> Result<StdFile, Self> {
        if !self.inner.get_mut().is_settled() {
            return Err(self);
        }
        // An `lseek(2)`, which does not wait for the disk.
        let _ = self.inner.get_mut().rewind_unread(&self.std);
        match Arc::try_unwrap(self.std) {
            Ok(file) => Ok(file),
            Err(std) => Err(File {
                std,
                inner: FileLock::new(self.inner.into_inner()),
                max_buf_size: self.max_buf_size,
            }),
        }
    }

    /// Flushes (returning the error of a write in flight, see
    /// [above](Self#flush-before-you-rely-on-a-write)), then makes the
    /// file's data and metadata durable ([`std::fs::File::sync_all`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use tokio::io::AsyncWriteExt;
    ///
    /// let path = std::env::temp_dir().join(format!("brigade-fs-sync-{}", std::process::id()));
    /// let rt = brigade::Runtime::new()?;
    /// rt.block_on(async {
    ///     let mut file = brigade::fs::File::create(&path).await?;
    ///     file.write_all(b"durable").await?;
    ///     file.sync_all().await?;
    ///     brigade::fs::remove_file(&path).await
    /// })?;
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub async fn sync_all(&self) -> io::Result<()> {
        let _guard = self.flushed().await?;
        let std = self.std.clone();
        asyncify("brigade::fs::File::sync_all", move || std.sync_all()).await
    }

    /// As [`sync_all`](Self::sync_all), but the metadata may not be made
    /// durable ([`std::fs::File::sync_data`]).
    pub async fn sync_data(&self) -> io::Result<()> {
        let _guard = self.flushed().await?;
        let std = self.std.clone();
        asyncify("brigade::fs::File::sync_data", move || std.sync_data()).await
    }

    /// Flushes, then truncates or extends the file to `size` bytes (zeroes
    /// fill an extension); the cursor does not move
    /// ([`std::fs::File::set_len`]).
    ///
    /// # Errors
    /// A write's error (see [`sync_all`](Self::sync_all)); an error if the
    /// file is not open for writing.
    pub async fn set_len(&self, size: u64) -> io::Result<()> {
        let guard = self.flushed().await?;
        guard.with(|inner| inner.start_set_len(&self.std, size));
        poll_fn(|cx| guard.with(|inner| inner.poll_set_len(cx))).await
    }

    /// Takes the lock of the `&self` methods and flushes.
    async fn flushed(&self) -> io::Result<super::file_lock::FileGuard<'_, Inner>> {
        let guard = self.inner.acquire().await;
        poll_fn(|cx| guard.with(|inner| inner.poll_flush(cx))).await?;
        Ok(guard)
    }

    /// The file's metadata ([`std::fs::File::metadata`]).
    pub async fn metadata(&self) -> io::Result<Metadata> {
        let std = self.std.clone();
        asyncify("brigade::fs::File::metadata", move || std.metadata()).await
    }

    /// A second `File` for the same open file (a duplicated descriptor):
    /// reads, writes and seeks of either move the shared cursor
    /// ([`std::fs::File::try_clone`]).
    pub async fn try_clone(&self) -> io::Result<File> {
        let std = self.std.clone();
        let clone = asyncify("brigade::fs::File::try_clone", move || std.try_clone()).await?;
        Ok(File::from_std(clone))
    }

    /// Changes the file's permissions ([`std::fs::File::set_permissions`]).
    pub async fn set_permissions(&self, perm: Permissions) -> io::Result<()> {
        let std = self.std.clone();
        asyncify("brigade::fs::File::set_permissions", move || {
            std.set_permissions(perm)
        })
        .await
    }

    /// Sets the most bytes one blocking read or write moves (2 MiB by
    /// default): a larger write is taken in pieces of this size, a larger
    /// read reads this much.
    pub fn set_max_buf_size(&mut self, max_buf_size: usize) {
        self.max_buf_size = max_buf_size;
    }

    /// The most bytes one blocking read or write moves (see
    /// [`set_max_buf_size`](Self::set_max_buf_size)).
    pub fn max_buf_size(&self) -> usize {
        self.max_buf_size
    }

    fn poll_read_slice(&mut self, cx: &mut Context<'_>, dst: &mut [u8]) -> Poll<io::Result<usize>> {
        let want = dst.len();
        self.inner
            .get_mut()
            .poll_read(cx, &self.std, self.max_buf_size, want, |src| {
                let len = src.len().min(dst.len());
                dst[..len].copy_from_slice(&src[..len]);
                len
            })
    }

    fn poll_write_slice(&mut self, cx: &mut Context<'_>, src: &[u8]) -> Poll<io::Result<usize>> {
        self.inner
            .get_mut()
            .poll_write(cx, &self.std, self.max_buf_size, src)
    }

    fn poll_flush_inner(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.inner.get_mut().poll_flush(cx)
    }
}

impl From<StdFile> for File {
    fn from(std: StdFile) -> File {
        File::from_std(std)
    }
}

impl fmt::Debug for File {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("File").field("std", &self.std).finish()
    }
}

#[cfg(unix)]
impl std::os::fd::AsRawFd for File {
    fn as_raw_fd(&self) -> std::os::fd::RawFd {
        self.std.as_raw_fd()
    }
}

#[cfg(unix)]
impl std::os::fd::AsFd for File {
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.std.as_fd()
    }
}

#[cfg(unix)]
impl std::os::fd::FromRawFd for File {
    unsafe fn from_raw_fd(fd: std::os::fd::RawFd) -> File {
        // SAFETY: the caller of `from_raw_fd` promises that `fd` is an
        // open descriptor that it owns, which is what std's requires.
        File::from_std(unsafe { StdFile::from_raw_fd(fd) })
    }
}

impl futures_io::AsyncRead for File {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        self.get_mut().poll_read_slice(cx, buf)
    }
}

impl futures_io::AsyncWrite for File {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.get_mut().poll_write_slice(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.get_mut().poll_flush_inner(cx)
    }

    fn poll_close(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.get_mut().poll_flush_inner(cx)
    }
}

impl futures_io::AsyncSeek for File {
    fn poll_seek(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        pos: SeekFrom,
    ) -> Poll<io::Result<u64>> {
        let this = self.get_mut();
        this.inner.get_mut().poll_seek(cx, &this.std, pos)
    }
}

#[cfg(feature = "tokio-io")]
impl tokio::io::AsyncRead for File {
    /// Copies into the unfilled part without zeroing it first.
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let want = buf.remaining();
        let read = this
            .inner
            .get_mut()
            .poll_read(cx, &this.std, this.max_buf_size, want, |src| {
                let len = src.len().min(buf.remaining());
                buf.put_slice(&src[..len]);
                len
            });
        read.map_ok(drop)
    }
}

#[cfg(feature = "tokio-io")]
impl tokio::io::AsyncWrite for File {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.get_mut().poll_write_slice(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.get_mut().poll_flush_inner(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.get_mut().poll_flush_inner(cx)
    }
}

#[cfg(feature = "tokio-io")]
impl tokio::io::AsyncSeek for File {
    fn start_seek(self: Pin<&mut Self>, position: SeekFrom) -> io::Result<()> {
        let this = self.get_mut();
        this.inner.get_mut().start_seek(&this.std, position)
    }

    fn poll_complete(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<u64>> {
        self.get_mut().inner.get_mut().poll_complete(cx)
    }
}
