//! `grpc_service`'s tonic service, started in-process on each runtime on
//! an ephemeral port, with the bulk job on, through tonic's own client (on
//! a tokio runtime of the test's own): unary `Get` and `Put`, a streaming
//! `Scan`, a bad request's status; the bulk job makes progress, and every
//! handler ran on the runtime's worker threads.

use std::net::SocketAddr;
use std::time::Duration;

use brigade_examples::harness::RuntimeKind;
use brigade_examples::service::grpc::KvClient;
use brigade_examples::service::grpc::messages::{GetRequest, PutRequest, ScanRequest};
use brigade_examples::service::store::key_name;
use brigade_examples::service::{self, Config, Server};
use hyper::body::Bytes;
use tonic::Code;

/// Bound on each exchange and wait: a hang, not slowness.
const TIMEOUT: Duration = Duration::from_secs(30);

fn start(runtime: RuntimeKind) -> Server {
    let config = Config {
        runtime,
        bulk: 2,
        keys: 1000,
        ..Config::with_port(0)
    };
    service::grpc::start(&config).expect("the service starts")
}

/// Unary and streaming calls; returns the calls made.
async fn exercise(addr: SocketAddr) -> u64 {
    let mut client = KvClient::connect(format!("http://{addr}")).await.unwrap();
    let get = |key: &str| GetRequest {
        key: key.to_owned(),
    };

    let reply = client.get(get(&key_name(42))).await.unwrap().into_inner();
    assert!(reply.found);
    assert_eq!((reply.value, reply.version), (Bytes::from("42"), 1));

    let put = PutRequest {
        key: "fresh".to_owned(),
        value: Bytes::from("v1"),
    };
    assert_eq!(
        client.put(put.clone()).await.unwrap().into_inner().version,
        1
    );
    assert_eq!(client.put(put).await.unwrap().into_inner().version, 2);
    let reply = client.get(get("fresh")).await.unwrap().into_inner();
    assert_eq!(
        (reply.found, reply.value, reply.version),
        (true, Bytes::from("v1"), 2)
    );
    assert!(!client.get(get("missing")).await.unwrap().into_inner().found);

    // Keys 100..150 in order, across the store's shards.
    let scan = ScanRequest {
        start: key_name(100),
        end: key_name(150),
        limit: 1000,
    };
    let mut stream = client.scan(scan).await.unwrap().into_inner();
    let mut keys = Vec::new();
    while let Some(entry) = stream.message().await.unwrap() {
        assert_eq!(
            entry.value,
            Bytes::from(entry.key[4..].trim_start_matches('0').to_owned())
        );
        keys.push(entry.key);
    }
    assert_eq!(keys, (100..150).map(key_name).collect::<Vec<_>>());

    let too_many = ScanRequest {
        limit: u32::MAX,
        ..ScanRequest::default()
    };
    let status = client.scan(too_many).await.unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument);
    assert!(status.message().contains("limit"), "{status:?}");
    7
}

/// Waits (at most `TIMEOUT`) until the bulk job has done more than
/// `units` units; the count then.
fn bulk_passes(server: &Server, units: u64) -> u64 {
    server
        .wait_for_units_above(units, TIMEOUT)
        .expect("the bulk job made no progress")
}

fn unary_and_streaming_calls(runtime: RuntimeKind) {
    let server = start(runtime);
    let before = bulk_passes(&server, 0);
    let client = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let calls = client.block_on(async {
        tokio::time::timeout(TIMEOUT, exercise(server.addr()))
            .await
            .expect("the calls hang")
    });
    bulk_passes(&server, before);
    let totals = server.shutdown();
    assert_eq!(totals.requests, calls);
    assert_eq!(
        totals.off_worker, 0,
        "handlers ran off the runtime's workers"
    );
}

#[test]
fn calls_on_brigade() {
    unary_and_streaming_calls(RuntimeKind::Brigade);
}

#[test]
fn calls_on_tokio() {
    unary_and_streaming_calls(RuntimeKind::Tokio);
}
