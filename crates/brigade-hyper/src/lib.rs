//! Run [hyper] 1.x services, such as an axum app or tonic routes, on the
//! [brigade] runtime.
//!
//! # Serving a tower service: [`serve`]
//!
//! `axum::serve` and tonic's `Server` need tokio's reactor. [`serve`] is
//! their counterpart on brigade: it serves any tower service of HTTP
//! requests (an axum `Router`, tonic's `Routes`, a hyper service) on
//! brigade's workers, HTTP/1.1 and HTTP/2 with prior knowledge (h2c, as
//! gRPC clients speak it) on one port, one brigade task per connection.
//! Request handlers run as ordinary brigade tasks, so a background job that
//! calls [`brigade::yield_if_busy`] between units of work gives way to them.
//!
//! ```no_run
//! use axum::{Router, routing::get};
//!
//! #[brigade::main]
//! async fn main() -> std::io::Result<()> {
//!     let app = Router::new().route("/", get(|| async { "hello from brigade" }));
//!     let listener = brigade::net::TcpListener::bind("0.0.0.0:3000").await?;
//!     brigade_hyper::serve(listener, app)
//!         // Stop accepting on Ctrl-C, finish the requests in flight, return.
//!         .with_graceful_shutdown(async {
//!             let _ = brigade::signal::ctrl_c().await;
//!         })
//!         .await
//! }
//! ```
//!
//! [`Serve`]'s methods set the peer address as [`ConnectInfo`] (and as
//! axum's `ConnectInfo`, with this crate's `axum` feature), a header-read
//! timeout, a cap on open connections, HTTP/2 limits and a deadline for the
//! graceful shutdown. [`serve`] has a complete example with a client.
//!
//! # The parts: hyper on brigade
//!
//! hyper is runtime-agnostic: it asks for an executor, a timer and IO types.
//! This crate provides all three on brigade, for servers and clients written
//! on hyper's connection builders directly:
//!
//! - [`BrigadeExecutor`], a [`hyper::rt::Executor`] that spawns hyper's
//!   background futures (HTTP/2 connection and stream tasks) as brigade
//!   tasks;
//! - [`BrigadeTimer`], a [`hyper::rt::Timer`] on brigade's timing wheel, for
//!   header-read timeouts, HTTP/2 keep-alive pings and the like;
//! - [`BrigadeIo`], which makes a [`brigade::net::TcpStream`] (or any
//!   `futures-io` stream) a [`hyper::rt::Read`] + [`hyper::rt::Write`].
//!
//! And for the server's accept loop, [`accept`]: it backs off while the
//! process is out of file descriptors, instead of spinning at 100% CPU.
//!
//! This crate enables hyper's `http1`, `http2` and `server` features; enable
//! `client` in your own crate for hyper's client.
//!
//! ## Example
//!
//! An HTTP/1.1 server and a client on loopback, both on brigade, written on
//! hyper's connection builders:
//!
//! ```
//! use std::convert::Infallible;
//! use std::time::Duration;
//!
//! use brigade::net::{TcpListener, TcpStream};
//! use brigade::task::{Builder, TaskClass};
//! use brigade_hyper::{BrigadeIo, BrigadeTimer};
//! use http_body_util::{BodyExt, Empty, Full};
//! use hyper::body::{Bytes, Incoming};
//! use hyper::{Request, Response};
//!
//! type Error = Box<dyn std::error::Error + Send + Sync>;
//!
//! async fn hello(_request: Request<Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
//!     Ok(Response::new(Full::new(Bytes::from_static(b"hello from brigade"))))
//! }
//!
//! let rt = brigade::Runtime::new()?;
//! let exchange = async {
//!     // The server: one foreground brigade task per connection (a
//!     // connection with a backlog wakes its own task again and again, which
//!     // a default-class task is demoted to background work for).
//!     let listener = TcpListener::bind("127.0.0.1:0").await?;
//!     let addr = listener.local_addr()?;
//!     brigade::spawn(async move {
//!         while let Ok((stream, _)) = brigade_hyper::accept(&listener).await {
//!             let connection = Builder::new().class(TaskClass::Foreground);
//!             connection.spawn(async move {
//!                 let served = hyper::server::conn::http1::Builder::new()
//!                     .timer(BrigadeTimer::new())
//!                     .serve_connection(BrigadeIo::new(stream), hyper::service::service_fn(hello))
//!                     .await;
//!                 if let Err(error) = served {
//!                     eprintln!("connection failed: {error}");
//!                 }
//!             });
//!         }
//!     });
//!
//!     // The client: a connection task and a request.
//!     let stream = TcpStream::connect(addr).await?;
//!     let (mut sender, connection) =
//!         hyper::client::conn::http1::handshake(BrigadeIo::new(stream)).await?;
//!     brigade::spawn(connection);
//!     let request = Request::get("/").header("host", "localhost").body(Empty::<Bytes>::new())?;
//!     let response = sender.send_request(request).await?;
//!     assert_eq!(response.status(), 200);
//!     let body = response.into_body().collect().await?.to_bytes();
//!     assert_eq!(body, "hello from brigade");
//!     Ok::<(), Error>(())
//! };
//! rt.block_on(async { brigade::time::timeout(Duration::from_secs(30), exchange).await })??;
//! # Ok::<(), Error>(())
//! ```
//!
//! For HTTP/2 give the builders a [`BrigadeExecutor`] too:
//! `hyper::server::conn::http2::Builder::new(BrigadeExecutor::new())` and
//! `hyper::client::conn::http2::Builder::new(BrigadeExecutor::new())`.
#![warn(missing_docs)]

mod accept;
mod executor;
mod io;
mod serve;
mod timer;

pub use accept::{FIRST_PAUSE, MAX_PAUSE, accept, accept_with};
pub use executor::BrigadeExecutor;
pub use io::BrigadeIo;
pub use serve::{
    ConnectInfo, DEFAULT_HEADER_READ_TIMEOUT, DEFAULT_HTTP2_KEEP_ALIVE_INTERVAL,
    DEFAULT_HTTP2_KEEP_ALIVE_TIMEOUT, DEFAULT_HTTP2_MAX_CONCURRENT_STREAMS,
    DEFAULT_MAX_CONNECTIONS, Serve, ServeFuture, serve,
};
pub use timer::{BrigadeSleep, BrigadeTimer};

/// The README's Rust examples (what crates.io shows), compiled as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
