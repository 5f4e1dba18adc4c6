//! Integration tests of `Builder`: every invalid setting is a `BuildError`
//! that names the setting (never a panic), and valid settings take effect.
//!
//! Every builder here sets `worker_threads` explicitly, so these tests do not
//! depend on `BRIGADE_WORKER_THREADS` (see `builder_env.rs` for that).

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use brigade::{BuildError, Builder};
use common::{TIMEOUT_SECS, with_timeout};

/// Checks that `error` names `setting` in its message, and converts to an
/// `io::Error` of kind `InvalidInput` that keeps the message.
fn assert_names_setting(error: BuildError, setting: &str) {
    let message = error.to_string();
    assert!(
        message.contains(setting),
        "{message:?} should name {setting}"
    );
    assert!(format!("{error:?}").contains(setting));
    assert!(std::error::Error::source(&error).is_none());
    let io = std::io::Error::from(error);
    assert_eq!(io.kind(), std::io::ErrorKind::InvalidInput);
    assert!(io.to_string().contains(setting), "{io}");
}

#[test]
fn zero_worker_threads_is_an_error() {
    let error = Builder::new().worker_threads(0).build().unwrap_err();
    assert_names_setting(error, "worker_threads");
}

#[test]
fn too_many_worker_threads_is_an_error() {
    let error = Builder::new().worker_threads(1 << 20).build().unwrap_err();
    assert_names_setting(error, "worker_threads");
}

#[test]
fn zero_max_blocking_threads_is_an_error() {
    let error = Builder::new()
        .worker_threads(1)
        .max_blocking_threads(0)
        .build()
        .unwrap_err();
    assert_names_setting(error, "max_blocking_threads");
}

#[test]
fn zero_thread_keep_alive_is_an_error() {
    let error = Builder::new()
        .worker_threads(1)
        .thread_keep_alive(Duration::ZERO)
        .build()
        .unwrap_err();
    assert_names_setting(error, "thread_keep_alive");
}

#[test]
fn zero_thread_stack_size_is_an_error() {
    let error = Builder::new()
        .worker_threads(1)
        .thread_stack_size(0)
        .build()
        .unwrap_err();
    assert_names_setting(error, "thread_stack_size");
}

#[test]
fn a_max_yield_delay_under_a_millisecond_is_an_error() {
    let error = Builder::new()
        .worker_threads(1)
        .max_yield_delay(Some(Duration::from_micros(500)))
        .build()
        .unwrap_err();
    assert_names_setting(error, "max_yield_delay");
    // The bound can be turned off, and the smallest one is accepted.
    for delay in [None, Some(Duration::from_millis(1))] {
        Builder::new()
            .worker_threads(1)
            .max_yield_delay(delay)
            .build()
            .unwrap();
    }
}

#[test]
fn an_error_can_be_returned_with_the_question_mark_operator() {
    fn build() -> std::io::Result<brigade::Runtime> {
        Ok(Builder::new().worker_threads(0).build()?)
    }
    let error = build().unwrap_err();
    assert_eq!(error.kind(), std::io::ErrorKind::InvalidInput);
    assert!(error.to_string().contains("worker_threads"), "{error}");
}

#[test]
fn a_fixed_worker_count_is_honoured() {
    with_timeout(TIMEOUT_SECS, || {
        for workers in [1, 3] {
            let rt = Builder::new().worker_threads(workers).build().unwrap();
            assert_eq!(rt.metrics().num_workers(), workers);
            assert_eq!(rt.block_on(rt.spawn(async { 1 })).unwrap(), 1);
        }
    });
}

#[test]
fn thread_name_and_stack_size_apply_to_workers_and_blocking_threads() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = Builder::new()
            .worker_threads(2)
            .thread_name("custom-name")
            .thread_stack_size(4 << 20)
            .max_blocking_threads(3)
            .thread_keep_alive(Duration::from_secs(1))
            .build()
            .unwrap();
        let worker_name = rt
            .block_on(rt.spawn(async {
                // Some stack use, well within 4 MiB.
                let buffer = std::hint::black_box([1u8; 512 * 1024]);
                assert_eq!(
                    buffer.iter().map(|&b| b as usize).sum::<usize>(),
                    512 * 1024
                );
                std::thread::current().name().map(str::to_owned)
            }))
            .unwrap();
        assert_eq!(worker_name.as_deref(), Some("custom-name"));
        let blocking_name = rt
            .block_on(rt.spawn_blocking(|| std::thread::current().name().map(str::to_owned)))
            .unwrap();
        assert_eq!(blocking_name.as_deref(), Some("custom-name"));
    });
}

#[test]
fn default_thread_names_say_the_role() {
    with_timeout(TIMEOUT_SECS, || {
        let rt = Builder::default().worker_threads(2).build().unwrap();
        let mut names: Vec<_> = (0..16)
            .map(|_| {
                rt.block_on(rt.spawn(async { std::thread::current().name().map(str::to_owned) }))
                    .unwrap()
                    .unwrap()
            })
            .collect();
        names.sort();
        names.dedup();
        assert!(
            names
                .iter()
                .all(|name| name == "brigade-w-0" || name == "brigade-w-1"),
            "{names:?}"
        );
        let blocking = rt
            .block_on(rt.spawn_blocking(|| std::thread::current().name().map(str::to_owned)))
            .unwrap();
        assert_eq!(blocking.as_deref(), Some("brigade-blk-0"));
    });
}

#[test]
fn thread_name_fn_names_every_thread_and_the_later_setting_wins() {
    with_timeout(TIMEOUT_SECS, || {
        let named = Arc::new(AtomicUsize::new(0));
        let counter = named.clone();
        let rt = Builder::new()
            .worker_threads(1)
            .thread_name("overridden")
            .thread_name_fn(move || format!("fn-{}", counter.fetch_add(1, Ordering::SeqCst)))
            .build()
            .unwrap();
        let worker = rt
            .block_on(rt.spawn(async { std::thread::current().name().map(str::to_owned) }))
            .unwrap()
            .unwrap();
        let blocking = rt
            .block_on(rt.spawn_blocking(|| std::thread::current().name().map(str::to_owned)))
            .unwrap()
            .unwrap();
        assert!(worker.starts_with("fn-") && blocking.starts_with("fn-"));
        assert_ne!(worker, blocking);
        // The worker, the monitor and the blocking thread at least.
        assert!(named.load(Ordering::SeqCst) >= 3);
        drop(rt);
        let rt = Builder::new()
            .worker_threads(1)
            .thread_name_fn(|| "overridden".to_owned())
            .thread_name("plain")
            .build()
            .unwrap();
        let worker = rt
            .block_on(rt.spawn(async { std::thread::current().name().map(str::to_owned) }))
            .unwrap();
        assert_eq!(worker.as_deref(), Some("plain"));
    });
}

#[test]
fn a_builder_can_build_several_runtimes() {
    with_timeout(TIMEOUT_SECS, || {
        let mut builder = Builder::new();
        builder.worker_threads(1);
        let first = builder.build().unwrap();
        let second = builder.clone().worker_threads(2).build().unwrap();
        assert_eq!(first.metrics().num_workers(), 1);
        assert_eq!(second.metrics().num_workers(), 2);
        assert!(format!("{first:?}").contains("Runtime"));
        assert!(format!("{:?}", first.handle()).contains("Handle"));
    });
}
