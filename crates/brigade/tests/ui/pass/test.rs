//! `#[brigade::test]` with and without arguments, next to other attributes.
//! trybuild builds pass cases as plain binaries, which leave `#[test]`
//! functions out: this checks that the attribute accepts them; brigade's
//! integration tests (`tests/*.rs`) run real ones.

#[brigade::test]
async fn plain() {
    assert_eq!(brigade::spawn(async { 2 }).await.unwrap(), 2);
}

#[brigade::test(worker_threads = 1)]
async fn returns_a_result() -> Result<(), brigade::JoinError> {
    brigade::spawn(async {}).await?;
    Ok(())
}

#[brigade::test]
#[should_panic(expected = "boom")]
async fn keeps_other_attributes() {
    panic!("boom");
}

#[brigade::test]
#[ignore]
async fn ignored() {}

fn main() {}
