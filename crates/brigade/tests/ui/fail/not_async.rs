#[brigade::main]
fn main() {}

#[brigade::test]
fn not_async_test() {}
