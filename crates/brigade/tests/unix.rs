//! Unix domain sockets on brigade's reactor: echo over a listener, many
//! connections, pairs, half-close, transfers larger than the socket
//! buffer, datagrams, wake-ups on close and on runtime shutdown. Every wait
//! is bounded; nothing asserts a duration. Each test binds its own path in
//! the temp dir and removes it when done.
#![cfg(unix)]

mod common;

use std::future::Future;
use std::io;
use std::net::Shutdown;
use std::path::{Path, PathBuf};
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::task::{Context, Poll, Wake, Waker};

use brigade::net::{UnixDatagram, UnixListener, UnixStream};
use common::{TIMEOUT_SECS, bounded, local_block_on, wait_until, with_timeout};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A socket path unique to this process and call; the file is removed on
/// drop (brigade, like tokio, leaves it behind).
struct SocketPath(PathBuf);

impl SocketPath {
    fn new(test: &str) -> SocketPath {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let name = format!("brigade-{test}-{}-{n}.sock", std::process::id());
        let path = std::env::temp_dir().join(name);
        let _ = std::fs::remove_file(&path);
        SocketPath(path)
    }
}

impl AsRef<Path> for SocketPath {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl Drop for SocketPath {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// A waker that records whether it was woken.
#[derive(Default)]
struct Flag(AtomicBool);

impl Wake for Flag {
    fn wake(self: Arc<Self>) {
        self.0.store(true, Ordering::SeqCst);
    }
}

impl Flag {
    fn is_set(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

/// Polls `future` once with `flag` as its waker.
fn poll_with<F: Future>(future: Pin<&mut F>, flag: &Arc<Flag>) -> Poll<F::Output> {
    let waker = Waker::from(flag.clone());
    future.poll(&mut Context::from_waker(&waker))
}

fn runtime(workers: usize) -> brigade::Runtime {
    brigade::Builder::new()
        .worker_threads(workers)
        .build()
        .expect("runtime")
}

/// Reads until end of stream.
async fn read_to_end(mut stream: &UnixStream) -> Vec<u8> {
    let mut all = Vec::new();
    // On the heap: a large array would sit in every copy of the future.
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match stream.read(&mut buf).await.unwrap() {
            0 => return all,
            n => all.extend_from_slice(&buf[..n]),
        }
    }
}

#[brigade::test(worker_threads = 2)]
async fn listener_echo_round_trip() {
    bounded(async {
        let path = SocketPath::new("echo");
        let listener = UnixListener::bind(&path).unwrap();
        assert_eq!(listener.local_addr().unwrap().as_pathname(), Some(&*path.0));
        let server = brigade::spawn(async move {
            let (mut stream, _peer) = listener.accept().await.unwrap();
            let mut buf = [0u8; 5];
            stream.read_exact(&mut buf).await.unwrap();
            stream.write_all(&buf).await.unwrap();
        });
        let mut client = UnixStream::connect(&path).await.unwrap();
        assert_eq!(client.peer_addr().unwrap().as_pathname(), Some(&*path.0));
        client.write_all(b"hello").await.unwrap();
        let mut echo = [0u8; 5];
        client.read_exact(&mut echo).await.unwrap();
        assert_eq!(&echo, b"hello");
        server.await.unwrap();
    })
    .await;
}

#[brigade::test(worker_threads = 2)]
async fn echo_100_concurrent_connections() {
    bounded(async {
        let path = SocketPath::new("many");
        let listener = UnixListener::bind(&path).unwrap();
        // 100 stays under the listen backlog (128), so no connect can fail
        // with a full backlog however slowly the server accepts.
        let server = brigade::spawn(async move {
            for _ in 0..100 {
                let (mut stream, _) = listener.accept().await.unwrap();
                brigade::spawn(async move {
                    let mut buf = [0u8; 8];
                    loop {
                        match stream.read(&mut buf).await.unwrap() {
                            0 => break,
                            n => stream.write_all(&buf[..n]).await.unwrap(),
                        }
                    }
                });
            }
        });
        let clients: Vec<_> = (0..100u64)
            .map(|client| {
                let path = path.0.clone();
                brigade::spawn(async move {
                    let mut stream = UnixStream::connect(&path).await.unwrap();
                    for message in 0..100u64 {
                        let sent = (client << 32 | message).to_le_bytes();
                        stream.write_all(&sent).await.unwrap();
                        let mut echoed = [0u8; 8];
                        stream.read_exact(&mut echoed).await.unwrap();
                        assert_eq!(sent, echoed);
                    }
                    stream.shutdown_now(Shutdown::Write).unwrap();
                    100u64
                })
            })
            .collect();
        let mut total = 0;
        for client in clients {
            total += client.await.unwrap();
        }
        server.await.unwrap();
        assert_eq!(total, 10_000);
    })
    .await;
}

#[brigade::test(worker_threads = 2)]
async fn pair_talks_both_ways() {
    bounded(async {
        let (mut a, mut b) = UnixStream::pair().unwrap();
        assert!(a.local_addr().unwrap().is_unnamed());
        assert!(b.peer_addr().unwrap().is_unnamed());
        a.write_all(b"ping").await.unwrap();
        let mut buf = [0u8; 4];
        b.read_exact(&mut buf).await.unwrap();
        assert_eq!(&buf, b"ping");
        b.write_all(b"pong").await.unwrap();
        a.read_exact(&mut buf).await.unwrap();
        assert_eq!(&buf, b"pong");
    })
    .await;
}

#[brigade::test(worker_threads = 2)]
async fn shutdown_write_is_eof_for_the_peer_and_keeps_the_other_direction() {
    bounded(async {
        let (mut a, mut b) = UnixStream::pair().unwrap();
        a.write_all(b"last").await.unwrap();
        a.shutdown_now(Shutdown::Write).unwrap();
        assert_eq!(read_to_end(&b).await, b"last");
        // Half-closed: b can still write and a can still read.
        b.write_all(b"reply").await.unwrap();
        b.shutdown_now(Shutdown::Write).unwrap();
        assert_eq!(read_to_end(&a).await, b"reply");
        assert!(a.write(b"x").await.is_err(), "writing after shutdown");
    })
    .await;
}

#[brigade::test(worker_threads = 2)]
async fn a_transfer_larger_than_the_socket_buffer_waits_for_the_reader() {
    bounded(async {
        const LEN: usize = 16 << 20;
        let data: Vec<u8> = (0..LEN).map(|i| (i % 251) as u8).collect();
        let (mut a, b) = UnixStream::pair().unwrap();
        let mut write = pin!(a.write_all(&data));
        // Nobody reads yet, so the writer must fill the buffer and wait.
        let flag = Arc::new(Flag::default());
        assert!(
            poll_with(write.as_mut(), &flag).is_pending(),
            "16 MiB should not fit in a socket buffer"
        );
        let reader = brigade::spawn(async move { read_to_end(&b).await });
        write.await.unwrap();
        a.shutdown_now(Shutdown::Write).unwrap();
        let received = reader.await.unwrap();
        assert_eq!(received.len(), LEN);
        assert!(received == data, "the bytes arrive intact and in order");
    })
    .await;
}

#[brigade::test(worker_threads = 2)]
async fn datagram_pair_send_and_recv() {
    bounded(async {
        let (a, b) = UnixDatagram::pair().unwrap();
        let mut buf = [0u8; 64];
        for round in 0..100u32 {
            a.send(&round.to_le_bytes()).await.unwrap();
            let n = b.recv(&mut buf).await.unwrap();
            assert_eq!(&buf[..n], &round.to_le_bytes());
        }
        b.send(b"back").await.unwrap();
        let n = a.recv(&mut buf).await.unwrap();
        assert_eq!(&buf[..n], b"back");
    })
    .await;
}

#[brigade::test(worker_threads = 2)]
async fn datagram_send_to_and_recv_from_between_paths() {
    bounded(async {
        let server_path = SocketPath::new("dgram-server");
        let client_path = SocketPath::new("dgram-client");
        let server = UnixDatagram::bind(&server_path).unwrap();
        let client = UnixDatagram::bind(&client_path).unwrap();
        let echo = brigade::spawn(async move {
            let mut buf = [0u8; 64];
            for _ in 0..100 {
                let (n, from) = server.recv_from(&mut buf).await.unwrap();
                let from = from.as_pathname().expect("the client is bound").to_owned();
                server.send_to(&buf[..n], from).await.unwrap();
            }
        });
        let mut buf = [0u8; 64];
        for round in 0..100u32 {
            client
                .send_to(&round.to_le_bytes(), &server_path)
                .await
                .unwrap();
            let (n, from) = client.recv_from(&mut buf).await.unwrap();
            assert_eq!(&buf[..n], &round.to_le_bytes());
            assert_eq!(from.as_pathname(), Some(&*server_path.0));
        }
        echo.await.unwrap();
        // A connected unbound socket sends without naming the target.
        let unbound = UnixDatagram::unbound().unwrap();
        unbound.connect(&client_path).unwrap();
        assert_eq!(
            unbound.peer_addr().unwrap().as_pathname(),
            Some(&*client_path.0)
        );
        unbound.send(b"hi").await.unwrap();
        let n = client.recv(&mut buf).await.unwrap();
        assert_eq!(&buf[..n], b"hi");
    })
    .await;
}

#[test]
fn dropping_a_stream_wakes_a_pending_reader_with_eof() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = runtime(2);
        let (a, mut b) = rt.block_on(async { UnixStream::pair() }).unwrap();
        let mut buf = [0u8; 16];
        let mut read = pin!(b.read(&mut buf));
        let flag = Arc::new(Flag::default());
        assert!(poll_with(read.as_mut(), &flag).is_pending());
        drop(a);
        // The runtime's reactor delivers the close and wakes the reader.
        wait_until("the pending reader is woken", || flag.is_set());
        match poll_with(read.as_mut(), &flag) {
            Poll::Ready(Ok(0)) => {}
            other => panic!("expected end of stream, got {other:?}"),
        }
    });
}

