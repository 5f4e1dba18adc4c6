//! When each request is due and what it is.
//!
//! The run's requests are numbered `0..planned`; request `n` is due
//! `n / rate` seconds after the start, so over all connections they are
//! evenly spaced. Connection `c` of `C` sends requests `c, c + C, c + 2C, …`:
//! each connection runs at `rate / C`, the connections staggered by
//! `1 / rate`. The due times depend on nothing the server does (an open
//! loop).

use std::io::Write;
use std::time::{Duration, Instant};

use super::Config;

/// A request's command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `SET key value`.
    Set,
    /// `GET key`.
    Get,
    /// HTTP/1.1 `GET /` (`--http`).
    HttpGet,
    /// HTTP/1.1 `PUT /kv/KEY` with a JSON body (`--http-kv`).
    HttpKvPut,
    /// HTTP/1.1 `GET /kv/KEY` (`--http-kv`).
    HttpKvGet,
}

impl Kind {
    /// Whether the reply is an HTTP response.
    pub fn is_http(self) -> bool {
        matches!(self, Kind::HttpGet | Kind::HttpKvPut | Kind::HttpKvGet)
    }
}

/// One connection's requests and their due times.
#[derive(Debug, Clone)]
pub struct Schedule {
    start: Instant,
    rate: u64,
    connection: u64,
    connections: u64,
    count: u64,
    ratio: (u32, u32),
    keys: u64,
    /// `--http`: every request is [`Kind::HttpGet`].
    http: bool,
    /// `--http-kv`: [`Kind::HttpKvPut`] and [`Kind::HttpKvGet`] per the
    /// ratio.
    http_kv: bool,
    /// Requests of this connection taken so far.
    taken: u64,
}

impl Schedule {
    /// Connection `connection`'s schedule under `config`, from `start`.
    pub fn new(config: &Config, connection: usize, start: Instant) -> Schedule {
        let (connection, connections) = (connection as u64, config.connections as u64);
        let planned = config.planned();
        Schedule {
            start,
            rate: config.rate,
            connection,
            connections,
            count: planned.saturating_sub(connection).div_ceil(connections),
            ratio: config.ratio,
            keys: config.keys,
            http: config.http,
            http_kv: config.http_kv,
            taken: 0,
        }
    }

    /// Requests this connection sends in the whole run.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Whether every request has been taken.
    pub fn finished(&self) -> bool {
        self.taken == self.count
    }

    /// When the next request is due, if any is left.
    pub fn next_due(&self) -> Option<Instant> {
        (!self.finished()).then(|| self.due(self.taken))
    }

    /// The next request if it is due at `now`: its due time, command and
    /// key number.
    pub fn take_due(&mut self, now: Instant) -> Option<(Instant, Kind, u64)> {
        let due = self.next_due().filter(|due| *due <= now)?;
        let (taken, global) = (self.taken, self.global(self.taken));
        self.taken += 1;
        let (sets, gets) = self.ratio;
        // By the connection's own count, so that each connection mixes
        // both commands whatever C and the ratio are.
        let set = taken % u64::from(sets + gets) < u64::from(sets);
        let kind = match (self.http, self.http_kv, set) {
            (true, _, _) => Kind::HttpGet,
            (false, true, true) => Kind::HttpKvPut,
            (false, true, false) => Kind::HttpKvGet,
            (false, false, true) => Kind::Set,
            (false, false, false) => Kind::Get,
        };
        Some((due, kind, spread(global) % self.keys))
    }

    /// The run-wide number of this connection's request `taken`.
    fn global(&self, taken: u64) -> u64 {
        self.connection + taken * self.connections
    }

    fn due(&self, taken: u64) -> Instant {
        let nanos = u128::from(self.global(taken)) * 1_000_000_000 / u128::from(self.rate);
        self.start + Duration::from_nanos(nanos as u64)
    }
}

