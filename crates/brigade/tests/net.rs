//! Network I/O on brigade's reactor: TCP echo at scale, UDP ping-pong,
//! error paths, and I/O that still completes while every worker runs
//! background loops. Every wait is bounded; nothing asserts a duration.

mod common;

use std::io::{self, Read, Write};
use std::net::Shutdown;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use brigade::net::{TcpListener, TcpStream, UdpSocket};
use common::{TIMEOUT_SECS, bounded, with_timeout};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

fn runtime(workers: usize) -> brigade::Runtime {
    brigade::Builder::new()
        .worker_threads(workers)
        .build()
        .expect("runtime")
}

#[brigade::test(worker_threads = 2)]
async fn tcp_echo_100_connections_times_1000_messages() {
    bounded(async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
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
                brigade::spawn(async move {
                    let mut stream = TcpStream::connect(addr).await.unwrap();
                    stream.set_nodelay(true).unwrap();
                    for message in 0..1000u64 {
                        let sent = (client << 32 | message).to_le_bytes();
                        stream.write_all(&sent).await.unwrap();
                        let mut echoed = [0u8; 8];
                        stream.read_exact(&mut echoed).await.unwrap();
                        assert_eq!(sent, echoed);
                    }
                    stream.shutdown_now(Shutdown::Write).unwrap();
                    1000u64
                })
            })
            .collect();
        let mut total = 0;
        for client in clients {
            total += client.await.unwrap();
        }
        server.await.unwrap();
        assert_eq!(total, 100_000);
    })
    .await;
}

#[brigade::test(worker_threads = 2)]
async fn udp_ping_pong() {
    bounded(async {
        let ponger = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let pinger = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let ponger_addr = ponger.local_addr().unwrap();
        pinger.connect(ponger_addr).await.unwrap();
        let echo = brigade::spawn(async move {
            let mut buf = [0u8; 64];
            for _ in 0..1000 {
                let (n, from) = ponger.recv_from(&mut buf).await.unwrap();
                ponger.send_to(&buf[..n], from).await.unwrap();
            }
        });
        let mut buf = [0u8; 64];
        for round in 0..1000u32 {
            // Loopback UDP does not drop at this rate, but a lost
            // datagram must fail the test, not hang it.
            pinger.send(&round.to_le_bytes()).await.unwrap();
            let n = brigade::time::timeout(Duration::from_secs(10), pinger.recv(&mut buf))
                .await
                .expect("datagram lost")
                .unwrap();
            assert_eq!(&buf[..n], &round.to_le_bytes());
        }
        echo.await.unwrap();
    })
    .await;
}

#[brigade::test(worker_threads = 1)]
async fn binding_an_address_in_use_is_an_error() {
    bounded(async {
        let first = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let error = TcpListener::bind(first.local_addr().unwrap())
            .await
            .unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::AddrInUse);
    })
    .await;
}

#[test]
fn a_reset_connection_is_an_error() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = runtime(2);
        // A plain std peer that accepts, then closes with SO_LINGER = 0,
        // which sends RST instead of FIN.
        let std_listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = std_listener.local_addr().unwrap();
        let peer = std::thread::spawn(move || {
            let (stream, _) = std_listener.accept().unwrap();
            let mut byte = [0u8; 1];
            (&stream).read_exact(&mut byte).unwrap();
            set_linger_zero(&stream);
            drop(stream);
        });
        rt.block_on(async {
            let mut stream = TcpStream::connect(addr).await.unwrap();
            stream.write_all(b"x").await.unwrap();
            let mut buf = [0u8; 16];
            // Reading after the RST fails; keep writing too in case the read
            // sees a clean end of stream first on some kernels.
            let mut saw_error = false;
            for _ in 0..100 {
                match stream.read(&mut buf).await {
                    Err(_) => {
                        saw_error = true;
                        break;
                    }
                    Ok(0) => {
                        if stream.write_all(b"more").await.is_err() {
                            saw_error = true;
                            break;
                        }
                    }
                    Ok(_) => {}
                }
            }
            assert!(saw_error, "a reset connection must surface as an io::Error");
        });
        peer.join().unwrap();
    });
}

fn set_linger_zero(stream: &std::net::TcpStream) {
    use std::os::fd::AsRawFd;
    let linger = libc_linger {
        l_onoff: 1,
        l_linger: 0,
    };
    // SAFETY: a valid fd and a correctly sized `linger` struct.
    let result = unsafe {
        setsockopt(
            stream.as_raw_fd(),
            1,  /* SOL_SOCKET */
            13, /* SO_LINGER */
            (&linger as *const libc_linger).cast(),
            std::mem::size_of::<libc_linger>() as u32,
        )
    };
    assert_eq!(result, 0, "setsockopt(SO_LINGER) failed");
}

#[repr(C)]
struct libc_linger {
    l_onoff: i32,
    l_linger: i32,
}

unsafe extern "C" {
    fn setsockopt(fd: i32, level: i32, name: i32, value: *const std::ffi::c_void, len: u32) -> i32;
}

