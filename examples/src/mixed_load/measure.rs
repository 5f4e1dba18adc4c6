//! Measurement: the foreground client with its open-loop measurement.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

/// A connection to the echo server from a plain OS thread.
pub struct Client {
    stream: TcpStream,
}

impl Client {
    /// Connects; `reply_timeout` bounds every wait for a reply.
    pub fn connect(addr: SocketAddr, reply_timeout: Duration) -> io::Result<Client> {
        let stream = TcpStream::connect(addr)?;
        stream.set_nodelay(true)?;
        stream.set_read_timeout(Some(reply_timeout))?;
        Ok(Client { stream })
    }

    /// Sends one byte and waits for its echo. An error (time-out included)
    /// means the server did not answer in time.
    pub fn round_trip(&mut self) -> io::Result<()> {
        self.stream.write_all(&[1])?;
        let mut reply = [0u8; 1];
        self.stream.read_exact(&mut reply)
    }
}

/// Foreground latencies of one run.
pub struct ForegroundReport {
    /// Latency of each answered request, in µs.
    pub latencies_us: Histogram<u64>,
    /// Requests due during the run.
    pub sent: u64,
    /// `true` if a request got no reply before the run (plus a grace
    /// second) ended: the foreground starved.
    pub starved: bool,
}

/// Sends a request every `period` for `duration` (open loop; see the
/// `mixed_load` module docs) and records each one's latency.
pub fn measure_open_loop(
    addr: SocketAddr,
    duration: Duration,
    period: Duration,
) -> io::Result<ForegroundReport> {
    let mut client = Client::connect(addr, duration + Duration::from_secs(1))?;
    let mut latencies_us =
        Histogram::new_with_bounds(1, 60_000_000, 3).map_err(io::Error::other)?;
    let started = Instant::now();
    let mut previous_reply = started;
    let mut sent = 0u64;
    loop {
        let scheduled = started + period * sent as u32;
        if scheduled >= started + duration {
            break;
        }
        if let Some(wait) = scheduled.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
        let due = scheduled.max(previous_reply);
        sent += 1;
        if client.round_trip().is_err() {
            return Ok(ForegroundReport {
                latencies_us,
                sent,
                starved: true,
            });
        }
        previous_reply = Instant::now();
        let micros = previous_reply.duration_since(due).as_micros() as u64;
        latencies_us.saturating_record(micros.max(1));
    }
    Ok(ForegroundReport {
        latencies_us,
        sent,
        starved: false,
    })
}

impl ForegroundReport {
    /// Adds another run's requests to this one (a later round of the same
    /// variant).
    pub(super) fn merge(&mut self, other: ForegroundReport) {
        // Both histograms have the same bounds, so adding cannot fail.
        let _ = self.latencies_us.add(&other.latencies_us);
        self.sent += other.sent;
        self.starved |= other.starved;
    }
}
