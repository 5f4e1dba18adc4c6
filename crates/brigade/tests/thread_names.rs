//! The names the kernel sees for the runtime's threads
//! (`/proc/self/task/*/comm`, what `top -H` shows): one per role, each
//! within the 15 bytes Linux keeps, so that no two roles read the same.
//!
//! One test in this binary, so that no other test's runtime adds threads
//! to what it reads.
#![cfg(target_os = "linux")]

mod common;

use std::collections::BTreeSet;
use std::sync::mpsc;

use brigade::Builder;
use common::{TIMEOUT, TIMEOUT_SECS, wait_until, with_timeout};

/// The names of this process's threads, as the kernel keeps them.
fn kernel_thread_names() -> BTreeSet<String> {
    std::fs::read_dir("/proc/self/task")
        .expect("/proc/self/task")
        .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("comm")).ok())
        .map(|name| name.trim_end_matches('\n').to_owned())
        .collect()
}

#[test]
fn every_role_has_a_name_of_its_own_that_linux_keeps_whole() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = Builder::new_multi_thread()
            .worker_threads(2)
            .driver_thread(true)
            .build()
            .unwrap();
        // A spare (block_in_place hands its worker off at once) and a
        // blocking-pool thread, both held until the names are read.
        let (release_spare, held_spare) = mpsc::channel::<()>();
        let (release_blocking, held_blocking) = mpsc::channel::<()>();
        let in_place = rt.spawn(async move {
            brigade::task::block_in_place(|| held_spare.recv_timeout(TIMEOUT).unwrap());
        });
        let blocking = rt.spawn_blocking(move || held_blocking.recv_timeout(TIMEOUT).unwrap());
        let mut wanted = vec![
            "brigade-w-0",
            "brigade-w-1",
            "brigade-s-0",
            "brigade-blk-0",
            "brigade-mon",
            "brigade-drv",
        ];
        if cfg!(feature = "tokio-compat") {
            wanted.push("brigade-tok-0");
        }
        // A new thread names itself as it starts: wait for each.
        wait_until("every role's thread runs under its name", || {
            let names = kernel_thread_names();
            wanted.iter().all(|name| names.contains(*name))
        });
        let names = kernel_thread_names();
        for name in names.iter().filter(|name| name.starts_with("brigade-")) {
            assert!(name.len() <= 15, "{name:?} is longer than Linux keeps");
        }
        release_spare.send(()).unwrap();
        release_blocking.send(()).unwrap();
        rt.block_on(in_place).unwrap();
        rt.block_on(blocking).unwrap();
        drop(rt);
        // Shutdown waits for every thread but tokio-compat's, which exit
        // on their own just after.
        wait_until("the runtime's threads are gone", || {
            !kernel_thread_names()
                .iter()
                .any(|name| name.starts_with("brigade-"))
        });
    });
}
