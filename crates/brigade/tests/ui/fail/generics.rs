#[brigade::test]
async fn generic<T: Default>() {
    let _value = T::default();
}

#[brigade::main]
async fn with_where_clause()
where
    u8: Copy,
{
}

fn main() {}