#[brigade::test(worker_threads = 2)]
async fn tokio_io_traits_work_on_unix_streams() {
    bounded(async {
        let path = SocketPath::new("tokio-io");
        let listener = UnixListener::bind(&path).unwrap();
        let server = brigade::spawn(async move {
            let (mut stream, _) = listener.accept().await.unwrap();
            let mut request = Vec::new();
            stream.read_to_end(&mut request).await.unwrap();
            AsyncWriteExt::write_all(&mut stream, &request)
                .await
                .unwrap();
            AsyncWriteExt::shutdown(&mut stream).await.unwrap();
        });
        let mut client = UnixStream::connect(&path).await.unwrap();
        let request = vec![7u8; 1 << 20];
        // No inherent method shadows the traits' (`shutdown` is tokio's too:
        // its inherent `shutdown(Shutdown)` takes an argument).
        client.write_all(&request).await.unwrap();
        AsyncWriteExt::shutdown(&mut client).await.unwrap();
        let mut reply = Vec::new();
        client.read_to_end(&mut reply).await.unwrap();
        assert!(reply == request, "the echo matches");
        server.await.unwrap();
    })
    .await;
}

#[test]
fn sockets_outliving_their_runtime_fail_instead_of_hanging() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = runtime(1);
        let path = SocketPath::new("outlive");
        let (listener, (mut a, mut b), (dgram, _peer)) = rt.block_on(async {
            let listener = UnixListener::bind(&path).unwrap();
            (
                listener,
                UnixStream::pair().unwrap(),
                UnixDatagram::pair().unwrap(),
            )
        });
        let mut buf = [0u8; 16];
        let mut read = pin!(b.read(&mut buf));
        let flag = Arc::new(Flag::default());
        assert!(poll_with(read.as_mut(), &flag).is_pending());
        drop(rt);
        // Shutdown wakes the reader that was waiting, with an error.
        assert!(flag.is_set(), "shutdown wakes pending I/O");
        let Poll::Ready(Err(error)) = poll_with(read.as_mut(), &flag) else {
            panic!("a read after shutdown must fail");
        };
        assert!(error.to_string().contains("shut down"), "{error}");
        // Later operations fail too, even a write that would not block.
        assert!(local_block_on(a.write(b"x")).is_err());
        assert!(local_block_on(listener.accept()).is_err());
        assert!(local_block_on(dgram.send(b"x")).is_err());
    });
}

