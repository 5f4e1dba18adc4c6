//! On a function not named `main`, the attribute makes a function that runs
//! its own runtime on every call; `?` converts into a boxed error.

use std::error::Error;
use std::fmt;

#[derive(Debug)]
struct TooSmall;

impl fmt::Display for TooSmall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("too small")
    }
}

impl Error for TooSmall {}

#[brigade::main(worker_threads = 1)]
pub async fn answer() -> Result<u32, Box<dyn Error>> {
    let answer = brigade::spawn(async { 42 }).await?;
    if answer < 100 {
        Err(TooSmall)?;
    }
    Ok(answer)
}

fn main() {
    let error = answer().unwrap_err();
    assert_eq!(error.to_string(), "too small");
}
