//! Benchmarks `BashGrader`:
//!
//! - `bash_true`: one grader of `true` against its floor, spawning `/bin/bash -lc true` with
//!   `std::process::Command` and capturing both pipes. Both run with the same environment, `HOME`
//!   included (an empty directory, so the login profile of the machine does not dominate).
//!   A third run interleaves the two call by call and prints the ratio of their sums, which a
//!   change in the machine's load between two runs does not skew.
//! - `bash_timeouts`: 600 graders at once whose command leaves a grandchild that ignores
//!   SIGTERM, each with a 1 s timeout and the default 1 s grace, against the floor of
//!   timeout + grace, and against 600 graders of `true` (what starting them costs here). The
//!   CPU time this process used per batch is printed beside each.
#![allow(missing_docs)]

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use grader_core::{BashGrader, Gather};
use std::hint::black_box;

fn bash_true(c: &mut Criterion) {
    let home = std::env::temp_dir().join(format!("grader-bench-home-{}", std::process::id()));
    std::fs::create_dir_all(&home).expect("a temporary HOME");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");

    let mut group = c.benchmark_group("bash_true");
    group.sample_size(100);
    group.bench_function("floor_std_command", |b| {
        b.iter(|| {
            let output = Command::new("/bin/bash")
                .args(["-lc", "true"])
                .env("HOME", &home)
                .stdin(Stdio::null())
                .output()
                .expect("bash runs");
            assert!(output.status.success());
            black_box(output)
        });
    });
    group.bench_function("bash_grader", |b| {
        b.iter(|| {
            let sub = runtime
                .block_on(BashGrader::new("true").env("HOME", &home).grade(1.0))
                .expect("bash runs");
            assert_eq!(sub.value(), 1.0);
            black_box(sub)
        });
    });
    // The two above run one after the other, so a change in the machine's load between them
    // shows as a difference. Here each iteration runs the floor, then the grader; the grader's
    // time is measured and the ratio of the two sums, under the same load, is printed.
    let floor = || {
        let output = Command::new("/bin/bash")
            .args(["-lc", "true"])
            .env("HOME", &home)
            .stdin(Stdio::null())
            .output()
            .expect("bash runs");
        assert!(output.status.success());
        black_box(output);
    };
    group.bench_function("bash_grader_interleaved_with_floor", |b| {
        b.iter_custom(|iters| {
            let (mut floor_time, mut grader_time) = (Duration::ZERO, Duration::ZERO);
            for _ in 0..iters {
                let start = Instant::now();
                floor();
                floor_time += start.elapsed();
                let start = Instant::now();
                let sub = runtime
                    .block_on(BashGrader::new("true").env("HOME", &home).grade(1.0))
                    .expect("bash runs");
                grader_time += start.elapsed();
                assert_eq!(sub.value(), 1.0);
            }
            eprintln!(
                "grader / floor over {iters} interleaved calls: {:.3}",
                grader_time.as_secs_f64() / floor_time.as_secs_f64()
            );
            grader_time
        });
    });
    group.finish();
    let _ = std::fs::remove_dir_all(&home);
}

/// CPU time (user + system) this process has used so far.
fn cpu_time() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").expect("procfs");
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .expect("a stat line")
        .1
        .split_whitespace()
        .collect();
    // utime and stime are fields 14 and 15 of the line, in clock ticks (100 per second).
    let ticks: u64 =
        fields[11].parse::<u64>().unwrap_or(0) + fields[12].parse::<u64>().unwrap_or(0);
    Duration::from_millis(ticks * 10)
}

fn bash_timeouts(c: &mut Criterion) {
    const GRADERS: usize = 600;
    let home = std::env::temp_dir().join(format!("grader-bench-home-t-{}", std::process::id()));
    std::fs::create_dir_all(&home).expect("a temporary HOME");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");

    let mut group = c.benchmark_group("bash_timeouts");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(30));
    group.warm_up_time(Duration::from_millis(1));
    group.bench_function("floor_timeout_plus_grace", |b| {
        b.iter(|| std::thread::sleep(Duration::from_secs(2)));
    });
    for (name, command) in [
        // What starting 600 commands costs on this machine, to read the next one against.
        ("600_graders_of_true", "true"),
        (
            "600_graders_sigterm_ignored",
            "(trap '' TERM; exec sleep 300) & sleep 300",
        ),
    ] {
        group.bench_function(name, |b| {
            b.iter_custom(|iters| {
                let mut wall = Duration::ZERO;
                for _ in 0..iters {
                    let cpu = cpu_time();
                    let start = Instant::now();
                    let result = runtime.block_on(async {
                        let mut gather = Gather::new();
                        for _ in 0..GRADERS {
                            gather = gather.add(
                                BashGrader::new(command)
                                    .env("HOME", &home)
                                    .timeout(Duration::from_secs(1))
                                    .grade(1.0),
                            );
                        }
                        gather.await
                    });
                    let elapsed = start.elapsed();
                    wall += elapsed;
                    let result = result.expect("every grader runs");
                    let timed_out = result
                        .subscores
                        .iter()
                        .flatten()
                        .filter(|sub| {
                            sub.info()
                                .is_some_and(|info| info.contains_key("timed_out"))
                        })
                        .count();
                    eprintln!(
                        "{GRADERS} graders of {command:?}: wall {elapsed:.2?}, cpu {:.2?}, \
                     {timed_out} timed out",
                        cpu_time() - cpu
                    );
                }
                wall
            });
        });
    }
    group.finish();
    let _ = std::fs::remove_dir_all(&home);
}

criterion_group!(benches, bash_true, bash_timeouts);
criterion_main!(benches);
