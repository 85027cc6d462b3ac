//! Benchmarks what limits and the sandbox cost a command: `BashGrader`s of `true` in one
//! `Gather` (no login shell, an empty `HOME`), four ways, interleaved batch by batch so that a
//! change in the machine's load shows in all four alike:
//!
//! - `plain`: [`Limits::none`], no working directory set: the command started as before
//!   limits existed (the floor);
//! - `limits`: [`Limits::default`] (a cgroup per command where the machine offers one, and the
//!   rlimits), in a working directory holding a small repository's worth of files (1 000 in
//!   100 directories unless `GRADER_BENCH_TREE_FILES` says otherwise);
//! - `cpu`: the same with a CPU-time limit (60 s, never reached);
//! - `sandboxed`: the default limits and the bubblewrap [`Sandbox`], in that working directory
//!   (skipped where bwrap cannot sandbox).
//!
//! Each sample's time is the plain batch's; per call, the wall time per command of each way,
//! the ratios of the four sums over all batches to the plain one, and the CPU time this
//! process used per command in each are printed to stderr. The bench uses only what every
//! version of the API offers, so the build before a change can run it too, beside the build
//! after, on the same machine at the same time.
#![allow(missing_docs)]

#[path = "support/cpu.rs"]
mod cpu;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use cpu::cpu_time;
use criterion::{Criterion, criterion_group, criterion_main};
use grader_core::sandbox::{Limits, Sandbox};
use grader_core::{BashGrader, Gather};

const COMMANDS: usize = 100;

/// One way of running the commands.
struct Way {
    name: &'static str,
    limits: Limits,
    cwd: Option<PathBuf>,
    sandbox: Option<Sandbox>,
}

fn batch(runtime: &tokio::runtime::Runtime, home: &Path, way: &Way) -> (Duration, Duration) {
    let cpu = cpu_time();
    let start = Instant::now();
    let mut gather = Gather::new();
    for _ in 0..COMMANDS {
        let mut grader = BashGrader::new("true")
            .env("HOME", home)
            .login_shell(false)
            .limits(way.limits);
        if let Some(dir) = &way.cwd {
            grader = grader.cwd(dir);
        }
        if let Some(sandbox) = &way.sandbox {
            grader = grader.sandbox(sandbox.clone());
        }
        gather = gather.add(grader.grade(1.0));
    }
    let result = runtime.block_on(gather).expect("the commands run");
    assert_eq!(result.reward(), 1.0, "{}", way.name);
    (start.elapsed(), cpu_time() - cpu)
}

/// A small repository's worth of files: `files` in directories of ten.
fn tree(root: &Path, files: usize) {
    std::fs::create_dir_all(root).expect("the repository");
    for n in 0..files {
        let dir = root.join(format!("dir{}", n / 10));
        std::fs::create_dir_all(&dir).expect("a directory");
        std::fs::write(dir.join(format!("file{n}.txt")), "x\n").expect("a file");
    }
}

fn limits_and_sandbox(c: &mut Criterion) {
    let scratch = std::env::temp_dir().join(format!("grader-bench-{}", std::process::id()));
    let home = scratch.join("home");
    let repo = scratch.join("repo");
    std::fs::create_dir_all(&home).expect("a temporary HOME");
    let files = std::env::var("GRADER_BENCH_TREE_FILES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1_000);
    tree(&repo, files);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let sandbox = match Sandbox::check() {
        Ok(_) => Some(Sandbox::new()),
        Err(why) => {
            eprintln!("not benchmarking the sandbox: {why}");
            None
        }
    };
    let mut ways = vec![
        Way {
            name: "plain",
            limits: Limits::none(),
            cwd: None,
            sandbox: None,
        },
        Way {
            name: "limits",
            limits: Limits::default(),
            cwd: Some(repo.clone()),
            sandbox: None,
        },
        Way {
            name: "cpu",
            limits: Limits::default().cpu_time(Duration::from_secs(60)),
            cwd: Some(repo.clone()),
            sandbox: None,
        },
    ];
    if let Some(sandbox) = sandbox {
        ways.push(Way {
            name: "sandboxed",
            limits: Limits::default(),
            cwd: Some(repo.clone()),
            sandbox: Some(sandbox),
        });
    }

    let mut group = c.benchmark_group("bash_limits");
    group.sample_size(10);
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(20));
    group.bench_function("true_plain_limits_cpu_sandboxed_interleaved", |b| {
        b.iter_custom(|iters| {
            let mut sums = vec![(Duration::ZERO, Duration::ZERO); ways.len()];
            for _ in 0..iters {
                for (sum, way) in sums.iter_mut().zip(&ways) {
                    let (wall, cpu) = batch(&runtime, &home, way);
                    sum.0 += wall;
                    sum.1 += cpu;
                }
            }
            let commands = COMMANDS as f64 * iters as f64;
            let shown: Vec<String> = ways
                .iter()
                .zip(&sums)
                .map(|(way, (wall, cpu))| {
                    format!(
                        "{} {:.3} ms ({:.2}x, CPU {:.0} us)",
                        way.name,
                        wall.as_secs_f64() * 1e3 / commands,
                        wall.as_secs_f64() / sums[0].0.as_secs_f64(),
                        cpu.as_secs_f64() * 1e6 / commands,
                    )
                })
                .collect();
            eprintln!(
                "{iters} batch(es) of {COMMANDS}, {files} files, per command: {}",
                shown.join(", ")
            );
            sums[0].0
        });
    });
    group.finish();
    let _ = std::fs::remove_dir_all(&scratch);
}

criterion_group!(benches, limits_and_sandbox);
criterion_main!(benches);
