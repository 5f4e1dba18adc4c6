//! `#[brigade::test]`'s arguments at run time: the runtime each one builds.
//! (`macros_ui.rs` checks what they accept and reject.)

mod renamed {
    // A crate that knows brigade by another path.
    pub(crate) use brigade as runtime;
}

fn workers() -> usize {
    brigade::Handle::current().metrics().num_workers()
}

/// Without arguments, one worker: tokio's default test is `current_thread`.
#[brigade::test]
async fn no_arguments_means_one_worker() {
    assert_eq!(workers(), 1);
}

#[brigade::test(flavor = "current_thread")]
async fn current_thread_has_one_worker() {
    assert_eq!(workers(), 1);
    assert_eq!(brigade::spawn(async { 7 }).await.unwrap(), 7);
}

#[brigade::test(worker_threads = 3)]
async fn worker_threads_alone_means_multi_thread() {
    assert_eq!(workers(), 3);
}

#[brigade::test(flavor = "multi_thread")]
async fn multi_thread_has_the_builders_default() {
    let expected = std::env::var(brigade::WORKER_THREADS_ENV)
        .ok()
        .and_then(|value| value.trim().parse().ok())
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    assert_eq!(workers(), expected);
}

#[brigade::test(
    crate = "crate::renamed::runtime",
    flavor = "multi_thread",
    worker_threads = 2
)]
async fn crate_names_brigade_by_another_path() {
    assert_eq!(workers(), 2);
}

#[brigade::test(start_paused = false)]
async fn start_paused_false_leaves_the_clock_running() {
    let start = brigade::time::Instant::now();
    std::thread::sleep(std::time::Duration::from_millis(2));
    assert!(start.elapsed() >= brigade::time::Duration::from_millis(2));
}
