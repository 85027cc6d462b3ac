//! `BashGrader`'s limits: each is exceeded by a real command (a memory hog, a fork bomb, a CPU
//! spin, a 100 GB write, 100 000 open files), each under an outer guard of its own (a bounded
//! loop, an address-space or file-size rlimit set by the command's shell, a timeout) so that a
//! limit that failed to apply cannot hurt the machine, and the grading process and the
//! siblings' results go on.
#![cfg(all(target_os = "linux", feature = "bash"))]
#![allow(clippy::unwrap_used)] // a test that cannot unwrap has failed

mod bash_support;

use std::time::Duration;

use bash_support::{bash, marker, scratch_dir, survivors_after};
use grader_core::sandbox::Limits;
use grader_core::{Gather, SubScore};
use serde_json::Value;

const MIB: u64 = 1024 * 1024;

fn info(sub: &SubScore) -> &serde_json::Map<String, Value> {
    sub.info().unwrap()
}

/// How `limit` was enforced (`cgroup v1`, `cgroup v2`, `rlimit`), per `info.limits`.
fn enforced_by<'a>(sub: &'a SubScore, limit: &str) -> &'a str {
    info(sub)["limits"][limit].as_str().unwrap()
}

fn by_cgroup(sub: &SubScore, limit: &str) -> bool {
    enforced_by(sub, limit).starts_with("cgroup")
}

#[tokio::test]
async fn a_memory_hog_is_stopped_and_its_sibling_is_kept() {
    // Outer guard: a 3 GB address space for python, set by the command's own shell.
    let hog = bash(
        "ulimit -S -v 3000000; python3 -c '\nchunks = []\nwhile True: chunks.append(bytearray(64 << 20))'; exit 0",
    )
    .login_shell(false)
    .timeout(Duration::from_secs(120))
    .limits(Limits::default().memory(256 * MIB));
    let result = Gather::new()
        .add(hog.grade(1.0))
        .add(bash("echo sibling").login_shell(false).grade(1.0))
        .await
        .unwrap();
    let subs = result.subscores();
    let (hog, sibling) = (&subs[0], &subs[1]);
    // The shell said `exit 0` after python was killed: a limit hit still scores 0.0.
    assert_eq!(hog.value(), 0.0, "{:?}", hog.info());
    if by_cgroup(hog, "memory") {
        assert_eq!(info(hog)["exit_code"], 0);
        assert_eq!(info(hog)["limit_exceeded"], "memory limit 256 MiB exceeded");
        let peak = info(hog)["peak_memory_bytes"].as_u64().unwrap();
        assert!(peak <= 256 * MIB && peak > 128 * MIB, "peak {peak}");
    } else {
        // Each process alone under RLIMIT_DATA: python's allocation fails.
        assert_eq!(enforced_by(hog, "memory"), "rlimit");
    }
    assert_eq!(sibling.value(), 1.0);
    assert_eq!(info(sibling)["stdout"], "sibling\n");
}

#[tokio::test]
async fn a_fork_bomb_stops_at_the_process_limit_and_leaves_nothing() {
    let tag = marker();
    // Outer guard: the bomb is 8 levels deep, at most 256 leaves.
    let command = format!(
        "f() {{ if [ $1 -gt 0 ]; then f $(($1 - 1)) & f $(($1 - 1)); wait; else sleep 30 # {tag}\nfi; }}; f 8"
    );
    let sub = bash(&command)
        .login_shell(false)
        .timeout(Duration::from_secs(4))
        .limits(Limits::default().processes(32))
        .grade(1.0)
        .await
        .unwrap();
    assert_eq!(sub.value(), 0.0);
    if by_cgroup(&sub, "processes") {
        assert_eq!(info(&sub)["limit_exceeded"], "process limit 32 reached");
    } else {
        assert!(enforced_by(&sub, "processes").starts_with("not enforced"));
    }
    assert_eq!(survivors_after(&tag, Duration::from_secs(5)), vec![]);
}

#[tokio::test]
async fn a_cpu_spin_is_stopped_by_the_cpu_time_limit() {
    let sub = bash("while :; do :; done")
        .login_shell(false)
        .timeout(Duration::from_secs(60))
        .limits(Limits::default().cpu_time(Duration::from_secs(1)))
        .grade(1.0)
        .await
        .unwrap();
    assert_eq!(sub.value(), 0.0);
    assert_eq!(info(&sub)["limit_exceeded"], "CPU time limit 1s exceeded");
    assert!(info(&sub).get("timed_out").is_none());
    if by_cgroup(&sub, "cpu_time") {
        // Killed by the grader once the group's total passed the limit, or by the per-process
        // rlimit kept as a second line, whichever came first.
        let exit = info(&sub)["exit_code"].as_i64().unwrap();
        assert!(exit == -9 || exit == -24, "{:?}", sub.info());
    } else {
        assert_eq!(enforced_by(&sub, "cpu_time"), "rlimit");
        assert_eq!(info(&sub)["exit_code"], -24, "SIGXCPU: {:?}", sub.info());
    }
}

