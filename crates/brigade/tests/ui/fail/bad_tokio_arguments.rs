#[brigade::test(flavor = "single_thread")]
async fn unknown_flavor() {}

#[brigade::test(flavor = current_thread)]
async fn flavor_not_a_string() {}

#[brigade::test(flavor = "current_thread", worker_threads = 2)]
async fn workers_on_current_thread() {}

#[brigade::test(start_paused = "true")]
async fn quoted_bool() {}

#[brigade::test(start_paused = 1)]
async fn paused_not_a_bool() {}

#[brigade::test(start_paused)]
async fn paused_without_value() {}

#[brigade::test(crate = brigade)]
async fn crate_not_a_string() {}

#[brigade::test(crate = "not a path")]
async fn crate_not_a_path() {}

#[brigade::test(flavor = "multi_thread", flavor = "multi_thread")]
async fn duplicate_flavor() {}

fn main() {}
