//! File-system and child-process calls, brigade next to tokio: what a
//! trip through each runtime's blocking pool (`fs`) and a child's spawn
//! and exit watch (`process`) cost a task.
//!
//! One group, `fs_process`, with a benchmark per operation and runtime:
//!
//! - `read_4k`, `read_1m`: `fs::read` of a 4 KiB and a 1 MiB file.
//! - `write_4k`, `write_1m`: `fs::write` of 4 KiB and 1 MiB (truncating
//!   the file each time).
//! - `file_write_4k`: `File::create`, `write_all` of 4 KiB, `flush`, drop:
//!   the `File` API's two trips (open, then the background write that
//!   `flush` waits for). No `sync_all`: the disk is not what is measured.
//! - `command_true`: `Command::new("true").output()`: spawn, the exit
//!   watch (a pidfd on Linux for both), and collecting the empty output.
//!
//! e.g. `fs_process/read_4k/brigade` next to `fs_process/read_4k/tokio`.
//! An iteration runs in a task on a worker, as an application's call
//! would. The files live in a directory of their own under the system's
//! temporary directory, removed at the end.
//!
//! Both runtimes are multi-thread, on `BENCH_WORKERS` workers (default
//! 2), with their default blocking pools; each is built when its first
//! benchmark runs and dropped after its last, so the two never compete.
//! Compare the two runtimes of one run, as a ratio.
//!
//! ```text
//! cargo bench -p brigade-benches --bench fs_process
//! cargo bench -p brigade-benches --bench fs_process -- read_4k
//! ```

use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use brigade_examples::harness::{
    Brigade, Rt, Tokio, bench_workers, end_quietly_on_closed_pipe, exit_on_help,
};
use criterion::{BenchmarkGroup, BenchmarkId, Criterion, measurement::WallTime};
use tokio::io::AsyncWriteExt;

const SMALL: usize = 4 * 1024;
const LARGE: usize = 1024 * 1024;

/// One benchmarked operation.
#[derive(Debug, Clone, Copy)]
enum Op {
    Read4k,
    Read1m,
    Write4k,
    Write1m,
    FileWrite4k,
    CommandTrue,
}

impl Op {
    const ALL: [Op; 6] = [
        Op::Read4k,
        Op::Read1m,
        Op::Write4k,
        Op::Write1m,
        Op::FileWrite4k,
        Op::CommandTrue,
    ];

    fn name(self) -> &'static str {
        match self {
            Op::Read4k => "read_4k",
            Op::Read1m => "read_1m",
            Op::Write4k => "write_4k",
            Op::Write1m => "write_1m",
            Op::FileWrite4k => "file_write_4k",
            Op::CommandTrue => "command_true",
        }
    }
}

/// The bench's directory and files, removed on drop. Each runtime writes
/// to files of its own, so neither reads what the other left.
struct Files {
    dir: PathBuf,
    small: Vec<u8>,
    large: Vec<u8>,
}