/// Whether this machine gives a command a cgroup that counts its CPU time: it must where the
/// command got a cgroup and a `cpuacct` (v1) or a v2 hierarchy is mounted, and under CI.
fn cpu_counted(sub: &SubScore) -> bool {
    if by_cgroup(sub, "cpu_time") {
        return true;
    }
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    let countable = match enforced_by(sub, "memory") {
        "cgroup v2" => true,
        "cgroup v1" => mountinfo
            .lines()
            .any(|line| line.contains(" - cgroup ") && line.contains("cpuacct")),
        _ => false,
    };
    assert!(
        std::env::var_os("CI").is_none() && !countable,
        "a cgroup must count CPU time here: {:?}",
        sub.info()
    );
    eprintln!("skipping: no cgroup counts CPU time here");
    false
}

/// The command's shell goes on after a child spun past the limit, and says `exit 0`: the
/// limit is the group's, so it still scores 0 with the limit named, and the child was stopped
/// at the limit, not at the timeout.
#[tokio::test]
async fn a_child_spinning_past_the_cpu_limit_scores_zero() {
    let start = std::time::Instant::now();
    // Outer guard: the timeout.
    let sub = bash("bash -c 'while :; do :; done'; echo after; exit 0")
        .login_shell(false)
        .timeout(Duration::from_secs(60))
        .limits(Limits::default().cpu_time(Duration::from_secs(1)))
        .grade(1.0)
        .await
        .unwrap();
    if !cpu_counted(&sub) {
        return;
    }
    assert_eq!(sub.value(), 0.0, "{:?}", sub.info());
    assert_eq!(info(&sub)["limit_exceeded"], "CPU time limit 1s exceeded");
    assert!(info(&sub).get("timed_out").is_none());
    assert!(
        start.elapsed() < Duration::from_secs(30),
        "{:?}",
        start.elapsed()
    );
}

/// Two processes one after the other, each under the limit alone (no per-process rlimit
/// fires), together past it: the group's total counts.
#[tokio::test]
async fn processes_that_spin_one_after_the_other_share_the_cpu_limit() {
    let spin = "python3 -c 'import time\nwhile time.process_time() < 0.7: pass'";
    let sub = bash(&format!("{spin} || true; {spin} || true; exit 0"))
        .login_shell(false)
        .timeout(Duration::from_secs(60))
        .limits(Limits::default().cpu_time(Duration::from_secs(1)))
        .grade(1.0)
        .await
        .unwrap();
    if !cpu_counted(&sub) {
        return;
    }
    assert_eq!(sub.value(), 0.0, "{:?}", sub.info());
    assert_eq!(info(&sub)["limit_exceeded"], "CPU time limit 1s exceeded");
}

#[tokio::test]
async fn a_command_within_its_cpu_limit_passes() {
    let sub = bash("python3 -c 'import time\nwhile time.process_time() < 0.2: pass'")
        .login_shell(false)
        .timeout(Duration::from_secs(60))
        .limits(Limits::default().cpu_time(Duration::from_secs(5)))
        .grade(1.0)
        .await
        .unwrap();
    assert_eq!(sub.value(), 1.0, "{:?}", sub.info());
    assert!(info(&sub).get("limit_exceeded").is_none());
}

