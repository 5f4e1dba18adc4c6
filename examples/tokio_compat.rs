//! tokio-based libraries inside brigade tasks (feature `tokio-compat`):
//! hyper-util's tokio client calls a brigade HTTP server from brigade tasks,
//! then the cost of a tokio socket against brigade's own on an echo round
//! trip, both clients in brigade tasks, interleaved rounds.
//!
//! ```text
//! cargo run --release -p brigade-examples --features tokio-compat --example tokio_compat
//! cargo run --release -p brigade-examples --features tokio-compat --example tokio_compat -- --workers 1 --rounds 5
//! ```

use brigade_examples::tokio_client::{
    HELLO, Socket, echo_round_trips, get_with_hyper_util, serve_echo, serve_hello,
};

struct Args {
    workers: usize,
    rounds: usize,
    round_trips: usize,
}

fn parse() -> Result<Args, String> {
    let mut args = Args {
        workers: 2,
        rounds: 3,
        round_trips: 5_000,
    };
    let mut given = std::env::args().skip(1);
    while let Some(flag) = given.next() {
        let value = given.next().ok_or(format!("{flag} needs a value"))?;
        let number: usize = value
            .parse()
            .ok()
            .filter(|&number| number > 0)
            .ok_or(format!(
                "{flag} must be a whole number of at least 1, got {value:?}"
            ))?;
        match flag.as_str() {
            "--workers" => args.workers = number,
            "--rounds" => args.rounds = number,
            "--round-trips" => args.round_trips = number,
            _ => {
                return Err(format!(
                    "unknown flag {flag:?} (--workers, --rounds, --round-trips)"
                ));
            }
        }
    }
    Ok(args)
}

fn micros(nanos: u64) -> f64 {
    nanos as f64 / 1000.0
}

fn main() {
    let args = parse().unwrap_or_else(|message| {
        eprintln!("{message}");
        std::process::exit(2);
    });
    let rt = brigade::Builder::new()
        .worker_threads(args.workers)
        .build()
        .expect("runtime");
    rt.block_on(async {
        let http = brigade::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let http_addr = http.local_addr().unwrap();
        brigade::spawn(serve_hello(http));
        let bodies = brigade::spawn(get_with_hyper_util(http_addr, 100))
            .await
            .unwrap()
            .expect("hyper-util client");
        assert!(bodies.iter().all(|body| body == HELLO.as_bytes()));
        println!("hyper-util's tokio client, in a brigade task: 100 GETs to a brigade-hyper server, all {HELLO:?}");

        let echo = brigade::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let echo_addr = echo.local_addr().unwrap();
        brigade::spawn(serve_echo(echo));
        println!(
            "\necho round trips from a brigade task, {} per run, {} workers:",
            args.round_trips, args.workers
        );
        println!("{:<10} {:>7} {:>7} {:>7}", "socket", "p50 µs", "p99 µs", "round");
        let mut ratios = Vec::new();
        for round in 1..=args.rounds {
            let mut p50 = [0.0; 2];
            for (slot, socket) in [Socket::Brigade, Socket::Tokio].into_iter().enumerate() {
                let latencies = brigade::spawn(echo_round_trips(echo_addr, socket, args.round_trips))
                    .await
                    .unwrap();
                p50[slot] = micros(latencies.value_at_quantile(0.5));
                println!(
                    "{:<10} {:>7.1} {:>7.1} {round:>7}",
                    format!("{socket:?}"),
                    p50[slot],
                    micros(latencies.value_at_quantile(0.99))
                );
            }
            ratios.push(p50[1] / p50[0]);
        }
        ratios.sort_by(f64::total_cmp);
        println!(
            "\ntokio socket p50 / brigade socket p50: median {:.2} (of {:?})",
            ratios[ratios.len() / 2],
            ratios.iter().map(|ratio| format!("{ratio:.2}")).collect::<Vec<_>>()
        );
    });
}
