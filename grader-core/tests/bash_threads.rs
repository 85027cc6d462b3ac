//! A process whose main thread exited while its other threads run shows as a zombie, and its
//! own environment cannot be read; it left the command's group. It is still stopped when the
//! grade ends. Builds the program with `cc`.
#![cfg(all(target_os = "linux", feature = "bash"))]
#![allow(clippy::unwrap_used)] // a test that cannot unwrap has failed

mod bash_support;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use bash_support::{bash, scratch_dir};

/// Prints its pid, starts a thread that sleeps for a minute, and ends its main thread.
const PROGRAM: &str = r#"
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
static void *rest(void *unused) { (void)unused; sleep(60); return 0; }
int main(void) {
    pthread_t thread;
    printf("%d\n", (int)getpid());
    fflush(stdout);
    pthread_create(&thread, 0, rest, 0);
    pthread_exit(0);
}
"#;

/// How many threads process `pid` has (0 once it is gone).
fn threads(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/task")).map_or(0, |tasks| tasks.count())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_process_whose_main_thread_exited_is_stopped() {
    let dir = scratch_dir("threads");
    std::fs::create_dir_all(&dir).unwrap();
    let program = dir.join("main-thread-exits");
    std::fs::write(dir.join("program.c"), PROGRAM).unwrap();
    let built = Command::new("cc")
        .args(["-pthread", "-o"])
        .arg(&program)
        .arg(dir.join("program.c"))
        .status()
        .unwrap();
    assert!(built.success(), "cc failed");
    let pid_file = dir.join("pid");

    // Hundreds of pids handed out first, so that the sweeper lists `/proc` (which shows
    // processes, not threads) rather than trying each pid since the command started.
    let sub = bash(&format!(
        "for i in $(seq 400); do /bin/true; done; setsid {} > {} 2>/dev/null & sleep 0.3; exit 0",
        program.display(),
        pid_file.display()
    ))
    .grade(1.0)
    .await
    .unwrap();
    assert_eq!(sub.value(), 1.0);

    let pid: u32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let start = Instant::now();
    while threads(pid) > 1 && start.elapsed() < Duration::from_secs(2) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let left = threads(pid);
    if left > 1 {
        let _ = Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status();
    }
    let _ = std::fs::remove_dir_all(Path::new(&dir));
    assert!(left <= 1, "process {pid} still runs {left} threads");
}
