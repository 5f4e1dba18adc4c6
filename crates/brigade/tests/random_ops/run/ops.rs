//! The operations themselves (`Run::do_op`) and the TCP echo they use.

#[allow(unused_imports)]
use super::*;

impl Run {
    pub(crate) fn do_op(&mut self, name: &'static str) {
        let ledger = self.ledger.clone();
        let op = self.op;
        let value = self.rng.below(1 << 32);
        match name {
            "short" => {
                let yields = self.rng.below(4);
                let task = tracked_task(&ledger, name, op, async move {
                    for i in 0..yields {
                        if i % 2 == 0 {
                            brigade::yield_now().await;
                        } else {
                            brigade::yield_if_busy().await;
                        }
                    }
                    value
                });
                let handle = self.spawn_via(false, task);
                self.push_task(handle, name, Expect::Value(value)).uses_ybl = yields >= 2;
            }
            "panic" => {
                let yield_first = self.rng.percent(50);
                let task = tracked_task(&ledger, name, op, async move {
                    if yield_first {
                        brigade::yield_now().await;
                    }
                    intentional_panic("in a task")
                });
                let handle = self.spawn_via(false, task);
                self.push_task(handle, name, Expect::Panic);
            }
            "panic_in_drop" => {
                let yield_first = self.rng.percent(50);
                let task = tracked_task(&ledger, name, op, async move {
                    PanicsOnDrop {
                        future: Box::pin(async move {
                            if yield_first {
                                brigade::yield_now().await;
                            }
                            value
                        }),
                    }
                    .await
                });
                let handle = self.spawn_via(false, task);
                self.push_task(handle, name, Expect::Panic);
            }
            "elastic_short" => {
                let yields = self.rng.below(20);
                let task = tracked_task(&ledger, name, op, async move {
                    for _ in 0..yields {
                        brigade::yield_if_busy().await;
                    }
                    value
                });
                let handle = self.spawn_via(true, task);
                self.push_task(handle, name, Expect::Value(value)).uses_ybl = yields > 0;
            }
            "blocking" => {
                let nap = self.rng.micros(2_000);
                let f = tracked_closure(&ledger, name, op, move || {
                    thread::sleep(nap);
                    value
                });
                let handle = self.spawn_blocking_via(f);
                self.push_task(handle, name, Expect::Value(value));
            }
            "blocking_panic" => {
                let f = tracked_closure(&ledger, name, op, || {
                    intentional_panic("in a spawn_blocking closure")
                });
                let handle = self.spawn_blocking_via(f);
                self.push_task(handle, name, Expect::Panic);
            }
            "blocking_spawner" => {
                // A blocking closure that spawns a detached task.
                let inner = ledger.clone();
                let f = tracked_closure(&ledger, name, op, move || {
                    drop(brigade::spawn(tracked_task(
                        &inner,
                        "blocking_child",
                        op,
                        async move {
                            brigade::yield_now().await;
                            value
                        },
                    )));
                    value
                });
                let handle = self.spawn_blocking_via(f);
                self.push_task(handle, name, Expect::Value(value));
            }
            "sleeper" => {
                let nap = self.rng.micros(3_000);
                let task = tracked_task(&ledger, name, op, async move {
                    let started = Instant::now();
                    sleep(nap).await;
                    assert!(
                        started.elapsed() >= nap,
                        "a sleep ended before its deadline"
                    );
                    value
                });
                let handle = self.spawn_via(false, task);
                self.push_task(handle, name, Expect::Value(value));
            }
            "timeouts" => {
                let short = self.rng.micros(2_000);
                let task = tracked_task(&ledger, name, op, async move {
                    assert!(timeout(short, pending::<()>()).await.is_err());
                    assert_eq!(
                        timeout(Duration::from_secs(3600), async { value }).await,
                        Ok(value)
                    );
                    assert!(
                        timeout(short, sleep(Duration::from_secs(3600)))
                            .await
                            .is_err()
                    );
                    value
                });
                let handle = self.spawn_via(false, task);
                self.push_task(handle, name, Expect::Value(value));
            }
            "interval" => {
                let ticks = self.rng.between(1, 4);
                let period = Duration::from_micros(self.rng.between(100, 1_500));
                let task = tracked_task(&ledger, name, op, async move {
                    let mut ticker = interval(period);
                    let mut previous = None;
                    for _ in 0..ticks {
                        let tick = ticker.tick().await;
                        assert!(
                            Instant::now() >= tick.into_std(),
                            "a tick came before its instant"
                        );
                        if let Some(previous) = previous {
                            assert!(tick > previous, "interval ticks out of order");
                        }
                        previous = Some(tick);
                    }
                    ticks
                });
                let handle = self.spawn_via(false, task);
                self.push_task(handle, name, Expect::Value(ticks));
            }
            "tcp_echo" => self.tcp_echo(),
            "spawner" => {
                let children = self.rng.between(1, 6);
                let plan: Vec<(u64, bool, bool)> = (0..children)
                    .map(|_| {
                        (
                            self.rng.below(1 << 32),
                            self.rng.percent(30), // detached
                            self.rng.percent(20), // elastic
                        )
                    })
                    .collect();
                let expected = plan
                    .iter()
                    .filter(|(_, detached, _)| !detached)
                    .map(|(value, _, _)| value)
                    .sum();
                let inner = ledger.clone();
                let task = tracked_task(&ledger, name, op, async move {
                    let mut awaited = Vec::new();
                    for (value, detached, elastic) in plan {
                        let child = tracked_task(&inner, "child", op, async move {
                            brigade::yield_now().await;
                            value
                        });
                        let child = if elastic {
                            brigade::spawn_elastic(child)
                        } else {
                            brigade::spawn(child)
                        };
                        if !detached {
                            awaited.push((child, value));
                        }
                    }
                    let mut sum = 0;
                    for (child, value) in awaited {
                        let out = child.await.expect("random_ops: a child task failed");
                        assert_eq!(out.value, value);
                        sum += value;
                    }
                    sum
                });
                let handle = self.spawn_via(false, task);
                self.push_task(handle, name, Expect::Value(expected))
                    .dependent = true;
            }
            "waker_keeper" | "waker_pending" => {
                let never = name == "waker_pending";
                let wakers = self.wakers.clone();
                let task = tracked_task(&ledger, name, op, async move {
                    poll_fn(|cx| {
                        lock(&wakers).push(cx.waker().clone());
                        Poll::Ready(())
                    })
                    .await;
                    drop(wakers);
                    if never {
                        pending::<()>().await;
                    }
                    value
                });
                let handle = self.spawn_via(false, task);
                let expect = if never {
                    Expect::Never
                } else {
                    Expect::Value(value)
                };
                self.push_task(handle, name, expect);
            }
            "wake_from_thread" => {
                let wakers: Vec<Waker> = lock(&self.wakers).clone();
                thread::spawn(move || {
                    for waker in wakers {
                        waker.wake();
                    }
                })
                .join()
                .expect("the waking thread panicked");
            }
            "ybl_loop" | "ybl_loop_abort" => {
                let spin = self.rng.between(1, 300);
                let task = tracked_task(&ledger, name, op, yield_if_busy_forever(spin));
                let handle = self.spawn_via(false, task);
                let task = self.push_task(handle, name, Expect::Never);
                task.ybl_loop = true;
                task.uses_ybl = true;
                let task_name = task.name.clone();
                self.ybl_loops.push(task_name);
                if name == "ybl_loop_abort" {
                    // Abort it at once or once it runs, and await it: it must
                    // resolve as cancelled (known bug (b) before 0534744).
                    if self.rng.percent(70) {
                        let nap = self.rng.micros(2_000);
                        self.block_on_bounded(
                            "a sleep in block_on",
                            async move { sleep(nap).await },
                        );
                    }
                    let from_thread = self.rng.percent(30);
                    let index = self.tasks.len() - 1;
                    self.abort_task(index, from_thread);
                    self.await_task(index);
                }
            }
            "yield_now_loop" => {
                self.yield_now_loops += 1;
                let task = tracked_task(&ledger, name, op, async move {
                    loop {
                        brigade::yield_now().await;
                    }
                });
                let handle = self.spawn_via(false, task);
                self.push_task(handle, name, Expect::Never);
            }
            "elastic_ybl_loop" => {
                let spin = self.rng.between(1, 300);
                let task = tracked_task(&ledger, name, op, yield_if_busy_forever(spin));
                let handle = self.spawn_via(true, task);
                self.push_task(handle, name, Expect::Never).uses_ybl = true;
            }
            "sleep_loop" => {
                // Not zero: `sleep(0)` is ready at once, and a loop of them
                // would never give its worker back.
                let nap = Duration::from_micros(self.rng.between(50, 2_000));
                let task = tracked_task(&ledger, name, op, async move {
                    loop {
                        sleep(nap).await;
                    }
                });
                let handle = self.spawn_via(false, task);
                self.push_task(handle, name, Expect::Never);
            }
            "io_read_pending" => {
                // Connects to a listener that never accepts nor writes (kept
                // past the runtime's end), then waits to read.
                let listener =
                    std::net::TcpListener::bind("127.0.0.1:0").expect("binding a std listener");
                let addr = listener.local_addr().expect("listener address");
                self.keep.push(Box::new(listener));
                let task = tracked_task(&ledger, name, op, async move {
                    let mut stream = TcpStream::connect(addr).await.expect("random_ops: connect");
                    let mut buf = [0u8; 8];
                    let _ = tokio::io::AsyncReadExt::read(&mut stream, &mut buf).await;
                    pending::<u64>().await
                });
                let handle = self.spawn_via(false, task);
                self.push_task(handle, name, Expect::Never);
            }
            "io_accept_pending" => {
                let task = tracked_task(&ledger, name, op, async move {
                    let listener = TcpListener::bind("127.0.0.1:0")
                        .await
                        .expect("random_ops: bind");
                    let _ = listener.accept().await;
                    pending::<u64>().await
                });
                let handle = self.spawn_via(false, task);
                self.push_task(handle, name, Expect::Never);
            }
            "channel_pending" => {
                // The sender outlives the runtime; dropping it then wakes a
                // task of a runtime that is gone.
                let (sender, mut receiver) = common::channel::<u64>();
                self.keep.push(Box::new(sender));
                let task = tracked_task(&ledger, name, op, async move {
                    let _ = receiver.recv().await;
                    pending::<u64>().await
                });
                let handle = self.spawn_via(false, task);
                self.push_task(handle, name, Expect::Never);
            }
            "pending" => {
                let task = tracked_task(&ledger, name, op, pending::<u64>());
                let handle = self.spawn_via(false, task);
                self.push_task(handle, name, Expect::Never);
            }
            "abort" | "abort_from_thread" => self.abort(name == "abort_from_thread"),
            "detach" => {
                if !self.tasks.is_empty() {
                    let index = self.rng.index(self.tasks.len());
                    let task = self.tasks.swap_remove(index);
                    self.log(format!("  detach {}", task.name));
                }
            }
            "await" => self.await_one(),
            "foreign_waiter" => self.foreign_waiter(),
            "block_on_sleep" => {
                let nap = self.rng.micros(3_000);
                let started = Instant::now();
                self.block_on_bounded("a sleep in block_on", async move { sleep(nap).await });
                assert!(
                    started.elapsed() >= nap,
                    "a sleep ended before its deadline"
                );
            }
            "block_on_timeout" => {
                let short = self.rng.micros(2_000);
                self.block_on_bounded("timeouts in block_on", async move {
                    assert!(timeout(short, pending::<()>()).await.is_err());
                    assert_eq!(timeout(Duration::from_secs(3600), async { 7 }).await, Ok(7));
                });
            }
            "block_on_yields" => {
                let task = tracked_task(&ledger, name, op, async move {
                    brigade::yield_now().await;
                    value
                });
                let out = self.block_on_bounded("yields in block_on", async move {
                    brigade::yield_now().await;
                    brigade::yield_if_busy().await;
                    brigade::spawn(task).await
                });
                match out {
                    Ok(out) if out.value == value => {}
                    other => self.fail(format!("a task awaited in block_on gave {other:?}")),
                }
            }
            other => unreachable!("unknown op {other}"),
        }
    }

