//! The socket options and conversions ported from tokio's `net` types:
//! file descriptors (`socket2::SockRef` on an accepted stream), TTL,
//! `take_error`, `into_std`, UDP multicast on the loopback, `peek`, the
//! `poll_` datagram methods, and a Unix peer's credentials. Every wait is
//! bounded.
#![cfg(unix)]

mod common;

use std::future::poll_fn;
use std::io::{Read, Write};
use std::net::Ipv4Addr;
use std::time::Duration;

use brigade::net::{TcpListener, TcpStream, UdpSocket, UnixStream};
use common::{bounded, tcp_pair};
use tokio::io::{AsyncReadExt, AsyncWriteExt, ReadBuf};

#[brigade::test]
async fn sockref_on_an_accepted_stream_sets_keepalive_and_linger() {
    bounded(async {
        let (_client, server) = tcp_pair().await;
        let socket = socket2::SockRef::from(&server);
        socket.set_keepalive(true).unwrap();
        assert!(socket.keepalive().unwrap());
        server.set_linger(Some(Duration::from_secs(3))).unwrap();
        assert_eq!(socket.linger().unwrap(), Some(Duration::from_secs(3)));
        socket.set_linger(None).unwrap();
        assert_eq!(server.linger().unwrap(), None);
        use std::os::fd::AsRawFd;
        assert_eq!(socket.as_raw_fd(), server.as_raw_fd());
    })
    .await;
}

#[brigade::test]
async fn ttl_round_trips_and_a_healthy_socket_has_no_error() {
    bounded(async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        listener.set_ttl(17).unwrap();
        assert_eq!(listener.ttl().unwrap(), 17);
        let (client, server) = tcp_pair().await;
        client.set_ttl(42).unwrap();
        assert_eq!(client.ttl().unwrap(), 42);
        assert!(client.take_error().unwrap().is_none());
        assert!(server.take_error().unwrap().is_none());
        let udp = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        udp.set_ttl(9).unwrap();
        assert_eq!(udp.ttl().unwrap(), 9);
        udp.set_broadcast(true).unwrap();
        assert!(udp.broadcast().unwrap());
        assert!(udp.take_error().unwrap().is_none());
    })
    .await;
}

#[brigade::test]
async fn into_std_and_back_keeps_the_connection() {
    bounded(async {
        let (client, mut server) = tcp_pair().await;
        let mut client = client.into_std().unwrap();
        client.set_nonblocking(false).unwrap();
        client.write_all(b"ping").unwrap();
        let mut buf = [0u8; 4];
        server.read_exact(&mut buf).await.unwrap();
        assert_eq!(&buf, b"ping");
        let mut client = TcpStream::from_std(client).unwrap();
        server.write_all(b"pong").await.unwrap();
        client.read_exact(&mut buf).await.unwrap();
        assert_eq!(&buf, b"pong");
        let mut server = server.into_std().unwrap();
        server.set_nonblocking(false).unwrap();
        client.write_all(b"back").await.unwrap();
        server.read_exact(&mut buf).unwrap();
        assert_eq!(&buf, b"back");
    })
    .await;
}

#[brigade::test]
async fn multicast_round_trip_on_the_loopback() {
    bounded(async {
        let group = Ipv4Addr::new(239, 255, 42, 99);
        let receiver = UdpSocket::bind("0.0.0.0:0").await.unwrap();
        let port = receiver.local_addr().unwrap().port();
        if let Err(error) = receiver.join_multicast_v4(group, Ipv4Addr::LOCALHOST) {
            println!("skipped: cannot join a multicast group on the loopback: {error}");
            return;
        }
        let sender = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        socket2::SockRef::from(&sender)
            .set_multicast_if_v4(&Ipv4Addr::LOCALHOST)
            .unwrap();
        sender.set_multicast_loop_v4(true).unwrap();
        assert!(sender.multicast_loop_v4().unwrap());
        sender.set_multicast_ttl_v4(1).unwrap();
        assert_eq!(sender.multicast_ttl_v4().unwrap(), 1);
        if let Err(error) = sender.send_to(b"hello group", (group, port)).await {
            println!("skipped: no multicast route on the loopback: {error}");
            return;
        }
        let mut buf = [0u8; 32];
        let (n, from) =
            brigade::time::timeout(Duration::from_secs(10), receiver.recv_from(&mut buf))
                .await
                .expect("the multicast datagram never came")
                .unwrap();
        assert_eq!(&buf[..n], b"hello group");
        assert_eq!(from, sender.local_addr().unwrap());
        receiver
            .leave_multicast_v4(group, Ipv4Addr::LOCALHOST)
            .unwrap();
    })
    .await;
}

#[brigade::test]
async fn peek_leaves_the_datagram_and_poll_methods_work() {
    bounded(async {
        let a = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let b = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        a.connect(b.local_addr().unwrap()).await.unwrap();
        b.connect(a.local_addr().unwrap()).await.unwrap();
        let sent = poll_fn(|cx| a.poll_send(cx, b"first")).await.unwrap();
        assert_eq!(sent, 5);
        let mut buf = [0u8; 16];
        assert_eq!(b.peek(&mut buf).await.unwrap(), 5);
        let mut storage = [0u8; 16];
        let mut read = ReadBuf::new(&mut storage);
        let from = poll_fn(|cx| b.poll_peek_from(cx, &mut read)).await.unwrap();
        assert_eq!(
            (read.filled(), from),
            (&b"first"[..], a.local_addr().unwrap())
        );
        let mut read = ReadBuf::new(&mut storage);
        poll_fn(|cx| b.poll_recv(cx, &mut read)).await.unwrap();
        assert_eq!(read.filled(), b"first");
        // The peeks left it; the receive took it.
        let empty = b.try_recv(&mut buf).unwrap_err();
        assert_eq!(empty.kind(), std::io::ErrorKind::WouldBlock);
        let target = b.local_addr().unwrap();
        poll_fn(|cx| a.poll_send_to(cx, b"second", target))
            .await
            .unwrap();
        let mut read = ReadBuf::new(&mut storage);
        let from = poll_fn(|cx| b.poll_recv_from(cx, &mut read)).await.unwrap();
        assert_eq!(
            (read.filled(), from),
            (&b"second"[..], a.local_addr().unwrap())
        );
        let std_socket = a.into_std().unwrap();
        std_socket.send(b"third").unwrap();
        assert_eq!(b.recv(&mut buf).await.unwrap(), 5);
        assert_eq!(&buf[..5], b"third");
    })
    .await;
}

#[brigade::test]
async fn peer_cred_of_a_pair_is_this_process() {
    bounded(async {
        let (a, b) = UnixStream::pair().unwrap();
        let cred = a.peer_cred().unwrap();
        // SAFETY: getuid and getgid take no arguments and cannot fail.
        let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
        assert_eq!((cred.uid(), cred.gid()), (uid, gid));
        #[cfg(any(target_os = "linux", target_os = "android", target_vendor = "apple"))]
        assert_eq!(cred.pid(), Some(std::process::id() as i32));
        assert_eq!(b.peer_cred().unwrap(), cred);
        let mut std_stream = b.into_std().unwrap();
        std_stream.set_nonblocking(false).unwrap();
        std_stream.write_all(b"x").unwrap();
        let mut a = a;
        let mut byte = [0u8; 1];
        a.read_exact(&mut byte).await.unwrap();
        assert_eq!(&byte, b"x");
    })
    .await;
}
