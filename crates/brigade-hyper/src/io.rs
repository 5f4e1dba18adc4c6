//! [`BrigadeIo`]: hyper's IO traits over brigade's sockets.

use std::cell::RefCell;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use pin_project_lite::pin_project;

/// The most bytes one `poll_read` asks for.
const MAX_READ: usize = 64 * 1024;

thread_local! {
    /// Where reads land before they are copied into hyper's buffer: one
    /// per thread, zeroed once.
    ///
    /// hyper hands each read a fresh cursor over the uninitialised spare
    /// capacity of its buffer, and `futures_io::AsyncRead` reads only into
    /// initialised bytes, so reading there means zeroing the whole request
    /// first, at every read, including the one that finds the socket empty
    /// (hyper's 8 KiB buffer: two 8 KiB `memset`s per small request, 1.5%
    /// of `http_import`'s server CPU at 20,000 requests/s, where tokio's
    /// streams read into the buffer uninitialised). Reading here and
    /// copying costs only the bytes that arrived.
    static SCRATCH: RefCell<Box<[u8]>> = RefCell::new(vec![0; MAX_READ].into_boxed_slice());
}

pin_project! {
    /// Adapts a `futures-io` stream, such as [`brigade::net::TcpStream`], to
    /// [`hyper::rt::Read`] and [`hyper::rt::Write`], so hyper can serve and
    /// send requests over it.
    ///
    /// It plays the part that `hyper_util::rt::TokioIo` plays for tokio, on
    /// `futures-io`'s traits, which every brigade socket implements (with or
    /// without brigade's `tokio-io` feature). Reads go through a per-thread
    /// buffer and are copied into hyper's, so hyper's uninitialised buffer
    /// is never zeroed; writes, flushes and shutdowns are passed through.
    /// (`TokioIo` over a brigade `TcpStream` also works, through the
    /// `tokio-io` feature, but needs hyper-util's `tokio` feature, which
    /// compiles tokio's runtime and timer.)
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use brigade_hyper::BrigadeIo;
    ///
    /// # async fn f() -> std::io::Result<()> {
    /// let stream = brigade::net::TcpStream::connect("127.0.0.1:8080").await?;
    /// let io = BrigadeIo::new(stream);
    /// // Give `io` to hyper::client::conn::http1::handshake, or to a
    /// // hyper::server::conn builder's serve_connection.
    /// # drop(io);
    /// # Ok(())
    /// # }
    /// ```
    #[derive(Debug)]
    pub struct BrigadeIo<T> {
        #[pin]
        inner: T,
    }
}

impl<T> BrigadeIo<T> {
    /// Wraps `inner`.
    pub fn new(inner: T) -> Self {
        BrigadeIo { inner }
    }

    /// The wrapped stream.
    pub fn get_ref(&self) -> &T {
        &self.inner
    }

    /// The wrapped stream, mutably.
    pub fn get_mut(&mut self) -> &mut T {
        &mut self.inner
    }

    /// The wrapped stream, pinned.
    pub fn get_pin_mut(self: Pin<&mut Self>) -> Pin<&mut T> {
        self.project().inner
    }

    /// Unwraps the stream.
    pub fn into_inner(self) -> T {
        self.inner
    }
}

impl<T: futures_io::AsyncRead> hyper::rt::Read for BrigadeIo<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        mut buf: hyper::rt::ReadBufCursor<'_>,
    ) -> Poll<io::Result<()>> {
        let len = buf.remaining().min(MAX_READ);
        let mut inner = self.project().inner;
        let read = SCRATCH.with(|scratch| {
            // Busy only if `inner` reads through another `BrigadeIo` on this
            // thread: that one zeroes.
            let mut scratch = scratch.try_borrow_mut().ok()?;
            let scratch = &mut scratch[..len];
            Some(inner.as_mut().poll_read(cx, scratch).map_ok(|n| {
                let n = checked(n, len);
                buf.put_slice(&scratch[..n]);
            }))
        });
        match read {
            Some(read) => read,
            None => read_zeroed(inner, cx, buf, len),
        }
    }
}

/// `n`, the count a read that asked for `len` bytes returned, if it is at
/// most `len`.
fn checked(n: usize, len: usize) -> usize {
    assert!(
        n <= len,
        "AsyncRead::poll_read returned more bytes than asked for"
    );
    n
}

/// Reads up to `len` bytes straight into hyper's buffer, zeroing them first.
fn read_zeroed<T: futures_io::AsyncRead>(
    inner: Pin<&mut T>,
    cx: &mut Context<'_>,
    mut buf: hyper::rt::ReadBufCursor<'_>,
    len: usize,
) -> Poll<io::Result<()>> {
    let unfilled = buf.initialize_unfilled_to(len);
    let n = checked(ready!(inner.poll_read(cx, unfilled))?, len);
    // SAFETY: `initialize_unfilled_to(len)` initialised the first `len`
    // bytes of the unfilled region and `n <= len`, so the `n` bytes this
    // marks as filled are initialised (the read wrote into them).
    unsafe { buf.advance(n) };
    Poll::Ready(Ok(()))
}

