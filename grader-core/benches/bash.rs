//! Benchmarks one `BashGrader` of `true` against its floor: spawning `/bin/bash -lc true` with
//! `std::process::Command`, capturing both pipes. Both run with the same environment, `HOME`
//! included (an empty directory, so the login profile of the machine does not dominate).
#![allow(missing_docs)]

use std::process::{Command, Stdio};

use criterion::{Criterion, criterion_group, criterion_main};
use grader_core::BashGrader;
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
    group.finish();
    let _ = std::fs::remove_dir_all(&home);
}

criterion_group!(benches, bash_true);
criterion_main!(benches);
