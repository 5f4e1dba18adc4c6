//! `axum_service`'s app, started in-process on each runtime on an
//! ephemeral port, with the bulk job on, through a real HTTP client
//! (hyper-util's, on a tokio runtime of the test's own) over HTTP/1.1 and
//! HTTP/2 with prior knowledge: the routes answer as documented, the bulk
//! job makes progress, and every handler ran on the runtime's worker
//! threads (on brigade: not on a compat thread). With feature
//! `tokio-compat`, the proxy route too.

use std::net::SocketAddr;
use std::time::Duration;

use brigade_examples::harness::RuntimeKind;
use brigade_examples::service::{self, Config, Server};
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::{Method, Request, StatusCode};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::{Value, json};

/// Bound on each exchange and wait: a hang, not slowness.
const TIMEOUT: Duration = Duration::from_secs(30);

type HttpClient = Client<HttpConnector, Full<Bytes>>;

fn start(runtime: RuntimeKind) -> Server {
    let config = Config {
        runtime,
        bulk: 2,
        keys: 1000,
        ..Config::with_port(0)
    };
    service::http::start(&config).expect("the service starts")
}

/// Sends `method path` (with `body` as JSON if given); the status and the
/// body parsed as JSON.
async fn call(
    client: &HttpClient,
    addr: SocketAddr,
    method: Method,
    path: &str,
    body: Option<&str>,
) -> (StatusCode, Value) {
    let mut request = Request::builder()
        .method(method)
        .uri(format!("http://{addr}{path}"));
    if body.is_some() {
        request = request.header("content-type", "application/json");
    }
    let body = Full::new(Bytes::from(body.unwrap_or_default().to_owned()));
    let response = client.request(request.body(body).unwrap()).await.unwrap();
    let status = response.status();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    let value = serde_json::from_slice(&bytes)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()));
    (status, value)
}

/// Every route once (a PUT twice) over a client that speaks HTTP/2 with
/// prior knowledge if `http2`, else HTTP/1.1, on a store of `keys` keys
/// (it adds one). Returns the requests made.
async fn exercise(addr: SocketAddr, runtime: RuntimeKind, http2: bool, keys: usize) -> u64 {
    let client: HttpClient = Client::builder(TokioExecutor::new())
        .http2_only(http2)
        .build_http();
    let (status, health) = call(&client, addr, Method::GET, "/health", None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(health["status"], "ok");
    assert_eq!(health["keys"], keys);
    let thread = health["thread"].as_str().expect("a thread name");
    let worker = match runtime {
        // brigade's workers and the spares that stand in for them.
        RuntimeKind::Brigade => {
            thread.starts_with("brigade-w-") || thread.starts_with("brigade-s-")
        }
        RuntimeKind::Tokio => thread == "svc-tokio",
    };
    assert!(
        worker,
        "the handler ran on {thread:?}, not a {runtime} worker"
    );

    let (status, got) = call(&client, addr, Method::GET, "/kv/key:000000000007", None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        got,
        json!({"key": "key:000000000007", "version": 1, "value": {"n": 7}})
    );

    let key = if http2 { "/kv/new-h2" } else { "/kv/new-h1" };
    let put = |value: &'static str| call(&client, addr, Method::PUT, key, Some(value));
    let (status, put1) = put(r#"{"value": {"a": [1, 2]}}"#).await;
    assert_eq!((status, &put1["version"]), (StatusCode::OK, &json!(1)));
    let (status, put2) = put(r#"{"value": "second"}"#).await;
    assert_eq!((status, &put2["version"]), (StatusCode::OK, &json!(2)));
    let (status, got) = call(&client, addr, Method::GET, key, None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        (&got["value"], &got["version"]),
        (&json!("second"), &json!(2))
    );

    let (status, missing) = call(&client, addr, Method::GET, "/kv/missing", None).await;
    assert_eq!(
        (status, missing),
        (StatusCode::NOT_FOUND, json!({"error": "no such key"}))
    );
    // Not JSON: axum's extractor rejects it before the handler runs.
    let (status, _) = call(&client, addr, Method::PUT, key, Some("not json")).await;
    assert!(status.is_client_error(), "{status}");
    6
}

/// Waits (at most `TIMEOUT`) until the bulk job has done more than
/// `units` units; the count then.
fn bulk_passes(server: &Server, units: u64) -> u64 {
    server
        .wait_for_units_above(units, TIMEOUT)
        .expect("the bulk job made no progress")
}

fn client_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn routes_over_http1_and_h2c(runtime: RuntimeKind) {
    let server = start(runtime);
    let before = bulk_passes(&server, 0);
    let client = client_runtime();
    let requests = client.block_on(async {
        let both = async {
            exercise(server.addr(), runtime, false, 1000).await
                + exercise(server.addr(), runtime, true, 1001).await
        };
        tokio::time::timeout(TIMEOUT, both)
            .await
            .expect("the exchange hangs")
    });
    bulk_passes(&server, before);
    let totals = server.shutdown();
    assert_eq!(totals.requests, requests);
    assert_eq!(
        totals.off_worker, 0,
        "handlers ran off the runtime's workers"
    );
}

#[test]
fn routes_on_brigade() {
    routes_over_http1_and_h2c(RuntimeKind::Brigade);
}

#[test]
fn routes_on_tokio() {
    routes_over_http1_and_h2c(RuntimeKind::Tokio);
}

/// `GET /proxy/{key}`: the handler fetches `/kv/{key}` with hyper-util's
/// tokio-based client; on brigade under `tokio-compat`, while the handler
/// itself stays on brigade's worker.
#[cfg(feature = "tokio-compat")]
fn proxy(runtime: RuntimeKind) {
    let server = start(runtime);
    let addr = server.addr();
    let client = client_runtime();
    client.block_on(async {
        let exchange = async {
            let client: HttpClient = Client::builder(TokioExecutor::new()).build_http();
            for n in [3, 4, 3] {
                let path = format!("/proxy/key:{n:012}");
                let (status, got) = call(&client, addr, Method::GET, &path, None).await;
                assert_eq!(status, StatusCode::OK);
                assert_eq!(got["value"], json!({"n": n}));
            }
            let (status, _) = call(&client, addr, Method::GET, "/proxy/missing", None).await;
            assert_eq!(status, StatusCode::NOT_FOUND);
        };
        tokio::time::timeout(TIMEOUT, exchange)
            .await
            .expect("the proxy hangs")
    });
    let totals = server.shutdown();
    // Each proxied request is two: the proxy's and the one it makes.
    assert_eq!(totals.requests, 8);
    assert_eq!(
        totals.off_worker, 0,
        "handlers ran off the runtime's workers"
    );
}

#[cfg(feature = "tokio-compat")]
#[test]
fn proxy_on_brigade_through_tokio_compat() {
    proxy(RuntimeKind::Brigade);
}

#[cfg(feature = "tokio-compat")]
#[test]
fn proxy_on_tokio() {
    proxy(RuntimeKind::Tokio);
}
