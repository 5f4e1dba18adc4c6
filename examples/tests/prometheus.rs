//! The Prometheus page, scraped: brigade's figures are there by name,
//! per-worker ones with their `worker` label, with numeric values.

use std::io::{Read, Write};
use std::time::Duration;

#[test]
fn a_scrape_shows_brigades_metrics_with_worker_labels() {
    let handle = brigade_examples::prometheus::install_recorder().expect("recorder");
    let rt = brigade::Builder::new()
        .worker_threads(2)
        .build()
        .expect("runtime");
    let addr = rt.block_on(async {
        let (listener, addr) = brigade_examples::prometheus::bind("127.0.0.1:0".parse().unwrap())
            .await
            .expect("bind");
        brigade::spawn(brigade_examples::prometheus::serve(
            listener,
            handle,
            Duration::from_millis(100),
        ));
        // Some work for the counters to count.
        for _ in 0..50 {
            brigade::spawn(async {}).await.expect("empty task");
        }
        addr
    });
    let page = scrape(addr);
    assert!(page.starts_with("HTTP/1.1 200 OK"), "{page}");
    for name in [
        "brigade_workers 2",
        "brigade_polls_total ",
        "brigade_yields_total ",
        "brigade_scheduling_latency_seconds{quantile=\"0.99\"} ",
        "brigade_worker_polls_total{worker=\"0\"} ",
        "brigade_worker_polls_total{worker=\"1\"} ",
        "brigade_worker_busy_seconds{worker=\"1\"} ",
        "brigade_cpu_limit ",
    ] {
        let line = page
            .lines()
            .find(|line| line.starts_with(name))
            .unwrap_or_else(|| panic!("no {name:?} in the page:\n{page}"));
        let value = line.rsplit(' ').next().unwrap();
        assert!(value.parse::<f64>().is_ok(), "{line}: not a number");
    }
    let polls: f64 = page
        .lines()
        .find_map(|line| line.strip_prefix("brigade_polls_total "))
        .unwrap()
        .parse()
        .unwrap();
    assert!(polls >= 50.0, "50 tasks ran, {polls} polls published");
    assert!(scrape_path(addr, "/other").starts_with("HTTP/1.1 404"));
}

fn scrape(addr: std::net::SocketAddr) -> String {
    scrape_path(addr, "/metrics")
}

fn scrape_path(addr: std::net::SocketAddr, path: &str) -> String {
    let mut stream = std::net::TcpStream::connect(addr).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    write!(stream, "GET {path} HTTP/1.1\r\nhost: test\r\n\r\n").unwrap();
    let mut page = String::new();
    stream
        .read_to_string(&mut page)
        .expect("the page, within 20 s");
    page
}