/// The bytes of every [`Kind::HttpGet`] request: keep-alive is HTTP/1.1's
/// default.
pub const HTTP_GET: &[u8] = b"GET / HTTP/1.1\r\nhost: kv-load\r\n\r\n";

/// Appends the request for `kind`: for SET and GET the RESP array on key
/// number `key` (named as kv's prefilled keys, `key:000000000042`), with
/// `value` for a SET; for `--http` [`HTTP_GET`]; for `--http-kv` the
/// request on `/kv/KEY`, a PUT's body `{"value":"VALUE"}` (`value` is
/// plain ASCII, no escaping needed).
pub fn encode(kind: Kind, key: u64, value: &[u8], out: &mut Vec<u8>) {
    let (count, name) = match kind {
        Kind::Set => (3, "SET"),
        Kind::Get => (2, "GET"),
        Kind::HttpGet => return out.extend_from_slice(HTTP_GET),
        Kind::HttpKvGet | Kind::HttpKvPut => return encode_http_kv(kind, key, value, out),
    };
    let key = format!("key:{key:012}");
    write!(
        out,
        "*{count}\r\n$3\r\n{name}\r\n${}\r\n{key}\r\n",
        key.len()
    )
    .expect("a Vec");
    if kind == Kind::Set {
        write!(out, "${}\r\n", value.len()).expect("a Vec");
        out.extend_from_slice(value);
        out.extend_from_slice(b"\r\n");
    }
}

/// `--http-kv`'s request for `kind` on key number `key`.
fn encode_http_kv(kind: Kind, key: u64, value: &[u8], out: &mut Vec<u8>) {
    if kind == Kind::HttpKvGet {
        write!(
            out,
            "GET /kv/key:{key:012} HTTP/1.1\r\nhost: kv-load\r\n\r\n"
        )
        .expect("a Vec");
        return;
    }
    let body_len = br#"{"value":""}"#.len() + value.len();
    write!(
        out,
        "PUT /kv/key:{key:012} HTTP/1.1\r\nhost: kv-load\r\n\
         content-type: application/json\r\ncontent-length: {body_len}\r\n\r\n{{\"value\":\""
    )
    .expect("a Vec");
    out.extend_from_slice(value);
    out.extend_from_slice(b"\"}");
}

