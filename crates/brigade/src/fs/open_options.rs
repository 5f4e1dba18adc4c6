//! [`OpenOptions`]: how to open a [`File`], as std's and tokio's.

use std::io;
use std::path::Path;

use super::{File, asyncify};

/// Options for opening a file, in place of `tokio::fs::OpenOptions`: std's
/// [`std::fs::OpenOptions`] (which it wraps), whose
/// [`open`](Self::open) runs on the blocking pool.
///
/// # Examples
///
/// ```
/// use tokio::io::AsyncWriteExt;
///
/// let path = std::env::temp_dir().join(format!("brigade-fs-options-{}", std::process::id()));
/// let rt = brigade::Runtime::new()?;
/// rt.block_on(async {
///     brigade::fs::write(&path, "one\n").await?;
///     let mut log = brigade::fs::OpenOptions::new().append(true).open(&path).await?;
///     log.write_all(b"two\n").await?;
///     log.flush().await?;
///     assert_eq!(brigade::fs::read_to_string(&path).await?, "one\ntwo\n");
///
///     let again = brigade::fs::OpenOptions::new().write(true).create_new(true).open(&path).await;
///     assert_eq!(again.unwrap_err().kind(), std::io::ErrorKind::AlreadyExists);
///     brigade::fs::remove_file(&path).await
/// })?;
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct OpenOptions(std::fs::OpenOptions);

impl OpenOptions {
    /// Every option off: set at least one of `read`, `write` or `append`.
    pub fn new() -> OpenOptions {
        OpenOptions(std::fs::OpenOptions::new())
    }

    /// Open for reading.
    pub fn read(&mut self, read: bool) -> &mut OpenOptions {
        self.0.read(read);
        self
    }

    /// Open for writing (at the start of the file, unless `append`).
    pub fn write(&mut self, write: bool) -> &mut OpenOptions {
        self.0.write(write);
        self
    }

    /// Open for writing, every write at the end of the file.
    pub fn append(&mut self, append: bool) -> &mut OpenOptions {
        self.0.append(append);
        self
    }

    /// Truncate the file to length 0 (needs `write`).
    pub fn truncate(&mut self, truncate: bool) -> &mut OpenOptions {
        self.0.truncate(truncate);
        self
    }

    /// Create the file if it is missing (needs `write` or `append`).
    pub fn create(&mut self, create: bool) -> &mut OpenOptions {
        self.0.create(create);
        self
    }

    /// Create the file, failing with `AlreadyExists` if it exists (checked
    /// and created in one step; `create` and `truncate` are then ignored).
    pub fn create_new(&mut self, create_new: bool) -> &mut OpenOptions {
        self.0.create_new(create_new);
        self
    }

    /// The permission bits of a created file, before the umask (`0o666`
    /// by default; [`std::os::unix::fs::OpenOptionsExt::mode`]). Unix only.
    #[cfg(unix)]
    #[cfg_attr(docsrs, doc(cfg(unix)))]
    pub fn mode(&mut self, mode: u32) -> &mut OpenOptions {
        std::os::unix::fs::OpenOptionsExt::mode(&mut self.0, mode);
        self
    }

    /// Extra `open(2)` flags, such as `libc::O_NOFOLLOW`; the access mode
    /// bits are ignored ([`std::os::unix::fs::OpenOptionsExt::custom_flags`]).
    /// Unix only.
    #[cfg(unix)]
    #[cfg_attr(docsrs, doc(cfg(unix)))]
    pub fn custom_flags(&mut self, flags: i32) -> &mut OpenOptions {
        std::os::unix::fs::OpenOptionsExt::custom_flags(&mut self.0, flags);
        self
    }

    /// Opens `path` with these options, on the blocking pool.
    ///
    /// # Errors
    /// std's: `NotFound` (no such file, and no `create`), `AlreadyExists`
    /// (`create_new`), `PermissionDenied`, `InvalidInput` (no access mode,
    /// or `truncate` without `write`), `IsADirectory` (a directory opened
    /// for writing), ...
    pub async fn open(&self, path: impl AsRef<Path>) -> io::Result<File> {
        let options = self.0.clone();
        let path = path.as_ref().to_owned();
        let std = asyncify("brigade::fs::OpenOptions::open", move || options.open(path)).await?;
        Ok(File::from_std(std))
    }
}

impl Default for OpenOptions {
    fn default() -> OpenOptions {
        OpenOptions::new()
    }
}

impl From<std::fs::OpenOptions> for OpenOptions {
    fn from(options: std::fs::OpenOptions) -> OpenOptions {
        OpenOptions(options)
    }
}
