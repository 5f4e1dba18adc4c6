//! [`ConnectInfo`]: the peer's address, handed to each request.

use std::net::SocketAddr;
use std::task::{Context, Poll};

/// The address of the client a request came from: a request extension that
/// [`serve`](crate::serve) adds when asked to with
/// [`Serve::with_connect_info`](crate::Serve::with_connect_info).
///
/// # Examples
///
/// In a handler of a hyper `service_fn` (axum handlers can use axum's own
/// `ConnectInfo` extractor, with this crate's `axum` feature):
///
/// ```
/// use brigade_hyper::ConnectInfo;
///
/// fn peer_of<B>(request: &http::Request<B>) -> Option<std::net::SocketAddr> {
///     request.extensions().get::<ConnectInfo>().map(|info| info.0)
/// }
/// # let _ = peer_of::<()>;
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ConnectInfo(pub SocketAddr);

/// A service that adds the peer's address to each request, as
/// [`ConnectInfo`] (and as axum's `ConnectInfo`, with the `axum` feature),
/// before passing it on; with no address it passes requests on unchanged.
#[derive(Clone, Debug)]
pub(super) struct WithConnectInfo<S> {
    inner: S,
    peer: Option<SocketAddr>,
}

impl<S> WithConnectInfo<S> {
    pub(super) fn new(inner: S, peer: Option<SocketAddr>) -> Self {
        WithConnectInfo { inner, peer }
    }
}

impl<S, B> tower_service::Service<http::Request<B>> for WithConnectInfo<S>
where
    S: tower_service::Service<http::Request<B>>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: http::Request<B>) -> S::Future {
        if let Some(peer) = self.peer {
            let extensions = request.extensions_mut();
            extensions.insert(ConnectInfo(peer));
            #[cfg(feature = "axum")]
            extensions.insert(axum::extract::ConnectInfo(peer));
        }
        self.inner.call(request)
    }
}