impl Files {
    fn create() -> Files {
        let dir = std::env::temp_dir().join(format!("brigade-bench-fs-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create the bench directory");
        let files = Files {
            dir,
            small: (0..SMALL).map(|i| (i % 251) as u8).collect(),
            large: (0..LARGE).map(|i| (i % 251) as u8).collect(),
        };
        std::fs::write(files.path("read-4k"), &files.small).expect("write the 4 KiB file");
        std::fs::write(files.path("read-1m"), &files.large).expect("write the 1 MiB file");
        files
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }
}

impl Drop for Files {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// An operation's paths, for one runtime.
struct Paths {
    read_4k: PathBuf,
    read_1m: PathBuf,
    write: PathBuf,
}

impl Paths {
    fn new(files: &Files, runtime: &str) -> Paths {
        Paths {
            read_4k: files.path("read-4k"),
            read_1m: files.path("read-1m"),
            write: files.path(&format!("write-{runtime}")),
        }
    }
}

fn check_read(read: std::io::Result<Vec<u8>>, len: usize) {
    assert_eq!(read.expect("read the file").len(), len);
}

fn check_output(output: std::io::Result<std::process::Output>) {
    assert!(output.expect("run `true`").status.success());
}

/// `iterations` runs of `op` on brigade; the time they took.
async fn brigade_op(op: Op, files: Arc<Files>, paths: Arc<Paths>, iterations: u64) -> Duration {
    use brigade::{fs, process::Command};
    let started = Instant::now();
    for _ in 0..iterations {
        match op {
            Op::Read4k => check_read(fs::read(&paths.read_4k).await, SMALL),
            Op::Read1m => check_read(fs::read(&paths.read_1m).await, LARGE),
            Op::Write4k => fs::write(&paths.write, &files.small).await.expect("write"),
            Op::Write1m => fs::write(&paths.write, &files.large).await.expect("write"),
            Op::FileWrite4k => {
                let mut file = fs::File::create(&paths.write).await.expect("create");
                file.write_all(&files.small).await.expect("write_all");
                file.flush().await.expect("flush");
            }
            Op::CommandTrue => check_output(Command::new("true").output().await),
        }
    }
    started.elapsed()
}

/// [`brigade_op`], on tokio.
async fn tokio_op(op: Op, files: Arc<Files>, paths: Arc<Paths>, iterations: u64) -> Duration {
    use tokio::{fs, process::Command};
    let started = Instant::now();
    for _ in 0..iterations {
        match op {
            Op::Read4k => check_read(fs::read(&paths.read_4k).await, SMALL),
            Op::Read1m => check_read(fs::read(&paths.read_1m).await, LARGE),
            Op::Write4k => fs::write(&paths.write, &files.small).await.expect("write"),
            Op::Write1m => fs::write(&paths.write, &files.large).await.expect("write"),
            Op::FileWrite4k => {
                let mut file = fs::File::create(&paths.write).await.expect("create");
                file.write_all(&files.small).await.expect("write_all");
                file.flush().await.expect("flush");
            }
            Op::CommandTrue => check_output(Command::new("true").output().await),
        }
    }
    started.elapsed()
}

/// Every operation on a runtime of type `R`, built by `build` when its
/// first benchmark runs, and dropped after the last. Each sample runs its
/// iterations in one task (`run`: [`brigade_op`] or [`tokio_op`]).
fn run_on<R: Rt, Fut>(
    group: &mut BenchmarkGroup<'_, WallTime>,
    files: &Arc<Files>,
    build: impl Fn() -> R,
    run: impl Fn(Op, Arc<Files>, Arc<Paths>, u64) -> Fut,
) where
    Fut: Future<Output = Duration> + Send + 'static,
{
    let mut rt: Option<R> = None;
    let paths = Arc::new(Paths::new(files, R::KIND.name()));
    for op in Op::ALL {
        group.bench_function(BenchmarkId::new(op.name(), R::KIND.name()), |b| {
            let rt = rt.get_or_insert_with(&build);
            b.iter_custom(|iterations| {
                let task = run(op, files.clone(), paths.clone(), iterations);
                rt.block_on(rt.spawn_remote(task))
                    .expect("the bench task completes")
            });
        });
    }
    drop(rt);
}

/// The same multi-thread runtime on both sides: `workers` workers, I/O
/// and timers on (tokio's process support needs its I/O driver; brigade's
/// are always on).
fn tokio_runtime(workers: usize) -> Tokio {
    Tokio(
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(workers)
            .enable_all()
            .build()
            .expect("build tokio runtime"),
    )
}

// `criterion_group!` would generate an undocumented `pub fn`; this is what
// it and `criterion_main!` expand to, minus that.
fn main() {
    end_quietly_on_closed_pipe();
    exit_on_help("fs_process", "BENCH_WORKERS=N (default 2)");
    let mut criterion = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args();
    let workers = bench_workers(2);
    let files = Arc::new(Files::create());
    let mut group = criterion.benchmark_group("fs_process");
    run_on(&mut group, &files, || Brigade::build(workers), brigade_op);
    run_on(&mut group, &files, || tokio_runtime(workers), tokio_op);
    group.finish();
    drop(files);
    criterion.final_summary();
}