/// splitmix64's finaliser: request numbers to well-spread key numbers.
fn spread(n: u64) -> u64 {
    let mut x = n.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kv::resp;

    fn config(rate: u64, connections: usize, millis: u64) -> Config {
        Config {
            rate,
            connections,
            duration: Duration::from_millis(millis),
            keys: 100,
            ..Config::default()
        }
    }

    /// Every request of every connection, taken at the end of time.
    fn all(config: &Config, start: Instant) -> Vec<Vec<(Instant, Kind, u64)>> {
        let never = start + Duration::from_secs(3600);
        (0..config.connections)
            .map(|c| {
                let mut schedule = Schedule::new(config, c, start);
                std::iter::from_fn(|| schedule.take_due(never)).collect()
            })
            .collect()
    }

    #[test]
    fn connections_share_the_plan_evenly_spaced() {
        let config = config(1000, 3, 10); // 10 requests, 1 ms apart
        let start = Instant::now();
        let requests = all(&config, start);
        let counts: Vec<_> = requests.iter().map(Vec::len).collect();
        assert_eq!(counts, [4, 3, 3]);
        let mut dues: Vec<_> = requests.iter().flatten().map(|r| r.0 - start).collect();
        dues.sort();
        let expected: Vec<_> = (0..10).map(Duration::from_millis).collect();
        assert_eq!(dues, expected);
        // Connection 1 sends requests 1, 4, 7: 3 ms apart from 1 ms.
        assert_eq!(requests[1][2].0 - start, Duration::from_millis(7));
        assert!(requests.iter().flatten().all(|r| r.2 < 100));
    }

    #[test]
    fn nothing_is_taken_before_it_is_due() {
        let config = config(1000, 2, 10);
        let start = Instant::now();
        let mut schedule = Schedule::new(&config, 1, start);
        assert_eq!(schedule.count(), 5);
        assert_eq!(schedule.next_due(), Some(start + Duration::from_millis(1)));
        assert_eq!(schedule.take_due(start), None);
        let late = start + Duration::from_millis(4);
        // Behind schedule: both overdue requests come at once.
        assert!(schedule.take_due(late).is_some() && schedule.take_due(late).is_some());
        assert_eq!(schedule.take_due(late), None);
        assert_eq!(schedule.next_due(), Some(start + Duration::from_millis(5)));
        let end = start + Duration::from_secs(1);
        while schedule.take_due(end).is_some() {}
        assert!(schedule.finished() && schedule.next_due().is_none());
    }

    #[test]
    fn the_ratio_holds_on_every_connection() {
        let mut config = config(1000, 4, 100);
        config.ratio = (1, 3);
        for requests in all(&config, Instant::now()) {
            let sets = requests.iter().filter(|r| r.1 == Kind::Set).count();
            // 25 requests each: SETs at 0, 4, .. 24.
            assert_eq!((sets, requests.len()), (7, 25), "{requests:?}");
        }
        config.ratio = (0, 1);
        let requests = all(&config, Instant::now());
        assert!(requests.iter().flatten().all(|r| r.1 == Kind::Get));
    }

    #[test]
    fn requests_are_resp_arrays_kv_parses() {
        let mut out = Vec::new();
        encode(Kind::Set, 42, b"xyz", &mut out);
        encode(Kind::Get, 7, b"unused", &mut out);
        let set = resp::parse(&out).unwrap().unwrap();
        assert_eq!(set.args, [&b"SET"[..], b"key:000000000042", b"xyz"]);
        let get = resp::parse(&out[set.used..]).unwrap().unwrap();
        assert_eq!(get.args, [&b"GET"[..], b"key:000000000007"]);
        assert_eq!(set.used + get.used, out.len());
    }

    #[test]
    fn with_http_every_request_is_the_same_get() {
        let mut config = config(1000, 2, 10);
        config.http = true;
        let requests = all(&config, Instant::now());
        assert_eq!(requests.iter().flatten().count(), 10);
        assert!(requests.iter().flatten().all(|r| r.1 == Kind::HttpGet));
        let mut out = Vec::new();
        encode(Kind::HttpGet, 3, b"unused", &mut out);
        encode(Kind::HttpGet, 4, b"unused", &mut out);
        assert_eq!(out, [HTTP_GET, HTTP_GET].concat());
    }

    #[test]
    fn with_http_kv_puts_and_gets_follow_the_ratio() {
        let mut config = config(1000, 2, 20);
        config.http_kv = true;
        config.ratio = (1, 4);
        let requests = all(&config, Instant::now());
        let puts = requests.iter().flatten().filter(|r| r.1 == Kind::HttpKvPut);
        let gets = requests.iter().flatten().filter(|r| r.1 == Kind::HttpKvGet);
        assert_eq!((puts.count(), gets.count()), (4, 16));
        let mut out = Vec::new();
        encode(Kind::HttpKvPut, 42, b"xyz", &mut out);
        let put = "PUT /kv/key:000000000042 HTTP/1.1\r\nhost: kv-load\r\n\
                   content-type: application/json\r\ncontent-length: 15\r\n\r\n{\"value\":\"xyz\"}";
        assert_eq!(String::from_utf8(out).unwrap(), put);
        let mut out = Vec::new();
        encode(Kind::HttpKvGet, 7, b"unused", &mut out);
        let get = "GET /kv/key:000000000007 HTTP/1.1\r\nhost: kv-load\r\n\r\n";
        assert_eq!(String::from_utf8(out).unwrap(), get);
    }
}
