const WORKERS: usize = 2;

#[brigade::main(worker_threads = "2")]
async fn main() {}

#[brigade::test(worker_threads = WORKERS)]
async fn constant() {}

#[brigade::test(worker_threads = 1.5)]
async fn float() {}

#[brigade::test(worker_threads = -1)]
async fn negative() {}

#[brigade::test(worker_threads)]
async fn missing_value() {}

#[brigade::test(worker_threads = 2u8)]
async fn suffixed() {}
