//! The workspace beside the reference's (hud 0.6.21's `env.workspace(root)`, served by hud
//! itself), each an environment with one template served as a real process, driven by the same
//! agent (`workspace_session.py`: hud's own client, `client.open("shell")`, `SSHClient`) in the
//! same run:
//!
//! - the seconds from `tasks.start` to the first command's output, for five tasks one after
//!   another (the first opens the shell; hud's client keeps it for the next);
//! - commands per second over a 1 000-command session (`echo i`, one after another), on the
//!   shell opened through the control channel's tunnel (as an agent elsewhere reaches it) and
//!   on a connection made straight to the SSH port;
//! - the server process's resident memory (`VmRSS`) with 100 SSH sessions open at once, each
//!   having run a command.
//!
//! - the seconds `tasks.grade` takes for the `coding_env` example's `fix-tests` after an
//!   honest fix (`coding_grade.py`, a rollout per task): sealing the workspace, the grade, the
//!   frame back.
//!
//! Both sides sandbox with bwrap (hud's with `require_isolation=True`; hud has no
//! `coding_env`, so no grading time). Ratios are this crate's figure against hud's. With
//! `WORKSPACE_BENCH_BEFORE=DIR`, where `DIR` holds an earlier build's `workspace_ssh` bench
//! binary and `coding_env` example, that build is measured in the same run as a third column
//! (its own `--serve` mode serves its environment). `cargo bench -p grader-examples --bench
//! workspace_ssh`; it needs `python3` (hud is installed under `target/` on first use) and
//! bwrap that can sandbox, and says so and stops where either is missing.
//! `-- --commands N --sessions N` change the sizes.
#![allow(missing_docs, clippy::unwrap_used)]

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use grader_env::{Environment, NoArgs, PromptError, ServeConfig, Session, Template};
use grader_tests::env_process::EnvProcess;
use grader_tests::python::hud_python;
use serde_json::Value;

/// This crate's side: an environment with a workspace on `root` and the `work` template.
fn serve(root: &Path) {
    let env = Environment::new("workspace-bench")
        .version("0.1.0")
        .workspace_with(
            grader_env::workspace::Workspace::builder(root).require_isolation(true),
            "shell",
        )
        .template(Template::new(
            "work",
            |_: NoArgs, session: Session| async move {
                session.prompt("Work in the shell.").await?;
                Ok::<_, PromptError>(1.0)
            },
        ))
        .unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    // Served until SIGTERM, which stops the workspace and every process in it.
    runtime
        .block_on(env.serve(&ServeConfig::default()))
        .unwrap();
}

fn measure(python: &Path, mut server: Command, sizes: &[String]) -> Value {
    server.stderr(Stdio::null());
    let mut served = EnvProcess::spawn(server, Duration::from_secs(120));
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/workspace_session.py");
    let output = Command::new(python)
        .arg(script)
        .arg(served.port.to_string())
        .arg(served.pid().to_string())
        .args(sizes)
        .stderr(Stdio::null())
        .output()
        .unwrap();
    assert!(output.status.success(), "the session driver failed");
    served.signal("TERM");
    assert!(served.wait_timeout(Duration::from_secs(30)).is_some());
    serde_json::from_slice(&output.stdout).unwrap()
}

