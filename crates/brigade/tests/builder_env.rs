//! Integration test of the `BRIGADE_WORKER_THREADS` environment variable.
//!
//! It sets environment variables, so it lives alone in this test binary (its
//! own process) and checks every case sequentially inside one `#[test]`:
//! nothing else in the process reads or writes the environment meanwhile.

mod common;

use brigade::{Builder, Runtime, WORKER_THREADS_ENV};
use common::{TIMEOUT_SECS, with_timeout};

fn set_env(value: &str) {
    // SAFETY: this binary has a single test, and it changes the environment
    // only from its own thread, between runtimes (each is dropped before the
    // next change); no other thread of the process reads or writes the
    // environment meanwhile.
    unsafe { std::env::set_var(WORKER_THREADS_ENV, value) };
}

fn remove_env() {
    // SAFETY: as in `set_env`.
    unsafe { std::env::remove_var(WORKER_THREADS_ENV) };
}

#[test]
fn worker_threads_env_var_is_validated_and_honoured() {
    assert_eq!(WORKER_THREADS_ENV, "BRIGADE_WORKER_THREADS");

    for bad in ["0", "abc", "-1", "", "1.5"] {
        set_env(bad);
        let error = Builder::new().build().unwrap_err();
        let message = error.to_string();
        assert!(message.contains(WORKER_THREADS_ENV), "{message}");
        assert!(message.contains(&format!("{bad:?}")), "{message}");
        // Runtime::new reports it as an io::Error.
        let io = Runtime::new().unwrap_err();
        assert_eq!(io.kind(), std::io::ErrorKind::InvalidInput);
        assert!(io.to_string().contains(WORKER_THREADS_ENV), "{io}");
        // An explicit worker count ignores the variable.
        let rt = Builder::new().worker_threads(1).build().unwrap();
        assert_eq!(rt.metrics().num_workers(), 1);
        drop(rt);
    }

    set_env("3");
    let rt = with_timeout(TIMEOUT_SECS, || {
        let rt = Builder::new().build().unwrap();
        assert_eq!(rt.block_on(rt.spawn(async { 1 })).unwrap(), 1);
        rt
    });
    assert_eq!(rt.metrics().num_workers(), 3);
    drop(rt);
    let rt = Runtime::new().unwrap();
    assert_eq!(rt.metrics().num_workers(), 3);
    drop(rt);

    set_env(" 2 ");
    let rt = Builder::new().build().unwrap();
    assert_eq!(rt.metrics().num_workers(), 2);
    drop(rt);

    remove_env();
    let expected = std::thread::available_parallelism().map_or(1, |n| n.get());
    let rt = Builder::new().build().unwrap();
    assert_eq!(rt.metrics().num_workers(), expected);
}
