//! [`BuildError`]: why [`Builder::build`](crate::runtime::Builder::build) failed,
//! naming the setting or variable at fault.

use std::fmt;

/// A runtime could not be built: an invalid setting, an invalid
/// `BRIGADE_WORKER_THREADS`, or the OS refused to start a thread.
///
/// The message names the setting or variable at fault.
#[derive(Debug)]
pub struct BuildError {
    message: String,
    source: Option<std::io::Error>,
}

impl BuildError {
    pub(crate) fn setting(name: &str, problem: impl fmt::Display) -> Self {
        BuildError {
            message: format!("invalid runtime setting `{name}`: {problem}"),
            source: None,
        }
    }

    pub(crate) fn env(message: String) -> Self {
        BuildError {
            message,
            source: None,
        }
    }

    pub(crate) fn driver_failed(error: std::io::Error) -> Self {
        BuildError {
            message: format!("could not create the I/O driver: {error}"),
            source: Some(error),
        }
    }

    /// `thread` names the thread that did not start: "a worker thread",
    /// "the monitor thread"...
    pub(crate) fn spawn_failed(thread: &str, error: std::io::Error) -> Self {
        BuildError {
            message: format!("could not start {thread}: {error}"),
            source: Some(error),
        }
    }

    #[cfg(feature = "tokio-compat")]
    pub(crate) fn tokio_compat_failed(error: std::io::Error) -> Self {
        BuildError {
            message: format!("tokio_compat: could not start the tokio runtime: {error}"),
            source: Some(error),
        }
    }
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for BuildError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source.as_ref().map(|error| error as _)
    }
}

impl From<BuildError> for std::io::Error {
    fn from(error: BuildError) -> Self {
        let kind = error
            .source
            .as_ref()
            .map_or(std::io::ErrorKind::InvalidInput, std::io::Error::kind);
        std::io::Error::new(kind, error)
    }
}