fn median(values: &[Value]) -> f64 {
    let mut values: Vec<f64> = values.iter().map(|v| v.as_f64().unwrap()).collect();
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// The seconds each `tasks.grade` of `coding_env` (the binary `example`) takes after a fix.
fn grading(python: &Path, example: &Path) -> Value {
    let mut server = Command::new(example);
    server.stderr(Stdio::null());
    let mut served = EnvProcess::spawn(server, Duration::from_secs(120));
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/coding_grade.py");
    let output = Command::new(python)
        .arg(script)
        .arg(served.port.to_string())
        .stderr(Stdio::null())
        .output()
        .unwrap();
    assert!(output.status.success(), "the grading driver failed");
    served.signal("TERM");
    assert!(served.wait_timeout(Duration::from_secs(30)).is_some());
    let graded: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert!(
        graded["scores"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s.as_f64() == Some(1.0)),
        "{graded}"
    );
    graded
}

/// This build's `coding_env` example, built in release beside the bench.
fn this_example() -> std::path::PathBuf {
    let exe = std::env::current_exe().unwrap();
    let target = exe.parent().unwrap().parent().unwrap().parent().unwrap();
    let status = Command::new(env!("CARGO"))
        .args([
            "build",
            "--quiet",
            "--release",
            "--package",
            "grader-examples",
        ])
        .args(["--example", "coding_env", "--target-dir"])
        .arg(target)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .status()
        .unwrap();
    assert!(status.success());
    target.join("release").join("examples").join("coding_env")
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Some(at) = args.iter().position(|a| a == "--serve") {
        serve(Path::new(&args[at + 1]));
        return;
    }
    let Some(python) = hud_python(env!("CARGO_TARGET_TMPDIR")) else {
        return;
    };
    if !grader_tests::sandboxing::can_sandbox() {
        return;
    }
    // The sizes the driver takes, as given after `--` (cargo bench adds `--bench`).
    let mut sizes = Vec::new();
    for pair in args.windows(2) {
        if pair[0] == "--commands" || pair[0] == "--sessions" {
            sizes.extend([pair[0].clone(), pair[1].clone()]);
        }
    }

    let roots = tempfile::tempdir().unwrap();
    let (ours_root, hud_root) = (roots.path().join("ours"), roots.path().join("hud"));
    std::fs::create_dir_all(&hud_root).unwrap();
    let mut ours = Command::new(std::env::current_exe().unwrap());
    ours.arg("--serve").arg(&ours_root);
    let mut hud = Command::new(&python);
    hud.arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/workspace_env.py"))
        .arg(&hud_root);

    let ours = measure(&python, ours, &sizes);
    let ours_grade = grading(&python, &this_example());
    let before = std::env::var_os("WORKSPACE_BENCH_BEFORE").map(std::path::PathBuf::from);
    let before = before.map(|dir| {
        let before_root = roots.path().join("before");
        let mut server = Command::new(dir.join("workspace_ssh"));
        server.arg("--serve").arg(&before_root);
        let side = measure(&python, server, &sizes);
        (side, grading(&python, &dir.join("coding_env")))
    });
    let hud = measure(&python, hud, &sizes);
    let first = |side: &Value, i: usize| side["first_output_s"][i].as_f64().unwrap() * 1e3;
    let later = |side: &Value| median(&side["first_output_s"].as_array().unwrap()[1..]) * 1e3;
    let rss = |side: &Value, key: &str| side[key].as_f64().unwrap() / 1024.0;
    let graded = |side: &Value| median(side["grade_s"].as_array().unwrap()) * 1e3;
    println!(
        "workspace over SSH, hud 0.6.21's client on all sides (ratios: against hud, and against before):"
    );
    println!(
        "{:<44} {:>12} {:>12} {:>12} {:>8} {:>8}",
        "", "grader-env", "before", "hud 0.6.21", "÷ hud", "÷ before"
    );
    let row = |what: &str, ours: f64, before: Option<f64>, hud: Option<f64>, unit: &str| {
        let show = |v: Option<f64>| v.map_or_else(|| "-".to_owned(), |v| format!("{v:.1} {unit}"));
        let ratio =
            |v: Option<f64>| v.map_or_else(|| "-".to_owned(), |v| format!("{:.2}", ours / v));
        println!(
            "{what:<44} {:>12} {:>12} {:>12} {:>8} {:>8}",
            format!("{ours:.1} {unit}"),
            show(before),
            show(hud),
            ratio(hud),
            ratio(before)
        );
    };
    let pick = |f: &dyn Fn(&Value) -> f64| before.as_ref().map(|(side, _)| f(side));
    row(
        "tasks.start to first output, first task",
        first(&ours, 0),
        pick(&|s| first(s, 0)),
        Some(first(&hud, 0)),
        "ms",
    );
    row(
        "tasks.start to first output, later (median)",
        later(&ours),
        pick(&later),
        Some(later(&hud)),
        "ms",
    );
    for (what, key) in [
        ("commands per second, through the tunnel", "commands_per_s"),
        (
            "commands per second, straight to SSH",
            "direct_commands_per_s",
        ),
    ] {
        row(
            what,
            ours[key].as_f64().unwrap(),
            pick(&|s| s[key].as_f64().unwrap()),
            Some(hud[key].as_f64().unwrap()),
            "/s",
        );
    }
    row(
        "server RSS, one session",
        rss(&ours, "rss_kib_idle"),
        pick(&|s| rss(s, "rss_kib_idle")),
        Some(rss(&hud, "rss_kib_idle")),
        "MiB",
    );
    let sessions = ours["sessions"].as_u64().unwrap();
    row(
        &format!("server RSS, {sessions} more sessions open"),
        rss(&ours, "rss_kib_sessions"),
        pick(&|s| rss(s, "rss_kib_sessions")),
        Some(rss(&hud, "rss_kib_sessions")),
        "MiB",
    );
    row(
        "coding_env: tasks.grade after a fix (median)",
        graded(&ours_grade),
        before.as_ref().map(|(_, grade)| graded(grade)),
        None,
        "ms",
    );
}
