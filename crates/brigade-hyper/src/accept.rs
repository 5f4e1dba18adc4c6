//! [`accept`]: a server's accept that rides out the errors it should
//! survive, backing off while the process is out of descriptors or memory.
//!
//! Why: while `accept(2)` fails with `EMFILE` (or `ENFILE`, `ENOBUFS`,
//! `ENOMEM`), the pending connection stays in the listen backlog and the
//! listener stays readable, so an accept loop that retries at once spins at
//! 100% CPU until a descriptor is freed: a known failure of servers on
//! tokio. One that stops at the first error (`while let Ok(..)`) stops
//! serving for good. Well-known servers sleep instead: nginx stops
//! accepting for half a second, Go's `net/http` sleeps 5 ms doubling up to
//! 1 s. This one sleeps [`FIRST_PAUSE`] doubling up to [`MAX_PAUSE`], so a
//! freed descriptor is used within about 100 ms, at about ten `accept(2)`
//! calls a second meanwhile.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::time::Duration;

use brigade::net::{TcpListener, TcpStream};

/// The first pause after a resource error.
pub const FIRST_PAUSE: Duration = Duration::from_millis(10);

/// The longest pause between two tries while resource errors last.
pub const MAX_PAUSE: Duration = Duration::from_millis(100);

/// Accepts the next connection on `listener`, riding out the errors a
/// server should survive:
/// - a connection that failed before it was accepted (`ECONNABORTED`,
///   `ECONNRESET`, a network error that `accept(2)` passes on): the next
///   one is accepted at once;
/// - the process or the host is out of descriptors, buffers or memory
///   (`EMFILE`, `ENFILE`, `ENOBUFS`, `ENOMEM`): it sleeps [`FIRST_PAUSE`],
///   doubling up to [`MAX_PAUSE`], and tries again, instead of spinning
///   (see the module docs). The first error of such a spell is logged as a
///   warning (target `brigade_hyper::accept`), the end of it at info level.
///
/// Any other error is returned: the listener is unusable, or its runtime
/// has shut down.
///
/// # Examples
///
/// An accept loop that keeps serving through a shortage of descriptors:
///
/// ```
/// use brigade::net::{TcpListener, TcpStream};
/// use tokio::io::{AsyncReadExt, AsyncWriteExt};
///
/// let rt = brigade::Runtime::new()?;
/// rt.block_on(async {
///     let listener = TcpListener::bind("127.0.0.1:0").await?;
///     let addr = listener.local_addr()?;
///     brigade::spawn(async move {
///         while let Ok((mut stream, _peer)) = brigade_hyper::accept(&listener).await {
///             brigade::spawn(async move { stream.write_all(b"hi").await });
///         }
///     });
///     let mut client = TcpStream::connect(addr).await?;
///     let mut greeting = [0u8; 2];
///     client.read_exact(&mut greeting).await?;
///     assert_eq!(&greeting, b"hi");
///     std::io::Result::Ok(())
/// })?;
/// # Ok::<(), std::io::Error>(())
/// ```
pub async fn accept(listener: &TcpListener) -> io::Result<(TcpStream, SocketAddr)> {
    accept_with(|| listener.accept()).await
}

/// [`accept`] for any listener: `accept` is called for each try (for
/// example `|| unix_listener.accept()`), and its errors are handled as
/// [`accept`] handles them.
pub async fn accept_with<T, F, Fut>(mut accept: F) -> io::Result<T>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = io::Result<T>>,
{
    let mut failures = 0u32;
    let mut pause = FIRST_PAUSE;
    loop {
        let error = match accept().await {
            Ok(accepted) => {
                if failures > 0 {
                    tracing::info!(
                        target: "brigade_hyper::accept",
                        failures,
                        "accepting connections again after {failures} failed tries"
                    );
                }
                return Ok(accepted);
            }
            Err(error) => error,
        };
        match classify(&error) {
            Failure::Connection => continue,
            Failure::Fatal => return Err(error),
            Failure::Resources => {}
        }
        if failures == 0 {
            tracing::warn!(
                target: "brigade_hyper::accept",
                %error,
                "accept failed for lack of resources; retrying every {:?} at most until it \
                 works (reported once)",
                MAX_PAUSE
            );
        }
        failures = failures.saturating_add(1);
        brigade::time::sleep(pause).await;
        pause = (pause * 2).min(MAX_PAUSE);
    }
}

/// What an `accept(2)` error means for the loop.
#[derive(Debug, PartialEq, Eq)]
enum Failure {
    /// One connection failed before it was accepted: try the next at once.
    Connection,
    /// The process or host ran out of something: pause, then try again.
    Resources,
    /// The listener cannot go on: return the error.
    Fatal,
}

fn classify(error: &io::Error) -> Failure {
    if let Some(errno) = error.raw_os_error() {
        // accept(2), "Error handling": these are the new connection's own
        // errors, to be treated like EAGAIN by a retry.
        const CONNECTION: [i32; 10] = [
            libc::ECONNABORTED,
            libc::ECONNRESET,
            libc::EPROTO,
            libc::ENETDOWN,
            libc::ENOPROTOOPT,
            libc::EHOSTDOWN,
            libc::ENONET,
            libc::EHOSTUNREACH,
            libc::ENETUNREACH,
            libc::EINTR,
        ];
        const RESOURCES: [i32; 4] = [libc::EMFILE, libc::ENFILE, libc::ENOBUFS, libc::ENOMEM];
        if CONNECTION.contains(&errno) {
            return Failure::Connection;
        }
        if RESOURCES.contains(&errno) {
            return Failure::Resources;
        }
    }
    match error.kind() {
        io::ErrorKind::ConnectionAborted
        | io::ErrorKind::ConnectionReset
        | io::ErrorKind::Interrupted => Failure::Connection,
        _ => Failure::Fatal,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_are_classified_as_accept_2_says() {
        let os = io::Error::from_raw_os_error;
        assert_eq!(classify(&os(libc::EMFILE)), Failure::Resources);
        assert_eq!(classify(&os(libc::ENFILE)), Failure::Resources);
        assert_eq!(classify(&os(libc::ENOBUFS)), Failure::Resources);
        assert_eq!(classify(&os(libc::ENOMEM)), Failure::Resources);
        assert_eq!(classify(&os(libc::ECONNABORTED)), Failure::Connection);
        assert_eq!(classify(&os(libc::EPROTO)), Failure::Connection);
        assert_eq!(classify(&os(libc::EBADF)), Failure::Fatal);
        assert_eq!(classify(&os(libc::EINVAL)), Failure::Fatal);
        assert_eq!(
            classify(&io::Error::other("the runtime has shut down")),
            Failure::Fatal
        );
    }
}
