//! A real tokio-based client library, hyper-util's legacy `Client` (tokio
//! connector, tokio executor), used from brigade tasks against a brigade
//! HTTP server (brigade-hyper), with feature `tokio-compat`:
//! `cargo test -p brigade-examples --features tokio-compat --test tokio_client`.

use std::sync::mpsc;
use std::time::Duration;

use brigade_examples::tokio_client::{HELLO, get_with_hyper_util, serve_hello};

/// Generous bound for the whole test: a hang, not slowness.
const TIMEOUT: Duration = Duration::from_secs(60);

#[test]
fn hyper_util_client_talks_to_a_brigade_server_from_brigade_tasks() {
    let (done, finished) = mpsc::channel();
    std::thread::spawn(move || {
        let rt = brigade::Builder::new().worker_threads(2).build().unwrap();
        let bodies = rt.block_on(async {
            let listener = brigade::net::TcpListener::bind("127.0.0.1:0")
                .await
                .unwrap();
            let addr = listener.local_addr().unwrap();
            brigade::spawn(serve_hello(listener));
            // Several clients at once, each in its own brigade task.
            let clients: Vec<_> = (0..4)
                .map(|_| brigade::spawn(get_with_hyper_util(addr, 25)))
                .collect();
            let mut bodies = Vec::new();
            for client in clients {
                bodies.extend(client.await.unwrap().unwrap());
            }
            bodies
        });
        rt.shutdown_timeout(TIMEOUT);
        let _ = done.send(bodies);
    });
    let bodies = finished
        .recv_timeout(TIMEOUT)
        .expect("the client never finished: something hangs");
    assert_eq!(bodies.len(), 100);
    assert!(bodies.iter().all(|body| body == HELLO.as_bytes()));
}
