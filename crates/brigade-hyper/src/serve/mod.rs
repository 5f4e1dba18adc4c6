//! [`serve`]: an HTTP server on brigade's workers for any tower service, the
//! counterpart of `axum::serve` (which needs tokio's reactor).
//!
//! The pieces are hyper-util's: its auto connection builder serves
//! HTTP/1.1 and HTTP/2 with prior knowledge (h2c, as gRPC uses) on one
//! port, its `GracefulShutdown` tells every connection to finish, and its
//! `TowerToHyperService` turns the tower service into a hyper one. This
//! module adds the accept loop (one brigade task per connection), the
//! connection cap, the settings a public server needs, and the peer address
//! as [`ConnectInfo`].

mod connect_info;
mod first_bytes;
mod run;

use std::fmt;
use std::future::{Future, IntoFuture};
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use brigade::net::TcpListener;
use hyper::body::Incoming;

pub use connect_info::ConnectInfo;

/// The default [`Serve::header_read_timeout`].
pub const DEFAULT_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(30);

/// The most connections [`serve`] keeps open by default (see
/// [`Serve::max_connections`]).
pub const DEFAULT_MAX_CONNECTIONS: usize = 10_000;

/// The default [`Serve::http2_max_concurrent_streams`] (hyper's).
pub const DEFAULT_HTTP2_MAX_CONCURRENT_STREAMS: u32 = 200;

/// The default [`Serve::http2_keep_alive_interval`].
pub const DEFAULT_HTTP2_KEEP_ALIVE_INTERVAL: Duration = Duration::from_secs(60);

/// The default [`Serve::http2_keep_alive_timeout`] (hyper's).
pub const DEFAULT_HTTP2_KEEP_ALIVE_TIMEOUT: Duration = Duration::from_secs(20);

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The longest timeout that is kept as it is: longer ones (up to
/// `Duration::MAX`) mean "never" in practice and are cut to this.
const FAR: Duration = Duration::from_secs(10 * 365 * 24 * 60 * 60);

/// Serves `service` on `listener`'s connections, on brigade's workers: the
/// counterpart of `axum::serve` for brigade.
///
/// `service` is any tower service of HTTP requests whose future is `Send`:
/// an axum `Router`, tonic's `Routes`, a function made a service by
/// `tower::service_fn`, or a stack of tower layers. It is cloned for each
/// connection (and each request, as hyper-util's `TowerToHyperService`
/// calls it). HTTP/1.1 and HTTP/2 are served on the same port:
/// HTTP/2 with prior knowledge (h2c, as gRPC clients speak it); there is no
/// TLS here.
///
/// Await the returned [`Serve`] to run the server; it runs until the
/// [graceful shutdown](Serve::with_graceful_shutdown) signal, or for ever.
/// Its settings are methods on [`Serve`]; they are checked when the server
/// starts, and a bad one is an [`io::ErrorKind::InvalidInput`] error that
/// names it.
///
/// How it serves:
/// - Each connection is a brigade task on the workers (so a background job
///   that calls [`brigade::yield_if_busy`] gives way to the handlers), with
///   `TCP_NODELAY` on by default, as in axum. HTTP/2 streams are tasks of
///   their own, spawned by [`BrigadeExecutor`](crate::BrigadeExecutor).
/// - Connections are accepted with [`accept`](crate::accept)'s back-off:
///   while the process is out of descriptors it pauses instead of spinning.
///   Another accept error is logged (target `brigade_hyper::serve`) and
///   accepting resumes a second later.
/// - A connection that fails (a reset, a malformed request, a timeout) is a
///   `tracing` event at debug level, never the end of the server. A handler
///   that panics ends its HTTP/1 connection only (its request gets no
///   response; a warning is logged), or over HTTP/2 its stream only (reset);
///   the server goes on.
/// - At [`max_connections`](Serve::max_connections) open connections it
///   waits for one to close before it accepts the next: the waiting clients
///   stay in the listen backlog.
/// - Dropping the future before it completes closes the listener and every
///   connection at once.
///
/// # Examples
///
/// An axum app on brigade, stopped by a signal once a request came back:
///
/// ```
/// # // axum is a dev-dependency of this crate, so this compiles as a test.
/// use std::io::{Read, Write};
///
/// use axum::Router;
/// use axum::routing::get;
///
/// #[brigade::main]
/// async fn main() -> std::io::Result<()> {
///     let app = Router::new().route("/", get(|| async { "hello from brigade" }));
///     let listener = brigade::net::TcpListener::bind("127.0.0.1:0").await?;
///     let addr = listener.local_addr()?;
///
///     // A plain blocking client on a thread of its own.
///     let (stop, stopped) = std::sync::mpsc::channel::<()>();
///     let client = std::thread::spawn(move || -> std::io::Result<String> {
///         let mut stream = std::net::TcpStream::connect(addr)?;
///         stream.write_all(b"GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")?;
///         let mut response = String::new();
///         stream.read_to_string(&mut response)?;
///         let _ = stop.send(());
///         Ok(response)
///     });
///
///     // Until the client is done: then stop accepting, finish, return.
///     let shutdown = async move {
///         let _ = brigade::spawn_blocking(move || stopped.recv()).await;
///     };
///     brigade_hyper::serve(listener, app)
///         .with_graceful_shutdown(shutdown)
///         .await?;
///
///     let response = client.join().unwrap()?;
///     assert!(response.starts_with("HTTP/1.1 200 OK"));
///     assert!(response.ends_with("hello from brigade"));
///     Ok(())
/// }
/// ```
pub fn serve<S, B>(listener: TcpListener, service: S) -> Serve<S>
where
    S: tower_service::Service<http::Request<Incoming>, Response = http::Response<B>>
        + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
    S::Error: Into<BoxError>,
    B: http_body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    Serve {
        listener,
        service,
        config: Config::default(),
        signal: None,
    }
}

