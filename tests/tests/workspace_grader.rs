//! A `BashGrader` inside a workspace's sandbox (`Workspace::bash`): it sees the files and the
//! processes the agent left there, its limits hold, what it starts itself does not outlive its
//! grade, and what the agent started is left to the workspace, which ends it.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::time::Duration;

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
async fn a_grader_in_the_workspace_sees_what_the_agent_left() {
    if !can_sandbox() {
        return;
    }
    let root = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("workspace-grader-{}", std::process::id()));
    std::fs::create_dir_all(&root).unwrap();
    let workspace = Workspace::builder(&root)
        .require_isolation(true)
        .start()
        .await
        .unwrap();
    let (agents, graders) = (seconds(1), seconds(2));

    // The agent leaves a file and a detached server.
    let out = workspace
        .run(&format!(
            "echo fixed > made.txt; setsid -f sleep {agents} </dev/null >/dev/null 2>&1"
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

    // The grader sees both where the agent sees them.
    let check = format!(
        "test \"$PWD\" = /workspace && test \"$(cat made.txt)\" = fixed && \
         pgrep -x sleep >/dev/null && test ! -e {}",
        root.display()
    );
    let sub = workspace
        .bash(&check)
        .await
        .unwrap()
        .login_shell(false)
        .timeout(Duration::from_secs(60))
        .grade(1.0)
        .await
        .unwrap();
    assert_eq!(sub.value(), 1.0, "{:?}", sub.info());
    assert_eq!(sub.info().unwrap()["_parameters"]["launcher"], "nsenter");
    // The same check on the host fails: it is the sandbox's view that passed.
    let host = grader_core::BashGrader::new(&check)
        .cwd(&root)
        .login_shell(false)
        .grade(1.0)
        .await
        .unwrap();
    assert_eq!(host.value(), 0.0);

    // Its limits hold inside the sandbox.
    let hog = workspace
        .bash("ulimit -S -v 3000000; python3 -c '\nchunks = []\nwhile True: chunks.append(bytearray(32 << 20))'")
        .await
        .unwrap()
        .login_shell(false)
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

    // What the grader detaches ends with its grade; the agent's server is the workspace's.
    let sub = workspace
        .bash(&format!("setsid -f sleep {graders}; true"))
        .await
        .unwrap()
        .login_shell(false)
        .grade(1.0)
        .await
        .unwrap();
    assert_eq!(sub.value(), 1.0, "{:?}", sub.info());
    assert_eq!(sleeping_after(&graders, Duration::from_secs(5)), 0);
    assert_eq!(
        sleeping(&agents),
        1,
        "the agent's process is not the grader's to stop"
    );

    workspace.stop().await;
    assert_eq!(sleeping_after(&agents, Duration::from_secs(5)), 0);
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