    pub(crate) fn tcp_echo(&mut self) {
        let ledger = self.ledger.clone();
        let op = self.op;
        let len = self.rng.between(1, 16 * 1024) as usize;
        let chunk = self.rng.between(1, 4096) as usize;
        let api = self.rng.below(3);
        let fill = self.rng.next_u64();
        let payload: Vec<u8> = (0..len)
            .map(|i| (fill.rotate_left(i as u32 % 64) ^ i as u64) as u8)
            .collect();
        let listener = self.block_on_bounded("binding a listener", async {
            TcpListener::bind("127.0.0.1:0").await
        });
        let listener = listener.expect("binding a TcpListener");
        let addr = listener.local_addr().expect("listener address");
        let server = tracked_task(&ledger, "tcp_server", op, async move {
            use tokio::io::{AsyncReadExt, AsyncWriteExt};
            let (mut stream, _) = listener.accept().await.expect("random_ops: accept");
            let mut buf = [0u8; 512];
            let mut total = 0u64;
            loop {
                let n = stream
                    .read(&mut buf)
                    .await
                    .expect("random_ops: server read");
                if n == 0 {
                    break;
                }
                stream
                    .write_all(&buf[..n])
                    .await
                    .expect("random_ops: server write");
                total += n as u64;
            }
            total
        });
        let client = tracked_task(&ledger, "tcp_client", op, async move {
            echo_client(addr, payload, chunk, api)
                .await
                .expect("random_ops: echo client")
        });
        let group = Some(self.groups);
        self.groups += 1;
        let server = self.spawn_via(false, server);
        let client = self.spawn_via(false, client);
        self.log(format!(
            "  tcp echo of {len} bytes in {chunk}-byte chunks, api {api}"
        ));
        for (handle, what) in [(server, "tcp_server"), (client, "tcp_client")] {
            let task = self.push_task(handle, what, Expect::Value(len as u64));
            task.group = group;
            task.dependent = true;
        }
    }
}

