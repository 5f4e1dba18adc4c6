//! Upper-cases its standard input onto its standard output, line by line,
//! with `brigade::io::{stdin, stdout, stderr}` (tokio's `tokio::io::stdin`
//! and `stdout` need tokio's runtime and panic inside brigade), and reports
//! the count of lines on its standard error.
//!
//! ```text
//! printf 'one\ntwo\n' | cargo run -p brigade --example stdio
//! ```

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

#[brigade::main]
async fn main() -> std::io::Result<()> {
    let mut lines = BufReader::new(brigade::io::stdin()).lines();
    let mut stdout = brigade::io::stdout();
    let mut count = 0u64;
    while let Some(line) = lines.next_line().await? {
        stdout.write_all(line.to_uppercase().as_bytes()).await?;
        stdout.write_all(b"\n").await?;
        count += 1;
    }
    // Writes return once their bytes are handed to the blocking pool: flush
    // waits until they reached the standard output.
    stdout.flush().await?;
    let mut stderr = brigade::io::stderr();
    stderr
        .write_all(format!("{count} lines\n").as_bytes())
        .await?;
    stderr.flush().await
}
