//! `BashGrader` against real processes: scores, what info records, timeouts, bounded output,
//! working directories and concurrency.
#![cfg(all(unix, feature = "bash"))]
#![allow(clippy::unwrap_used)] // a test that cannot unwrap has failed

mod bash_support;

use std::time::{Duration, Instant};

use bash_support::{bash, live_processes, marker, quiet_home, scratch_dir, survivors_after};
use grader_core::{BashGrader, Failure, Gather, SubScore};
use serde_json::{Value, json};

async fn run(grader: BashGrader) -> SubScore {
    grader.grade(1.0).await.expect("the command runs")
}

fn info(sub: &SubScore) -> &grader_core::Info {
    sub.info().expect("a BashGrader subscore has info")
}

#[tokio::test]
async fn exit_zero_scores_one_and_records_both_streams() {
    let sub = run(bash("echo out; echo err >&2")).await;
    assert_eq!(
        (sub.name(), sub.value(), sub.weight()),
        ("BashGrader", 1.0, 1.0)
    );
    let info = info(&sub);
    assert_eq!(info["exit_code"], 0);
    assert_eq!(info["stdout"], "out\n");
    assert_eq!(info["stderr"], "err\n");
    let keys: Vec<&str> = info.keys().map(String::as_str).collect();
    // With the default limits: how each was applied, and the peak memory where a cgroup
    // measured it.
    let peak: &[&str] = if info["limits"]["memory"] == "rlimit" {
        &[]
    } else {
        &["peak_memory_bytes"]
    };
    let expected = [
        &["exit_code", "stdout", "stderr", "limits"],
        peak,
        &["_parameters"],
    ]
    .concat();
    assert_eq!(keys, expected);
}

#[tokio::test]
async fn the_users_own_login_profile_works_too() {
    // No HOME override: whatever this machine's profile does, the command still runs.
    let sub = run(BashGrader::new("echo ok").timeout(Duration::from_secs(120))).await;
    assert_eq!(sub.value(), 1.0, "{:?}", sub.info());
    assert!(info(&sub)["stdout"].as_str().unwrap().ends_with("ok\n"));
}

#[tokio::test]
async fn a_nonzero_exit_scores_zero_and_keeps_its_code() {
    for (command, code) in [("false", 1), ("exit 3", 3), ("exit 255", 255)] {
        let sub = run(bash(command)).await;
        assert_eq!(sub.value(), 0.0, "{command}");
        assert_eq!(info(&sub)["exit_code"], code, "{command}");
    }
}

#[tokio::test]
async fn exit_256_is_exit_code_zero_as_the_shell_makes_it() {
    let sub = run(bash("exit 256")).await;
    assert_eq!(sub.value(), 1.0);
    assert_eq!(info(&sub)["exit_code"], 0);
}

#[tokio::test]
async fn a_signal_is_a_negative_exit_code() {
    let sub = run(bash("kill -TERM $$")).await;
    assert_eq!(sub.value(), 0.0);
    assert_eq!(info(&sub)["exit_code"], -15);
    let sub = run(bash("kill -KILL $$")).await;
    assert_eq!(info(&sub)["exit_code"], -9);
}

#[tokio::test]
async fn invalid_utf8_becomes_replacement_characters() {
    let sub = run(bash(r"printf 'a\377b'; printf '\303(' >&2")).await;
    assert_eq!(info(&sub)["stdout"], "a\u{FFFD}b");
    assert_eq!(info(&sub)["stderr"], "\u{FFFD}(");
}

