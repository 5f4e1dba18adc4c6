//! A registered I/O source as a tokio-console resource (feature `console`):
//! a `runtime.resource` span named by the source's type (`TcpStream`,
//! `TcpListener`, `UdpSocket`, `UnixStream`, a pipe's end, an `AsyncFd`'s
//! source) with `kind = "io"`, open while the source is registered. The
//! console lists each socket with its type and lifetime; its waits show on
//! the task that polls it. (tokio's sockets are no console resources.)
//!
//! Without the feature, [`IoSpan`] holds nothing.

/// The resource span of one registered source (feature `console`), or
/// nothing.
pub(crate) struct IoSpan {
    #[cfg(feature = "console")]
    _resource: tracing::Span,
}

impl IoSpan {
    /// The span of a source of type `S` (which names it).
    #[cfg_attr(not(feature = "console"), allow(clippy::extra_unused_type_parameters))]
    pub(crate) fn new<S>() -> Self {
        #[cfg(feature = "console")]
        {
            let full = std::any::type_name::<S>();
            let concrete_type = full.rsplit("::").next().unwrap_or(full);
            let resource = tracing::trace_span!(
                parent: None,
                "runtime.resource",
                concrete_type,
                kind = "io",
            );
            IoSpan {
                _resource: resource,
            }
        }
        #[cfg(not(feature = "console"))]
        IoSpan {}
    }
}
