//! `Interest` and `Ready`: what a task waits for on a socket, and what the
//! reactor reported.

use std::fmt;
use std::ops;

use crate::driver::scheduled_io::{
    Direction, ERROR, READ_CLOSED, READABLE, WRITABLE, WRITE_CLOSED,
};

/// The readiness a task waits for, in [`TcpStream::ready`] and the other
/// sockets' `ready`, `try_io` and `async_io`: [`READABLE`](Self::READABLE),
/// [`WRITABLE`](Self::WRITABLE), or both (`READABLE | WRITABLE`).
///
/// The same names as tokio's `tokio::io::Interest`, which needs tokio's
/// `net` feature; tokio's `ERROR` and `PRIORITY` interests are not offered
/// (errors end every wait anyway).
///
/// [`TcpStream::ready`]: crate::net::TcpStream::ready
///
/// # Examples
///
/// ```
/// use brigade::io::Interest;
///
/// let both = Interest::READABLE | Interest::WRITABLE;
/// assert!(both.is_readable() && both.is_writable());
/// assert_eq!(both.remove(Interest::WRITABLE), Some(Interest::READABLE));
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Interest(u8);

const INTEREST_READ: u8 = 1;
const INTEREST_WRITE: u8 = 2;

impl Interest {
    /// Interest in reading (or accepting, or receiving).
    pub const READABLE: Interest = Interest(INTEREST_READ);
    /// Interest in writing (or sending).
    pub const WRITABLE: Interest = Interest(INTEREST_WRITE);

    /// Whether the interest includes reading.
    pub const fn is_readable(self) -> bool {
        self.0 & INTEREST_READ != 0
    }

    /// Whether the interest includes writing.
    pub const fn is_writable(self) -> bool {
        self.0 & INTEREST_WRITE != 0
    }

    /// Both interests (the same as `self | other`, usable in a `const`).
    #[must_use]
    pub const fn add(self, other: Interest) -> Interest {
        Interest(self.0 | other.0)
    }

    /// `self` without `other`; `None` if nothing is left.
    #[must_use]
    pub fn remove(self, other: Interest) -> Option<Interest> {
        let left = self.0 & !other.0;
        (left != 0).then_some(Interest(left))
    }

    /// The same interest as `mio`'s, for registering a source.
    pub(crate) fn to_mio(self) -> mio::Interest {
        match (self.is_readable(), self.is_writable()) {
            (true, true) => mio::Interest::READABLE | mio::Interest::WRITABLE,
            (false, true) => mio::Interest::WRITABLE,
            _ => mio::Interest::READABLE,
        }
    }

    /// The directions the reactor waits in for this interest.
    pub(crate) fn directions(self) -> &'static [Direction] {
        match (self.is_readable(), self.is_writable()) {
            (true, true) => &[Direction::Read, Direction::Write],
            (false, true) => &[Direction::Write],
            _ => &[Direction::Read],
        }
    }
}

impl ops::BitOr for Interest {
    type Output = Interest;

    fn bitor(self, other: Interest) -> Interest {
        self.add(other)
    }
}

impl ops::BitOrAssign for Interest {
    fn bitor_assign(&mut self, other: Interest) {
        *self = self.add(other);
    }
}

impl fmt::Debug for Interest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.is_readable(), self.is_writable()) {
            (true, true) => f.write_str("READABLE | WRITABLE"),
            (false, true) => f.write_str("WRITABLE"),
            _ => f.write_str("READABLE"),
        }
    }
}

/// The readiness the reactor reported for a socket, returned by
/// [`TcpStream::ready`] and the other sockets' `ready`.
///
/// A readiness is a hint: the next operation may still report
/// `WouldBlock` (the `try_` methods then clear it, and the next wait waits
/// for a new event). `READ_CLOSED` and `WRITE_CLOSED` stay set once seen.
///
/// [`TcpStream::ready`]: crate::net::TcpStream::ready
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Ready(u8);

const R_READABLE: u8 = 1;
const R_WRITABLE: u8 = 2;
const R_READ_CLOSED: u8 = 4;
const R_WRITE_CLOSED: u8 = 8;
const R_ERROR: u8 = 16;

/// Each driver bit (`driver/scheduled_io.rs`) and its `Ready` bit.
const DRIVER_BITS: [(usize, u8); 5] = [
    (READABLE, R_READABLE),
    (WRITABLE, R_WRITABLE),
    (READ_CLOSED, R_READ_CLOSED),
    (WRITE_CLOSED, R_WRITE_CLOSED),
    (ERROR, R_ERROR),
];

