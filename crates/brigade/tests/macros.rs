//! `#[brigade::test]`'s arguments at run time: the runtime each one builds.
//! (`macros_ui.rs` checks what they accept and reject.)

mod renamed {
    // A crate that knows brigade by another path.
    pub(crate) use brigade as runtime;
}

fn workers() -> usize {
    brigade::Handle::current().metrics().num_workers()
}

/// Whether a task spawned now runs on this thread (a current-thread
/// runtime's, where the test's thread runs the tasks).
async fn tasks_run_on_this_thread() -> bool {
    let here = std::thread::current().id();
    brigade::spawn(async { std::thread::current().id() })
        .await
        .unwrap()
        == here
}

/// Without arguments, a current-thread runtime: tokio's default test is
/// `current_thread`. Its metrics report one worker, as tokio's do; that
/// worker is the test's own thread (until #41 it was a worker thread
/// racing the body, which is what this now checks against).
#[brigade::test]
async fn no_arguments_means_current_thread() {
    assert_eq!(workers(), 1);
    assert!(tasks_run_on_this_thread().await);
}

#[brigade::test(flavor = "current_thread")]
async fn current_thread_runs_tasks_on_the_test_thread() {
    assert_eq!(workers(), 1);
    assert!(tasks_run_on_this_thread().await);
    assert_eq!(brigade::spawn(async { 7 }).await.unwrap(), 7);
}

#[brigade::test(worker_threads = 3)]
async fn worker_threads_alone_means_multi_thread() {
    assert_eq!(workers(), 3);
    assert!(!tasks_run_on_this_thread().await);
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
