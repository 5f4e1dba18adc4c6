//! A tonic service served by `brigade_hyper::serve` (tonic's `Routes`, over
//! HTTP/2 with prior knowledge), called by tonic's own client on a tokio
//! runtime of its own: a unary call and a server-streaming call.
//!
//! The messages are prost structs and the service is written by hand on
//! tonic's `server::Grpc`, as tonic's generated code is, so no `protoc` is
//! needed. Every wait is bounded by `support::LIMIT`.

mod support;

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use http::uri::PathAndQuery;
use support::{LIMIT, start};
use tonic::codegen::BoxFuture;
use tonic::server::{Grpc, NamedService, ServerStreamingService, UnaryService};
use tonic::{Request, Response, Status, Streaming};
use tonic_prost::ProstCodec;

type Error = Box<dyn std::error::Error + Send + Sync>;

/// The request of both methods.
#[derive(Clone, PartialEq, prost::Message)]
struct EchoRequest {
    #[prost(string, tag = "1")]
    message: String,
    /// How many replies `Stream` sends.
    #[prost(uint32, tag = "2")]
    count: u32,
}

/// A reply: the message, and whether the handler ran on a brigade worker.
#[derive(Clone, PartialEq, prost::Message)]
struct EchoReply {
    #[prost(string, tag = "1")]
    message: String,
    #[prost(bool, tag = "2")]
    on_worker: bool,
}

const UNARY: &str = "/test.Echo/Unary";
const STREAM: &str = "/test.Echo/Stream";

/// The `test.Echo` service: `Unary` echoes, `Stream` echoes `count` times.
#[derive(Clone, Debug)]
struct EchoServer;

impl NamedService for EchoServer {
    const NAME: &'static str = "test.Echo";
}

struct Unary;

impl UnaryService<EchoRequest> for Unary {
    type Response = EchoReply;
    type Future = BoxFuture<Response<EchoReply>, Status>;

    fn call(&mut self, request: Request<EchoRequest>) -> Self::Future {
        Box::pin(async move {
            let message = request.into_inner().message;
            Ok(Response::new(EchoReply {
                message,
                on_worker: support::on_brigade_worker(),
            }))
        })
    }
}

struct Streamer;

type ReplyStream = tokio_stream::Iter<std::vec::IntoIter<Result<EchoReply, Status>>>;

impl ServerStreamingService<EchoRequest> for Streamer {
    type Response = EchoReply;
    type ResponseStream = ReplyStream;
    type Future = BoxFuture<Response<ReplyStream>, Status>;

    fn call(&mut self, request: Request<EchoRequest>) -> Self::Future {
        Box::pin(async move {
            let EchoRequest { message, count } = request.into_inner();
            let on_worker = support::on_brigade_worker();
            let replies: Vec<_> = (0..count)
                .map(|n| {
                    Ok(EchoReply {
                        message: format!("{message} {n}"),
                        on_worker,
                    })
                })
                .collect();
            Ok(Response::new(tokio_stream::iter(replies)))
        })
    }
}

impl<B> tower_service::Service<http::Request<B>> for EchoServer
where
    B: http_body::Body + Send + 'static,
    B::Error: Into<Error> + Send + 'static,
{
    type Response = http::Response<tonic::body::Body>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: http::Request<B>) -> Self::Future {
        Box::pin(async move {
            let mut grpc = Grpc::new(ProstCodec::<EchoReply, EchoRequest>::default());
            let response = match request.uri().path() {
                UNARY => grpc.unary(Unary, request).await,
                STREAM => grpc.server_streaming(Streamer, request).await,
                _ => Status::unimplemented("no such method").into_http(),
            };
            Ok(response)
        })
    }
}

/// Runs `calls` with a tonic client connected to `addr`, on a tokio
/// runtime of its own, bounded.
fn with_client<F>(
    addr: std::net::SocketAddr,
    calls: impl FnOnce(tonic::client::Grpc<tonic::transport::Channel>) -> F,
) where
    F: Future<Output = Result<(), Error>>,
{
    let rt = support::tokio_client_runtime();
    rt.block_on(async {
        tokio::time::timeout(LIMIT, async {
            let channel = tonic::transport::Endpoint::from_shared(format!("http://{addr}"))?
                .connect()
                .await?;
            calls(tonic::client::Grpc::new(channel)).await
        })
        .await
    })
    .expect("the calls timed out")
    .unwrap();
}

fn codec() -> ProstCodec<EchoRequest, EchoReply> {
    ProstCodec::default()
}

#[test]
fn a_unary_and_a_server_streaming_call_are_served_on_brigade_workers() {
    let server = start(tonic::service::Routes::new(EchoServer), |serve| serve);
    with_client(server.addr, |mut grpc| async move {
        grpc.ready().await?;
        let request = EchoRequest {
            message: "hello".to_owned(),
            count: 0,
        };
        let path = PathAndQuery::from_static(UNARY);
        let reply = grpc
            .unary(Request::new(request), path, codec())
            .await?
            .into_inner();
        assert_eq!(reply.message, "hello");
        assert!(reply.on_worker, "the unary handler ran on a brigade worker");

        grpc.ready().await?;
        let request = EchoRequest {
            message: "item".to_owned(),
            count: 3,
        };
        let path = PathAndQuery::from_static(STREAM);
        let mut stream: Streaming<EchoReply> = grpc
            .server_streaming(Request::new(request), path, codec())
            .await?
            .into_inner();
        let mut messages = Vec::new();
        while let Some(reply) = stream.message().await? {
            assert!(
                reply.on_worker,
                "the streaming handler ran on a brigade worker"
            );
            messages.push(reply.message);
        }
        assert_eq!(messages, ["item 0", "item 1", "item 2"]);

        // An unknown method is tonic's "unimplemented", over the same server.
        grpc.ready().await?;
        let path = PathAndQuery::from_static("/test.Echo/Missing");
        let status = grpc
            .unary(Request::new(EchoRequest::default()), path, codec())
            .await
            .unwrap_err();
        assert_eq!(status.code(), tonic::Code::Unimplemented);
        Ok(())
    });
    server.shutdown().unwrap();
}
