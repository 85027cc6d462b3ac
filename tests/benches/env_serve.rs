//! The environment server beside the reference's (hud 0.6.21's `hud/environment/server.py`),
//! each serving the same probe templates as a real process, driven by the same Rust client in
//! the same run:
//!
//! - `roundtrip`: one `tasks.start` + `tasks.grade` of the trivial `echo` template over one
//!   connection (criterion reports the time of one round trip; the ratio is the figure),
//!   beside `tcp floor`, a server in this process that answers each line at once with a canned
//!   reply: what two loopback exchanges cost on this machine, whatever the server;
//! - `port_line`: from spawning the process to reading its `HUD_SERVE_PORT=` line;
//! - after criterion, round trips per second with 32 clients at once (each on its own
//!   connection and thread, 300 round trips each), and the resident memory of 1 000 parked
//!   sessions (each connection says `hello`, starts `echo` and hangs up), read from
//!   `/proc/<pid>/status`.
//!
//! `cargo bench -p grader-tests --bench env_serve`. It needs `python3` (the reference is
//! installed under `target/` on first use); without it only this crate's side runs.
#![allow(missing_docs, clippy::unwrap_used)]

use std::io::{BufRead as _, BufReader, Write as _};
use std::net::TcpStream;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group};
use grader_tests::env_process::EnvProcess;
use grader_tests::python::hud_python;

const PROBE: &str = env!("CARGO_BIN_EXE_env-probe");

fn servers() -> Vec<(&'static str, Command)> {
    let mut list = vec![("grader-env", Command::new(PROBE))];
    if let Some(python) = hud_python(env!("CARGO_TARGET_TMPDIR")) {
        let mut command = Command::new(python);
        command
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("data/env/env_probe.py"))
            .stderr(std::process::Stdio::null());
        list.push(("hud 0.6.21", command));
    }
    list
}

struct Client {
    stream: TcpStream,
    reader: BufReader<TcpStream>,
    line: String,
}

impl Client {
    fn connect(port: u16) -> Client {
        let stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
        stream.set_nodelay(true).unwrap();
        let reader = BufReader::new(stream.try_clone().unwrap());
        Client {
            stream,
            reader,
            line: String::new(),
        }
    }

    fn call(&mut self, frame: &[u8]) -> &str {
        self.stream.write_all(frame).unwrap();
        self.line.clear();
        self.reader.read_line(&mut self.line).unwrap();
        &self.line
    }
}

const HELLO: &[u8] = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"hello\",\"params\":{}}\n";
const START: &[u8] = b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tasks.start\",\"params\":{\"id\":\"echo\",\"args\":{\"word\":\"hi\"}}}\n";
const GRADE: &[u8] =
    b"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tasks.grade\",\"params\":{\"answer\":\"hi\"}}\n";

/// A server that answers every line at once with a canned reply: the loopback floor.
fn floor_server() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            std::thread::spawn(move || {
                stream.set_nodelay(true).unwrap();
                let mut writer = stream.try_clone().unwrap();
                let mut reader = BufReader::new(stream);
                let mut line = String::new();
                while reader.read_line(&mut line).is_ok_and(|n| n > 0) {
                    let reply: &[u8] = if line.contains("tasks.grade") {
                        b"{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"score\":1.0}}\n"
                    } else {
                        b"{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"prompt\":\"Repeat hi\"}}\n"
                    };
                    writer.write_all(reply).unwrap();
                    line.clear();
                }
            });
        }
    });
    port
}

fn roundtrip(c: &mut Criterion) {
    let mut group = c.benchmark_group("roundtrip");
    group.measurement_time(Duration::from_secs(8));
    let mut floor = Client::connect(floor_server());
    group.bench_function("tcp floor", |b| {
        b.iter(|| {
            assert!(floor.call(START).contains("Repeat hi"));
            assert!(floor.call(GRADE).contains("\"score\":1.0"));
        });
    });
    for (name, command) in servers() {
        let env = EnvProcess::spawn(command, Duration::from_secs(60));
        let mut client = Client::connect(env.port);
        client.call(HELLO);
        group.bench_function(name, |b| {
            b.iter(|| {
                assert!(client.call(START).contains("Repeat hi"));
                assert!(client.call(GRADE).contains("\"score\":1.0"));
            });
        });
    }
    group.finish();
}

fn port_line(c: &mut Criterion) {
    let mut group = c.benchmark_group("port_line");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(20));
    for (name, _) in servers() {
        group.bench_function(name, |b| {
            b.iter_custom(|iterations| {
                let mut total = Duration::ZERO;
                for _ in 0..iterations {
                    let command = servers().into_iter().find(|(n, _)| *n == name).unwrap().1;
                    let started = Instant::now();
                    let env = EnvProcess::spawn(command, Duration::from_secs(60));
                    total += started.elapsed();
                    drop(env);
                }
                total
            });
        });
    }
    group.finish();
}

fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|kib| kib.parse().ok())
        .unwrap()
}

fn parked_memory() {
    println!("\nresident memory of 1 000 parked sessions (VmRSS)");
    println!(
        "{:<12} {:>12} {:>14} {:>16}",
        "server", "idle KiB", "parked KiB", "per session B"
    );
    for (name, command) in servers() {
        let env = EnvProcess::spawn(command, Duration::from_secs(60));
        // One session first, so lazily initialized state is not counted as the sessions'.
        let mut warm = Client::connect(env.port);
        warm.call(HELLO);
        warm.call(START);
        warm.call(GRADE);
        drop(warm);
        std::thread::sleep(Duration::from_millis(300));
        let idle = rss_kib(env.pid());
        for _ in 0..1000 {
            let mut client = Client::connect(env.port);
            client.call(HELLO);
            assert!(client.call(START).contains("Repeat hi"));
        }
        std::thread::sleep(Duration::from_millis(500));
        let parked = rss_kib(env.pid());
        let per = (parked.saturating_sub(idle)) * 1024 / 1000;
        println!("{name:<12} {idle:>12} {parked:>14} {per:>16}");
    }
}

fn throughput() {
    const CLIENTS: usize = 32;
    const EACH: usize = 300;
    println!("\nround trips (tasks.start + tasks.grade) per second, {CLIENTS} clients at once");
    for (name, command) in servers() {
        let env = EnvProcess::spawn(command, Duration::from_secs(60));
        let port = env.port;
        let barrier = std::sync::Arc::new(std::sync::Barrier::new(CLIENTS + 1));
        let threads: Vec<_> = (0..CLIENTS)
            .map(|_| {
                let barrier = std::sync::Arc::clone(&barrier);
                std::thread::spawn(move || {
                    let mut client = Client::connect(port);
                    client.call(HELLO);
                    barrier.wait();
                    for _ in 0..EACH {
                        assert!(client.call(START).contains("Repeat hi"));
                        assert!(client.call(GRADE).contains("\"score\":1.0"));
                    }
                })
            })
            .collect();
        barrier.wait();
        let started = Instant::now();
        for thread in threads {
            thread.join().unwrap();
        }
        let rate = (CLIENTS * EACH) as f64 / started.elapsed().as_secs_f64();
        println!("{name:<12} {rate:>10.0} round trips/s");
    }
}

criterion_group!(benches, roundtrip, port_line);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    throughput();
    parked_memory();
}
