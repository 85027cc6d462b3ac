//! Benchmarks what limits and the sandbox cost a command: 600 `BashGrader`s of `true` in one
//! `Gather` (no login shell, an empty `HOME`), three ways, interleaved batch by batch so that a
//! change in the machine's load shows in all three alike:
//!
//! - `plain`: [`Limits::none`], the command started as before limits existed;
//! - `limits`: [`Limits::default`] (a cgroup per command where the machine offers one, and the
//!   rlimits);
//! - `sandboxed`: the default limits and the bubblewrap [`Sandbox`] (skipped where bwrap cannot
//!   sandbox).
//!
//! Each sample's time is the plain batch's; the ratios of the three sums over all batches are
//! printed to stderr (`limits / plain`, `sandboxed / plain`), beside the CPU time this process
//! used per command in each.
#![allow(missing_docs)]

#[path = "support/cpu.rs"]
mod cpu;

use std::time::{Duration, Instant};

use cpu::cpu_time;
use criterion::{Criterion, criterion_group, criterion_main};
use grader_core::sandbox::{Limits, Sandbox};
use grader_core::{BashGrader, Gather};

const COMMANDS: usize = 600;

fn batch(
    runtime: &tokio::runtime::Runtime,
    home: &std::path::Path,
    limits: Limits,
    sandbox: Option<&Sandbox>,
) -> (Duration, Duration) {
    let cpu = cpu_time();
    let start = Instant::now();
    let mut gather = Gather::new();
    for _ in 0..COMMANDS {
        let mut grader = BashGrader::new("true")
            .env("HOME", home)
            .login_shell(false)
            .limits(limits);
        if let Some(sandbox) = sandbox {
            grader = grader.sandbox(sandbox.clone());
        }
        gather = gather.add(grader.grade(1.0));
    }
    let result = runtime.block_on(gather).expect("the commands run");
    assert_eq!(result.reward(), 1.0);
    (start.elapsed(), cpu_time() - cpu)
}

fn limits_and_sandbox(c: &mut Criterion) {
    let home = std::env::temp_dir().join(format!("grader-bench-home-{}", std::process::id()));
    std::fs::create_dir_all(&home).expect("a temporary HOME");
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

    let mut group = c.benchmark_group("bash_limits");
    group.sample_size(10);
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(20));
    group.bench_function("600_true_plain_limits_sandboxed_interleaved", |b| {
        b.iter_custom(|iters| {
            let mut sums = [(Duration::ZERO, Duration::ZERO); 3];
            for _ in 0..iters {
                let runs = [
                    batch(&runtime, &home, Limits::none(), None),
                    batch(&runtime, &home, Limits::default(), None),
                    sandbox
                        .as_ref()
                        .map_or((Duration::ZERO, Duration::ZERO), |s| {
                            batch(&runtime, &home, Limits::default(), Some(s))
                        }),
                ];
                for (sum, run) in sums.iter_mut().zip(runs) {
                    sum.0 += run.0;
                    sum.1 += run.1;
                }
            }
            let per = |cpu: Duration| cpu.as_secs_f64() * 1e6 / (COMMANDS as f64 * iters as f64);
            eprintln!(
                "{iters} batch(es) of {COMMANDS}: limits / plain {:.3}, sandboxed / plain {:.3}; \
                 CPU per command: plain {:.0} µs, limits {:.0} µs, sandboxed {:.0} µs",
                sums[1].0.as_secs_f64() / sums[0].0.as_secs_f64(),
                sums[2].0.as_secs_f64() / sums[0].0.as_secs_f64(),
                per(sums[0].1),
                per(sums[1].1),
                per(sums[2].1),
            );
            sums[0].0
        });
    });
    group.finish();
    let _ = std::fs::remove_dir_all(&home);
}

criterion_group!(benches, limits_and_sandbox);
criterion_main!(benches);
