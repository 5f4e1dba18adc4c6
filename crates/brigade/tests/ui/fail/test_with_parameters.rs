#[brigade::test]
async fn takes_a_value(value: u32) {
    assert_eq!(value, 1);
}

fn main() {}
