//! Generates the `grpc_service` example's server and client code (the
//! `kv.Kv` service of `proto/kv.proto`) with tonic-build's manual builder:
//! the service is described here in Rust, so no `protoc` is needed. The
//! messages are prost structs in `src/service/grpc/messages.rs`.

use tonic_build::manual::{Builder, Method, Service};

/// Where the messages live, as the generated code names them.
const MESSAGES: &str = "crate::service::grpc::messages";

fn method(name: &str, route: &str, input: &str, output: &str, streaming: bool) -> Method {
    let mut builder = Method::builder()
        .name(name)
        .route_name(route)
        .input_type(format!("{MESSAGES}::{input}"))
        .output_type(format!("{MESSAGES}::{output}"))
        .codec_path("tonic_prost::ProstCodec");
    if streaming {
        builder = builder.server_streaming();
    }
    builder.build()
}

fn main() {
    let kv = Service::builder()
        .name("Kv")
        .package("kv")
        .method(method("get", "Get", "GetRequest", "GetReply", false))
        .method(method("put", "Put", "PutRequest", "PutReply", false))
        .method(method("scan", "Scan", "ScanRequest", "Entry", true))
        .build();
    Builder::new().compile(&[kv]);
    println!("cargo:rerun-if-changed=build.rs");
}