impl<T: futures_io::AsyncWrite> hyper::rt::Write for BrigadeIo<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.project().inner.poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.project().inner.poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.project().inner.poll_close(cx)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.project().inner.poll_write_vectored(cx, bufs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::rt::{Read, ReadBuf, Write};
    use std::future::poll_fn;
    use std::mem::MaybeUninit;

    /// A futures-io stream over in-memory bytes.
    struct Memory {
        input: &'static [u8],
        output: Vec<u8>,
        closed: bool,
    }

    impl futures_io::AsyncRead for Memory {
        fn poll_read(
            mut self: Pin<&mut Self>,
            _cx: &mut Context<'_>,
            buf: &mut [u8],
        ) -> Poll<io::Result<usize>> {
            let n = buf.len().min(self.input.len());
            buf[..n].copy_from_slice(&self.input[..n]);
            self.input = &self.input[n..];
            Poll::Ready(Ok(n))
        }
    }

    impl futures_io::AsyncWrite for Memory {
        fn poll_write(
            mut self: Pin<&mut Self>,
            _cx: &mut Context<'_>,
            buf: &[u8],
        ) -> Poll<io::Result<usize>> {
            self.output.extend_from_slice(buf);
            Poll::Ready(Ok(buf.len()))
        }

        fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }

        fn poll_close(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
            self.closed = true;
            Poll::Ready(Ok(()))
        }
    }

    fn block_on<F: std::future::Future>(future: F) -> F::Output {
        let mut future = std::pin::pin!(future);
        let mut cx = Context::from_waker(std::task::Waker::noop());
        match future.as_mut().poll(&mut cx) {
            Poll::Ready(output) => output,
            Poll::Pending => panic!("in-memory IO never pends"),
        }
    }

    #[test]
    fn reads_fill_hypers_uninitialised_buffer() {
        let mut io = BrigadeIo::new(Memory {
            input: b"hello, hyper",
            output: Vec::new(),
            closed: false,
        });
        let mut storage = [MaybeUninit::<u8>::uninit(); 5];
        let mut buf = ReadBuf::uninit(&mut storage);
        block_on(poll_fn(|cx| {
            Pin::new(&mut io).poll_read(cx, buf.unfilled())
        }))
        .unwrap();
        assert_eq!(buf.filled(), b"hello");

        let mut big = vec![MaybeUninit::<u8>::uninit(); 2 * MAX_READ];
        let mut buf = ReadBuf::uninit(&mut big);
        block_on(poll_fn(|cx| {
            Pin::new(&mut io).poll_read(cx, buf.unfilled())
        }))
        .unwrap();
        assert_eq!(buf.filled(), b", hyper");
    }

    /// A futures-io stream that reads through a `BrigadeIo` of its own.
    struct Nested(BrigadeIo<Memory>);

    impl futures_io::AsyncRead for Nested {
        fn poll_read(
            mut self: Pin<&mut Self>,
            cx: &mut Context<'_>,
            buf: &mut [u8],
        ) -> Poll<io::Result<usize>> {
            let mut buf = ReadBuf::new(buf);
            ready!(Pin::new(&mut self.0).poll_read(cx, buf.unfilled()))?;
            Poll::Ready(Ok(buf.filled().len()))
        }
    }

    #[test]
    fn a_brigade_io_inside_another_reads_too() {
        let inner = BrigadeIo::new(Memory {
            input: b"nested bytes",
            output: Vec::new(),
            closed: false,
        });
        let mut io = BrigadeIo::new(Nested(inner));
        let mut storage = [MaybeUninit::<u8>::uninit(); 64];
        let mut buf = ReadBuf::uninit(&mut storage);
        block_on(poll_fn(|cx| {
            Pin::new(&mut io).poll_read(cx, buf.unfilled())
        }))
        .unwrap();
        assert_eq!(buf.filled(), b"nested bytes");
    }

    #[test]
    fn writes_flushes_and_shutdowns_pass_through() {
        let mut io = BrigadeIo::new(Memory {
            input: b"",
            output: Vec::new(),
            closed: false,
        });
        let n = block_on(poll_fn(|cx| Pin::new(&mut io).poll_write(cx, b"GET /"))).unwrap();
        assert_eq!(n, 5);
        block_on(poll_fn(|cx| Pin::new(&mut io).poll_flush(cx))).unwrap();
        block_on(poll_fn(|cx| Pin::new(&mut io).poll_shutdown(cx))).unwrap();
        let memory = io.into_inner();
        assert_eq!(memory.output, b"GET /");
        assert!(memory.closed);
    }
}