/// A server that [`serve`] set up: its settings are methods, and awaiting
/// it (through [`IntoFuture`]) runs it.
///
/// The future completes with `Ok(())` after a
/// [graceful shutdown](Serve::with_graceful_shutdown), and with an error
/// only if a setting is invalid (before anything is served).
#[must_use = "a server does nothing unless awaited"]
pub struct Serve<S> {
    listener: TcpListener,
    service: S,
    config: Config,
    signal: Option<Pin<Box<dyn Future<Output = ()> + Send>>>,
}

/// The settings of a [`Serve`], checked when it starts.
#[derive(Clone, Debug)]
struct Config {
    shutdown_timeout: Option<Duration>,
    connect_info: bool,
    header_read_timeout: Option<Duration>,
    /// `None`: from the descriptor limit, when the server starts.
    max_connections: Option<usize>,
    http2_max_concurrent_streams: u32,
    http2_keep_alive_interval: Option<Duration>,
    http2_keep_alive_timeout: Duration,
    tcp_nodelay: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            shutdown_timeout: None,
            connect_info: false,
            header_read_timeout: Some(DEFAULT_HEADER_READ_TIMEOUT),
            max_connections: None,
            http2_max_concurrent_streams: DEFAULT_HTTP2_MAX_CONCURRENT_STREAMS,
            http2_keep_alive_interval: Some(DEFAULT_HTTP2_KEEP_ALIVE_INTERVAL),
            http2_keep_alive_timeout: DEFAULT_HTTP2_KEEP_ALIVE_TIMEOUT,
            tcp_nodelay: true,
        }
    }
}

impl<S> Serve<S> {
    /// Stops the server when `signal` completes: it stops accepting (the
    /// listener is closed, so new connections are refused), tells every
    /// open connection to finish (HTTP/1 connections close after their
    /// current request, HTTP/2 ones get a GOAWAY and finish their streams),
    /// waits for them, up to [`shutdown_timeout`](Self::shutdown_timeout)
    /// if set, and returns `Ok(())`.
    ///
    /// `signal` is, for example, `brigade::signal::ctrl_c()` mapped to `()`,
    /// or the receiving end of a channel.
    pub fn with_graceful_shutdown<F>(mut self, signal: F) -> Self
    where
        F: Future<Output = ()> + Send + 'static,
    {
        self.signal = Some(Box::pin(signal));
        self
    }

