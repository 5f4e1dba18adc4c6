//! One client thread: an event loop over its connections' non-blocking
//! sockets. Each turn it sends every request that is due (all of them at
//! once if it fell behind: the schedule never waits for replies), then
//! sleeps in `ppoll` until the next request is due or a reply arrives.
//! `ppoll` (with 1 µs timer slack) wakes within microseconds; an async
//! runtime's timer would round every send to the millisecond and add that
//! to the latencies measured.

use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use super::http_reply;
use super::reply::{self, Reply};
use super::report::{Tally, nanos};
use super::schedule::{Kind, Schedule, encode};
use crate::kv::resp::ProtocolError;

/// A connection, its schedule and its requests in flight.
pub struct Connection {
    stream: TcpStream,
    schedule: Schedule,
    /// Encoded requests, written up to `written`.
    out: Vec<u8>,
    written: usize,
    /// Due time and command of each request awaiting its reply, oldest
    /// first (replies come in order).
    waiting: VecDeque<(Instant, Kind)>,
    /// Bytes read and not yet parsed.
    input: Vec<u8>,
    broken: bool,
}

impl Connection {
    /// `stream` (made non-blocking) sending the requests of `schedule`.
    pub fn new(stream: TcpStream, schedule: Schedule) -> io::Result<Connection> {
        stream.set_nonblocking(true)?;
        stream.set_nodelay(true)?;
        Ok(Connection {
            stream,
            schedule,
            out: Vec::new(),
            written: 0,
            waiting: VecDeque::new(),
            input: Vec::new(),
            broken: false,
        })
    }

    /// Queues every request due at `now` and writes what the socket takes;
    /// whether any was due.
    fn send_due(&mut self, now: Instant, value: &[u8], tally: &mut Tally) -> bool {
        let mut any = false;
        while let Some((due, kind, key)) = self.schedule.take_due(now) {
            encode(kind, key, value, &mut self.out);
            self.waiting.push_back((due, kind));
            tally.sent += 1;
            tally.send_lag_ns.saturating_record(nanos(now - due));
            any = true;
        }
        if any {
            self.flush(tally);
        }
        any
    }

    /// Writes queued bytes until done or the socket is full.
    fn flush(&mut self, tally: &mut Tally) {
        while self.written < self.out.len() {
            match self.stream.write(&self.out[self.written..]) {
                Ok(0) => return self.break_off(tally, "the connection takes no more bytes"),
                Ok(wrote) => self.written += wrote,
                Err(error) if error.kind() == io::ErrorKind::WouldBlock => return,
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                Err(error) => return self.break_off(tally, &format!("write failed: {error}")),
            }
        }
        self.out.clear();
        self.written = 0;
    }

    /// Reads what has arrived and records each complete reply.
    fn receive(&mut self, tally: &mut Tally) {
        let mut chunk = [0u8; 16 * 1024];
        loop {
            match self.stream.read(&mut chunk) {
                Ok(0) => return self.break_off(tally, "the server closed the connection"),
                Ok(read) => {
                    self.input.extend_from_slice(&chunk[..read]);
                    // A short read emptied the socket: spare the read that
                    // would say so (poll reports later bytes).
                    if read < chunk.len() {
                        break;
                    }
                }
                Err(error) if error.kind() == io::ErrorKind::WouldBlock => break,
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                Err(error) => return self.break_off(tally, &format!("read failed: {error}")),
            }
        }
        let arrived = Instant::now();
        let mut used = 0;
        while used < self.input.len() {
            let Some(&(due, kind)) = self.waiting.front() else {
                return self.break_off(tally, "a reply to no request");
            };
            let (answer, len) = match Answer::parse(kind, &self.input[used..]) {
                Ok(Some(parsed)) => parsed,
                Ok(None) => break,
                Err(error) => return self.break_off(tally, &format!("bad reply: {}", error.0)),
            };
            used += len;
            self.waiting.pop_front();
            tally.answered += 1;
            tally.record_latency(due, arrived);
            record(kind, answer, tally);
        }
        self.input.drain(..used);
    }

    /// Gives up on the connection: its requests in flight stay unanswered
    /// and its later ones are never sent.
    fn break_off(&mut self, tally: &mut Tally, why: &str) {
        self.broken = true;
        self.waiting.clear();
        tally.broken_connections += 1;
        tally.note_error(|| why.to_owned());
    }

    /// What `ppoll` should wait for on this connection.
    fn poll_entry(&self) -> libc::pollfd {
        let pending_output = self.written < self.out.len();
        libc::pollfd {
            // A negative descriptor is skipped by poll.
            fd: if self.broken {
                -1
            } else {
                self.stream.as_raw_fd()
            },
            events: libc::POLLIN | if pending_output { libc::POLLOUT } else { 0 },
            revents: 0,
        }
    }
}

/// A reply as parsed for the request it answers.
#[derive(Debug)]
enum Answer<'a> {
    Resp(Reply<'a>),
    /// An HTTP response's status code.
    Http(u16),
}

