#[brigade::main]
struct Server;

fn main() {}
