//! `kv` in-process on both runtimes: RESP over plain std sockets, as a
//! Redis client would speak it, while the snapshot runs back to back.
//! Every wait is bounded (socket timeouts, deadlines).

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use brigade_examples::kv::snapshot_format::decode;
use brigade_examples::kv::store::{prefill_key, prefill_value};
use brigade_examples::kv::{self, Config, RuntimeKind, Server, SnapshotSettings};

/// Generous bound on every wait: only a hang comes near it.
const LIMIT: Duration = Duration::from_secs(60);

const PREFILL: u64 = 2_000;
const VALUE_SIZE: usize = 16;
const RUNTIMES: [RuntimeKind; 2] = [RuntimeKind::Brigade, RuntimeKind::Tokio];

/// A reply, as the server sent it.
#[derive(Debug, PartialEq)]
enum Reply {
    Simple(String),
    Error(String),
    Integer(i64),
    Bulk(Option<Vec<u8>>),
    Array(Vec<Reply>),
}

fn bulk(text: &str) -> Reply {
    Reply::Bulk(Some(text.as_bytes().to_vec()))
}

/// A blocking RESP client on one connection.
struct Client {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
}

impl Client {
    fn connect(addr: SocketAddr) -> io::Result<Client> {
        let stream = TcpStream::connect(addr)?;
        stream.set_nodelay(true)?;
        stream.set_read_timeout(Some(LIMIT))?;
        stream.set_write_timeout(Some(LIMIT))?;
        Ok(Client {
            reader: BufReader::new(stream.try_clone()?),
            writer: stream,
        })
    }

    /// `args` as a RESP array of bulk strings.
    fn encode(args: &[&str]) -> Vec<u8> {
        let mut frame = format!("*{}\r\n", args.len()).into_bytes();
        for arg in args {
            frame.extend_from_slice(format!("${}\r\n{arg}\r\n", arg.len()).as_bytes());
        }
        frame
    }

    fn send(&mut self, bytes: &[u8]) {
        self.writer.write_all(bytes).expect("write");
    }

    /// Sends one command and reads its reply.
    fn call(&mut self, args: &[&str]) -> Reply {
        self.send(&Self::encode(args));
        self.reply()
    }

    fn line(&mut self) -> String {
        let mut line = String::new();
        self.reader.read_line(&mut line).expect("read a reply");
        assert!(line.ends_with("\r\n"), "bad reply line {line:?}");
        line.truncate(line.len() - 2);
        line
    }

    fn reply(&mut self) -> Reply {
        let line = self.line();
        let (kind, rest) = line.split_at(1);
        match kind {
            "+" => Reply::Simple(rest.to_owned()),
            "-" => Reply::Error(rest.to_owned()),
            ":" => Reply::Integer(rest.parse().expect("an integer")),
            "$" if rest == "-1" => Reply::Bulk(None),
            "$" => {
                let mut data = vec![0; rest.parse::<usize>().expect("a length") + 2];
                self.reader.read_exact(&mut data).expect("read bulk data");
                assert_eq!(data.split_off(data.len() - 2), b"\r\n");
                Reply::Bulk(Some(data))
            }
            "*" => Reply::Array(
                (0..rest.parse().expect("a count"))
                    .map(|_| self.reply())
                    .collect(),
            ),
            _ => panic!("bad reply line {line:?}"),
        }
    }

    /// Whether the server closed the connection (EOF or reset).
    /// Whether the server closed the connection: the read sees its end
    /// (or a reset). A read that times out (the connection is still open
    /// after [`LIMIT`]) or returns data is no close.
    fn closed(&mut self) -> bool {
        let mut byte = [0; 1];
        match self.reader.read(&mut byte) {
            Ok(read) => read == 0,
            Err(error) => !matches!(
                error.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
            ),
        }
    }
}

fn config(runtime: RuntimeKind, snapshot_path: Option<PathBuf>) -> Config {
    Config {
        port: 0,
        workers: 2,
        runtime,
        prefill: PREFILL,
        value_size: VALUE_SIZE,
        snapshot: Some(SnapshotSettings {
            every: Duration::ZERO,
            path: snapshot_path,
        }),
        elastic: false,
        background_floor: 0.0,
        crowded_host_handoff: true,
        spread_workers: true,
        duration: None,
    }
}