    /// The longest a graceful shutdown waits for open connections to
    /// finish; those still open then are closed. Without it (the default),
    /// the shutdown waits as long as they take. `Duration::ZERO` closes them
    /// at once.
    pub fn shutdown_timeout(mut self, deadline: Duration) -> Self {
        self.config.shutdown_timeout = Some(deadline);
        self
    }

    /// Hands each request its peer's address, as the request extension
    /// [`ConnectInfo`]; with this crate's `axum` feature, also as
    /// `axum::extract::ConnectInfo<SocketAddr>`, so axum's `ConnectInfo`
    /// extractor works unchanged. Off by default.
    pub fn with_connect_info(mut self) -> Self {
        self.config.connect_info = true;
        self
    }

    /// How long a client may take to send a request's headers, from the
    /// moment the server waits for them; a client still sending then (for
    /// example one byte a second) is disconnected. `None` lets clients
    /// take as long as they like. The default, [`DEFAULT_HEADER_READ_TIMEOUT`]
    /// (30 s), is hyper's.
    ///
    /// The same time bounds the first bytes of a connection, which tell
    /// HTTP/1 from HTTP/2: a client that connects and sends nothing is
    /// dropped too. An idle HTTP/1 keep-alive connection is waiting for
    /// headers, so this also closes one left idle that long. HTTP/2
    /// connections are watched by [keep-alive
    /// pings](Self::http2_keep_alive_interval) instead.
    ///
    /// `Some(Duration::ZERO)` is invalid; a timeout over ten years counts
    /// as ten years.
    pub fn header_read_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.config.header_read_timeout = timeout;
        self
    }

    /// The most connections open at once. At the cap the server waits for
    /// one to close before it accepts the next (the clients wait in the
    /// listen backlog), instead of running out of descriptors.
    ///
    /// The default, read when the server starts, is three quarters of the
    /// process's soft descriptor limit (`RLIMIT_NOFILE`), leaving the rest
    /// for files and outgoing connections, and at most
    /// [`DEFAULT_MAX_CONNECTIONS`] (10,000); 10,000 where the limit cannot
    /// be read. `0` is invalid.
    pub fn max_connections(mut self, max: usize) -> Self {
        self.config.max_connections = Some(max);
        self
    }

    /// The most HTTP/2 streams (requests) a client may have open at once on
    /// one connection. The default, [`DEFAULT_HTTP2_MAX_CONCURRENT_STREAMS`]
    /// (200), is hyper's. `0` is invalid.
    pub fn http2_max_concurrent_streams(mut self, max: u32) -> Self {
        self.config.http2_max_concurrent_streams = max;
        self
    }

    /// How often an HTTP/2 connection is pinged to check that its client is
    /// still there; a client that does not answer within
    /// [`http2_keep_alive_timeout`](Self::http2_keep_alive_timeout) is
    /// disconnected. `None` sends no pings. The default is
    /// [`DEFAULT_HTTP2_KEEP_ALIVE_INTERVAL`] (60 s). `Some(Duration::ZERO)`
    /// is invalid; an interval over ten years counts as ten years.
    pub fn http2_keep_alive_interval(mut self, interval: Option<Duration>) -> Self {
        self.config.http2_keep_alive_interval = interval;
        self
    }

    /// How long a keep-alive ping may go unanswered. The default,
    /// [`DEFAULT_HTTP2_KEEP_ALIVE_TIMEOUT`] (20 s), is hyper's.
    /// `Duration::ZERO` is invalid; over ten years counts as ten years.
    pub fn http2_keep_alive_timeout(mut self, timeout: Duration) -> Self {
        self.config.http2_keep_alive_timeout = timeout;
        self
    }

    /// Sets `TCP_NODELAY` on each accepted connection (on by default, as in
    /// axum), so small responses are sent at once.
    pub fn tcp_nodelay(mut self, on: bool) -> Self {
        self.config.tcp_nodelay = on;
        self
    }

    /// The address the server listens on.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }
}

impl<S> fmt::Debug for Serve<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Serve")
            .field("listener", &self.listener)
            .field("config", &self.config)
            .field("graceful_shutdown", &self.signal.is_some())
            .finish_non_exhaustive()
    }
}

