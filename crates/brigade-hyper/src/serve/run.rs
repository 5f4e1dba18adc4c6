//! The running server: the accept loop, the connection tasks and the
//! graceful shutdown.
//!
//! The protocol between them:
//! - The accept loop takes a permit from the connection cap's semaphore
//!   *before* it accepts, so at the cap it waits and the clients stay in
//!   the listen backlog. Each connection task owns its permit, so the
//!   permit comes back when the task ends, however it ends (completed,
//!   panicked or aborted: the task's future, permit included, is dropped).
//! - Each connection is a task in a `JoinSet`, which the loop reaps as
//!   tasks end (a panic there is logged), and which aborts every
//!   connection if the server's future is dropped.
//! - Connection tasks are `TaskClass::Foreground`. Under a backlog of
//!   pipelined requests hyper's HTTP/1 dispatcher wakes its own task after
//!   every few messages; a default-class task that keeps waking itself is
//!   taken for background work and queued behind the bulk jobs, and the
//!   requests behind it wait for them.
//! - Each connection is watched by hyper-util's `GracefulShutdown`, whose
//!   watcher is taken before the task is spawned, so no connection can miss
//!   the shutdown. On the signal the loop drops the listener, then
//!   `shutdown` tells every connection to finish and waits for all; after
//!   `shutdown_timeout` the ones left are aborted.

use std::future::{Future, poll_fn};
use std::io;
use std::net::SocketAddr;
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use brigade::JoinError;
use brigade::net::{TcpListener, TcpStream};
use brigade::task::{Builder, JoinSet, TaskClass};
use hyper::body::Incoming;
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::{GracefulShutdown, Watcher};
use hyper_util::service::TowerToHyperService;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::connect_info::WithConnectInfo;
use super::first_bytes::FirstBytes;
use super::{BoxError, Config, Serve};
use crate::{BrigadeExecutor, BrigadeIo, BrigadeTimer};

/// The pause after an accept error that is neither one connection's nor a
/// lack of resources (which [`accept`](crate::accept) handles itself), as
/// axum and hyper's examples pause.
const ACCEPT_ERROR_PAUSE: Duration = Duration::from_secs(1);

/// What the accept loop does next.
enum Step {
    Accept(OwnedSemaphorePermit, TcpStream, SocketAddr),
    Shutdown,
}

/// Serves until the shutdown signal, then drains; see the module docs.
pub(super) async fn run<S, B>(serve: Serve<S>) -> io::Result<()>
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
    let Serve {
        listener,
        service,
        config,
        mut signal,
    } = serve;
    let checked = config.check()?;
    let builder = Arc::new(connection_builder(&config));
    let permits = Arc::new(Semaphore::new(checked.max_connections));
    let graceful = GracefulShutdown::new();
    let mut connections = JoinSet::new();
    loop {
        let mut next = pin!(next_connection(&listener, &permits));
        let step = poll_fn(|cx| {
            // Ended connections are reaped here, so the set stays small.
            while let Poll::Ready(Some(ended)) = connections.poll_join_next(cx) {
                report(ended);
            }
            if let Some(signal) = signal.as_mut()
                && signal.as_mut().poll(cx).is_ready()
            {
                return Poll::Ready(Step::Shutdown);
            }
            next.as_mut().poll(cx)
        })
        .await;
        let Step::Accept(permit, stream, peer) = step else {
            break;
        };
        let connection = Connection {
            stream,
            peer,
            permit,
            watcher: graceful.watcher(),
            builder: Arc::clone(&builder),
            service: service.clone(),
            config: config.clone(),
        };
        Builder::new()
            .class(TaskClass::Foreground)
            .spawn_in(&mut connections, connection.serve());
    }
    drop(listener);
    drain(graceful, connections, config.shutdown_timeout).await;
    Ok(())
}

