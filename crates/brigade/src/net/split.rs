//! The halves of a split stream, for `TcpStream` (in `net::tcp`) and
//! `UnixStream` (in `net::unix`), with tokio's names and behaviour:
//! `split` borrows the stream; `into_split` shares it through an `Arc` and
//! `reunite` takes it back.
//!
//! ## Protocol
//! The halves need no synchronisation of their own: every operation on
//! the stream takes `&self` (the reactor's readiness cell keeps readers and
//! writers apart), so each half just holds `&Stream` or `Arc<Stream>`.
//! Dropping an `OwnedWriteHalf` shuts the write direction down (the peer
//! reads end of stream) unless it was shut down already or `forget` or
//! `reunite` consumed it; the read half only drops its `Arc`, so the socket
//! closes once both halves are gone.

/// Declares `ReadHalf`, `WriteHalf`, `OwnedReadHalf`, `OwnedWriteHalf` and
/// `ReuniteError` for `$stream` (whose local and peer addresses are
/// `$addr`) in the calling module, and `split`/`into_split` on `$stream`.
macro_rules! split_halves {
    ($stream:ident, $addr:ty) => {
        use std::fmt;
        use std::net::Shutdown;
        use std::sync::Arc;

        impl $stream {
            /// Splits the stream into a read half and a write half that
            /// borrow it, for reading and writing at the same time within
            /// one task (with `select!` or `join!`). Costs nothing.
            /// Dropping the halves does not shut the stream down.
            pub fn split(&mut self) -> (ReadHalf<'_>, WriteHalf<'_>) {
                (ReadHalf(self), WriteHalf(self))
            }

            /// Splits the stream into owned halves that can move into
            /// different tasks. Dropping the write half shuts the write
            /// direction down (see [`OwnedWriteHalf`]);
            /// [`OwnedReadHalf::reunite`] puts the stream back together.
            pub fn into_split(self) -> (OwnedReadHalf, OwnedWriteHalf) {
                let stream = Arc::new(self);
                let read = OwnedReadHalf {
                    stream: stream.clone(),
                };
                let write = OwnedWriteHalf {
                    stream,
                    shutdown_on_drop: true,
                };
                (read, write)
            }
        }

        #[doc = concat!("The read half of a [`", stringify!($stream), "`], from [`",
                                    stringify!($stream), "::split`]: it borrows the stream.")]
        ///
        /// It implements tokio's and `futures_io`'s `AsyncRead`.
        #[derive(Debug)]
        pub struct ReadHalf<'a>(&'a $stream);

        #[doc = concat!("The write half of a [`", stringify!($stream), "`], from [`",
                                    stringify!($stream), "::split`]: it borrows the stream.")]
        ///
        /// It implements tokio's and `futures_io`'s `AsyncWrite`; shutting
        /// it down (`poll_shutdown`/`poll_close`) shuts the stream's write
        /// direction down. Dropping it does not.
        #[derive(Debug)]
        pub struct WriteHalf<'a>(&'a $stream);

        #[doc = concat!("The owned read half of a [`", stringify!($stream), "`], from [`",
                                    stringify!($stream), "::into_split`].")]
        ///
        /// It implements tokio's and `futures_io`'s `AsyncRead`. The socket
        /// closes when both halves are dropped.
        #[derive(Debug)]
        pub struct OwnedReadHalf {
            stream: Arc<$stream>,
        }

        #[doc = concat!("The owned write half of a [`", stringify!($stream), "`], from [`",
                                    stringify!($stream), "::into_split`].")]
        ///
        /// It implements tokio's and `futures_io`'s `AsyncWrite`. Dropping
        /// it shuts the write direction down (the peer reads end of
        /// stream), as does shutting it down through `AsyncWrite`;
        /// [`forget`](Self::forget) drops it without.
        #[derive(Debug)]
        pub struct OwnedWriteHalf {
            stream: Arc<$stream>,
            shutdown_on_drop: bool,
        }

        /// The error of `reunite` with halves of two different streams; it
        /// hands both halves back.
        #[derive(Debug)]
        pub struct ReuniteError(pub OwnedReadHalf, pub OwnedWriteHalf);

        impl fmt::Display for ReuniteError {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("tried to reunite halves that are not from the same socket")
            }
        }

        impl std::error::Error for ReuniteError {}

        /// Joins the halves of `$stream` back together, or hands them back.
        fn reunite(read: OwnedReadHalf, write: OwnedWriteHalf) -> Result<$stream, ReuniteError> {
            if !Arc::ptr_eq(&read.stream, &write.stream) {
                return Err(ReuniteError(read, write));
            }
            write.forget();
            // The two halves held the only references, and `forget` dropped
            // the write half's.
            Ok(Arc::into_inner(read.stream).expect("the read half holds the last reference"))
        }

        impl OwnedReadHalf {
            /// Joins this half with `other` into the original stream; fails
            /// with both halves handed back if they come from different
            /// streams.
            pub fn reunite(self, other: OwnedWriteHalf) -> Result<$stream, ReuniteError> {
                reunite(self, other)
            }
        }

        impl OwnedWriteHalf {
            /// Joins this half with `other` into the original stream; fails
            /// with both halves handed back if they come from different
            /// streams.
            pub fn reunite(self, other: OwnedReadHalf) -> Result<$stream, ReuniteError> {
                reunite(other, self)
            }

            /// Drops the half without shutting the write direction down.
            pub fn forget(mut self) {
                self.shutdown_on_drop = false;
            }

            fn shut_down(&mut self) {
                self.shutdown_on_drop = false;
            }
        }

        impl WriteHalf<'_> {
            fn shut_down(&mut self) {}
        }

        impl Drop for OwnedWriteHalf {
            fn drop(&mut self) {
                if self.shutdown_on_drop {
                    // Nothing to report to: the peer may already be gone.
                    let _ = self.stream.shutdown_now(Shutdown::Write);
                }
            }
        }

        $crate::net::split::as_stream!(ReadHalf<'_>, $stream, |half| half.0);
        $crate::net::split::as_stream!(WriteHalf<'_>, $stream, |half| half.0);
        $crate::net::split::as_stream!(OwnedReadHalf, $stream, |half| &half.stream);
        $crate::net::split::as_stream!(OwnedWriteHalf, $stream, |half| &half.stream);
        $crate::net::split::read_half!(ReadHalf<'_>, $addr);
        $crate::net::split::read_half!(OwnedReadHalf, $addr);
        $crate::net::split::write_half!(WriteHalf<'_>, $addr);
        $crate::net::split::write_half!(OwnedWriteHalf, $addr);
    };
}

/// `AsRef<$stream>` for a half, and the private `stream()` the other
/// methods delegate through.
macro_rules! as_stream {
    ($half:ty, $stream:ident, |$this:ident| $get:expr) => {
        impl $half {
            fn stream(&self) -> &$stream {
                let $this = self;
                $get
            }
        }

        impl AsRef<$stream> for $half {
            fn as_ref(&self) -> &$stream {
                self.stream()
            }
        }
    };
}

/// The methods every half has, delegated to the stream it holds.
macro_rules! common_half_methods {
    ($addr:ty) => {
        /// Waits until the stream may be ready for `interest`; see the
        /// stream's `ready`.
        pub async fn ready(
            &self,
            interest: $crate::io::Interest,
        ) -> std::io::Result<$crate::io::Ready> {
            self.stream().ready(interest).await
        }

        /// The local address of the stream.
        pub fn local_addr(&self) -> std::io::Result<$addr> {
            self.stream().local_addr()
        }

        /// The address of the other end.
        pub fn peer_addr(&self) -> std::io::Result<$addr> {
            self.stream().peer_addr()
        }
    };
}

/// A read half's methods and `AsyncRead` impls.
macro_rules! read_half {
    ($half:ty, $addr:ty) => {
        impl $half {
            $crate::net::split::common_half_methods!($addr);

            /// Waits until the stream may be readable; see the stream's
            /// `readable`.
            pub async fn readable(&self) -> std::io::Result<()> {
                self.stream().readable().await
            }

            /// Reads without waiting; see the stream's `try_read`.
            pub fn try_read(&self, buf: &mut [u8]) -> std::io::Result<usize> {
                self.stream().try_read(buf)
            }

            /// Reads into several buffers without waiting; see the stream's
            /// `try_read_vectored`.
            pub fn try_read_vectored(
                &self,
                bufs: &mut [std::io::IoSliceMut<'_>],
            ) -> std::io::Result<usize> {
                self.stream().try_read_vectored(bufs)
            }
        }

        impl futures_io::AsyncRead for $half {
            fn poll_read(
                self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
                buf: &mut [u8],
            ) -> std::task::Poll<std::io::Result<usize>> {
                futures_io::AsyncRead::poll_read(std::pin::Pin::new(&mut self.stream()), cx, buf)
            }
        }

        #[cfg(feature = "tokio-io")]
        #[cfg_attr(docsrs, doc(cfg(feature = "tokio-io")))]
        impl tokio::io::AsyncRead for $half {
            fn poll_read(
                self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
                buf: &mut tokio::io::ReadBuf<'_>,
            ) -> std::task::Poll<std::io::Result<()>> {
                tokio::io::AsyncRead::poll_read(std::pin::Pin::new(&mut self.stream()), cx, buf)
            }
        }
    };
}

/// A write half's methods and `AsyncWrite` impls; shutting down through
/// them shuts the stream's write direction and marks the half as shut
/// (`shut_down`).
macro_rules! write_half {
    ($half:ty, $addr:ty) => {
        impl $half {
            $crate::net::split::common_half_methods!($addr);

            /// Waits until the stream may be writable; see the stream's
            /// `writable`.
            pub async fn writable(&self) -> std::io::Result<()> {
                self.stream().writable().await
            }

            /// Writes without waiting; see the stream's `try_write`.
            pub fn try_write(&self, buf: &[u8]) -> std::io::Result<usize> {
                self.stream().try_write(buf)
            }

            /// Writes from several buffers without waiting; see the
            /// stream's `try_write_vectored`.
            pub fn try_write_vectored(
                &self,
                bufs: &[std::io::IoSlice<'_>],
            ) -> std::io::Result<usize> {
                self.stream().try_write_vectored(bufs)
            }

            fn shutdown_write(&mut self) -> std::task::Poll<std::io::Result<()>> {
                let result = self.stream().shutdown_now(Shutdown::Write);
                if result.is_ok() {
                    self.shut_down();
                }
                std::task::Poll::Ready(result)
            }
        }

        impl futures_io::AsyncWrite for $half {
            fn poll_write(
                self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
                buf: &[u8],
            ) -> std::task::Poll<std::io::Result<usize>> {
                futures_io::AsyncWrite::poll_write(std::pin::Pin::new(&mut self.stream()), cx, buf)
            }

            fn poll_flush(
                self: std::pin::Pin<&mut Self>,
                _cx: &mut std::task::Context<'_>,
            ) -> std::task::Poll<std::io::Result<()>> {
                std::task::Poll::Ready(Ok(()))
            }

            fn poll_close(
                self: std::pin::Pin<&mut Self>,
                _cx: &mut std::task::Context<'_>,
            ) -> std::task::Poll<std::io::Result<()>> {
                self.get_mut().shutdown_write()
            }
        }

        #[cfg(feature = "tokio-io")]
        #[cfg_attr(docsrs, doc(cfg(feature = "tokio-io")))]
        impl tokio::io::AsyncWrite for $half {
            fn poll_write(
                self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
                buf: &[u8],
            ) -> std::task::Poll<std::io::Result<usize>> {
                tokio::io::AsyncWrite::poll_write(std::pin::Pin::new(&mut self.stream()), cx, buf)
            }

            fn poll_flush(
                self: std::pin::Pin<&mut Self>,
                _cx: &mut std::task::Context<'_>,
            ) -> std::task::Poll<std::io::Result<()>> {
                std::task::Poll::Ready(Ok(()))
            }

            fn poll_shutdown(
                self: std::pin::Pin<&mut Self>,
                _cx: &mut std::task::Context<'_>,
            ) -> std::task::Poll<std::io::Result<()>> {
                self.get_mut().shutdown_write()
            }
        }
    };
}

pub(crate) use {as_stream, common_half_methods, read_half, split_halves, write_half};