impl<S, B> IntoFuture for Serve<S>
where
    S: tower_service::Service<http::Request<Incoming>, Response = http::Response<B>>
        + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
    S::Error: Into<BoxError>,
    B: http_body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    type Output = io::Result<()>;
    type IntoFuture = ServeFuture;

    fn into_future(self) -> ServeFuture {
        ServeFuture(Box::pin(run::run(self)))
    }
}

/// The future of a running [`Serve`]: see [`serve`].
#[must_use = "a server does nothing unless awaited"]
pub struct ServeFuture(Pin<Box<dyn Future<Output = io::Result<()>> + Send>>);

impl Future for ServeFuture {
    type Output = io::Result<()>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.0.as_mut().poll(cx)
    }
}

impl fmt::Debug for ServeFuture {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServeFuture").finish_non_exhaustive()
    }
}

/// The settings once checked, with the defaults that depend on the process
/// filled in.
#[derive(Debug)]
struct Checked {
    max_connections: usize,
}

impl Config {
    /// Checks each setting; the error names the first bad one.
    fn check(&self) -> io::Result<Checked> {
        let invalid = |message: &str| {
            Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("brigade_hyper::serve: {message}"),
            ))
        };
        if self.max_connections == Some(0) {
            return invalid("max_connections must be at least 1");
        }
        if self.header_read_timeout == Some(Duration::ZERO) {
            return invalid("header_read_timeout must be longer than zero (or None for none)");
        }
        if self.http2_max_concurrent_streams == 0 {
            return invalid("http2_max_concurrent_streams must be at least 1");
        }
        if self.http2_keep_alive_interval == Some(Duration::ZERO) {
            return invalid(
                "http2_keep_alive_interval must be longer than zero (or None for no pings)",
            );
        }
        if self.http2_keep_alive_timeout.is_zero() {
            return invalid("http2_keep_alive_timeout must be longer than zero");
        }
        let max_connections = self
            .max_connections
            .unwrap_or_else(default_max_connections)
            // The semaphore's own bound: far beyond any descriptor limit.
            .min(tokio::sync::Semaphore::MAX_PERMITS);
        Ok(Checked { max_connections })
    }
}

/// Three quarters of the soft `RLIMIT_NOFILE`, at most
/// [`DEFAULT_MAX_CONNECTIONS`]; that where there is no soft limit.
fn default_max_connections() -> usize {
    let limit = rustix::process::getrlimit(rustix::process::Resource::Nofile);
    // `None`: unlimited.
    let Some(soft) = limit.current else {
        return DEFAULT_MAX_CONNECTIONS;
    };
    let soft = usize::try_from(soft).unwrap_or(usize::MAX);
    (soft - soft / 4).clamp(1, DEFAULT_MAX_CONNECTIONS)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error_of(config: Config) -> String {
        config.check().unwrap_err().to_string()
    }

    #[test]
    fn bad_settings_are_errors_that_name_them() {
        let base = Config::default;
        let cases = [
            (
                Config {
                    max_connections: Some(0),
                    ..base()
                },
                "max_connections",
            ),
            (
                Config {
                    header_read_timeout: Some(Duration::ZERO),
                    ..base()
                },
                "header_read_timeout",
            ),
            (
                Config {
                    http2_max_concurrent_streams: 0,
                    ..base()
                },
                "http2_max_concurrent_streams",
            ),
            (
                Config {
                    http2_keep_alive_interval: Some(Duration::ZERO),
                    ..base()
                },
                "http2_keep_alive_interval",
            ),
            (
                Config {
                    http2_keep_alive_timeout: Duration::ZERO,
                    ..base()
                },
                "http2_keep_alive_timeout",
            ),
        ];
        for (config, setting) in cases {
            let error = error_of(config);
            assert!(error.contains(setting), "{error:?} names {setting}");
        }
    }

    #[test]
    fn defaults_are_valid_and_the_cap_follows_the_descriptor_limit() {
        let checked = Config::default().check().unwrap();
        assert!((1..=DEFAULT_MAX_CONNECTIONS).contains(&checked.max_connections));
        let huge = Config {
            max_connections: Some(usize::MAX),
            ..Config::default()
        };
        assert_eq!(
            huge.check().unwrap().max_connections,
            tokio::sync::Semaphore::MAX_PERMITS
        );
    }
}