#[test]
fn unix_types_outside_a_runtime_fail_with_a_message() {
    let path = SocketPath::new("outside");
    let check = |result: io::Result<()>| {
        let error = result.unwrap_err();
        assert!(
            error.to_string().contains("inside a brigade runtime"),
            "unexpected message: {error}"
        );
    };
    check(UnixListener::bind(&path).map(drop));
    check(UnixStream::pair().map(drop));
    check(UnixDatagram::unbound().map(drop));
    let (std_stream, _peer) = std::os::unix::net::UnixStream::pair().unwrap();
    check(UnixStream::from_std(std_stream).map(drop));
}

#[brigade::test(worker_threads = 1)]
async fn the_socket_file_stays_after_drop_and_blocks_a_new_bind() {
    bounded(async {
        let path = SocketPath::new("stays");
        drop(UnixListener::bind(&path).unwrap());
        assert!(path.0.exists(), "dropping does not unlink, as in tokio");
        let error = UnixListener::bind(&path).unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::AddrInUse);
        std::fs::remove_file(&path.0).unwrap();
        drop(UnixListener::bind(&path).unwrap());
    })
    .await;
}

#[brigade::test(worker_threads = 2)]
async fn std_conversions_and_raw_fds() {
    use std::os::fd::{AsFd, AsRawFd};
    bounded(async {
        let path = SocketPath::new("std");
        let std_listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
        let listener = UnixListener::from_std(std_listener).unwrap();
        assert_eq!(listener.as_raw_fd(), listener.as_fd().as_raw_fd());
        let mut client = UnixStream::connect(&path).await.unwrap();
        let (mut server, _) = listener.accept().await.unwrap();
        assert!(server.as_raw_fd() >= 0);
        let std_listener = listener.into_std().unwrap();
        assert_eq!(
            std_listener.local_addr().unwrap().as_pathname(),
            Some(&*path.0)
        );
        // The listener's registration is gone, but the accepted stream is
        // its own socket and still works.
        client.write_all(b"ok").await.unwrap();
        let mut buf = [0u8; 2];
        server.read_exact(&mut buf).await.unwrap();
        assert_eq!(&buf, b"ok");
        let (std_a, std_b) = std::os::unix::net::UnixDatagram::pair().unwrap();
        let (a, b) = (
            UnixDatagram::from_std(std_a).unwrap(),
            UnixDatagram::from_std(std_b).unwrap(),
        );
        a.send(b"d").await.unwrap();
        assert_eq!(b.recv(&mut buf).await.unwrap(), 1);
        assert!(a.as_fd().as_raw_fd() != b.as_raw_fd());
    })
    .await;
}

