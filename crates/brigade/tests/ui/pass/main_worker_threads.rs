//! `worker_threads = N` reaches the builder; attributes and inner attributes
//! are kept; `return` leaves the body early.

#[brigade::main(worker_threads = 2)]
#[allow(unreachable_code)]
async fn main() {
    #![allow(clippy::needless_return)]
    let workers = brigade::Handle::current().metrics().num_workers();
    assert_eq!(workers, 2);
    return;
    unreachable!("`return` ends the body");
}
