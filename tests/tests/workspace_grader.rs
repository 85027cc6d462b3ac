//! A `BashGrader` inside a workspace's sandbox (`Workspace::bash`): it sees the files and the
//! processes the agent left there, its limits hold, what it starts itself does not outlive its
//! grade, and what the agent started is left to the workspace, which ends it.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use grader_tests::child::Bounded as _;

use grader_core::sandbox::Limits;
use grader_env::workspace::Workspace;
use grader_env::{Environment, NoArgs, ServeConfig, Session, Template};
use grader_tests::sandboxing::{can_sandbox, sleeping};

/// Waits up to `bound` for no `sleep <seconds>` to run; returns how many still do.
fn sleeping_after(seconds: &str, bound: Duration) -> usize {
    let start = std::time::Instant::now();
    loop {
        let left = sleeping(seconds);
        if left == 0 || start.elapsed() >= bound {
            return left;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Seconds no other test sleeps for: as good as forever.
fn seconds(n: u32) -> String {
    format!("{}{n:02}", 700_000 + std::process::id() % 90_000)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_grader_in_the_workspace_sees_what_the_agent_left_and_what_it_grades_only() {
    if !can_sandbox() {
        return;
    }
    let root = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("workspace-grader-{}", std::process::id()));
    std::fs::create_dir_all(&root).unwrap();
    let workspace = Workspace::builder(&root)
        .require_isolation(true)
        .graded_port(8765)
        .start()
        .await
        .unwrap();
    let (agents, graders) = (seconds(1), seconds(2));

    // The agent leaves a file, a detached process, and the server it was asked to start.
    let out = workspace
        .run(&format!(
            "echo fixed > made.txt; setsid -f sleep {agents} </dev/null >/dev/null 2>&1; \
             setsid -f python3 -m http.server 8765 --bind 127.0.0.1 </dev/null >/dev/null 2>&1; \
             for _ in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/8765) 2>/dev/null && break; \
             sleep 0.1; done"
        ))
        .await
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    // `setsid -f` returns before its child has become `sleep`: wait (at most 5 s) for it.
    let started = std::time::Instant::now();
    while sleeping(&agents) == 0 && started.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(sleeping(&agents), 1);

    // Grading seals the workspace: the agent's detached process is stopped before the
    // grader runs; the server the template grades (its port declared) keeps running.
    let check = format!(
        "test \"$PWD\" = /workspace && test \"$(cat made.txt)\" = fixed && \
         exec 3<>/dev/tcp/127.0.0.1/8765 && test ! -e {}",
        root.display()
    );
    let grader = workspace.bash(&check).await.unwrap();
    assert_eq!(
        sleeping(&agents),
        0,
        "the agent's process ran into the grade"
    );
    let sub = grader
        .timeout(Duration::from_secs(60))
        .grade(1.0)
        .await
        .unwrap();
    assert_eq!(sub.value(), 1.0, "{:?}", sub.info());
    assert_eq!(sub.info().unwrap()["_parameters"]["launcher"], "nsenter");
    assert!(workspace.is_sealed());
    // The same check on the host fails: it is the sandbox's view that passed.
    let host = grader_core::BashGrader::new(&check)
        .cwd(&root)
        .login_shell(false)
        .grade(1.0)
        .await
        .unwrap();
    assert_eq!(host.value(), 0.0);

    // The grader's environment is its own: no login shell, its own home and temporary
    // directory (empty, made when the workspace was sealed), a read-only PATH, no
    // capability, no start-up variable, a read-only `/`.
    let env = workspace
        .bash(
            "shopt -q login_shell && echo login; echo \"$HOME $TMPDIR $PATH\"; ls -A \"$HOME\"; \
             touch \"$HOME/x\" \"$TMPDIR/x\" && echo writable; \
             for d in ${PATH//:/ }; do test -w \"$d\" && echo \"writable $d\"; done; \
             mkdir /root 2>/dev/null || echo read-only; \
             grep CapEff /proc/self/status; \
             env | cut -d= -f1 | grep -v '^GRADER_BASH_' | sort | tr '\\n' ' '",
        )
        .await
        .unwrap()
        .grade(1.0)
        .await
        .unwrap();
    let said = env.info().unwrap()["stdout"].as_str().unwrap().to_owned();
    assert_eq!(
        said,
        "/run/grader/home /run/grader/tmp /usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:\
         /sbin:/bin\nwritable\nread-only\nCapEff:\t0000000000000000\n\
         HOME LANG PATH PWD PYTHONNOUSERSITE PYTHONPYCACHEPREFIX SHLVL TMPDIR _ "
    );

    // Its limits hold inside the sandbox.
    let hog = workspace
        .bash("ulimit -S -v 3000000; python3 -c '\nchunks = []\nwhile True: chunks.append(bytearray(32 << 20))'")
        .await
        .unwrap()
        .timeout(Duration::from_secs(60))
        .limits(Limits::default().memory(96 * 1024 * 1024))
        .grade(1.0)
        .await
        .unwrap();
    assert_eq!(hog.value(), 0.0);
    let info = hog.info().unwrap();
    if info["limits"]["memory"] != "rlimit" {
        assert_eq!(info["limit_exceeded"], "memory limit 96 MiB exceeded");
    }

    // What the grader detaches ends with its grade.
    let sub = workspace
        .bash(format!("setsid -f sleep {graders}; true"))
        .await
        .unwrap()
        .grade(1.0)
        .await
        .unwrap();
    assert_eq!(sub.value(), 1.0, "{:?}", sub.info());
    assert_eq!(sleeping_after(&graders, Duration::from_secs(5)), 0);

    // Graders running at once each seal; none ends another's command or empties its home.
    let slow = async {
        workspace
            .bash("touch \"$HOME/mine\"; sleep 1; test -e \"$HOME/mine\"")
            .await
            .unwrap()
            .grade(1.0)
            .await
            .unwrap()
    };
    let later = async {
        tokio::time::sleep(Duration::from_millis(300)).await;
        workspace
            .bash("true")
            .await
            .unwrap()
            .grade(1.0)
            .await
            .unwrap()
    };
    let (slow, later) = tokio::join!(slow, later);
    assert_eq!(
        (slow.value(), later.value()),
        (1.0, 1.0),
        "{:?}",
        slow.info()
    );

    // The next task: a fresh sandbox, unsealed.
    workspace.discard_sandbox().await;
    assert!(!workspace.is_sealed());
    workspace.stop().await;
    std::fs::remove_dir_all(&root).unwrap();
}

/// What a template's session says when it asks for a workspace its environment did not attach
/// (as the task's error, with the task's id).
async fn asks_for(env: Environment, name: Option<&'static str>) -> String {
    let env = env
        .template(Template::new(
            "ask",
            move |_: NoArgs, session: Session| async move {
                let found = match name {
                    Some(name) => session.workspace_named(name),
                    None => session.workspace(),
                };
                found?;
                Ok::<_, Box<dyn std::error::Error + Send + Sync>>(1.0)
            },
        ))
        .unwrap();
    let server = env.bind(&ServeConfig::default()).await.unwrap();
    let stream = tokio::net::TcpStream::connect(server.local_addr())
        .await
        .unwrap();
    let (read, mut write) = stream.into_split();
    tokio::io::AsyncWriteExt::write_all(
        &mut write,
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tasks.start\",\"params\":{\"id\":\"ask\"}}\n",
    )
    .await
    .unwrap();
    let mut reply = String::new();
    tokio::io::AsyncBufReadExt::read_line(&mut tokio::io::BufReader::new(read), &mut reply)
        .await
        .unwrap();
    server.shutdown().await;
    let reply: serde_json::Value = serde_json::from_str(&reply).unwrap();
    reply["error"]["message"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn a_session_asking_for_a_workspace_not_attached_is_told_what_there_is() {
    let none = asks_for(Environment::new("bare"), None).await;
    assert_eq!(
        none,
        "task \"ask\": the environment attached no workspace (`Environment::workspace`)"
    );
    let root = std::env::temp_dir().join(format!("workspace-named-{}", std::process::id()));
    let attached = Environment::new("one").workspace_with(
        Workspace::builder(&root)
            .sandboxed(false)
            .track_files(false),
        "shell",
    );
    let other = asks_for(attached, Some("other")).await;
    assert_eq!(
        other,
        "task \"ask\": the environment attached no workspace named \"other\" (it has [\"shell\"])"
    );
    let _ = std::fs::remove_dir_all(&root);
}

/// A fork bomb and a memory hog left in a workspace are held to its limits, and the grade
/// still happens (its own cgroup), scoring what the command does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_workspace_at_its_limits_is_still_graded() {
    // The limits need the cgroup a root server makes (an unprivileged one may have none, and
    // then no fork bomb is let loose here).
    if !can_sandbox() || !rustix::process::geteuid().is_root() {
        return;
    }
    let root = tempfile::tempdir().unwrap();
    let workspace = Workspace::builder(root.path())
        .require_isolation(true)
        .limits(Limits::default().processes(64).memory(256 * 1024 * 1024))
        .tmp_size(8 * 1024 * 1024)
        .start()
        .await
        .unwrap();
    let out = workspace
        .run(
            "echo fixed > made.txt; \
             setsid -f bash -c 'b() { b | b & }; b' </dev/null >/dev/null 2>&1; \
             setsid -f python3 -c 'a = []\nwhile True: a.append(bytearray(16 << 20))' \
             </dev/null >/dev/null 2>&1; \
             head -c 64M /dev/zero > /tmp/fill; echo \"tmp: $?\"; true",
        )
        .await
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("tmp: 1"), "/tmp is bounded: {said}");
    // The agent's processes never pass the workspace's limit.
    if let Some(pid) = workspace.sandbox_pid() {
        let namespace = std::fs::read_link(format!("/proc/{pid}/ns/pid")).unwrap();
        let inside = std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .filter(|e| std::fs::read_link(e.path().join("ns/pid")).is_ok_and(|ns| ns == namespace))
            .count();
        assert!(inside <= 64 + 4, "{inside} processes in the sandbox");
    }
    let sub = workspace
        .bash("test \"$(cat made.txt)\" = fixed")
        .await
        .unwrap()
        .timeout(Duration::from_secs(60))
        .grade(1.0)
        .await
        .unwrap();
    assert_eq!(sub.value(), 1.0, "{:?}", sub.info());
    workspace.stop().await;
}

/// A root on a small filesystem of its own (a 4 MiB tmpfs) that the agent fills: its writes
/// fail, the grade happens, and nothing else is touched.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_workspace_that_fills_its_root_is_still_graded() {
    if !can_sandbox() || !rustix::process::geteuid().is_root() {
        return;
    }
    let root = tempfile::tempdir().unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=4m", "tmpfs"])
        .arg(root.path())
        .status_bounded();
    if !mounted.success() {
        return;
    }
    let workspace = Workspace::builder(root.path())
        .require_isolation(true)
        .start()
        .await
        .unwrap();
    let out = workspace
        .run("echo fixed > made.txt; head -c 16M /dev/zero > fill; echo \"fill: $?\"")
        .await
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("fill: 1"));
    let sub = workspace
        .bash("test \"$(cat made.txt)\" = fixed")
        .await
        .unwrap()
        .grade(1.0)
        .await
        .unwrap();
    assert_eq!(sub.value(), 1.0, "{:?}", sub.info());
    workspace.stop().await;
    let unmounted = Command::new("umount").arg(root.path()).status_bounded();
    assert!(unmounted.success());
}