#[brigade::test(worker_threads = 2)]
async fn echo_through_owned_halves_and_reunite() {
    bounded(async {
        let (a, b) = UnixStream::pair().unwrap();
        let echo = brigade::spawn(async move {
            let (mut read, mut write) = b.into_split();
            tokio::io::copy(&mut read, &mut write).await.unwrap()
        });
        let (mut read, mut write) = a.into_split();
        let payload = vec![9u8; 1 << 20];
        let sent = payload.clone();
        let writer = brigade::spawn(async move {
            write.write_all(&sent).await.unwrap();
            write.shutdown().await.unwrap();
            write
        });
        let mut echoed = Vec::new();
        read.read_to_end(&mut echoed).await.unwrap();
        assert!(echoed == payload, "the echo matches what was sent");
        assert_eq!(echo.await.unwrap(), payload.len() as u64);
        let write = writer.await.unwrap();
        // Halves of another stream do not fit.
        let (c, _d) = UnixStream::pair().unwrap();
        let (c_read, c_write) = c.into_split();
        let error = read.reunite(c_write).unwrap_err();
        assert!(error.to_string().contains("not from the same socket"));
        let brigade::net::unix::ReuniteError(read, c_write) = error;
        assert!(read.reunite(write).is_ok());
        assert!(c_read.reunite(c_write).is_ok());
    })
    .await;
}

#[brigade::test(worker_threads = 2)]
async fn unix_try_read_would_block_then_reads_after_readable_through_a_borrowed_half() {
    bounded(async {
        let (mut a, b) = UnixStream::pair().unwrap();
        let (read, write) = a.split();
        let mut buf = [0u8; 8];
        let error = read.try_read(&mut buf).unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::WouldBlock);
        b.writable().await.unwrap();
        assert_eq!(b.try_write(b"data").unwrap(), 4);
        let n = loop {
            read.readable().await.unwrap();
            match read.try_read(&mut buf) {
                Ok(n) => break n,
                Err(error) if error.kind() == io::ErrorKind::WouldBlock => continue,
                Err(error) => panic!("{error}"),
            }
        };
        assert_eq!(&buf[..n], b"data");
        write.writable().await.unwrap();
        assert_eq!(write.try_write(b"back").unwrap(), 4);
        let mut b = b;
        let mut back = [0u8; 4];
        b.read_exact(&mut back).await.unwrap();
        assert_eq!(&back, b"back");
    })
    .await;
}

#[brigade::test(worker_threads = 2)]
async fn unix_datagram_try_recv_after_readable() {
    bounded(async {
        let path = SocketPath::new("dgram-try");
        let server = UnixDatagram::bind(&path).unwrap();
        let client = UnixDatagram::unbound().unwrap();
        let mut buf = [0u8; 16];
        assert_eq!(
            server.try_recv(&mut buf).unwrap_err().kind(),
            io::ErrorKind::WouldBlock
        );
        client.writable().await.unwrap();
        assert_eq!(client.try_send_to(b"hey", &path).unwrap(), 3);
        let (n, _from) = loop {
            server.readable().await.unwrap();
            match server.try_recv_from(&mut buf) {
                Ok(received) => break received,
                Err(error) if error.kind() == io::ErrorKind::WouldBlock => continue,
                Err(error) => panic!("{error}"),
            }
        };
        assert_eq!(&buf[..n], b"hey");
    })
    .await;
}