/// A child's write is cut at the file-size limit and the shell hides it (`|| true`), in the
/// working directory and below it: the cut file is found, and the grade scores 0 with the
/// limit named. Outer guard: 10 MB at most is written even if the limit failed to apply.
#[tokio::test]
async fn a_child_cut_at_the_file_size_limit_scores_zero() {
    let dir = scratch_dir("fsize-child");
    std::fs::create_dir_all(dir.join("deep/er")).unwrap();
    for command in [
        "head -c 10000000 /dev/zero > f || true",
        "bash -c 'head -c 10000000 /dev/zero > deep/er/f'; echo after; exit 0",
    ] {
        let sub = bash(command)
            .login_shell(false)
            .cwd(&dir)
            .timeout(Duration::from_secs(60))
            .limits(Limits::default().file_size(MIB))
            .grade(1.0)
            .await
            .unwrap();
        assert_eq!(sub.value(), 0.0, "{command}: {:?}", sub.info());
        assert_eq!(
            info(&sub)["limit_exceeded"],
            "file size limit 1 MiB exceeded",
            "{command}"
        );
    }
    assert_eq!(std::fs::metadata(dir.join("f")).unwrap().len(), MIB);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Files under the limit, and a file larger than the limit that the command only touches (it
/// was there before, and the command wrote nothing past the limit): no limit was hit.
#[tokio::test]
async fn files_under_the_limit_and_old_large_files_do_not_count() {
    let dir = scratch_dir("fsize-fine");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("old-large"), vec![0u8; 2 * MIB as usize]).unwrap();
    let sub = bash("head -c 1048575 /dev/zero > almost && touch old-large")
        .login_shell(false)
        .cwd(&dir)
        .timeout(Duration::from_secs(60))
        .limits(Limits::default().file_size(MIB))
        .grade(1.0)
        .await
        .unwrap();
    assert_eq!(sub.value(), 1.0, "{:?}", sub.info());
    assert!(info(&sub).get("limit_exceeded").is_none());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn a_100_gb_write_stops_at_the_file_size_limit() {
    let dir = scratch_dir("fsize");
    std::fs::create_dir_all(&dir).unwrap();
    // Outer guard: a 64 MiB soft limit, which the shell can set only where no lower hard
    // limit is (it fails harmlessly under the grader's 1 MiB).
    let sub = bash("ulimit -S -f 65536 2>/dev/null; head -c 100G /dev/zero > big")
        .login_shell(false)
        .cwd(&dir)
        .timeout(Duration::from_secs(60))
        .limits(Limits::default().file_size(MIB))
        .grade(1.0)
        .await
        .unwrap();
    assert_eq!(sub.value(), 0.0);
    assert_eq!(
        info(&sub)["limit_exceeded"],
        "file size limit 1 MiB exceeded"
    );
    assert_eq!(std::fs::metadata(dir.join("big")).unwrap().len(), MIB);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn opening_100_000_files_fails_at_the_open_file_limit() {
    let sub = bash("python3 -c 'files = [open(\"/dev/null\") for _ in range(100000)]'")
        .login_shell(false)
        .timeout(Duration::from_secs(60))
        .limits(Limits::default().open_files(64))
        .grade(1.0)
        .await
        .unwrap();
    assert_eq!(sub.value(), 0.0);
    assert_eq!(enforced_by(&sub, "open_files"), "rlimit");
    let stderr = info(&sub)["stderr"].as_str().unwrap();
    assert!(stderr.contains("Too many open files"), "{stderr}");
}

#[tokio::test]
async fn a_command_within_its_limits_passes_and_its_cgroup_is_removed() {
    let sub = bash("echo fine")
        .login_shell(false)
        .grade(1.0)
        .await
        .unwrap();
    assert_eq!(sub.value(), 1.0);
    assert!(info(&sub).get("limit_exceeded").is_none());
    let limits = info(&sub)["limits"].as_object().unwrap();
    for name in ["memory", "processes", "file_size", "open_files"] {
        assert!(limits.contains_key(name), "{limits:?}");
    }
    assert!(!limits.contains_key("cpu_time"), "no CPU limit by default");
    if by_cgroup(&sub, "memory") {
        assert!(info(&sub)["peak_memory_bytes"].as_u64().unwrap() > 0);
    }
    // Nothing of this process's groups is left once the grades are over.
    let own = std::fs::read_to_string("/proc/self/cgroup").unwrap();
    let prefix = format!("grader-{}-", std::process::id());
    for line in own.lines() {
        let (controllers, path) = line.split_once(':').unwrap().1.split_once(':').unwrap();
        for controller in ["memory", "pids"] {
            if !controllers.split(',').any(|c| c == controller) {
                continue;
            }
            let dir = format!("/sys/fs/cgroup/{controller}{path}");
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            // Another test of this binary may be running a command: wait for its end.
            let start = std::time::Instant::now();
            let left = || {
                std::fs::read_dir(&dir)
                    .into_iter()
                    .flatten()
                    .flatten()
                    .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
                    .count()
            };
            drop(entries);
            // A group that leaked never goes; another test's come and go. So the check is
            // that the count reaches 0 at some point, not that it is 0 at one later instant
            // (another test may have started a command in between).
            let mut count = left();
            while count > 0 && start.elapsed() < Duration::from_secs(120) {
                std::thread::sleep(Duration::from_millis(100));
                count = left();
            }
            assert_eq!(count, 0, "groups left in {dir}");
        }
    }
}

#[tokio::test]
async fn no_limits_start_the_command_as_before() {
    let sub = bash("ulimit -n; ulimit -f")
        .login_shell(false)
        .limits(Limits::none())
        .grade(1.0)
        .await
        .unwrap();
    assert_eq!(sub.value(), 1.0);
    assert!(info(&sub).get("limits").is_none());
    assert!(info(&sub).get("peak_memory_bytes").is_none());
    let mine = rustix_free_nofile();
    assert!(
        info(&sub)["stdout"].as_str().unwrap().starts_with(&mine),
        "{:?}",
        sub.info()
    );
    let params = &info(&sub)["_parameters"]["limits"];
    assert_eq!(
        params,
        &serde_json::json!({"memory_bytes": null, "processes": null, "file_size_bytes": null, "open_files": null})
    );
}

/// This process's soft open-file limit as `ulimit -n` prints it.
fn rustix_free_nofile() -> String {
    let limits = std::fs::read_to_string("/proc/self/limits").unwrap();
    let line = limits
        .lines()
        .find(|line| line.starts_with("Max open files"))
        .unwrap();
    let soft = line.split_whitespace().nth(3).unwrap();
    if soft == "unlimited" {
        "unlimited".to_owned()
    } else {
        soft.to_owned()
    }
}