impl Ready {
    /// Nothing is ready.
    pub const EMPTY: Ready = Ready(0);
    /// The socket may be read from.
    pub const READABLE: Ready = Ready(R_READABLE);
    /// The socket may be written to.
    pub const WRITABLE: Ready = Ready(R_WRITABLE);
    /// The read half is closed: reads return end of stream (or an error).
    pub const READ_CLOSED: Ready = Ready(R_READ_CLOSED);
    /// The write half is closed: writes fail.
    pub const WRITE_CLOSED: Ready = Ready(R_WRITE_CLOSED);
    /// The socket has a pending error.
    pub const ERROR: Ready = Ready(R_ERROR);
    /// Every readiness above.
    pub const ALL: Ready =
        Ready(R_READABLE | R_WRITABLE | R_READ_CLOSED | R_WRITE_CLOSED | R_ERROR);

    /// Whether nothing is ready.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Whether the socket may be read from (`READABLE` or `READ_CLOSED`).
    pub fn is_readable(self) -> bool {
        self.0 & (R_READABLE | R_READ_CLOSED) != 0
    }

    /// Whether the socket may be written to (`WRITABLE` or `WRITE_CLOSED`).
    pub fn is_writable(self) -> bool {
        self.0 & (R_WRITABLE | R_WRITE_CLOSED) != 0
    }

    /// Whether the read half is closed.
    pub fn is_read_closed(self) -> bool {
        self.0 & R_READ_CLOSED != 0
    }

    /// Whether the write half is closed.
    pub fn is_write_closed(self) -> bool {
        self.0 & R_WRITE_CLOSED != 0
    }

    /// Whether the socket has a pending error.
    pub fn is_error(self) -> bool {
        self.0 & R_ERROR != 0
    }

    /// Converts the driver's readiness bits.
    pub(crate) fn from_driver_bits(bits: usize) -> Ready {
        let ready = DRIVER_BITS
            .iter()
            .filter(|(driver, _)| bits & driver != 0)
            .fold(0, |ready, (_, bit)| ready | bit);
        Ready(ready)
    }

    /// The driver's readiness bits for this readiness.
    pub(crate) fn to_driver_bits(self) -> usize {
        DRIVER_BITS
            .iter()
            .filter(|(_, bit)| self.0 & bit != 0)
            .fold(0, |bits, (driver, _)| bits | driver)
    }
}

impl ops::BitOr for Ready {
    type Output = Ready;

    fn bitor(self, other: Ready) -> Ready {
        Ready(self.0 | other.0)
    }
}

impl ops::BitOrAssign for Ready {
    fn bitor_assign(&mut self, other: Ready) {
        self.0 |= other.0;
    }
}

impl ops::BitAnd for Ready {
    type Output = Ready;

    fn bitand(self, other: Ready) -> Ready {
        Ready(self.0 & other.0)
    }
}

impl ops::Sub for Ready {
    type Output = Ready;

    fn sub(self, other: Ready) -> Ready {
        Ready(self.0 & !other.0)
    }
}

impl fmt::Debug for Ready {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Ready")
            .field("is_readable", &self.is_readable())
            .field("is_writable", &self.is_writable())
            .field("is_read_closed", &self.is_read_closed())
            .field("is_write_closed", &self.is_write_closed())
            .field("is_error", &self.is_error())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn driver_bits_map_to_ready() {
        let ready = Ready::from_driver_bits(READABLE | WRITE_CLOSED);
        assert!(ready.is_readable() && ready.is_writable() && ready.is_write_closed());
        assert!(!ready.is_read_closed() && !ready.is_error());
        assert!(Ready::from_driver_bits(0).is_empty());
        assert_eq!(Ready::from_driver_bits(ERROR), Ready::ERROR);
        let both = Ready::READABLE | Ready::WRITE_CLOSED;
        assert_eq!(Ready::from_driver_bits(both.to_driver_bits()), both);
        assert_eq!(Ready::ALL.to_driver_bits().count_ones(), 5);
    }

    #[test]
    fn interest_directions() {
        assert_eq!(Interest::READABLE.directions(), &[Direction::Read]);
        let both = Interest::READABLE | Interest::WRITABLE;
        assert_eq!(both.directions(), &[Direction::Read, Direction::Write]);
        assert_eq!(Interest::WRITABLE.remove(Interest::WRITABLE), None);
    }
}