#[tokio::test]
async fn the_working_directory_is_honoured() {
    let dir = scratch_dir("cwd");
    std::fs::create_dir_all(&dir).unwrap();
    let sub = run(bash("pwd -P").cwd(&dir)).await;
    let expected = format!("{}\n", dir.canonicalize().unwrap().display());
    assert_eq!(info(&sub)["stdout"], expected.as_str());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn extra_environment_variables_reach_the_command_but_not_the_record() {
    let sub =
        run(bash(r#"printf '%s' "$GRADER_TEST_SECRET""#)
            .env("GRADER_TEST_SECRET", "hunter2 and more"))
        .await;
    let info = info(&sub);
    assert_eq!(info["stdout"], "hunter2 and more");
    assert_eq!(
        info["_parameters"]["env"],
        json!(["HOME", "GRADER_TEST_SECRET"])
    );
    let params = serde_json::to_string(&info["_parameters"]).unwrap();
    assert!(!params.contains("hunter2"), "{params}");
}

#[tokio::test]
async fn stdin_is_closed_so_a_reading_command_returns_at_once() {
    let sub = run(bash("cat; read line; echo \"read: $?\"").timeout(Duration::from_secs(20))).await;
    let info = info(&sub);
    assert_eq!(info.get("timed_out"), None, "{info:?}");
    assert_eq!(info["stdout"], "read: 1\n");
}

#[tokio::test]
async fn parameters_record_command_cwd_and_timeout() {
    let dir = std::env::temp_dir();
    let sub = run(BashGrader::new("true")
        .cwd(&dir)
        .timeout(Duration::from_millis(2500)))
    .await;
    assert_eq!(
        info(&sub)["_parameters"],
        json!({"command": "true", "cwd": dir.to_str().unwrap(), "timeout_seconds": 2.5})
    );
    let sub = run(BashGrader::new("true")).await;
    assert_eq!(
        info(&sub)["_parameters"],
        json!({"command": "true", "timeout_seconds": 600})
    );
}

#[tokio::test]
async fn a_timeout_stops_the_whole_group_and_keeps_the_output_so_far() {
    let mark = marker();
    let command = format!("echo started; echo oops >&2; sleep 30.{mark} & sleep 30.{mark}");
    let start = Instant::now();
    let sub = run(bash(&command).timeout(Duration::from_secs(1))).await;
    let elapsed = start.elapsed();
    let info = info(&sub);
    assert_eq!(sub.value(), 0.0);
    assert_eq!(info["exit_code"], Value::Null);
    assert_eq!(info["timed_out"], true);
    assert_eq!(info["timeout"], 1);
    assert_eq!(info["stdout"], "started\n");
    assert_eq!(info["stderr"], "oops\n");
    // Both sleeps took SIGTERM: the call ends soon after the deadline, far before 30 s.
    assert!(elapsed < Duration::from_secs(5), "took {elapsed:?}");
    assert_eq!(
        live_processes(&mark),
        vec![],
        "left running after a timeout"
    );
}

#[tokio::test]
async fn processes_ignoring_sigterm_get_sigkill_after_the_grace() {
    let mark = marker();
    let command = format!("(trap '' TERM; exec sleep 30.{mark}) & sleep 30.{mark}");
    let sub = run(bash(&command)
        .timeout(Duration::from_millis(300))
        .kill_grace(Duration::from_millis(200)))
    .await;
    assert_eq!(info(&sub)["timed_out"], true);
    assert_eq!(survivors_after(&mark, Duration::ZERO), vec![]);
}

#[tokio::test]
async fn what_the_command_leaves_running_is_stopped_when_bash_exits() {
    let mark = marker();
    // The background sleep keeps stdout open; the call must not wait for it.
    let command = format!("sleep 30.{mark} & (trap '' TERM; exec sleep 30.{mark}) & echo done");
    let start = Instant::now();
    let sub = run(bash(&command).kill_grace(Duration::from_millis(300))).await;
    assert_eq!(sub.value(), 1.0);
    assert_eq!(info(&sub)["stdout"], "done\n");
    assert!(start.elapsed() < Duration::from_secs(10));
    assert_eq!(
        live_processes(&mark),
        vec![],
        "left running after bash exited"
    );
}

#[tokio::test]
async fn a_stopped_process_is_ended_at_a_timeout() {
    let mark = marker();
    let command = format!("sleep 30.{mark} & kill -STOP $!; sleep 30.{mark}");
    let sub = run(bash(&command).timeout(Duration::from_millis(300))).await;
    assert_eq!(info(&sub)["timed_out"], true);
    assert_eq!(live_processes(&mark), vec![]);
}

#[tokio::test]
async fn a_zero_timeout_times_out_at_once() {
    let sub = run(bash("echo hi").timeout(Duration::ZERO)).await;
    assert_eq!(sub.value(), 0.0);
    assert_eq!(info(&sub)["timed_out"], true);
    assert_eq!(info(&sub)["timeout"], 0);
    assert_eq!(info(&sub)["exit_code"], Value::Null);
}

#[tokio::test]
async fn an_enormous_timeout_does_not_overflow() {
    let sub = run(bash("true").timeout(Duration::MAX)).await;
    assert_eq!(sub.value(), 1.0);
}

#[tokio::test]
async fn flooded_streams_keep_head_and_tail_within_budget_without_deadlock() {
    const LIMIT: usize = 1 << 20;
    const STDOUT_BODY: u64 = 200_000_000;
    const STDERR_BYTES: u64 = 150_000_000;
    let command = format!(
        "head -c {STDERR_BYTES} /dev/zero >&2 & \
         echo BEGIN; head -c {STDOUT_BODY} /dev/zero | tr '\\0' x; echo END; wait"
    );
    let sub = run(bash(&command)
        .output_limit(LIMIT)
        .timeout(Duration::from_secs(120)))
    .await;
    let info = info(&sub);
    assert_eq!(sub.value(), 1.0, "{:?}", info.get("timed_out"));
    let stdout_total = STDOUT_BODY + "BEGIN\n".len() as u64 + "END\n".len() as u64;
    let dropped = stdout_total - LIMIT as u64;
    assert_eq!(info["stdout_dropped_bytes"], dropped);
    assert_eq!(info["stderr_dropped_bytes"], STDERR_BYTES - LIMIT as u64);
    let stdout = info["stdout"].as_str().unwrap();
    let marker_line = format!("\n[... {dropped} bytes dropped ...]\n");
    assert_eq!(stdout.len(), LIMIT + marker_line.len());
    assert!(stdout.starts_with("BEGIN\nxxx"));
    assert!(stdout.ends_with("xxxEND\n"));
    assert!(stdout.contains(&marker_line));
    assert_eq!(
        info["stderr"].as_str().unwrap().len(),
        LIMIT
            + format!(
                "\n[... {} bytes dropped ...]\n",
                STDERR_BYTES - LIMIT as u64
            )
            .len()
    );
}

#[tokio::test]
async fn a_missing_working_directory_is_an_error_naming_it() {
    let dir = scratch_dir("missing");
    let error = bash("true").cwd(&dir).grade(1.0).await.unwrap_err();
    assert_eq!(error.grader, "BashGrader");
    match &error.failure {
        Failure::WorkingDirectory { path, reason } => {
            assert_eq!(path, &dir);
            assert_eq!(reason, "does not exist");
        }
        other => panic!("expected a working-directory failure, got {other:?}"),
    }
    assert!(error.to_string().contains(dir.to_str().unwrap()), "{error}");
}

#[tokio::test]
async fn a_file_as_working_directory_is_an_error_naming_it() {
    let file = scratch_dir("file");
    std::fs::write(&file, "not a directory").unwrap();
    let error = bash("true").cwd(&file).grade(1.0).await.unwrap_err();
    match &error.failure {
        Failure::WorkingDirectory { path, reason } => {
            assert_eq!(path, &file);
            assert_eq!(reason, "is not a directory");
        }
        other => panic!("expected a working-directory failure, got {other:?}"),
    }
    std::fs::remove_file(&file).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_sleeps_in_one_gather_run_concurrently() {
    let mut gather = Gather::new();
    for _ in 0..100 {
        gather = gather.add(bash("sleep 0.5").grade(1.0));
    }
    let start = Instant::now();
    let result = gather.await.expect("every sleep passes");
    let elapsed = start.elapsed();
    assert_eq!(result.reward(), 1.0);
    assert_eq!(result.subscores.as_ref().map(Vec::len), Some(100));
    // One after another would take 50 s.
    assert!(elapsed < Duration::from_secs(10), "took {elapsed:?}");
}

#[tokio::test]
async fn the_timeout_clock_starts_when_the_command_starts() {
    // One at a time: the third starts about 2 s after the gather, past its 1.8 s timeout,
    // and still passes because its clock started with it.
    let mut gather = Gather::new().limit(1);
    for _ in 0..3 {
        gather = gather.add(
            bash("sleep 1")
                .timeout(Duration::from_millis(1800))
                .grade(1.0),
        );
    }
    let result = gather.await.expect("every sleep passes");
    assert_eq!(result.reward(), 1.0, "{:?}", result.info);
}

#[test]
fn grade_blocking_runs_from_synchronous_code() {
    let sub = bash("echo sync").grade_blocking(0.25).expect("runs");
    assert_eq!((sub.value(), sub.weight()), (1.0, 0.25));
    assert_eq!(info(&sub)["stdout"], "sync\n");
}

#[tokio::test]
async fn grade_blocking_inside_a_runtime_is_an_error_not_a_panic() {
    let error = bash("true").grade_blocking(1.0).unwrap_err();
    assert!(matches!(error.failure, Failure::InsideRuntime), "{error}");
    assert_eq!((error.grader.as_str(), error.weight), ("BashGrader", 1.0));
}

#[test]
fn grading_futures_are_send() {
    fn assert_send<T: Send>(_: &T) {}
    let grade = BashGrader::new("true").grade(1.0);
    assert_send(&grade);
    let _ = quiet_home();
}

#[test]
fn a_runtime_without_io_or_timer_is_a_typed_error_and_starts_nothing() {
    for missing in ["IO driver", "timer"] {
        let mut builder = tokio::runtime::Builder::new_current_thread();
        if missing == "IO driver" {
            builder.enable_time();
        } else {
            builder.enable_io();
        }
        let mark = marker();
        let grade = bash(&format!("sleep 1000.{mark}")).grade(1.0);
        let error = builder.build().unwrap().block_on(grade).unwrap_err();
        match &error.failure {
            Failure::Runtime(problem) => assert!(problem.contains(missing), "{problem}"),
            other => panic!("expected a runtime failure, got {other:?}"),
        }
        assert_eq!(error.grader, "BashGrader");
        assert_eq!(live_processes(&mark), vec![], "started without {missing}");
    }
}

#[tokio::test]
async fn bad_environment_names_and_values_are_typed_errors() {
    let cases: [(&str, &str, &str); 4] = [
        ("A=B", "C", "has `=` in its name"),
        ("", "C", "has an empty name"),
        ("A\0B", "C", "has a NUL byte in its name"),
        ("A", "C\0D", "has a NUL byte in its value"),
    ];
    for (name, value, reason) in cases {
        let error = bash("true").env(name, value).grade(1.0).await.unwrap_err();
        match &error.failure {
            Failure::Environment {
                name: got,
                reason: why,
            } => {
                assert_eq!((got.as_str(), why.as_str()), (name, reason));
            }
            other => panic!("{name:?}: expected an environment failure, got {other:?}"),
        }
    }
}

#[tokio::test]
async fn a_login_profile_can_pass_any_check_unless_login_shell_is_off() {
    let home = scratch_dir("hijacked-home");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(home.join(".bash_profile"), "exit 0\n").unwrap();
    // The reference's default, `bash -lc`: the profile's `exit 0` passes a failing check.
    let sub = run(BashGrader::new("false").env("HOME", &home)).await;
    assert_eq!(sub.value(), 1.0);
    // Without the login profile the check fails as it should.
    let sub = run(BashGrader::new("false")
        .env("HOME", &home)
        .login_shell(false))
    .await;
    assert_eq!(sub.value(), 0.0);
    assert_eq!(info(&sub)["exit_code"], 1);
    assert_eq!(info(&sub)["_parameters"]["login_shell"], false);
    std::fs::remove_dir_all(&home).unwrap();
}

#[tokio::test]
async fn invalid_bytes_do_not_grow_the_output_past_the_budget() {
    const LIMIT: usize = 64 * 1024;
    let sub = run(bash("head -c 20000000 /dev/zero | tr '\\0' '\\377'").output_limit(LIMIT)).await;
    let stdout = info(&sub)["stdout"].as_str().unwrap();
    let dropped = info(&sub)["stdout_dropped_bytes"].as_u64().unwrap();
    let marker_line = format!("\n[... {dropped} bytes dropped ...]\n");
    assert!(
        stdout.len() <= LIMIT + marker_line.len(),
        "{} bytes",
        stdout.len()
    );
    assert!(stdout.contains(&marker_line));
    assert!(stdout.starts_with('\u{FFFD}') && stdout.ends_with('\u{FFFD}'));
}

#[tokio::test]
async fn commands_take_slots_of_a_shared_limiter() {
    use grader_core::{Gather, Limiter, Resource};
    let limiter = Limiter::new().limit(Resource::Commands, 2);
    let dir = tempfile_dir("limit");
    let running = dir.join("running");
    std::fs::create_dir(&running).expect("a directory");
    // Each command counts the commands running beside it (itself included).
    let command = format!(
        "touch {running}/$$; ls {running} | wc -l >> {dir}/seen; sleep 0.2; rm {running}/$$",
        running = running.display(),
        dir = dir.display(),
    );
    let gathers = (0..3).map(|_| {
        Gather::new()
            .limiter(&limiter)
            .add(BashGrader::new(command.clone()).grade(1.0))
            .add(BashGrader::new(command.clone()).grade(1.0))
    });
    for result in futures_util::future::join_all(gathers).await {
        assert_eq!(result.expect("graded").reward(), 1.0);
    }
    let seen = std::fs::read_to_string(dir.join("seen")).expect("commands ran");
    let _ = std::fs::remove_dir_all(&dir);
    let counts: Vec<usize> = seen
        .lines()
        .map(|n| n.trim().parse().expect("a count"))
        .collect();
    assert_eq!(counts.len(), 6);
    assert!(counts.iter().all(|&n| (1..=2).contains(&n)), "{counts:?}");
    assert_eq!(limiter.in_use(&Resource::Commands), 0);
}

/// A fresh directory under the system's temporary directory.
fn tempfile_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("grader-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    dir
}
