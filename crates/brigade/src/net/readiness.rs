//! What every socket type shares: waiting for readiness (`ready`,
//! `readable`, `writable` and their `poll_` forms) and running one's own
//! non-blocking operation against it (`try_io`, `async_io`), as tokio's
//! sockets do.

/// Gives a socket type (a struct with an `io: PollEvented<S>` field) its
/// readiness methods; `$poll_read_ready`/`$poll_write_ready` name the
/// `poll_` forms (tokio's streams say read/write, its datagram sockets
/// recv/send).
macro_rules! readiness {
    ($ty:ident, $poll_read_ready:ident, $poll_write_ready:ident) => {
        impl $ty {
            /// Waits until the socket may be ready for `interest` (reading,
            /// writing, or either) and returns what the reactor reported.
            ///
            /// Readiness is a hint: the next `try_` call may still report
            /// `WouldBlock`, after which the next wait waits for a new
            /// event. Fails only once the runtime has shut down. Cancel
            /// safe.
            pub async fn ready(
                &self,
                interest: $crate::io::Interest,
            ) -> std::io::Result<$crate::io::Ready> {
                self.io.ready(interest).await
            }

            /// Waits until the socket may be readable (or its read half is
            /// closed). Usually followed by a `try_` read; see
            /// [`ready`](Self::ready).
            pub async fn readable(&self) -> std::io::Result<()> {
                self.ready($crate::io::Interest::READABLE).await.map(drop)
            }

            /// Waits until the socket may be writable (or its write half is
            /// closed). Usually followed by a `try_` write; see
            /// [`ready`](Self::ready).
            pub async fn writable(&self) -> std::io::Result<()> {
                self.ready($crate::io::Interest::WRITABLE).await.map(drop)
            }

            /// Polls for read readiness, as [`readable`](Self::readable)
            /// waits for it: `Pending` registers the task's waker.
            pub fn $poll_read_ready(
                &self,
                cx: &mut std::task::Context<'_>,
            ) -> std::task::Poll<std::io::Result<()>> {
                self.io
                    .poll_ready(cx, $crate::io::Interest::READABLE)
                    .map_ok(drop)
            }

            /// Polls for write readiness, as [`writable`](Self::writable)
            /// waits for it: `Pending` registers the task's waker.
            pub fn $poll_write_ready(
                &self,
                cx: &mut std::task::Context<'_>,
            ) -> std::task::Poll<std::io::Result<()>> {
                self.io
                    .poll_ready(cx, $crate::io::Interest::WRITABLE)
                    .map_ok(drop)
            }

            /// Runs `f`, a non-blocking operation of the caller's own on
            /// this socket (through its file descriptor), if the socket may
            /// be ready for `interest`; otherwise returns `WouldBlock`
            /// without calling it. If `f` returns `WouldBlock`, the
            /// readiness is cleared, so the next wait waits for a new event:
            /// `f` must return `WouldBlock` only when the socket reported it.
            pub fn try_io<R>(
                &self,
                interest: $crate::io::Interest,
                f: impl FnOnce() -> std::io::Result<R>,
            ) -> std::io::Result<R> {
                self.io.try_io(interest, |_| f())
            }

            /// Waits for `interest` and runs `f` until it returns something
            /// other than `WouldBlock` (see [`try_io`](Self::try_io) for
            /// what `f` must respect).
            pub async fn async_io<R>(
                &self,
                interest: $crate::io::Interest,
                mut f: impl FnMut() -> std::io::Result<R>,
            ) -> std::io::Result<R> {
                self.io.async_io(interest, |_| f()).await
            }
        }
    };
}

pub(crate) use readiness;