/// A permit under the cap, then the next connection. [`accept`](crate::accept)
/// rides out one connection's errors and a lack of descriptors itself; an
/// error it returns is logged, and accepting resumes after
/// [`ACCEPT_ERROR_PAUSE`].
async fn next_connection(listener: &TcpListener, permits: &Arc<Semaphore>) -> Step {
    // The semaphore is never closed, so this waits for a permit.
    let Ok(permit) = Arc::clone(permits).acquire_owned().await else {
        return std::future::pending().await;
    };
    loop {
        match crate::accept(listener).await {
            Ok((stream, peer)) => return Step::Accept(permit, stream, peer),
            Err(error) => {
                tracing::error!(
                    target: "brigade_hyper::serve",
                    %error,
                    "accept failed; trying again in {ACCEPT_ERROR_PAUSE:?}"
                );
                brigade::time::sleep(ACCEPT_ERROR_PAUSE).await;
            }
        }
    }
}

/// hyper-util's auto builder (HTTP/1.1 and h2c) with `config`'s settings,
/// on brigade's executor and timer.
fn connection_builder(config: &Config) -> auto::Builder<BrigadeExecutor> {
    let mut builder = auto::Builder::new(BrigadeExecutor::new());
    builder
        .http1()
        .timer(BrigadeTimer::new())
        .header_read_timeout(config.header_read_timeout.map(far));
    builder
        .http2()
        .timer(BrigadeTimer::new())
        .max_concurrent_streams(config.http2_max_concurrent_streams)
        .keep_alive_interval(config.http2_keep_alive_interval.map(far))
        .keep_alive_timeout(far(config.http2_keep_alive_timeout));
    builder
}

/// `duration`, at most [`FAR`](super::FAR): hyper adds its timeouts to
/// `Instant::now()`, which panics past the representable range.
fn far(duration: Duration) -> Duration {
    duration.min(super::FAR)
}

/// One accepted connection and what its task needs.
struct Connection<S> {
    stream: TcpStream,
    peer: SocketAddr,
    /// Held until the connection ends: its place under the cap.
    permit: OwnedSemaphorePermit,
    watcher: Watcher,
    builder: Arc<auto::Builder<BrigadeExecutor>>,
    service: S,
    config: Config,
}

impl<S> Connection<S> {
    /// Serves the connection until it ends; its errors are logged.
    async fn serve<B>(self)
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
        let Connection {
            stream,
            peer,
            permit: _permit,
            watcher,
            builder,
            service,
            config,
        } = self;
        if config.tcp_nodelay
            && let Err(error) = stream.set_nodelay(true)
        {
            tracing::debug!(target: "brigade_hyper::serve", %peer, %error, "TCP_NODELAY failed");
        }
        let io = BrigadeIo::new(FirstBytes::new(stream, config.header_read_timeout));
        let peer_info = config.connect_info.then_some(peer);
        let service = TowerToHyperService::new(WithConnectInfo::new(service, peer_info));
        // With upgrades, as axum serves: WebSockets and CONNECT work.
        let connection = builder.serve_connection_with_upgrades(io, service);
        if let Err(error) = watcher.watch(connection).await {
            tracing::debug!(
                target: "brigade_hyper::serve",
                %peer,
                error = %error,
                "connection ended with an error"
            );
        }
    }
}

/// Logs how a connection's task ended, if it panicked.
fn report(ended: Result<(), JoinError>) {
    let Err(error) = ended else { return };
    let Ok(panic) = error.try_into_panic() else {
        return; // aborted by the shutdown timeout: logged there
    };
    let message = panic
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(not a string)");
    tracing::warn!(
        target: "brigade_hyper::serve",
        panic = message,
        "a request handler panicked; its connection was closed"
    );
}

/// Tells every connection to finish and waits for them, up to `timeout`;
/// then aborts the ones left and waits for their tasks.
async fn drain(
    graceful: GracefulShutdown,
    mut connections: JoinSet<()>,
    timeout: Option<Duration>,
) {
    let open = graceful.count();
    tracing::debug!(target: "brigade_hyper::serve", open, "shutting down");
    let finished: Pin<Box<dyn Future<Output = ()> + Send>> = Box::pin(graceful.shutdown());
    match timeout {
        None => finished.await,
        Some(timeout) => {
            if brigade::time::timeout(timeout, finished).await.is_err() {
                tracing::info!(
                    target: "brigade_hyper::serve",
                    left = connections.len(),
                    "connections still open after the shutdown timeout; closing them"
                );
                connections.abort_all();
            }
        }
    }
    while let Some(ended) = connections.join_next().await {
        report(ended);
    }
}