fn wait_for(what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = Instant::now() + LIMIT;
    while !condition() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(2));
    }
}

fn prefilled(index: u64) -> (String, Vec<u8>) {
    let mut value = Vec::new();
    prefill_value(index, VALUE_SIZE, &mut value);
    (String::from_utf8(prefill_key(index)).unwrap(), value)
}

#[test]
fn every_command_on_both_runtimes() {
    for runtime in RUNTIMES {
        let server = kv::start(&config(runtime, None)).unwrap();
        let mut client = Client::connect(server.addr()).unwrap();
        assert_eq!(client.call(&["PING"]), Reply::Simple("PONG".into()));
        assert_eq!(client.call(&["ping", "hi"]), bulk("hi"));
        assert_eq!(client.call(&["GET", "k"]), Reply::Bulk(None));
        assert_eq!(
            client.call(&["SET", "k", "v 1"]),
            Reply::Simple("OK".into())
        );
        assert_eq!(client.call(&["GET", "k"]), bulk("v 1"));
        assert_eq!(client.call(&["INCR", "n"]), Reply::Integer(1));
        assert_eq!(client.call(&["INCR", "n"]), Reply::Integer(2));
        assert_eq!(
            client.call(&["INCR", "k"]),
            Reply::Error("ERR value is not an integer or out of range".into())
        );
        assert_eq!(client.call(&["DEL", "k", "n", "none"]), Reply::Integer(2));
        assert_eq!(
            client.call(&["CONFIG", "GET", "save"]),
            Reply::Array(vec![])
        );
        assert_eq!(client.call(&["COMMAND", "DOCS"]), Reply::Array(vec![]));
        let unknown = client.call(&["FLUSHALL"]);
        assert!(
            matches!(&unknown, Reply::Error(e) if e.starts_with("ERR unknown command 'FLUSHALL'"))
        );
        let (key, value) = prefilled(PREFILL - 1);
        assert_eq!(client.call(&["GET", &key]), Reply::Bulk(Some(value)));
        // An inline command, as typed into telnet.
        client.send(b"SET inline yes\r\nGET inline\r\n");
        assert_eq!(client.reply(), Reply::Simple("OK".into()));
        assert_eq!(client.reply(), bulk("yes"));
        assert_eq!(client.call(&["QUIT"]), Reply::Simple("OK".into()));
        assert!(client.closed(), "{runtime:?}: QUIT closes");
        assert_eq!(server.commands(), 16, "{runtime:?}");
        server.shutdown();
    }
}

#[test]
fn pipelined_and_split_commands() {
    for runtime in RUNTIMES {
        let server = kv::start(&config(runtime, None)).unwrap();
        let mut client = Client::connect(server.addr()).unwrap();
        let mut batch = Vec::new();
        for i in 0..200 {
            let (key, value) = (format!("p{i}"), format!("value{i}"));
            batch.extend(Client::encode(&["SET", &key, &value]));
            batch.extend(Client::encode(&["GET", &key]));
        }
        client.send(&batch);
        for i in 0..200 {
            assert_eq!(
                client.reply(),
                Reply::Simple("OK".into()),
                "{runtime:?} {i}"
            );
            assert_eq!(
                client.reply(),
                bulk(&format!("value{i}")),
                "{runtime:?} {i}"
            );
        }
        // One command in pieces, a pause between them so they arrive in
        // separate reads (if they do not, the test still holds).
        let frame = Client::encode(&["SET", "split", "across reads"]);
        for piece in frame.chunks(5) {
            client.send(piece);
            std::thread::sleep(Duration::from_millis(2));
        }
        assert_eq!(client.reply(), Reply::Simple("OK".into()));
        assert_eq!(client.call(&["GET", "split"]), bulk("across reads"));
        server.shutdown();
    }
}

#[test]
fn protocol_garbage_gets_an_error_then_the_connection_closes() {
    for runtime in RUNTIMES {
        let server = kv::start(&config(runtime, None)).unwrap();
        let mut client = Client::connect(server.addr()).unwrap();
        client.send(b"*1\r\n:5\r\n");
        let reply = client.reply();
        assert!(
            matches!(&reply, Reply::Error(e) if e.starts_with("ERR Protocol error")),
            "{reply:?}"
        );
        assert!(client.closed(), "{runtime:?}");
        // The server goes on serving others.
        let mut other = Client::connect(server.addr()).unwrap();
        assert_eq!(other.call(&["PING"]), Reply::Simple("PONG".into()));
        server.shutdown();
    }
}

