//! Benchmarks `BashGrader`:
//!
//! - `bash_true`: one grader of `true` against its floor, spawning `/bin/bash -lc true` with
//!   `std::process::Command` and capturing both pipes. Both run with the same environment, `HOME`
//!   included (an empty directory, so the login profile of the machine does not dominate).
//!   A third run interleaves the two call by call and prints the ratio of their sums, which a
//!   change in the machine's load between two runs does not skew.
//! - `bash_timeouts`: 600 graders at once in one `Gather` whose command leaves a grandchild
//!   that ignores SIGTERM, each with a 1 s timeout and a 1 s grace, with and without the login
//!   shell, each run right after its floor: the same 600 commands started by a plain loop and
//!   killed exactly on time (see `plain_loop`). Starting 600 shells takes a 2-core machine
//!   more than a second by itself, so the floor is well above timeout + grace. Also 600
//!   graders of `true` (what starting them costs here), and 50 of the stubborn graders while
//!   2 000 unrelated processes sleep. The CPU time this process used per batch is printed
//!   beside each.
#![allow(missing_docs)]

#[path = "support/cpu.rs"]
mod cpu;

use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use cpu::cpu_time;
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

/// How many graders run at once in `bash_timeouts`.
const GRADERS: usize = 600;
/// What each of them runs: a grandchild that ignores SIGTERM, and a shell waiting for it.
const STUBBORN: &str = "(trap '' TERM; exec sleep 300) & sleep 300";
const TIMEOUT: Duration = Duration::from_secs(1);
const GRACE: Duration = Duration::from_secs(1);

