//! `UCred`: the credentials of a Unix socket's peer, as tokio's
//! `tokio::net::unix::UCred`, read from the kernel when asked.
//!
//! Linux and Android report uid, gid and pid at once (`SO_PEERCRED`: the
//! peer's credentials when it connected, or when the pair was made);
//! the BSDs and Apple's systems report uid and gid with `getpeereid`, and
//! Apple's the pid with `LOCAL_PEERPID`.

use std::io;
use std::os::fd::AsFd;

/// A user id, as tokio's `tokio::net::unix::uid_t`.
#[allow(non_camel_case_types)]
pub type uid_t = u32;
/// A group id, as tokio's `tokio::net::unix::gid_t`.
#[allow(non_camel_case_types)]
pub type gid_t = u32;
/// A process id, as tokio's `tokio::net::unix::pid_t`.
#[allow(non_camel_case_types)]
pub type pid_t = i32;

/// The credentials of the process at the other end of a Unix stream:
/// [`UnixStream::peer_cred`](crate::net::UnixStream::peer_cred).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct UCred {
    uid: uid_t,
    gid: gid_t,
    pid: Option<pid_t>,
}

impl UCred {
    /// The peer's effective user id.
    pub fn uid(&self) -> uid_t {
        self.uid
    }

    /// The peer's effective group id.
    pub fn gid(&self) -> gid_t {
        self.gid
    }

    /// The peer's process id, where the platform reports it (`None`
    /// elsewhere).
    pub fn pid(&self) -> Option<pid_t> {
        self.pid
    }
}

/// Reads the credentials of `socket`'s peer (`SO_PEERCRED`).
#[cfg(any(target_os = "linux", target_os = "android"))]
pub(crate) fn peer_cred(socket: &impl AsFd) -> io::Result<UCred> {
    let cred = rustix::net::sockopt::socket_peercred(socket)?;
    Ok(UCred {
        uid: cred.uid.as_raw(),
        gid: cred.gid.as_raw(),
        pid: Some(cred.pid.as_raw_nonzero().get()),
    })
}

/// Reads the credentials of `socket`'s peer.
#[cfg(not(any(target_os = "linux", target_os = "android")))]
pub(crate) fn peer_cred(socket: &impl AsFd) -> io::Result<UCred> {
    use std::os::fd::AsRawFd;

    let fd = socket.as_fd().as_raw_fd();
    let (mut uid, mut gid) = (0, 0);
    // SAFETY: `uid` and `gid` are live locals `getpeereid` writes; the
    // descriptor is borrowed open for the call.
    if unsafe { libc::getpeereid(fd, &mut uid, &mut gid) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(UCred {
        uid,
        gid,
        pid: peer_pid(fd)?,
    })
}

#[cfg(target_vendor = "apple")]
fn peer_pid(fd: std::os::fd::RawFd) -> io::Result<Option<pid_t>> {
    let mut pid: libc::pid_t = 0;
    let mut len = size_of::<libc::pid_t>() as libc::socklen_t;
    // SAFETY: `pid` and `len` are live locals of the size `len` says, as
    // `getsockopt` needs for `LOCAL_PEERPID`; `fd` is open for the call.
    let result = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_LOCAL,
            libc::LOCAL_PEERPID,
            (&raw mut pid).cast(),
            &mut len,
        )
    };
    if result != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(Some(pid))
}

#[cfg(all(
    not(target_vendor = "apple"),
    not(any(target_os = "linux", target_os = "android"))
))]
fn peer_pid(_fd: std::os::fd::RawFd) -> io::Result<Option<pid_t>> {
    Ok(None)
}
