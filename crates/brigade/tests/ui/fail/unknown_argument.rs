#[brigade::main(workers = 2)]
async fn main() {}

#[brigade::test(core_threads = 2)]
async fn removed_tokio_argument() {}

#[brigade::test(2)]
async fn bare_literal() {}
