//! The process's memory and descriptors as Linux and glibc report them, for
//! the `bursts` example and `kv`'s `INFO memory`: resident and peak resident
//! memory (`/proc/self/status`), the heap in use (glibc's `mallinfo2`),
//! handing free heap back to the kernel (`malloc_trim`), open descriptors
//! and the descriptor limit.
//!
//! The heap figure comes from the allocator rather than from a counting
//! `#[global_allocator]` (as the soak test uses) so that a program can
//! report it without paying an atomic add on every allocation: `kv` is
//! also a latency benchmark.

use std::io;

/// `VmRSS`: resident memory now, in bytes.
pub fn rss_bytes() -> Option<u64> {
    status_kib("VmRSS:").map(|kib| kib * 1024)
}

/// `VmHWM`: the peak of resident memory since the process started, in
/// bytes.
pub fn peak_rss_bytes() -> Option<u64> {
    status_kib("VmHWM:").map(|kib| kib * 1024)
}

/// A `kB` field of `/proc/self/status`, `field` with its colon.
fn status_kib(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let value = status.lines().find_map(|line| line.strip_prefix(field))?;
    value.trim().strip_suffix("kB")?.trim().parse().ok()
}

/// Heap bytes allocated and not yet freed, as glibc counts them (`mallinfo2`:
/// in-use chunks of every arena plus the blocks it mapped on its own),
/// chunk headers included. `None` without glibc.
///
/// It walks the arenas' free lists under their locks: fine once a second,
/// not on a hot path.
pub fn heap_in_use() -> Option<u64> {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: `mallinfo2` takes no arguments and only reads the
        // allocator's state, under its own locks.
        let info = unsafe { libc::mallinfo2() };
        Some((info.uordblks + info.hblkhd) as u64)
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    None
}

/// Asks glibc to return the free memory at the top of its heaps to the
/// kernel (`malloc_trim(0)`); `false` where there is no glibc or nothing
/// was returned.
pub fn trim() -> bool {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: `malloc_trim` only releases memory the allocator holds
        // free; no pointer of ours is involved.
        unsafe { libc::malloc_trim(0) == 1 }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    false
}

/// Descriptors open in this process (entries of `/proc/self/fd`).
pub fn open_fds() -> Option<usize> {
    Some(std::fs::read_dir("/proc/self/fd").ok()?.count())
}

/// Raises the soft limit on open descriptors (`RLIMIT_NOFILE`) to the hard
/// limit and returns it.
///
/// # Errors
/// The `getrlimit`/`setrlimit` error.
pub fn raise_fd_limit() -> io::Result<u64> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `limit` is a valid `rlimit` for the call to fill.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return Err(io::Error::last_os_error());
    }
    limit.rlim_cur = limit.rlim_max;
    // SAFETY: `limit` is a valid `rlimit`, read above, soft raised to hard.
    if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &limit) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(limit.rlim_cur)
}

/// A byte count in MiB with one decimal, for tables.
pub fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_figures_are_there_and_consistent() {
        let rss = rss_bytes().expect("VmRSS");
        let peak = peak_rss_bytes().expect("VmHWM");
        assert!(rss > 0 && peak >= rss, "rss {rss}, peak {peak}");
        assert!(open_fds().expect("/proc/self/fd") >= 3);
        // Small blocks from another thread's arena, and one large mapped
        // block: both are counted.
        let small = std::thread::spawn(|| (0..1024).map(|_| vec![1u8; 1024]).collect::<Vec<_>>());
        let small = std::hint::black_box(small.join().unwrap());
        let large = std::hint::black_box(vec![1u8; 4 << 20]);
        let heap = heap_in_use().expect("glibc");
        assert!(heap >= (5 << 20) as u64, "heap {heap}");
        drop((small, large));
        assert_eq!(mib(3 << 19), "1.5 MiB");
    }
}
