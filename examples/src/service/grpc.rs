//! The tonic service of `grpc_service`: `kv.Kv` (`examples/proto/kv.proto`)
//! over the store, with unary `Get` and `Put` and a server-streaming `Scan`
//! over a key range.
//!
//! The same [`KvService`] runs on both runtimes: on brigade its routes
//! (`tonic::service::Routes`) are served by `brigade_hyper::serve`, on tokio
//! by `tonic::transport::Server`. Its server and client code is generated
//! by `examples/build.rs` (tonic-build's manual builder), its messages are
//! in [`messages`]: no `protoc` needed.

#[allow(unused_imports)]
use std::future::IntoFuture;
use std::io;
use std::sync::Arc;

use hyper::body::Bytes;
use tonic::codegen::tokio_stream;
use tonic::{Request, Response, Status};

use super::store::Store;
use super::{Config, Server, Stats, spawn_server};
use crate::harness::Runtime;

pub mod messages;

use messages::{Entry, GetReply, GetRequest, PutReply, PutRequest, ScanRequest};

/// The generated service and client code.
#[allow(missing_docs, unreachable_pub, clippy::all)]
mod generated {
    include!(concat!(env!("OUT_DIR"), "/kv.Kv.rs"));
}

pub use generated::kv_client::KvClient;
pub use generated::kv_server::{Kv, KvServer};

/// Entries a scan sends when its request's `limit` is 0.
pub const DEFAULT_SCAN: u32 = 100;

/// The largest `limit` a scan accepts.
pub const MAX_SCAN: u32 = 10_000;

/// The store and counters behind `kv.Kv`.
#[derive(Debug, Clone)]
pub struct KvService {
    store: Arc<Store<Bytes>>,
    stats: Arc<Stats>,
}

impl KvService {
    /// The service over `store`, counting in `stats`.
    pub fn new(store: Arc<Store<Bytes>>, stats: Arc<Stats>) -> KvService {
        KvService { store, stats }
    }
}

/// The stream a scan answers with: its entries, collected when it starts.
pub type ScanStream = tokio_stream::Iter<std::vec::IntoIter<Result<Entry, Status>>>;

#[tonic::async_trait]
impl Kv for KvService {
    async fn get(&self, request: Request<GetRequest>) -> Result<Response<GetReply>, Status> {
        self.stats.served();
        let reply = match self.store.get(&request.get_ref().key) {
            Some(entry) => GetReply {
                found: true,
                value: entry.value,
                version: entry.version,
            },
            None => GetReply::default(),
        };
        Ok(Response::new(reply))
    }

    async fn put(&self, request: Request<PutRequest>) -> Result<Response<PutReply>, Status> {
        self.stats.served();
        let PutRequest { key, value } = request.into_inner();
        let version = self.store.put(key, value);
        Ok(Response::new(PutReply { version }))
    }

    type ScanStream = ScanStream;

    async fn scan(&self, request: Request<ScanRequest>) -> Result<Response<ScanStream>, Status> {
        self.stats.served();
        let ScanRequest { start, end, limit } = request.into_inner();
        let limit = match limit {
            0 => DEFAULT_SCAN,
            1..=MAX_SCAN => limit,
            _ => {
                return Err(Status::invalid_argument(format!(
                    "limit must be at most {MAX_SCAN}, got {limit}"
                )));
            }
        };
        let end = (!end.is_empty()).then_some(end.as_str());
        let entries: Vec<_> = self
            .store
            .scan(&start, end, limit as usize)
            .into_iter()
            .map(|(key, entry)| {
                Ok(Entry {
                    key,
                    value: entry.value,
                    version: entry.version,
                })
            })
            .collect();
        Ok(Response::new(tokio_stream::iter(entries)))
    }
}

/// The value of key number `n` in the prefilled store: its number as text.
pub fn prefill_value(n: u64) -> Bytes {
    Bytes::from(n.to_string())
}

/// Starts the service on `config.runtime`, listening on `config.addr`,
/// with the bulk job.
pub fn start(config: &Config) -> io::Result<Server> {
    super::start(config, prefill_value, |runtime, store, stats| {
        let service = KvServer::new(KvService::new(store, stats));
        match runtime {
            Runtime::Brigade(rt) => {
                let listener = rt.block_on(brigade::net::TcpListener::bind(config.addr))?;
                let addr = listener.local_addr()?;
                let routes = tonic::service::Routes::new(service);
                spawn_server(
                    runtime,
                    brigade_hyper::serve(listener, routes).into_future(),
                );
                Ok(addr)
            }
            Runtime::Tokio(rt) => {
                let listener = rt.block_on(tokio::net::TcpListener::bind(config.addr))?;
                let addr = listener.local_addr()?;
                let incoming =
                    tonic::transport::server::TcpIncoming::from(listener).with_nodelay(Some(true));
                let server = tonic::transport::Server::builder()
                    .add_service(service)
                    .serve_with_incoming(incoming);
                spawn_server(
                    runtime,
                    async move { server.await.map_err(io::Error::other) },
                );
                Ok(addr)
            }
        }
    })
}