/// Echoes `payload` through a server at `addr`, `chunk` bytes at a time,
/// with tokio's `AsyncReadExt` and `AsyncWriteExt` on a shared reference
/// (`&TcpStream`, `api` 0) or on the stream (1), or futures-lite's (2);
/// then half-closes and waits for the server to close. Returns the number of bytes echoed.
async fn echo_client(
    addr: SocketAddr,
    payload: Vec<u8>,
    chunk: usize,
    api: u64,
) -> std::io::Result<u64> {
    let mut stream = TcpStream::connect(addr).await?;
    stream.set_nodelay(true)?;
    let mut echoed = vec![0u8; chunk];
    for piece in payload.chunks(chunk) {
        let back = &mut echoed[..piece.len()];
        match api {
            0 => {
                tokio::io::AsyncWriteExt::write_all(&mut &stream, piece).await?;
                tokio::io::AsyncReadExt::read_exact(&mut &stream, back).await?;
            }
            1 => {
                tokio::io::AsyncWriteExt::write_all(&mut stream, piece).await?;
                tokio::io::AsyncReadExt::read_exact(&mut stream, back).await?;
            }
            _ => {
                futures_lite::AsyncWriteExt::write_all(&mut stream, piece).await?;
                futures_lite::AsyncReadExt::read_exact(&mut stream, back).await?;
            }
        }
        if back != piece {
            return Err(std::io::Error::other("the echo differs from what was sent"));
        }
    }
    stream.shutdown_now(Shutdown::Write)?;
    let mut rest = [0u8; 16];
    match tokio::io::AsyncReadExt::read(&mut stream, &mut rest).await? {
        0 => Ok(payload.len() as u64),
        n => Err(std::io::Error::other(format!(
            "{n} unexpected byte(s) after the echo"
        ))),
    }
}
