//! The axum app of `axum_service`: JSON get and put on the store, a health
//! route, and (with feature `tokio-compat`) a proxy route that calls the
//! service itself through hyper-util's tokio-based client.
//!
//! | route | answer |
//! |---|---|
//! | `GET /health` | `{"status":"ok","keys":N,"thread":"brigade-w-0"}`: the handler's thread |
//! | `GET /kv/{key}` | `{"key":…,"version":N,"value":…}`, or 404 `{"error":"no such key"}` |
//! | `PUT /kv/{key}` with `{"value":…}` (any JSON) | `{"key":…,"version":N}` |
//! | `GET /proxy/{key}` (`tokio-compat`) | what `GET /kv/{key}` answers, fetched over HTTP by the handler |
//!
//! The same [`router`] runs on both runtimes: on brigade under
//! `brigade_hyper::serve`, on tokio under `axum::serve`.

use std::future::IntoFuture;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use super::store::Store;
use super::{Config, Server, Stats, spawn_server};
use crate::harness::Runtime;

/// The app's store: values are JSON, kept as their text.
pub type JsonStore = Store<Arc<RawValue>>;

/// What every handler shares.
#[derive(Clone)]
pub struct AppState {
    store: Arc<JsonStore>,
    stats: Arc<Stats>,
    /// The proxy route's client and where it sends (the service itself).
    #[cfg(feature = "tokio-compat")]
    proxy: proxy::Proxy,
}

/// `PUT /kv/{key}`'s body.
#[derive(Debug, Deserialize)]
pub struct PutBody {
    /// The new value: any JSON.
    pub value: Box<RawValue>,
}

#[derive(Serialize)]
struct Got<'a> {
    key: &'a str,
    version: u64,
    value: &'a RawValue,
}

#[derive(Serialize)]
struct Put<'a> {
    key: &'a str,
    version: u64,
}

#[derive(Serialize)]
struct Health<'a> {
    status: &'static str,
    keys: usize,
    thread: &'a str,
}

/// The app on `store`, counting in `stats`; `addr` is where it is served
/// (the proxy route's target).
pub fn router(store: Arc<JsonStore>, stats: Arc<Stats>, addr: SocketAddr) -> Router {
    #[cfg(not(feature = "tokio-compat"))]
    let _ = addr;
    let state = AppState {
        store,
        stats,
        #[cfg(feature = "tokio-compat")]
        proxy: proxy::Proxy::new(addr),
    };
    let router = Router::new()
        .route("/health", get(health))
        .route("/kv/{key}", get(get_key).put(put_key));
    #[cfg(feature = "tokio-compat")]
    let router = router.route("/proxy/{key}", get(proxy::get));
    router.with_state(state)
}

async fn health(State(state): State<AppState>) -> Response {
    state.stats.served();
    let thread = std::thread::current();
    Json(Health {
        status: "ok",
        keys: state.store.len(),
        thread: thread.name().unwrap_or("unnamed"),
    })
    .into_response()
}

async fn get_key(State(state): State<AppState>, Path(key): Path<String>) -> Response {
    state.stats.served();
    match state.store.get(&key) {
        Some(entry) => Json(Got {
            key: &key,
            version: entry.version,
            value: &entry.value,
        })
        .into_response(),
        None => not_found(),
    }
}

async fn put_key(
    State(state): State<AppState>,
    Path(key): Path<String>,
    Json(body): Json<PutBody>,
) -> Response {
    state.stats.served();
    let version = state.store.put(key.clone(), Arc::from(body.value));
    Json(Put { key: &key, version }).into_response()
}

fn not_found() -> Response {
    let body = serde_json::json!({ "error": "no such key" });
    (StatusCode::NOT_FOUND, Json(body)).into_response()
}

/// The value of key number `n` in the prefilled store: `{"n":n}`.
pub fn prefill_value(n: u64) -> Arc<RawValue> {
    let text = format!("{{\"n\":{n}}}");
    Arc::from(RawValue::from_string(text).expect("valid JSON"))
}

/// Starts the app on `config.runtime`, listening on `config.addr`, with
/// the bulk job.
pub fn start(config: &Config) -> io::Result<Server> {
    super::start(config, prefill_value, |runtime, store, stats| {
        match runtime {
            Runtime::Brigade(rt) => {
                let listener = rt.block_on(brigade::net::TcpListener::bind(config.addr))?;
                let addr = listener.local_addr()?;
                let app = router(store, stats, addr);
                spawn_server(runtime, brigade_hyper::serve(listener, app).into_future());
                Ok(addr)
            }
            Runtime::Tokio(rt) => {
                use axum::serve::ListenerExt;
                let listener = rt.block_on(tokio::net::TcpListener::bind(config.addr))?;
                let addr = listener.local_addr()?;
                let app = router(store, stats, addr);
                // brigade_hyper::serve sets TCP_NODELAY; do the same here.
                let listener = listener.tap_io(|stream| {
                    let _ = stream.set_nodelay(true);
                });
                spawn_server(runtime, axum::serve(listener, app).into_future());
                Ok(addr)
            }
        }
    })
}

#[cfg(feature = "tokio-compat")]
mod proxy {
    //! `GET /proxy/{key}`: the handler asks the service itself for
    //! `/kv/{key}` with hyper-util's legacy `Client`, a tokio-based client
    //! (its connector opens `tokio::net` sockets and its executor calls
    //! `tokio::spawn`). On brigade it runs under `tokio-compat`: the
    //! handler stays on brigade's worker, the client's connection tasks run
    //! on the compat threads.

    use std::net::SocketAddr;

    use axum::body::Body;
    use axum::extract::{Path, State};
    use axum::http::{StatusCode, Uri};
    use axum::response::{IntoResponse, Response};
    use http_body_util::{BodyExt, Empty};
    use hyper::body::Bytes;
    use hyper_util::client::legacy::Client;
    use hyper_util::client::legacy::connect::HttpConnector;
    use hyper_util::rt::TokioExecutor;

    use super::AppState;

    /// The proxy's client (keep-alive connections, shared by the handlers)
    /// and the service's address.
    #[derive(Clone)]
    pub(super) struct Proxy {
        client: Client<HttpConnector, Empty<Bytes>>,
        addr: SocketAddr,
    }

    impl Proxy {
        pub(super) fn new(addr: SocketAddr) -> Proxy {
            let client = Client::builder(TokioExecutor::new()).build_http();
            Proxy { client, addr }
        }
    }

    pub(super) async fn get(State(state): State<AppState>, Path(key): Path<String>) -> Response {
        state.stats.served();
        let uri: Uri = match format!("http://{}/kv/{key}", state.proxy.addr).parse() {
            Ok(uri) => uri,
            Err(error) => return (StatusCode::BAD_REQUEST, error.to_string()).into_response(),
        };
        let fetched = async {
            let response = state.proxy.client.get(uri).await?;
            let (parts, body) = response.into_parts();
            let body = body.collect().await?.to_bytes();
            Ok::<_, Box<dyn std::error::Error + Send + Sync>>((parts.status, body))
        };
        match fetched.await {
            Ok((status, body)) => {
                let mut response = Response::new(Body::from(body));
                *response.status_mut() = status;
                response
                    .headers_mut()
                    .insert("content-type", "application/json".parse().expect("valid"));
                response
            }
            Err(error) => (StatusCode::BAD_GATEWAY, error.to_string()).into_response(),
        }
    }
}