/// `clients` threads, each setting `per_client` keys of its own (checking
/// each) and incrementing one shared counter.
fn write_from_clients(server: &Server, clients: usize, per_client: usize) {
    let addr = server.addr();
    let threads: Vec<_> = (0..clients)
        .map(|thread| {
            std::thread::spawn(move || {
                let mut client = Client::connect(addr).expect("connect");
                for i in 0..per_client {
                    let (key, value) = (format!("client:{thread}:{i}"), format!("v{thread}.{i}"));
                    assert_eq!(
                        client.call(&["SET", &key, &value]),
                        Reply::Simple("OK".into())
                    );
                    assert_eq!(client.call(&["GET", &key]), bulk(&value));
                    assert!(matches!(
                        client.call(&["INCR", "counter"]),
                        Reply::Integer(1..)
                    ));
                }
            })
        })
        .collect();
    for thread in threads {
        thread.join().expect("a client thread failed");
    }
}

#[test]
fn many_concurrent_clients_lose_no_increment() {
    for runtime in RUNTIMES {
        let server = kv::start(&config(runtime, None)).unwrap();
        write_from_clients(&server, 8, 50);
        let mut client = Client::connect(server.addr()).unwrap();
        assert_eq!(client.call(&["GET", "counter"]), bulk("400"), "{runtime:?}");
        assert_eq!(server.store().len() as u64, PREFILL + 400 + 1);
        server.shutdown();
    }
}

#[test]
fn snapshots_hold_every_key_while_clients_write() {
    for runtime in RUNTIMES {
        let path = std::env::temp_dir().join(format!(
            "kv-test-{}-{}.snap",
            std::process::id(),
            runtime.name()
        ));
        let server = kv::start(&config(runtime, Some(path.clone()))).unwrap();
        let snapshots = server.snapshots();
        wait_for("a first snapshot", || snapshots.done() >= 1);
        write_from_clients(&server, 4, 50);
        // Snapshots taken meanwhile hold the prefill and some of the
        // writes: never fewer keys, never more than were written.
        let most = PREFILL + 200 + 1;
        let seen = snapshots.last().unwrap();
        assert!((PREFILL..=most).contains(&seen.keys), "{seen:?}");
        // One snapshot started after the writes ended, and finished.
        let done = snapshots.done();
        wait_for("two more snapshots", || snapshots.done() >= done + 2);
        let totals = server.shutdown();
        assert!(totals.snapshots >= done + 2 && totals.keys_serialised >= most * 2);
        check_snapshot_file(&path, most);
        std::fs::remove_file(&path).unwrap();
    }
}

/// The file holds the last finished snapshot: `keys` keys, the prefill
/// and the clients' writes with their values, and a valid checksum.
fn check_snapshot_file(path: &PathBuf, keys: u64) {
    let bytes = std::fs::read(path).unwrap();
    let map = decode(&bytes).unwrap();
    assert_eq!(map.len() as u64, keys);
    for index in [0, PREFILL / 2, PREFILL - 1] {
        let (key, value) = prefilled(index);
        assert_eq!(map.get(key.as_bytes()), Some(&value));
    }
    assert_eq!(map.get(&b"counter"[..]), Some(&b"200".to_vec()));
    assert_eq!(map.get(&b"client:3:49"[..]), Some(&b"v3.49".to_vec()));
}

#[test]
fn shutdown_closes_open_connections() {
    for runtime in RUNTIMES {
        let server = kv::start(&config(runtime, None)).unwrap();
        let addr = server.addr();
        let mut client = Client::connect(addr).unwrap();
        assert_eq!(client.call(&["PING"]), Reply::Simple("PONG".into()));
        let totals = server.shutdown();
        assert_eq!((totals.commands, totals.connections), (1, 1));
        // The connection's task was dropped with its socket: the client
        // reads the end of the stream. (Shutdown is bounded at 5 s, so its
        // duration shows nothing; a connection left open does.)
        assert!(client.closed(), "{runtime:?}");
    }
}
