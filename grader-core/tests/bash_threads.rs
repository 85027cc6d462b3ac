//! A process whose main thread exited while its other threads run shows as a zombie, and its
//! own environment cannot be read; it left the command's group. It is still stopped when the
//! grade ends, and by the watcher when the grading process ends. Builds the program with `cc`.
#![cfg(all(target_os = "linux", feature = "bash"))]
#![allow(clippy::unwrap_used)] // a test that cannot unwrap has failed

mod bash_support;

use std::path::{Path, PathBuf};
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

/// A scratch directory holding the program, built, and the program's path.
fn build_program() -> (PathBuf, PathBuf) {
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
    (dir, program)
}

/// Waits up to 2 s for process `pid` to have at most its zombie main thread left, and kills
/// it otherwise. Returns how many threads it had.
fn threads_left(pid: u32) -> usize {
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
    left
}

/// The pid the program wrote to `file`, once it has.
fn pid_in(file: &Path) -> Option<u32> {
    std::fs::read_to_string(file).ok()?.trim().parse().ok()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_process_whose_main_thread_exited_is_stopped() {
    let (dir, program) = build_program();
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

    let pid = pid_in(&pid_file).unwrap();
    let left = threads_left(pid);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(left <= 1, "process {pid} still runs {left} threads");
}

/// Set in the re-run test binary: the program to start, and the file for its pid.
const PROGRAM_ENV: &str = "GRADER_BASH_THREADS_PROGRAM";
const PID_FILE_ENV: &str = "GRADER_BASH_THREADS_PID_FILE";

/// The grading process of the next test, run as a copy of this test binary: starts the
/// program out of the group beside a long command, and exits once the program runs.
#[test]
fn grading_until_exit() {
    let (Ok(program), Ok(pid_file)) = (std::env::var(PROGRAM_ENV), std::env::var(PID_FILE_ENV))
    else {
        return; // not the re-run copy
    };
    let command = format!(
        "for i in $(seq 400); do /bin/true; done; setsid {program} > {pid_file} 2>/dev/null & sleep 60"
    );
    std::thread::spawn(move || bash(&command).grade_blocking(1.0));
    let start = Instant::now();
    while pid_in(Path::new(&pid_file)).is_none() {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "the program never ran"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_millis(100));
    std::process::exit(0);
}

#[test]
fn a_process_whose_main_thread_exited_is_stopped_when_the_grading_process_exits() {
    let (dir, program) = build_program();
    let pid_file = dir.join("pid");
    let status = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "grading_until_exit", "--nocapture"])
        .env(PROGRAM_ENV, &program)
        .env(PID_FILE_ENV, &pid_file)
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "the grading process failed: {status}");
    let pid = pid_in(&pid_file).unwrap();
    let left = threads_left(pid);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(left <= 1, "process {pid} still runs {left} threads");
}
