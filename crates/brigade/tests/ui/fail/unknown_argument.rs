#[brigade::main(workers = 2)]
async fn main() {}

#[brigade::test(flavor = "current_thread")]
async fn tokio_style_flavor() {}

#[brigade::test(2)]
async fn bare_literal() {}
