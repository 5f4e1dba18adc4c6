//! The messages of `kv.Kv` (`examples/proto/kv.proto`), written as prost
//! structs so that no `protoc` is needed to build. Field numbers and types
//! must match the `.proto` file, which is what `ghz` reads.

/// `kv.GetRequest`.
#[derive(Clone, PartialEq, Eq, ::prost::Message)]
pub struct GetRequest {
    /// The key.
    #[prost(string, tag = "1")]
    pub key: String,
}

/// `kv.GetReply`.
#[derive(Clone, PartialEq, Eq, ::prost::Message)]
pub struct GetReply {
    /// Whether the key is stored (else `value` is empty, `version` 0).
    #[prost(bool, tag = "1")]
    pub found: bool,
    /// Its value.
    #[prost(bytes = "bytes", tag = "2")]
    pub value: ::prost::bytes::Bytes,
    /// Its version: how many times it was put.
    #[prost(uint64, tag = "3")]
    pub version: u64,
}

/// `kv.PutRequest`.
#[derive(Clone, PartialEq, Eq, ::prost::Message)]
pub struct PutRequest {
    /// The key.
    #[prost(string, tag = "1")]
    pub key: String,
    /// Its new value.
    #[prost(bytes = "bytes", tag = "2")]
    pub value: ::prost::bytes::Bytes,
}

/// `kv.PutReply`.
#[derive(Clone, PartialEq, Eq, ::prost::Message)]
pub struct PutReply {
    /// The key's version after the put.
    #[prost(uint64, tag = "1")]
    pub version: u64,
}

/// `kv.ScanRequest`.
#[derive(Clone, PartialEq, Eq, ::prost::Message)]
pub struct ScanRequest {
    /// The first key (inclusive).
    #[prost(string, tag = "1")]
    pub start: String,
    /// The end (exclusive); empty: no end.
    #[prost(string, tag = "2")]
    pub end: String,
    /// At most this many entries.
    #[prost(uint32, tag = "3")]
    pub limit: u32,
}

/// `kv.Entry`: one key of a scan.
#[derive(Clone, PartialEq, Eq, ::prost::Message)]
pub struct Entry {
    /// The key.
    #[prost(string, tag = "1")]
    pub key: String,
    /// Its value.
    #[prost(bytes = "bytes", tag = "2")]
    pub value: ::prost::bytes::Bytes,
    /// Its version.
    #[prost(uint64, tag = "3")]
    pub version: u64,
}
