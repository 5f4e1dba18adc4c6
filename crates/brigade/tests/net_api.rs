//! brigade::net's tokio API beyond connect/accept: stream halves
//! (`split`, `into_split`, `reunite`), readiness and the `try_` methods,
//! `peek`, `TcpSocket`, `lookup_host`, and connected UDP. Every wait is
//! bounded; nothing asserts a duration.

mod common;

use std::io;
use std::net::Shutdown;
use std::time::Duration;

use brigade::io::Interest;
use brigade::net::{TcpListener, TcpSocket, TcpStream, UdpSocket};
use common::{TIMEOUT_SECS, bounded, tcp_pair, with_timeout};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Waits for readability and reads what is there with `try_read`,
/// retrying after a spurious readiness, as tokio's docs prescribe.
async fn readable_then_try_read(stream: &TcpStream, buf: &mut [u8]) -> usize {
    loop {
        stream.readable().await.unwrap();
        match stream.try_read(buf) {
            Ok(n) => return n,
            Err(error) if error.kind() == io::ErrorKind::WouldBlock => continue,
            Err(error) => panic!("try_read failed: {error}"),
        }
    }
}

#[brigade::test(worker_threads = 2)]
async fn echo_through_owned_halves_in_separate_tasks_then_reunite() {
    bounded(async {
        let (client, server) = tcp_pair().await;
        let client_addr = client.local_addr().unwrap();
        // The server copies its read half into its write half until the
        // client's write half shuts down.
        let echo = brigade::spawn(async move {
            let (mut read, mut write) = server.into_split();
            tokio::io::copy(&mut read, &mut write).await.unwrap()
        });
        let (mut read, mut write) = client.into_split();
        let payload: Vec<u8> = (0..256 * 1024u32).map(|i| (i % 251) as u8).collect();
        let sent = payload.clone();
        let writer = brigade::spawn(async move {
            write.write_all(&sent).await.unwrap();
            write.shutdown().await.unwrap();
            write
        });
        let reader = brigade::spawn(async move {
            let mut echoed = Vec::new();
            read.read_to_end(&mut echoed).await.unwrap();
            (read, echoed)
        });
        let (read, echoed) = reader.await.unwrap();
        let write = writer.await.unwrap();
        assert!(echoed == payload, "the echo matches what was sent");
        assert_eq!(echo.await.unwrap(), payload.len() as u64);
        let client = write.reunite(read).expect("halves of one stream");
        assert_eq!(client.local_addr().unwrap(), client_addr);
    })
    .await;
}

#[brigade::test(worker_threads = 2)]
async fn reuniting_halves_of_different_streams_fails_and_hands_them_back() {
    bounded(async {
        let ((a, _a_peer), (b, _b_peer)) = (tcp_pair().await, tcp_pair().await);
        let (a_addr, b_addr) = (a.local_addr().unwrap(), b.local_addr().unwrap());
        let (a_read, a_write) = a.into_split();
        let (b_read, b_write) = b.into_split();
        let error = a_read.reunite(b_write).unwrap_err();
        assert_eq!(
            error.to_string(),
            "tried to reunite halves that are not from the same socket"
        );
        let brigade::net::tcp::ReuniteError(a_read, b_write) = error;
        assert_eq!(a_read.local_addr().unwrap(), a_addr);
        assert_eq!(b_write.local_addr().unwrap(), b_addr);
        let brigade::net::tcp::ReuniteError(a_read, b_write) = b_write.reunite(a_read).unwrap_err();
        // Handed back intact: each stream's own halves still reunite.
        let a = a_read.reunite(a_write).unwrap();
        let b = b_write.reunite(b_read).unwrap();
        assert_eq!(a.local_addr().unwrap(), a_addr);
        assert_eq!(b.local_addr().unwrap(), b_addr);
    })
    .await;
}

#[brigade::test(worker_threads = 2)]
async fn dropping_the_owned_write_half_shuts_down_and_forget_does_not() {
    bounded(async {
        // Dropped: the peer reads end of stream, and the stream (still
        // open through the read half) can no longer write.
        let (client, mut server) = tcp_pair().await;
        let (read, write) = client.into_split();
        drop(write);
        let mut rest = Vec::new();
        server.read_to_end(&mut rest).await.unwrap();
        assert!(rest.is_empty());
        let shut = (&mut read.as_ref()).write_all(b"x").await;
        assert_eq!(shut.unwrap_err().kind(), io::ErrorKind::BrokenPipe);
        // Forgotten: the write direction stays open.
        let (client, mut server) = tcp_pair().await;
        let (read, write) = client.into_split();
        write.forget();
        (&mut read.as_ref()).write_all(b"still open").await.unwrap();
        let mut buf = [0u8; 10];
        server.read_exact(&mut buf).await.unwrap();
        assert_eq!(&buf, b"still open");
    })
    .await;
}

