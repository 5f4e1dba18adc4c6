//! tokio's arguments, as a port from `#[tokio::test(...)]` and
//! `#[tokio::main(...)]` writes them. (trybuild leaves `#[test]` functions
//! out of the binary it runs; `tests/time_pause.rs` and `tests/macros.rs`
//! run tests built with these arguments.)

#[brigade::test(flavor = "current_thread")]
async fn current_thread() {
    assert_eq!(brigade::Handle::current().metrics().num_workers(), 1);
}

#[brigade::test(flavor = "multi_thread", worker_threads = 2)]
async fn multi_thread() {
    assert_eq!(brigade::Handle::current().metrics().num_workers(), 2);
}

#[brigade::test(start_paused = true)]
async fn paused() {
    let start = brigade::time::Instant::now();
    brigade::time::sleep(brigade::time::Duration::from_secs(60)).await;
    assert_eq!(start.elapsed(), brigade::time::Duration::from_secs(60));
}

mod renamed {
    // A crate that knows brigade by another path.
    pub use brigade as runtime;
}

#[brigade::test(crate = "renamed::runtime", start_paused = false)]
async fn other_crate_path() {}

#[brigade::main(crate = "renamed::runtime")]
async fn main_by_another_path() {}

#[brigade::main(flavor = "multi_thread", worker_threads = 3, crate = "::brigade")]
async fn main() {
    assert_eq!(brigade::Handle::current().metrics().num_workers(), 3);
    std::thread::spawn(current_thread_main).join().unwrap();
    std::thread::spawn(main_by_another_path).join().unwrap();
}

#[brigade::main(flavor = "current_thread", start_paused = true)]
async fn current_thread_main() {
    assert_eq!(brigade::Handle::current().metrics().num_workers(), 1);
    brigade::time::sleep(brigade::time::Duration::from_secs(3600)).await;
}

