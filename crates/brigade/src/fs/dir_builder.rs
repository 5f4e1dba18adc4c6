//! [`DirBuilder`]: how to create a directory, as std's and tokio's.

use std::io;
use std::path::Path;

use super::asyncify;

/// Creates directories with options, in place of `tokio::fs::DirBuilder`:
/// [`std::fs::DirBuilder`]'s options, its [`create`](Self::create) on the
/// blocking pool.
///
/// # Examples
///
/// ```
/// let dir = std::env::temp_dir().join(format!("brigade-fs-builder-{}", std::process::id()));
/// let rt = brigade::Runtime::new()?;
/// rt.block_on(async {
///     brigade::fs::DirBuilder::new()
///         .recursive(true)
///         .create(dir.join("a/b"))
///         .await?;
///     assert!(brigade::fs::metadata(dir.join("a/b")).await?.is_dir());
///     brigade::fs::remove_dir_all(&dir).await
/// })?;
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Debug, Default)]
pub struct DirBuilder {
    recursive: bool,
    #[cfg(unix)]
    mode: Option<u32>,
}

impl DirBuilder {
    /// Creates one directory, whose parent must exist, with the default
    /// permissions.
    pub fn new() -> DirBuilder {
        DirBuilder::default()
    }

    /// Also create every missing parent; a directory that exists is then
    /// no error.
    pub fn recursive(&mut self, recursive: bool) -> &mut DirBuilder {
        self.recursive = recursive;
        self
    }

    /// The permission bits of the created directories, before the umask
    /// (`0o777` by default; [`std::os::unix::fs::DirBuilderExt::mode`]).
    /// Unix only.
    #[cfg(unix)]
    #[cfg_attr(docsrs, doc(cfg(unix)))]
    pub fn mode(&mut self, mode: u32) -> &mut DirBuilder {
        self.mode = Some(mode);
        self
    }

    /// Creates `path` with these options, on the blocking pool
    /// ([`std::fs::DirBuilder::create`]).
    pub async fn create(&self, path: impl AsRef<Path>) -> io::Result<()> {
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(self.recursive);
        #[cfg(unix)]
        if let Some(mode) = self.mode {
            std::os::unix::fs::DirBuilderExt::mode(&mut builder, mode);
        }
        let path = path.as_ref().to_owned();
        asyncify("brigade::fs::DirBuilder::create", move || {
            builder.create(path)
        })
        .await
    }
}