/// The floor for `bash_timeouts`: the same `GRADERS` commands started one after the other
/// with `std::process::Command` (same shell, flags, environment, pipes and process group),
/// each group sent SIGTERM at its own start + `TIMEOUT` and SIGKILL at + `TIMEOUT` + `GRACE`,
/// then reaped: no output read, no process outside the group looked for. No implementation
/// that starts every command's clock when the command starts can finish sooner.
fn plain_loop(login: bool, home: &std::path::Path) -> Duration {
    use rustix::process::{Pid, Signal, kill_process_group};
    let start = Instant::now();
    let mut children = Vec::with_capacity(GRADERS);
    for _ in 0..GRADERS {
        let mut command = Command::new("/bin/bash");
        if login {
            command.arg("-lc");
        } else {
            command.args(["--noprofile", "--norc", "-c"]);
        }
        let child = command
            .arg(STUBBORN)
            .env("HOME", home)
            .env("GRADER_BENCH_TAG", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()
            .expect("bash runs");
        children.push((Instant::now(), child));
    }
    let group = |child: &std::process::Child| {
        Pid::from_raw(i32::try_from(child.id()).expect("a pid")).expect("a pid")
    };
    for (signal, after) in [(Signal::TERM, TIMEOUT), (Signal::KILL, TIMEOUT + GRACE)] {
        for (started, child) in &children {
            if let Some(wait) = (*started + after).checked_duration_since(Instant::now()) {
                std::thread::sleep(wait);
            }
            let _ = kill_process_group(group(child), signal);
        }
    }
    for (_, child) in &mut children {
        let _ = child.wait();
    }
    start.elapsed()
}

/// `GRADERS` `BashGrader`s of `command` in one `Gather`: the wall time, and a line on stderr
/// with the CPU time this process used.
///
/// Each command first prints `$EPOCHREALTIME` (bash's clock, no process started), and each
/// grading is timed from the gather's start, so the line also gives how long after its
/// command began each grade returned: the time out and grace, and what stopping added, for
/// the command started last as for the first.
fn graders(
    runtime: &tokio::runtime::Runtime,
    command: &str,
    login: bool,
    home: &std::path::Path,
) -> Duration {
    let cpu = cpu_time();
    let start = Instant::now();
    let wall_start = SystemTime::now();
    let timed_command = format!("echo $EPOCHREALTIME; {command}");
    let result = runtime.block_on(async {
        let mut gather = Gather::new();
        for _ in 0..GRADERS {
            gather = gather.add(
                BashGrader::new(timed_command.as_str())
                    .env("HOME", home)
                    .login_shell(login)
                    .timeout(TIMEOUT)
                    .kill_grace(GRACE)
                    .grade(1.0)
                    .timed(),
            );
        }
        gather.await
    });
    let elapsed = start.elapsed();
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
    let since_epoch = wall_start
        .duration_since(UNIX_EPOCH)
        .expect("a clock after 1970")
        .as_secs_f64();
    let mut after_start: Vec<f64> = result
        .subscores
        .iter()
        .flatten()
        .filter_map(|sub| {
            let info = sub.info()?;
            let began: f64 = info["stdout"].as_str()?.lines().next()?.parse().ok()?;
            Some(since_epoch + info["elapsed_seconds"].as_f64()? - began)
        })
        .collect();
    after_start.sort_by(f64::total_cmp);
    let at = |q: f64| after_start[((after_start.len() - 1) as f64 * q) as usize];
    eprintln!(
        "{GRADERS} graders of {command:?} (login shell: {login}): wall {elapsed:.2?}, \
         cpu {:.2?}, {timed_out} timed out; returned after their commands began: median \
         {:.3} s, 99% {:.3} s, max {:.3} s",
        cpu_time() - cpu,
        at(0.5),
        at(0.99),
        at(1.0),
    );
    elapsed
}

fn bash_timeouts(c: &mut Criterion) {
    let home = std::env::temp_dir().join(format!("grader-bench-home-t-{}", std::process::id()));
    std::fs::create_dir_all(&home).expect("a temporary HOME");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");

    let mut group = c.benchmark_group("bash_timeouts");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(60));
    group.warm_up_time(Duration::from_millis(1));
    // What starting 600 commands costs on this machine, to read the others against.
    group.bench_function("600_graders_of_true", |b| {
        b.iter_custom(|iters| {
            (0..iters)
                .map(|_| graders(&runtime, "true", true, &home))
                .sum()
        });
    });
    for (name, login) in [("login_shell", true), ("no_login_shell", false)] {
        // The floor and the graders one after the other in each iteration, so that both see
        // the same load; the graders' time is measured, and each pair printed.
        group.bench_function(format!("600_graders_sigterm_ignored_{name}"), |b| {
            b.iter_custom(|iters| {
                let (mut floor_total, mut graders_total) = (Duration::ZERO, Duration::ZERO);
                for _ in 0..iters {
                    let floor = plain_loop(login, &home);
                    let ours = graders(&runtime, STUBBORN, login, &home);
                    eprintln!(
                        "  plain loop {floor:.2?}, graders {ours:.2?}: {:+.0?} ms, ratio {:.3}",
                        ours.as_secs_f64().mul_add(1e3, -floor.as_secs_f64() * 1e3),
                        ours.as_secs_f64() / floor.as_secs_f64()
                    );
                    floor_total += floor;
                    graders_total += ours;
                }
                eprintln!(
                    "  over {iters}: plain loop {floor_total:.2?}, graders {graders_total:.2?}, \
                     ratio {:.3}",
                    graders_total.as_secs_f64() / floor_total.as_secs_f64()
                );
                graders_total
            });
        });
    }
    // 50 such graders while 2 000 unrelated processes sleep: what the sweeper must pass over.
    group.bench_function("50_graders_sigterm_ignored_beside_2000_processes", |b| {
        let mut unrelated: Vec<_> = (0..2000)
            .map(|_| {
                Command::new("/bin/sleep")
                    .arg("600")
                    .stdin(Stdio::null())
                    .spawn()
                    .expect("sleep runs")
            })
            .collect();
        b.iter_custom(|iters| {
            (0..iters)
                .map(|_| {
                    let start = Instant::now();
                    let result = runtime.block_on(async {
                        let mut gather = Gather::new();
                        for _ in 0..50 {
                            gather = gather.add(
                                BashGrader::new(STUBBORN)
                                    .env("HOME", &home)
                                    .timeout(TIMEOUT)
                                    .kill_grace(GRACE)
                                    .grade(1.0),
                            );
                        }
                        gather.await
                    });
                    let elapsed = start.elapsed();
                    assert_eq!(result.expect("every grader runs").reward(), 0.0);
                    eprintln!("50 graders beside 2 000 processes: {elapsed:.2?}");
                    elapsed
                })
                .sum()
        });
        for child in &mut unrelated {
            let _ = child.kill();
            let _ = child.wait();
        }
    });
    group.finish();
    let _ = std::fs::remove_dir_all(&home);
}

criterion_group!(benches, bash_true, bash_timeouts);
criterion_main!(benches);
