//! The sweeper remembers what it learned of each process while no pid can have been handed
//! out twice since it began. A process older than that, whose pid lies just ahead of the
//! counter, is remembered as untagged; it exits, and the counter hands its pid to a command's
//! escapee after a few forks: the escapee must still be found.
//! Builds a small forker with `cc` to move the pid counter round; on a machine whose
//! `pid_max` is too large to go round in seconds (above 65 536) the test says so and stops.
#![cfg(all(target_os = "linux", feature = "bash"))]
#![allow(clippy::unwrap_used)]

mod bash_support;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use bash_support::{
    bash,
    child::{self, Bounded as _},
    live_processes, marker, scratch_dir, survivors_after,
};

const FORKER: &str = r#"
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/wait.h>
int main(int c, char **v) {
  long min = atol(v[1]), lo = atol(v[2]), hi = atol(v[3]), n = 0;
  for (;;) { pid_t p = fork(); if (p == 0) _exit(0); if (p < 0) return 1; waitpid(p, 0, 0); n++;
    if (n >= min && p >= lo && p <= hi) { printf("%ld %d\n", n, p); return 0; } if (n > 300000) return 2; }
}
"#;

fn kill_all(mark: &str) {
    for (pid, _, _) in live_processes(mark) {
        let _ = Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status_bounded();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_old_untagged_process_remembered_then_its_pid_reused_by_an_escapee() {
    let pid_max: u64 = std::fs::read_to_string("/proc/sys/kernel/pid_max")
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    if pid_max > 65_536 {
        eprintln!("pid_max is {pid_max}: the pid counter cannot be moved round here in seconds");
        return;
    }
    let dir = scratch_dir("memo");
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("forker.c");
    let forker = dir.join("forker");
    std::fs::write(&src, FORKER).unwrap();
    assert!(
        Command::new("cc")
            .arg("-O2")
            .arg("-o")
            .arg(&forker)
            .arg(&src)
            .status_bounded()
            .success()
    );

    // L: a command whose stop lasts (a TERM-ignoring process, a long grace), started long
    // enough before the others that its window no longer holds: rounds then read every pid.
    let lmark = marker();
    let go = dir.join("go");
    assert!(Command::new("mkfifo").arg(&go).status_bounded().success());
    // Waits on the fifo without forking, so that the pid counter stays where the forker left it.
    let l = tokio::spawn(
        bash(&format!(
            "trap '' TERM; (sleep 1000.{lmark} &); read -r _ < {}; exit 0",
            go.display()
        ))
        .timeout(Duration::from_secs(120))
        .kill_grace(Duration::from_secs(8))
        .grade(1.0),
    );
    tokio::time::sleep(Duration::from_millis(300)).await;

    // Q: an untagged process that is not a child of this process.
    let qmark = marker();
    // A pid far enough from the reserved ones for the forker to stop just before it.
    let (mut holder, q) = loop {
        let mut holder = Command::new("sh")
            .args([
                "-c",
                &format!("env -i A=1 /bin/sleep 1000.{qmark} & echo $!; wait"),
            ])
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(holder.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let q: i64 = line.trim().parse().unwrap();
        if q > 400 {
            break (holder, q);
        }
        kill_all(&qmark);
        child::wait(&mut holder, "the holder of an untagged process");
    };

    // Round the pid counter until it stands a few pids before Q's (at least 17000 forks, so
    // that L's window no longer holds).
    let out = Command::new(&forker)
        .args(["17000", &(q - 12).to_string(), &(q - 3).to_string()])
        .output_bounded();
    eprintln!("forker: {}", String::from_utf8_lossy(&out.stdout).trim());
    assert!(out.status.success());

    // L stops: its job waits for its grace, reading every pid, Q's among them.
    std::fs::write(&go, "go\n").unwrap();
    tokio::time::sleep(Duration::from_millis(400)).await;

    // B: Q exits (its pid is free, a few pids ahead of the counter, and still remembered as
    // untagged until a round lists /proc without it), then escapees, one of which gets Q's pid.
    let bmark = marker();
    let sub = bash(&format!(
        "kill -KILL {q}; for i in $(seq 60); do setsid sleep 1000.{bmark} >/dev/null 2>&1 & echo $!; done; sleep 0.3; exit 0"
    ))
    .login_shell(false)
    .grade(1.0)
    .await
    .unwrap();
    let alive = survivors_after(&bmark, Duration::from_millis(100));
    child::wait(&mut holder, "the holder of an untagged process");
    let pids = sub.info().unwrap()["stdout"]
        .as_str()
        .unwrap_or("")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(",");
    eprintln!(
        "B escapees: {pids}; q {q}; loadavg {}",
        std::fs::read_to_string("/proc/loadavg").unwrap()
    );
    kill_all(&bmark);
    kill_all(&lmark);
    let started = std::time::Instant::now();
    let lsub = l.await;
    eprintln!(
        "L answered {:?} after B; {:?}",
        started.elapsed(),
        lsub.map(|s| s.map(|s| s.info().cloned()))
    );
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(
        alive,
        vec![],
        "Q had pid {q}; B: {:?}",
        sub.info().map(|i| &i["exit_code"])
    );
}
