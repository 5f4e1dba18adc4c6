//! The free functions: each runs its `std::fs` namesake as one call on the
//! blocking pool ([`asyncify`]), taking owned copies of its arguments.

use std::fs::{Metadata, Permissions};
use std::io;
use std::path::{Path, PathBuf};

use super::{AtShutdown, asyncify, asyncify_as};

/// Reads the whole file at `path` into a vector, in one blocking call
/// ([`std::fs::read`], which sizes the vector from the file's length).
///
/// # Errors
/// `NotFound` if there is no such file, `PermissionDenied`, `IsADirectory`
/// and the other errors of [`std::fs::read`].
///
/// # Examples
///
/// ```
/// let path = std::env::temp_dir().join(format!("brigade-fs-read-{}", std::process::id()));
/// let rt = brigade::Runtime::new()?;
/// rt.block_on(async {
///     brigade::fs::write(&path, [1, 2, 3]).await?;
///     assert_eq!(brigade::fs::read(&path).await?, [1, 2, 3]);
///     brigade::fs::remove_file(&path).await
/// })?;
/// # Ok::<(), std::io::Error>(())
/// ```
pub async fn read(path: impl AsRef<Path>) -> io::Result<Vec<u8>> {
    let path = path.as_ref().to_owned();
    asyncify("brigade::fs::read", move || std::fs::read(path)).await
}

/// Reads the whole file at `path` into a string, in one blocking call
/// ([`std::fs::read_to_string`]).
///
/// # Errors
/// As [`read`], and `InvalidData` if the file is not UTF-8.
///
/// # Examples
///
/// ```
/// let path = std::env::temp_dir().join(format!("brigade-fs-string-{}", std::process::id()));
/// let rt = brigade::Runtime::new()?;
/// rt.block_on(async {
///     brigade::fs::write(&path, "text").await?;
///     assert_eq!(brigade::fs::read_to_string(&path).await?, "text");
///     brigade::fs::remove_file(&path).await
/// })?;
/// # Ok::<(), std::io::Error>(())
/// ```
pub async fn read_to_string(path: impl AsRef<Path>) -> io::Result<String> {
    let path = path.as_ref().to_owned();
    asyncify("brigade::fs::read_to_string", move || {
        std::fs::read_to_string(path)
    })
    .await
}

/// Writes `contents` to the file at `path`, created if missing and
/// truncated if not, in one blocking call ([`std::fs::write`]). The bytes
/// are copied first, so the future does not borrow them.
///
/// # Examples
///
/// ```
/// let path = std::env::temp_dir().join(format!("brigade-fs-write-{}", std::process::id()));
/// let rt = brigade::Runtime::new()?;
/// rt.block_on(async {
///     brigade::fs::write(&path, b"first").await?;
///     brigade::fs::write(&path, b"second").await?;
///     assert_eq!(brigade::fs::read(&path).await?, b"second");
///     brigade::fs::remove_file(&path).await
/// })?;
/// # Ok::<(), std::io::Error>(())
/// ```
pub async fn write(path: impl AsRef<Path>, contents: impl AsRef<[u8]>) -> io::Result<()> {
    let path = path.as_ref().to_owned();
    let contents = contents.as_ref().to_owned();
    // Run even if the runtime shuts down first: a task dropped at shutdown
    // must not leave a write that was queued undone (`AtShutdown::Run`).
    asyncify_as("brigade::fs::write", AtShutdown::Run, move || {
        std::fs::write(path, contents)
    })
    .await
}

/// Queries the metadata of `path`, following symbolic links
/// ([`std::fs::metadata`]).
pub async fn metadata(path: impl AsRef<Path>) -> io::Result<Metadata> {
    let path = path.as_ref().to_owned();
    asyncify("brigade::fs::metadata", move || std::fs::metadata(path)).await
}

/// Queries the metadata of `path` itself, without following a symbolic
/// link ([`std::fs::symlink_metadata`]).
pub async fn symlink_metadata(path: impl AsRef<Path>) -> io::Result<Metadata> {
    let path = path.as_ref().to_owned();
    asyncify("brigade::fs::symlink_metadata", move || {
        std::fs::symlink_metadata(path)
    })
    .await
}

/// Creates the directory `path`; its parent must exist
/// ([`std::fs::create_dir`]; `AlreadyExists` if `path` exists).
pub async fn create_dir(path: impl AsRef<Path>) -> io::Result<()> {
    let path = path.as_ref().to_owned();
    asyncify("brigade::fs::create_dir", move || std::fs::create_dir(path)).await
}

