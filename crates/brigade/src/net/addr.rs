//! Address resolution without blocking a worker.

use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};

/// Values that resolve to one or more socket addresses: socket addresses,
/// `(ip, port)` pairs, and `"host:port"` strings. Strings that are not IP
/// literals are resolved with the system resolver on the blocking pool, so
/// a DNS lookup never blocks a worker.
///
/// This trait is sealed: it cannot be implemented outside brigade.
pub trait ToSocketAddrs: sealed::Sealed {}

pub(crate) mod sealed {
    use super::*;

    /// What resolving needs: nothing more, or a blocking lookup.
    pub enum Resolve {
        /// Already resolved.
        Ready(Vec<SocketAddr>),
        /// Needs the system resolver.
        Lookup(String),
    }

    /// The hidden part of [`ToSocketAddrs`].
    pub trait Sealed {
        /// Starts resolving.
        fn resolve(&self) -> Resolve;
    }
}

use sealed::{Resolve, Sealed};

/// Resolves `host` to its socket addresses, as tokio's `lookup_host`: a
/// name is looked up with the system resolver (`getaddrinfo`) on the
/// runtime's blocking pool, so a slow DNS server never holds a worker; an
/// IP address or socket address resolves at once, without a lookup.
///
/// Outside a brigade runtime the lookup runs on the calling thread.
///
/// # Examples
///
/// ```
/// let rt = brigade::Runtime::new()?;
/// rt.block_on(async {
///     let addrs: Vec<_> = brigade::net::lookup_host("localhost:8080").await?.collect();
///     assert!(!addrs.is_empty());
///     assert!(addrs.iter().all(|addr| addr.ip().is_loopback() && addr.port() == 8080));
///     std::io::Result::Ok(())
/// })?;
/// # Ok::<(), std::io::Error>(())
/// ```
pub async fn lookup_host<T>(host: T) -> io::Result<impl Iterator<Item = SocketAddr>>
where
    T: ToSocketAddrs,
{
    resolve(&host).await.map(Vec::into_iter)
}

/// Resolves `addr`, off the worker if a DNS lookup is needed.
pub(crate) async fn resolve(addr: &(impl ToSocketAddrs + ?Sized)) -> io::Result<Vec<SocketAddr>> {
    match addr.resolve() {
        Resolve::Ready(addrs) => Ok(addrs),
        Resolve::Lookup(host) => match crate::runtime::Handle::try_current().ok() {
            Some(handle) => handle
                .spawn_blocking(move || {
                    std::net::ToSocketAddrs::to_socket_addrs(&host).map(Iterator::collect)
                })
                .await
                .map_err(io::Error::from)?,
            None => std::net::ToSocketAddrs::to_socket_addrs(&host).map(Iterator::collect),
        },
    }
}

/// Tries `op` on each address in turn; returns the first success or the
/// last error.
pub(crate) async fn first_ok<T, F, Fut>(addrs: Vec<SocketAddr>, mut op: F) -> io::Result<T>
where
    F: FnMut(SocketAddr) -> Fut,
    Fut: std::future::Future<Output = io::Result<T>>,
{
    let mut last_error = None;
    for addr in addrs {
        match op(addr).await {
            Ok(value) => return Ok(value),
            Err(error) => last_error = Some(error),
        }
    }
    Err(last_error.unwrap_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "could not resolve to any address",
        )
    }))
}

macro_rules! ready_impl {
    ($($ty:ty => |$this:ident| $to_addr:expr),* $(,)?) => {$(
        impl ToSocketAddrs for $ty {}
        impl Sealed for $ty {
            fn resolve(&self) -> Resolve {
                let $this = self;
                Resolve::Ready(vec![$to_addr])
            }
        }
    )*};
}

ready_impl! {
    SocketAddr => |this| *this,
    SocketAddrV4 => |this| SocketAddr::V4(*this),
    SocketAddrV6 => |this| SocketAddr::V6(*this),
    (IpAddr, u16) => |this| SocketAddr::new(this.0, this.1),
    (Ipv4Addr, u16) => |this| SocketAddr::new(IpAddr::V4(this.0), this.1),
    (Ipv6Addr, u16) => |this| SocketAddr::new(IpAddr::V6(this.0), this.1),
}

impl ToSocketAddrs for [SocketAddr] {}
impl Sealed for [SocketAddr] {
    fn resolve(&self) -> Resolve {
        Resolve::Ready(self.to_vec())
    }
}

impl ToSocketAddrs for str {}
impl Sealed for str {
    fn resolve(&self) -> Resolve {
        match self.parse::<SocketAddr>() {
            Ok(addr) => Resolve::Ready(vec![addr]),
            Err(_) => Resolve::Lookup(self.to_owned()),
        }
    }
}

impl ToSocketAddrs for String {}
impl Sealed for String {
    fn resolve(&self) -> Resolve {
        self.as_str().resolve()
    }
}

impl ToSocketAddrs for (&str, u16) {}
impl Sealed for (&str, u16) {
    fn resolve(&self) -> Resolve {
        match self.0.parse::<IpAddr>() {
            Ok(ip) => Resolve::Ready(vec![SocketAddr::new(ip, self.1)]),
            Err(_) => Resolve::Lookup(format!("{}:{}", self.0, self.1)),
        }
    }
}

impl ToSocketAddrs for (String, u16) {}
impl Sealed for (String, u16) {
    fn resolve(&self) -> Resolve {
        (self.0.as_str(), self.1).resolve()
    }
}

impl<T: ToSocketAddrs + ?Sized> ToSocketAddrs for &T {}
impl<T: Sealed + ?Sized> Sealed for &T {
    fn resolve(&self) -> Resolve {
        (**self).resolve()
    }
}
