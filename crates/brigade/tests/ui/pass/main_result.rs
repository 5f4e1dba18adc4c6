//! The return type is kept, and `?` in the body converts into it.

#[brigade::main]
async fn main() -> std::io::Result<()> {
    let listener = brigade::net::TcpListener::bind("127.0.0.1:0").await?;
    listener.local_addr()?;
    // `JoinError` converts into `io::Error`.
    let joined = brigade::spawn(async { 1u8 }).await?;
    assert_eq!(joined, 1);
    Ok(())
}