impl Answer<'_> {
    /// The first reply in `input`, parsed as the answer to a `kind`
    /// request, and its length; `None` if incomplete.
    fn parse(kind: Kind, input: &[u8]) -> Result<Option<(Answer<'_>, usize)>, ProtocolError> {
        Ok(if kind.is_http() {
            http_reply::parse(input)?.map(|(code, len)| (Answer::Http(code), len))
        } else {
            reply::parse(input)?.map(|(reply, len)| (Answer::Resp(reply), len))
        })
    }
}

/// Counts `answer` to a `kind` request.
fn record(kind: Kind, answer: Answer<'_>, tally: &mut Tally) {
    match (kind, answer) {
        (Kind::Set, Answer::Resp(Reply::Simple(b"OK"))) => tally.sets += 1,
        (Kind::Get, Answer::Resp(Reply::Bulk(Some(_)))) => tally.hits += 1,
        (Kind::Get, Answer::Resp(Reply::Bulk(None))) => tally.misses += 1,
        (Kind::HttpGet, Answer::Http(200)) => tally.http_ok += 1,
        (Kind::HttpKvPut, Answer::Http(200)) => {
            tally.http_ok += 1;
            tally.sets += 1;
        }
        (Kind::HttpKvGet, Answer::Http(200)) => {
            tally.http_ok += 1;
            tally.hits += 1;
        }
        (Kind::HttpKvGet, Answer::Http(404)) => tally.misses += 1,
        (_, Answer::Http(code)) => {
            tally.error_replies += 1;
            tally.note_error(|| format!("HTTP status {code}"));
        }
        (_, Answer::Resp(Reply::Error(message))) => {
            tally.error_replies += 1;
            tally.note_error(|| format!("error reply: {}", String::from_utf8_lossy(message)));
        }
        (_, other) => {
            tally.error_replies += 1;
            tally.note_error(|| format!("unexpected reply {other:?} to {kind:?}"));
        }
    }
}

/// Runs `connections` until every request is sent and answered, or until
/// `drain` after the last send: the thread's tally (`sending` measured from
/// `start`).
pub fn run(
    mut connections: Vec<Connection>,
    value: &[u8],
    start: Instant,
    drain: Duration,
    slow_threshold: Option<Duration>,
) -> io::Result<Tally> {
    tighten_timer_slack();
    let mut tally = Tally {
        slow_threshold,
        ..Tally::default()
    };
    let mut drain_until = None;
    let mut entries = Vec::with_capacity(connections.len());
    loop {
        let now = Instant::now();
        for connection in connections.iter_mut().filter(|c| !c.broken) {
            if connection.send_due(now, value, &mut tally) {
                tally.sending = now.saturating_duration_since(start);
            }
        }
        let live = || connections.iter().filter(|c| !c.broken);
        let next_due = live().filter_map(|c| c.schedule.next_due()).min();
        if next_due.is_none() {
            let until = *drain_until.get_or_insert(now + drain);
            if live().all(|c| c.waiting.is_empty()) || now >= until {
                return Ok(tally);
            }
        }
        let wake = next_due.or(drain_until).expect("one of them is set");
        entries.clear();
        entries.extend(connections.iter().map(Connection::poll_entry));
        poll(&mut entries, wake.saturating_duration_since(now))?;
        for (connection, entry) in connections.iter_mut().zip(&entries) {
            if entry.revents & libc::POLLOUT != 0 {
                connection.flush(&mut tally);
            }
            let readable = libc::POLLIN | libc::POLLHUP | libc::POLLERR;
            if entry.revents & readable != 0 && !connection.broken {
                connection.receive(&mut tally);
            }
        }
    }
}

/// Waits up to `timeout` for any of `entries` to be ready (a signal ends
/// the wait early, which the loop tolerates).
fn poll(entries: &mut [libc::pollfd], timeout: Duration) -> io::Result<()> {
    let count = entries.len() as libc::nfds_t;
    #[cfg(target_os = "linux")]
    let ready = {
        let timeout = libc::timespec {
            tv_sec: timeout.as_secs().min(3600) as libc::time_t,
            tv_nsec: timeout.subsec_nanos().into(),
        };
        // SAFETY: `entries` is a live slice of `count` pollfds that the
        // kernel may write `revents` into; `timeout` outlives the call; a
        // null signal mask leaves the thread's mask as it is.
        unsafe { libc::ppoll(entries.as_mut_ptr(), count, &timeout, std::ptr::null()) }
    };
    #[cfg(not(target_os = "linux"))]
    let ready = {
        // Whole milliseconds, rounded up so that the loop never spins.
        let millis = timeout.as_micros().div_ceil(1000).min(3_600_000) as libc::c_int;
        // SAFETY: `entries` is a live slice of `count` pollfds.
        unsafe { libc::poll(entries.as_mut_ptr(), count, millis) }
    };
    if ready < 0 {
        let error = io::Error::last_os_error();
        if error.kind() != io::ErrorKind::Interrupted {
            return Err(error);
        }
    }
    Ok(())
}

/// Linux lets a thread's timed waits end up to 50 µs late by default
/// (timer slack); 1 µs keeps the sends on time.
fn tighten_timer_slack() {
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_TIMERSLACK takes one unsigned long and changes only
    // this thread's timer slack; a failure leaves the default, harmless.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong);
    }
}