#[brigade::test(worker_threads = 2)]
async fn borrowed_halves_read_and_write_at_once_in_one_task() {
    bounded(async {
        let (mut client, server) = tcp_pair().await;
        let echo = brigade::spawn(async move {
            let (mut read, mut write) = server.into_split();
            tokio::io::copy(&mut read, &mut write).await.unwrap()
        });
        // More than the socket buffers hold: writing all before reading
        // would deadlock, so the halves must make progress together.
        let payload = vec![3u8; 8 << 20];
        let mut echoed = vec![0u8; payload.len()];
        let (mut read, mut write) = client.split();
        let (wrote, read_back) =
            futures_lite::future::zip(write.write_all(&payload), read.read_exact(&mut echoed))
                .await;
        wrote.unwrap();
        assert_eq!(read_back.unwrap(), payload.len());
        assert!(echoed == payload);
        // Dropping borrowed halves does not shut the stream down.
        client.write_all(b"!").await.unwrap();
        client.shutdown_now(Shutdown::Write).unwrap();
        let mut last = [0u8; 1];
        client.read_exact(&mut last).await.unwrap();
        assert_eq!(&last, b"!");
        assert_eq!(echo.await.unwrap(), payload.len() as u64 + 1);
    })
    .await;
}

#[brigade::test(worker_threads = 2)]
async fn try_read_would_block_then_reads_after_readable() {
    bounded(async {
        let (client, server) = tcp_pair().await;
        let mut buf = [0u8; 16];
        // Nothing sent yet: no wait, no data.
        let error = server.try_read(&mut buf).unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::WouldBlock);
        client.writable().await.unwrap();
        assert_eq!(client.try_write(b"ping").unwrap(), 4);
        let mut got = 0;
        while got < 4 {
            got += readable_then_try_read(&server, &mut buf[got..]).await;
        }
        assert_eq!(&buf[..4], b"ping");
        // Drained: `WouldBlock` again, and `ready` reports writability.
        let error = server.try_read(&mut buf).unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::WouldBlock);
        let ready = server
            .ready(Interest::READABLE | Interest::WRITABLE)
            .await
            .unwrap();
        assert!(ready.is_writable() && !ready.is_read_closed());
        // Vectored forms, then end of stream reads as `Ok(0)`.
        let parts = [io::IoSlice::new(b"ab"), io::IoSlice::new(b"cd")];
        assert_eq!(client.try_write_vectored(&parts).unwrap(), 4);
        client.shutdown_now(Shutdown::Write).unwrap();
        let (mut first, mut second) = ([0u8; 1], [0u8; 3]);
        let mut read = 0;
        while read < 4 {
            server.readable().await.unwrap();
            let mut bufs = [
                io::IoSliceMut::new(&mut first),
                io::IoSliceMut::new(&mut second),
            ];
            io::IoSliceMut::advance_slices(&mut &mut bufs[..], read);
            match server.try_read_vectored(&mut bufs) {
                Ok(n) => read += n,
                Err(error) if error.kind() == io::ErrorKind::WouldBlock => {}
                Err(error) => panic!("{error}"),
            }
        }
        assert_eq!((&first, &second), (b"a", b"bcd"));
        assert_eq!(readable_then_try_read(&server, &mut buf).await, 0);
    })
    .await;
}

#[brigade::test(worker_threads = 2)]
async fn peek_does_not_consume() {
    bounded(async {
        let (mut client, server) = tcp_pair().await;
        client.write_all(b"hello").await.unwrap();
        let mut peeked = [0u8; 5];
        // One write of 5 bytes on loopback arrives whole; loop in case not.
        while server.peek(&mut peeked).await.unwrap() < 5 {
            brigade::yield_now().await;
        }
        assert_eq!(&peeked, b"hello");
        let (mut read, _write) = server.into_split();
        let mut again = [0u8; 2];
        assert_eq!(read.peek(&mut again).await.unwrap(), 2);
        assert_eq!(&again, b"he");
        let mut all = [0u8; 5];
        read.read_exact(&mut all).await.unwrap();
        assert_eq!(&all, b"hello");
    })
    .await;
}

#[test]
fn tcp_socket_options_are_applied() {
    with_timeout(TIMEOUT_SECS, || {
        // Created and configured outside a runtime, like tokio's.
        let socket = TcpSocket::new_v4().unwrap();
        socket.set_reuseaddr(true).unwrap();
        socket.set_reuseport(true).unwrap();
        socket.set_keepalive(true).unwrap();
        socket.set_nodelay(true).unwrap();
        socket.set_linger(Some(Duration::from_secs(3))).unwrap();
        socket.set_send_buffer_size(64 * 1024).unwrap();
        socket.set_recv_buffer_size(96 * 1024).unwrap();
        assert!(socket.reuseaddr().unwrap() && socket.reuseport().unwrap());
        assert!(socket.keepalive().unwrap() && socket.nodelay().unwrap());
        assert_eq!(socket.linger().unwrap(), Some(Duration::from_secs(3)));
        // The kernel may round buffer sizes up (Linux doubles them).
        assert!(socket.send_buffer_size().unwrap() >= 64 * 1024);
        assert!(socket.recv_buffer_size().unwrap() >= 96 * 1024);
        socket.set_reuseaddr(false).unwrap();
        assert!(!socket.reuseaddr().unwrap());
        socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let addr = socket.local_addr().unwrap();
        assert_ne!(addr.port(), 0);
        // `listen` registers with the reactor: outside a runtime it says so.
        let error = socket.listen(8).unwrap_err();
        assert!(error.to_string().contains("TcpSocket::listen"), "{error}");
    });
}

