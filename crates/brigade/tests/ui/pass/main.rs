//! The plain form: no arguments, no return value.

#[brigade::main]
async fn main() {
    let answer = brigade::spawn(async { 6 * 7 }).await.unwrap();
    assert_eq!(answer, 42);
}