/// Creates the directory `path` and every missing parent
/// ([`std::fs::create_dir_all`]; a directory that exists is no error).
pub async fn create_dir_all(path: impl AsRef<Path>) -> io::Result<()> {
    let path = path.as_ref().to_owned();
    asyncify("brigade::fs::create_dir_all", move || {
        std::fs::create_dir_all(path)
    })
    .await
}

/// Removes the file (or symbolic link) `path` ([`std::fs::remove_file`]).
pub async fn remove_file(path: impl AsRef<Path>) -> io::Result<()> {
    let path = path.as_ref().to_owned();
    asyncify("brigade::fs::remove_file", move || {
        std::fs::remove_file(path)
    })
    .await
}

/// Removes the empty directory `path` ([`std::fs::remove_dir`]).
pub async fn remove_dir(path: impl AsRef<Path>) -> io::Result<()> {
    let path = path.as_ref().to_owned();
    asyncify("brigade::fs::remove_dir", move || std::fs::remove_dir(path)).await
}

/// Removes the directory `path` and everything in it, in one blocking
/// call ([`std::fs::remove_dir_all`]).
pub async fn remove_dir_all(path: impl AsRef<Path>) -> io::Result<()> {
    let path = path.as_ref().to_owned();
    asyncify("brigade::fs::remove_dir_all", move || {
        std::fs::remove_dir_all(path)
    })
    .await
}

/// Renames `from` to `to`, replacing `to` if it is a file
/// ([`std::fs::rename`]).
pub async fn rename(from: impl AsRef<Path>, to: impl AsRef<Path>) -> io::Result<()> {
    let (from, to) = (from.as_ref().to_owned(), to.as_ref().to_owned());
    asyncify("brigade::fs::rename", move || std::fs::rename(from, to)).await
}

/// Copies the contents and permissions of the file `from` to `to`, and
/// returns the number of bytes copied ([`std::fs::copy`]).
pub async fn copy(from: impl AsRef<Path>, to: impl AsRef<Path>) -> io::Result<u64> {
    let (from, to) = (from.as_ref().to_owned(), to.as_ref().to_owned());
    asyncify("brigade::fs::copy", move || std::fs::copy(from, to)).await
}

/// Makes `link` a hard link to the file `original`
/// ([`std::fs::hard_link`]).
pub async fn hard_link(original: impl AsRef<Path>, link: impl AsRef<Path>) -> io::Result<()> {
    let (original, link) = (original.as_ref().to_owned(), link.as_ref().to_owned());
    asyncify("brigade::fs::hard_link", move || {
        std::fs::hard_link(original, link)
    })
    .await
}

/// Makes `link` a symbolic link to `original`
/// ([`std::os::unix::fs::symlink`]). Unix only.
#[cfg(unix)]
#[cfg_attr(docsrs, doc(cfg(unix)))]
pub async fn symlink(original: impl AsRef<Path>, link: impl AsRef<Path>) -> io::Result<()> {
    let (original, link) = (original.as_ref().to_owned(), link.as_ref().to_owned());
    asyncify("brigade::fs::symlink", move || {
        std::os::unix::fs::symlink(original, link)
    })
    .await
}

/// The target of the symbolic link `path` ([`std::fs::read_link`]).
pub async fn read_link(path: impl AsRef<Path>) -> io::Result<PathBuf> {
    let path = path.as_ref().to_owned();
    asyncify("brigade::fs::read_link", move || std::fs::read_link(path)).await
}

/// The absolute form of `path`, every symbolic link resolved
/// ([`std::fs::canonicalize`]).
pub async fn canonicalize(path: impl AsRef<Path>) -> io::Result<PathBuf> {
    let path = path.as_ref().to_owned();
    asyncify("brigade::fs::canonicalize", move || {
        std::fs::canonicalize(path)
    })
    .await
}

/// Changes the permissions of `path` ([`std::fs::set_permissions`]).
pub async fn set_permissions(path: impl AsRef<Path>, perm: Permissions) -> io::Result<()> {
    let path = path.as_ref().to_owned();
    asyncify("brigade::fs::set_permissions", move || {
        std::fs::set_permissions(path, perm)
    })
    .await
}

/// Whether `path` exists, following symbolic links: `Ok(false)` for a
/// path that does not (or a broken link), an error when that cannot be
/// told, for a lack of permission for instance ([`Path::try_exists`]).
pub async fn try_exists(path: impl AsRef<Path>) -> io::Result<bool> {
    let path = path.as_ref().to_owned();
    asyncify("brigade::fs::try_exists", move || path.try_exists()).await
}