#[test]
fn net_types_outside_a_runtime_fail_with_a_message() {
    let std_listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let error = TcpListener::from_std(std_listener).unwrap_err();
    assert!(
        error.to_string().contains("inside a brigade runtime"),
        "unexpected message: {error}"
    );
    let socket = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let error = UdpSocket::from_std(socket).unwrap_err();
    assert!(
        error.to_string().contains("inside a brigade runtime"),
        "{error}"
    );
}

#[test]
fn io_and_timers_complete_while_every_worker_runs_background_loops() {
    with_timeout(TIMEOUT_SECS, || {
        for driver_thread in [true, false] {
            let rt = brigade::Builder::new()
                .worker_threads(2)
                .driver_thread(driver_thread)
                .build()
                .unwrap();
            let stop = Arc::new(AtomicBool::new(false));
            // Four background loops on two workers: every worker stays busy.
            let background: Vec<_> = (0..4)
                .map(|_| {
                    let stop = stop.clone();
                    rt.spawn(async move {
                        let mut units = 0u64;
                        while !stop.load(Ordering::Relaxed) {
                            let spin = std::time::Instant::now();
                            while spin.elapsed() < Duration::from_micros(20) {
                                std::hint::spin_loop();
                            }
                            units += 1;
                            brigade::yield_if_busy().await;
                        }
                        units
                    })
                })
                .collect();
            // A plain std client talks to a server task in the runtime.
            let (addr_tx, addr_rx) = std::sync::mpsc::channel();
            let server = rt.spawn(async move {
                let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
                addr_tx.send(listener.local_addr().unwrap()).unwrap();
                let (mut stream, _) = listener.accept().await.unwrap();
                let mut byte = [0u8; 1];
                for _ in 0..10 {
                    stream.read_exact(&mut byte).await.unwrap();
                    stream.write_all(&byte).await.unwrap();
                }
                brigade::time::sleep(Duration::from_millis(1)).await;
                "slept"
            });
            let addr = addr_rx.recv_timeout(Duration::from_secs(30)).unwrap();
            let mut client = std::net::TcpStream::connect(addr).unwrap();
            client
                .set_read_timeout(Some(Duration::from_secs(30)))
                .unwrap();
            for round in 0..10u8 {
                client.write_all(&[round]).unwrap();
                let mut echoed = [0u8; 1];
                client.read_exact(&mut echoed).unwrap();
                assert_eq!(echoed[0], round);
            }
            assert_eq!(rt.block_on(server).unwrap(), "slept");
            stop.store(true, Ordering::Relaxed);
            for task in background {
                assert!(rt.block_on(task).unwrap() > 0);
            }
        }
    });
}

#[brigade::test(worker_threads = 2)]
async fn futures_io_and_tokio_io_traits_work() {
    bounded(async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let server = brigade::spawn(async move {
            let (mut stream, _) = listener.accept().await.unwrap();
            let mut line = [0u8; 4];
            tokio::io::AsyncReadExt::read_exact(&mut stream, &mut line)
                .await
                .unwrap();
            tokio::io::AsyncWriteExt::write_all(&mut stream, &line)
                .await
                .unwrap();
        });
        let mut client = TcpStream::connect(addr).await.unwrap();
        futures_lite::AsyncWriteExt::write_all(&mut client, b"ping")
            .await
            .unwrap();
        let mut reply = [0u8; 4];
        futures_lite::AsyncReadExt::read_exact(&mut client, &mut reply)
            .await
            .unwrap();
        assert_eq!(&reply, b"ping");
        server.await.unwrap();
    })
    .await;
}

/// Reads into spare capacity (`read_buf` on a `Vec`: tokio's `ReadBuf` over
/// bytes never initialised) get every byte, in order, to the end of the
/// stream. Each chunk arrives only after the reader has read the previous
/// one and answered, so every read is short and clears the read readiness
/// (`ScheduledIo::poll_io`): the next chunk must still wake the reader.
#[brigade::test(worker_threads = 2)]
async fn read_buf_into_spare_capacity_gets_every_chunk_after_short_reads() {
    bounded(async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let chunks: Vec<Vec<u8>> = (0..300u32)
            .map(|i| (0..i % 200 + 1).map(|j| (i * 7 + j) as u8).collect())
            .collect();
        let writer = brigade::spawn({
            let chunks = chunks.clone();
            async move {
                let mut client = TcpStream::connect(addr).await.unwrap();
                let mut ack = [0u8; 1];
                for chunk in &chunks {
                    client.write_all(chunk).await.unwrap();
                    client.read_exact(&mut ack).await.unwrap();
                }
            }
        });
        let (mut stream, _) = listener.accept().await.unwrap();
        let mut received = Vec::with_capacity(16);
        let mut expected_len = 0;
        for chunk in &chunks {
            expected_len += chunk.len();
            while received.len() < expected_len {
                if received.capacity() - received.len() < 256 {
                    received.reserve(4096);
                }
                assert_ne!(stream.read_buf(&mut received).await.unwrap(), 0);
            }
            stream.write_all(b"k").await.unwrap();
        }
        writer.await.unwrap();
        assert_eq!(stream.read_buf(&mut received).await.unwrap(), 0);
        assert_eq!(received, chunks.concat());
    })
    .await;
}