#[brigade::test(worker_threads = 2)]
async fn tcp_socket_listens_and_connects_with_its_options() {
    bounded(async {
        let reusing = || {
            let socket = TcpSocket::new_v4().unwrap();
            socket.set_reuseport(true).unwrap();
            socket
        };
        let first = reusing();
        first.bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let addr = first.local_addr().unwrap();
        let listener = first.listen(4).unwrap();
        // SO_REUSEPORT took effect: a second socket with it binds the same
        // port, and one without it cannot.
        let second = reusing();
        second.bind(addr).unwrap();
        let _second_listener = second.listen(4).unwrap();
        let plain = TcpSocket::new_v4().unwrap();
        assert_eq!(
            plain.bind(addr).unwrap_err().kind(),
            io::ErrorKind::AddrInUse
        );
        drop(_second_listener);
        // A connect through `TcpSocket` keeps the options set before it.
        let client = TcpSocket::new_v4().unwrap();
        client.set_nodelay(true).unwrap();
        let mut stream = client.connect(addr).await.unwrap();
        assert!(stream.nodelay().unwrap());
        let (mut accepted, peer) = listener.accept().await.unwrap();
        assert_eq!(peer, stream.local_addr().unwrap());
        stream.write_all(b"hi").await.unwrap();
        let mut buf = [0u8; 2];
        // tokio's `read_exact`, returning the count: no inherent method
        // shadows it.
        assert_eq!(accepted.read_exact(&mut buf).await.unwrap(), 2);
        assert_eq!(&buf, b"hi");
        // Connecting to a closed port is an error, not a hang.
        let closed = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let closed_addr = closed.local_addr().unwrap();
        drop(closed);
        let error = TcpSocket::new_v4()
            .unwrap()
            .connect(closed_addr)
            .await
            .unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::ConnectionRefused);
    })
    .await;
}

#[brigade::test(worker_threads = 2)]
async fn lookup_host_resolves_names_and_literals() {
    bounded(async {
        let localhost: Vec<_> = brigade::net::lookup_host("localhost:0")
            .await
            .unwrap()
            .collect();
        assert!(!localhost.is_empty());
        assert!(
            localhost
                .iter()
                .all(|addr| addr.ip().is_loopback() && addr.port() == 0),
            "{localhost:?}"
        );
        let literal: Vec<_> = brigade::net::lookup_host(("127.0.0.1", 80))
            .await
            .unwrap()
            .collect();
        assert_eq!(literal, ["127.0.0.1:80".parse().unwrap()]);
        let Err(error) = brigade::net::lookup_host("no port here").await else {
            panic!("a host without a port must fail");
        };
        assert_eq!(error.kind(), io::ErrorKind::InvalidInput, "{error}");
    })
    .await;
}

#[brigade::test(worker_threads = 2)]
async fn udp_connect_send_recv_and_try_recv() {
    bounded(async {
        let a = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let b = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let (a_addr, b_addr) = (a.local_addr().unwrap(), b.local_addr().unwrap());
        a.connect(b_addr).await.unwrap();
        b.connect(a_addr).await.unwrap();
        assert_eq!(a.peer_addr().unwrap(), b_addr);
        let mut buf = [0u8; 16];
        assert_eq!(
            a.try_recv(&mut buf).unwrap_err().kind(),
            io::ErrorKind::WouldBlock
        );
        b.send(b"one").await.unwrap();
        let n = loop {
            a.readable().await.unwrap();
            match a.try_recv(&mut buf) {
                Ok(n) => break n,
                Err(error) if error.kind() == io::ErrorKind::WouldBlock => continue,
                Err(error) => panic!("{error}"),
            }
        };
        assert_eq!(&buf[..n], b"one");
        // Peeking leaves the datagram for the next receive.
        a.writable().await.unwrap();
        assert_eq!(a.try_send(b"two").unwrap(), 3);
        let (n, from) = b.peek_from(&mut buf).await.unwrap();
        assert_eq!((&buf[..n], from), (&b"two"[..], a_addr));
        assert_eq!(b.recv(&mut buf).await.unwrap(), 3);
        assert_eq!(&buf[..3], b"two");
    })
    .await;
}
