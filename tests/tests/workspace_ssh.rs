//! The workspace's SSH server driven by hud 0.6.21's own `SSHClient` (the client hud's agents
//! use) and by OpenSSH's `ssh`: exec with both streams and the exit status or signal, stdin,
//! the cwd, env requests, concurrent sessions; what a session cannot see or reach (`HUD_*`
//! variables, host directories, the host's 127.0.0.1, the host's processes); and that nothing
//! a session started, detached or not, outlives the workspace (checked from the host).
//!
//! Every command a session runs is bounded by the client (60 s); every wait on the host is a
//! bounded loop.

#![allow(clippy::unwrap_used)] // a test that cannot unwrap has failed

use grader_tests::child::{self, Bounded as _};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use grader_env::workspace::{Isolation, Workspace, WorkspaceError};
use grader_env::{Capability, Environment, NoArgs, PromptError, ServeConfig, Session, Template};
use grader_tests::driver::Driver;
use grader_tests::python::hud_python;
use grader_tests::sandboxing::{can_sandbox, sleeping};
use serde_json::json;

const TMP: &str = env!("CARGO_TARGET_TMPDIR");

/// hud's `SSHClient`, in a Python process answering one request per line.
struct Agent;

impl Agent {
    fn connect(python: &Path, capability: &Capability, extra: &[&str]) -> Driver {
        Agent::spawn(python, &serde_json::to_string(capability).unwrap(), extra)
    }

    /// `target`: a capability's JSON, or an environment's `tcp://` control channel.
    fn spawn(python: &Path, target: &str, extra: &[&str]) -> Driver {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/ssh_agent.py");
        Driver::spawn(Command::new(python).arg(script).arg(target).args(extra))
    }
}

fn python() -> Option<PathBuf> {
    hud_python(TMP)
}

/// A sandboxed workspace on `root`, or `None` (skip) where bwrap cannot sandbox.
async fn start(root: &Path) -> Option<Workspace> {
    if !can_sandbox() {
        return None;
    }
    let started = Workspace::builder(root)
        .require_isolation(true)
        .start()
        .await;
    Some(started.expect("the workspace starts"))
}

/// A marker no other test uses: a sleep of that many seconds is as good as forever.
fn marker(n: u32) -> String {
    format!("{}{n:02}", 900_000 + std::process::id() % 90_000)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hud_ssh_client_runs_commands_in_the_workspace() {
    let Some(python) = python() else { return };
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("seed.txt"), "from the host\n").unwrap();
    let Some(workspace) = start(root.path()).await else {
        return;
    };
    let cap = workspace.capability();
    assert_eq!(cap.name, "shell");
    assert_eq!(cap.protocol, "ssh/2");
    assert_eq!(
        cap.url,
        format!("ssh://127.0.0.1:{}", workspace.addr().port())
    );
    assert_eq!(cap.params["user"], "agent");
    assert_eq!(cap.params["shell"], "bash");
    assert_eq!(cap.params["cwd"], "/workspace");
    assert_eq!(cap.params["isolation"], "bwrap");
    assert!(
        cap.params["host_pubkey"]
            .as_str()
            .unwrap()
            .starts_with("ssh-ed25519 ")
    );
    assert!(
        cap.params["client_key"]
            .as_str()
            .unwrap()
            .starts_with("-----BEGIN OPENSSH PRIVATE KEY-----")
    );
    let python = python.clone();
    let checks = tokio::task::spawn_blocking(move || {
        let mut agent = Agent::connect(&python, &cap, &[]);
        assert_eq!(agent.greeting, json!({ "connected": true }));

        let both = agent.run("echo out; echo err >&2; exit 3");
        assert_eq!(both["stdout"], "out\n");
        assert_eq!(both["stderr"], "err\n");
        assert_eq!(both["exit_status"], 3);

        let echoed = agent.ask(&json!({ "cmd": "cat; echo .", "input": "line one\nline two\n" }));
        assert_eq!(echoed["stdout"], "line one\nline two\n.\n");

        assert_eq!(agent.stdout("pwd"), "/workspace\n");
        assert_eq!(agent.stdout("cat seed.txt"), "from the host\n");

        let env =
            agent.ask(&json!({ "cmd": "echo \"$GREETING\"", "env": { "GREETING": "hi there" } }));
        assert_eq!(env["stdout"], "hi there\n");

        let killed = agent.run("kill -KILL $$");
        assert_eq!(killed["exit_signal"], "KILL", "{killed}");

        // hud's file helpers (`cat > path`, `cat -- path`, `ls -1A`).
        agent.run("mkdir -p notes");
        agent.ask(&json!({ "op": "write", "path": "notes/a.txt", "content": "" }));
        assert_eq!(agent.stdout("wc -c < notes/a.txt"), "0\n");
        agent.ask(&json!({ "op": "write", "path": "notes/a.txt", "content": "é\nbody\n" }));
        let read = agent.ask(&json!({ "op": "read", "path": "/workspace/notes/a.txt" }));
        assert_eq!(read["content"], "é\nbody\n");
        let names = agent.ask(&json!({ "op": "listdir", "path": "." }));
        assert_eq!(names["names"], json!(["notes", "seed.txt"]));

        let cmds: Vec<String> = (0..24)
            .map(|i| format!("echo {i}; echo e{i} >&2"))
            .collect();
        let parallel = agent.ask(&json!({ "op": "parallel", "cmds": cmds }));
        for (i, result) in parallel["results"].as_array().unwrap().iter().enumerate() {
            assert_eq!(result["stdout"], format!("{i}\n"));
            assert_eq!(result["stderr"], format!("e{i}\n"));
        }
    })
    .await;
    assert_eq!(
        std::fs::read_to_string(root.path().join("notes/a.txt")).unwrap(),
        "é\nbody\n",
        "the agent's write lands in the root on the host"
    );
    workspace.stop().await;
    checks.unwrap();
}

/// Run with `HUD_API_KEY` in the serving process's environment, by
/// `sessions_never_see_hud_variables`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inner_sessions_see_no_hud_variable() {
    if std::env::var_os("GRADER_WORKSPACE_INNER").is_none() {
        return;
    }
    assert_eq!(
        std::env::var("HUD_API_KEY").as_deref(),
        Ok("sk-test-secret")
    );
    let Some(python) = python() else { return };
    let root = tempfile::tempdir().unwrap();
    let workspace = Workspace::builder(root.path())
        .env("TASK_FLAG", "set by the task")
        .start()
        .await
        .unwrap();
    let cap = workspace.capability();
    let seen = tokio::task::spawn_blocking(move || {
        let mut agent = Agent::connect(&python, &cap, &[]);
        (
            agent.stdout("env"),
            agent.stdout("cat /proc/self/environ | tr '\\0' '\\n'"),
        )
    })
    .await;
    workspace.stop().await;
    let (env, environ) = seen.unwrap();
    assert!(!env.contains("HUD_"), "{env}");
    assert!(!environ.contains("sk-test-secret"), "{environ}");
    assert!(env.contains("TASK_FLAG=set by the task"), "{env}");
    assert!(
        env.contains("GRADER_WORKSPACE_INNER=1"),
        "the rest passes through: {env}"
    );
}

#[test]
fn sessions_never_see_hud_variables() {
    if std::env::var_os("GRADER_WORKSPACE_INNER").is_some() {
        return;
    }
    let status = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "inner_sessions_see_no_hud_variable",
            "--nocapture",
        ])
        .env("GRADER_WORKSPACE_INNER", "1")
        .env("HUD_API_KEY", "sk-test-secret")
        .status_bounded();
    assert!(status.success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_cannot_reach_the_host() {
    let Some(python) = python() else { return };
    let root = tempfile::tempdir().unwrap();
    // Stands for the environment's control channel: a port on the host's 127.0.0.1.
    let control = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = control.local_addr().unwrap().port();
    let secret_dir = tempfile::tempdir().unwrap();
    std::fs::write(secret_dir.path().join("secret"), "host only").unwrap();
    let secret = secret_dir.path().join("secret");

    let Some(isolated) = start(root.path()).await else {
        return;
    };
    let open = Workspace::builder(root.path())
        .network(true)
        .start()
        .await
        .unwrap();
    let (cap, open_cap) = (isolated.capability(), open.capability());
    let ssh_port = isolated.addr().port();
    let (python2, secret2) = (python.clone(), secret.clone());
    let checks = tokio::task::spawn_blocking(move || {
        let mut agent = Agent::connect(&python2, &cap, &[]);
        let reach = format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo reached");
        let control = agent.run(&reach);
        assert_ne!(
            control["exit_status"], 0,
            "the control port answered: {control}"
        );
        let own = agent.run(&format!(
            "exec 3<>/dev/tcp/127.0.0.1/{ssh_port} && echo reached"
        ));
        assert_ne!(
            own["exit_status"], 0,
            "the SSH port answered from inside: {own}"
        );
        let hidden = agent.run(&format!("cat {}", secret2.display()));
        assert_ne!(hidden["exit_status"], 0, "{hidden}");
        assert_eq!(
            agent.stdout("ls /"),
            "bin\ndev\netc\nlib\nlib64\nproc\nrun\nsbin\ntmp\nusr\nworkspace\n"
        );
        let home = agent.run("ls /root /home /var");
        assert_ne!(home["exit_status"], 0, "{home}");
        // Its own PID namespace: bwrap's init is PID 1 and only the sandbox's processes exist.
        assert_eq!(agent.stdout("cat /proc/1/comm"), "bwrap\n");
        let pids = agent.stdout("ls /proc | grep -c '^[0-9]'");
        let count: u32 = pids.trim().parse().unwrap();
        assert!(count < 10, "{count} processes visible");
        let up = agent.stdout("touch /tmp/x && ls -d /tmp && test ! -w /usr && echo ro");
        assert_eq!(up, "/tmp\nro\n");

        // With the network allowed, the same command reaches the port: the refusal above is
        // the sandbox's, not the test's.
        let mut open_agent = Agent::connect(&python2, &open_cap, &[]);
        assert_eq!(open_agent.stdout(&reach), "reached\n");
    })
    .await;
    isolated.stop().await;
    open.stop().await;
    checks.unwrap();
    drop(control);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nothing_a_session_started_outlives_the_workspace() {
    let Some(python) = python() else { return };
    let root = tempfile::tempdir().unwrap();
    let Some(workspace) = start(root.path()).await else {
        return;
    };
    let cap = workspace.capability();
    let marks: Vec<String> = (0..4).map(marker).collect();
    let escapes = format!(
        "setsid -f sleep {a}; nohup sleep {b} >/dev/null 2>&1 & (sleep {c} &) ; \
         (setsid sleep {d} </dev/null >/dev/null 2>&1 &) ; echo started",
        a = marks[0],
        b = marks[1],
        c = marks[2],
        d = marks[3]
    );
    let python2 = python.clone();
    let cap2 = cap.clone();
    let started = tokio::task::spawn_blocking(move || {
        let mut agent = Agent::connect(&python2, &cap2, &[]);
        let reply = agent.run(&escapes);
        // The background sleeps hold no output open but the one of `(sleep &)`.
        assert_eq!(reply["stdout"], "started\n", "{reply}");
        agent.stdout("echo still serving")
    })
    .await
    .unwrap();
    assert_eq!(started, "still serving\n");
    for mark in &marks {
        assert_eq!(sleeping(mark), 1, "sleep {mark} runs, seen from the host");
    }

    // A grader's command joins the sandbox: it sees what the agent left running.
    let seen = workspace
        .run("cat /proc/[0-9]*/cmdline | tr '\\0' ' ' | grep -oE 'sleep 9[0-9]{7}' | sort")
        .await
        .unwrap();
    assert!(seen.status.success(), "{seen:?}");
    let mut expected: Vec<String> = marks.iter().map(|m| format!("sleep {m}\n")).collect();
    expected.sort();
    assert_eq!(String::from_utf8_lossy(&seen.stdout), expected.concat());
    let pwd = workspace.run("pwd; exit 3").await.unwrap();
    assert_eq!(
        (pwd.stdout.as_slice(), pwd.status.code()),
        (&b"/workspace\n"[..], Some(3))
    );

    // Between tasks: the sandbox goes, everything in it with it, and the server keeps serving.
    workspace.discard_sandbox().await;
    for mark in &marks {
        assert_eq!(sleeping(mark), 0, "sleep {mark} survived discard_sandbox");
    }
    let python2 = python.clone();
    let again = tokio::task::spawn_blocking(move || {
        let mut agent = Agent::connect(&python2, &cap, &[]);
        let reply = agent.run(&format!(
            "setsid -f sleep {}; ls /proc | grep -c '^[0-9]'",
            marker(9)
        ));
        reply["stdout"]
            .as_str()
            .unwrap()
            .trim()
            .parse::<u32>()
            .unwrap()
    })
    .await
    .unwrap();
    assert!(again < 10, "a fresh sandbox: {again} processes");
    assert_eq!(sleeping(&marker(9)), 1);
    workspace.stop().await;
    assert_eq!(
        sleeping(&marker(9)),
        0,
        "a detached process outlived stop()"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_workspace_ends_its_processes() {
    let Some(python) = python() else { return };
    let root = tempfile::tempdir().unwrap();
    let Some(workspace) = start(root.path()).await else {
        return;
    };
    let cap = workspace.capability();
    let mark = marker(20);
    let cmd = format!("setsid -f sleep {mark}; echo ok");
    let reply =
        tokio::task::spawn_blocking(move || Agent::connect(&python, &cap, &[]).stdout(&cmd))
            .await
            .unwrap();
    assert_eq!(reply, "ok\n");
    assert_eq!(sleeping(&mark), 1);
    drop(workspace);
    // Drop cannot wait: the kernel ends the namespace's processes just after.
    let mut left = 1;
    for _ in 0..200 {
        left = sleeping(&mark);
        if left == 0 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    assert_eq!(left, 0, "a detached process outlived the dropped workspace");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_the_published_key_logs_in() {
    let Some(python) = python() else { return };
    let root = tempfile::tempdir().unwrap();
    let Some(workspace) = start(root.path()).await else {
        return;
    };
    let cap = workspace.capability();
    let greeting = tokio::task::spawn_blocking(move || {
        Agent::connect(&python, &cap, &["wrong-key"])
            .greeting
            .clone()
    })
    .await
    .unwrap();
    workspace.stop().await;
    let error = greeting["connect_error"].as_str().unwrap_or_default();
    assert!(error.contains("PermissionDenied"), "{greeting}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openssh_connects_with_the_published_keys() {
    let Some(ssh) = ["/usr/bin/ssh", "/bin/ssh"]
        .into_iter()
        .find(|p| Path::new(p).is_file())
    else {
        assert!(
            std::env::var_os("CI").is_none(),
            "ssh (openssh-client) is required under CI"
        );
        eprintln!("skipping: ssh is not installed");
        return;
    };
    let root = tempfile::tempdir().unwrap();
    let keys = tempfile::tempdir().unwrap();
    let Some(workspace) = start(root.path()).await else {
        return;
    };
    let key = keys.path().join("id");
    std::fs::write(&key, workspace.client_key()).unwrap();
    std::fs::set_permissions(&key, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let known = keys.path().join("known_hosts");
    let port = workspace.addr().port();
    std::fs::write(
        &known,
        format!("[127.0.0.1]:{port} {}\n", workspace.host_pubkey()),
    )
    .unwrap();
    let args = |extra: &[&str]| -> Vec<String> {
        let mut args: Vec<String> = [
            "-F",
            "/dev/null",
            "-o",
            "BatchMode=yes",
            "-o",
            "StrictHostKeyChecking=yes",
            "-o",
            "ConnectTimeout=30",
            "-o",
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
        args.push(format!("UserKnownHostsFile={}", known.display()));
        args.extend(["-p".to_owned(), port.to_string()]);
        args.extend(extra.iter().map(|s| (*s).to_owned()));
        args
    };
    let key_arg = key.to_string_lossy().into_owned();
    let run = |extra: Vec<String>, input: &'static [u8]| {
        tokio::task::spawn_blocking(move || {
            let mut child = Command::new(ssh)
                .args(extra)
                .env("TERM", "xterm-test")
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            child.stdin.take().unwrap().write_all(input).unwrap();
            child::wait_with_output(child, "ssh")
        })
    };
    let out = run(
        args(&[
            "-i",
            &key_arg,
            "agent@127.0.0.1",
            "read l; echo \"$l\"; pwd; echo e >&2; exit 4",
        ]),
        b"typed\n",
    )
    .await
    .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "typed\n/workspace\n");
    assert!(String::from_utf8_lossy(&out.stderr).contains('e'));
    assert_eq!(out.status.code(), Some(4));

    // A shell request without a terminal: commands come on stdin.
    let shell = run(
        args(&["-T", "-i", &key_arg, "agent@127.0.0.1"]),
        b"echo from-shell; exit 5\n",
    )
    .await
    .unwrap();
    assert_eq!(String::from_utf8_lossy(&shell.stdout), "from-shell\n");
    assert_eq!(shell.status.code(), Some(5));

    // A terminal (`-tt`): the command's streams are a tty that is its controlling terminal,
    // and TERM is the client's.
    let tty = run(
        args(&[
            "-tt",
            "-i",
            &key_arg,
            "agent@127.0.0.1",
            "test -t 0 && test -t 1 && echo tty; echo $TERM; echo ctty >/dev/tty; exit 6",
        ]),
        b"",
    )
    .await
    .unwrap();
    let text = String::from_utf8_lossy(&tty.stdout).replace("\r\n", "\n");
    assert_eq!(text, "tty\nxterm-test\nctty\n", "{tty:?}");
    assert_eq!(tty.status.code(), Some(6));

    // A login shell on a terminal, typed into.
    let shell = run(
        args(&["-tt", "-i", &key_arg, "agent@127.0.0.1"]),
        b"echo in-$((6*7)); exit 7\n",
    )
    .await
    .unwrap();
    assert!(
        String::from_utf8_lossy(&shell.stdout).contains("in-42"),
        "{shell:?}"
    );
    assert_eq!(shell.status.code(), Some(7));

    // Another key is refused.
    let other = keys.path().join("other");
    let made = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-f"])
        .arg(&other)
        .status();
    if made.is_ok_and(|s| s.success()) {
        let other = other.to_string_lossy().into_owned();
        let refused = run(args(&["-i", &other, "agent@127.0.0.1", "true"]), b"")
            .await
            .unwrap();
        assert_eq!(refused.status.code(), Some(255));
        assert!(String::from_utf8_lossy(&refused.stderr).contains("Permission denied"));
    }
    workspace.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unsandboxed_sessions_say_so_and_run_in_the_real_root() {
    let root = tempfile::tempdir().unwrap();
    let refused = Workspace::builder(root.path())
        .sandboxed(false)
        .require_isolation(true)
        .start()
        .await;
    assert!(
        matches!(refused, Err(WorkspaceError::IsolationUnavailable { .. })),
        "{refused:?}"
    );
    let workspace = Workspace::builder(root.path())
        .sandboxed(false)
        .start()
        .await
        .unwrap();
    assert_eq!(workspace.isolation(), Isolation::None);
    let cap = workspace.capability();
    assert_eq!(cap.params["isolation"], "none");
    let real = std::fs::canonicalize(root.path()).unwrap();
    assert_eq!(cap.params["cwd"], real.to_string_lossy().as_ref());
    let Some(python) = python() else { return };
    let pwd =
        tokio::task::spawn_blocking(move || Agent::connect(&python, &cap, &[]).stdout("pwd")).await;
    workspace.stop().await;
    assert_eq!(pwd.unwrap(), format!("{}\n", real.display()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_relative_guest_path_is_refused_with_the_value() {
    let root = tempfile::tempdir().unwrap();
    let error = Workspace::builder(root.path())
        .guest_path("workspace")
        .start()
        .await
        .unwrap_err();
    assert!(error.to_string().contains("\"workspace\""), "{error}");
    for bad in ["/", "/a/../etc", "/./w"] {
        let error = Workspace::builder(root.path())
            .guest_path(bad)
            .start()
            .await
            .unwrap_err();
        assert!(
            matches!(error, WorkspaceError::GuestPath(ref p) if p == bad),
            "{error}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_environment_publishes_its_workspace_and_each_task_end_clears_it() {
    let Some(python) = python() else { return };
    if !can_sandbox() {
        return;
    }
    let root = tempfile::tempdir().unwrap();
    let env = Environment::new("coding")
        .workspace(root.path())
        .template(Template::new(
            "fix",
            |_: NoArgs, session: Session| async move {
                let answer = session.prompt("Fix it.").await?;
                Ok::<_, PromptError>(answer == "done")
            },
        ))
        .unwrap();
    let server = env.bind(&ServeConfig::default()).await.unwrap();
    let url = format!("tcp://{}", server.local_addr());
    let (first, second) = (marker(30), marker(31));
    let (mark1, mark2) = (first.clone(), second.clone());
    let seen = tokio::task::spawn_blocking(move || {
        // A rollout's agent: hud.connect, hello, open("shell") through the control channel.
        let mut agent = Agent::spawn(&python, &url, &[]);
        let greeting = agent.greeting.clone();
        let prompt = agent.ask(&json!({ "op": "start", "id": "fix" }));
        assert_eq!(agent.stdout("pwd"), "/workspace\n");
        agent.stdout(&format!("setsid -f sleep {mark1}; echo fixed > fix.txt"));
        let running = sleeping(&mark1);
        let grade = agent.ask(&json!({ "op": "grade", "answer": "done" }));
        // Teardown may finish just after the grade's reply.
        let mut left = 1;
        for _ in 0..200 {
            left = sleeping(&mark1);
            if left == 0 {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(25));
        }
        // The task's end closed the agent's connection and took its key: the old connection
        // runs nothing.
        let closed = agent.try_ask(&json!({ "cmd": "echo still here" }));
        // The next task's agent finds a fresh sandbox; what it leaves goes with the server.
        agent.ask(&json!({ "op": "start", "id": "fix" }));
        agent.ask(&json!({ "op": "reconnect" }));
        agent.stdout(&format!("setsid -f sleep {mark2}"));
        let fresh = agent.stdout("ls /proc | grep -c '^[0-9]'");
        (
            greeting,
            prompt,
            running,
            grade,
            left,
            fresh,
            sleeping(&mark2),
            closed,
        )
    })
    .await
    .unwrap();
    server.shutdown().await;
    let (greeting, prompt, running, grade, left, fresh, second_running, closed) = seen;
    assert!(
        closed.get("error").is_some() || closed["stdout"] != "still here\n",
        "a connection outlived its task: {closed}"
    );
    assert_eq!(greeting["connected"], true, "{greeting}");
    let binding = &greeting["binding"];
    assert_eq!(binding["protocol"], "ssh/2");
    assert_eq!(binding["name"], "shell");
    assert_eq!(binding["params"]["cwd"], "/workspace");
    assert_eq!(binding["params"]["isolation"], "bwrap");
    assert_eq!(binding["params"]["user"], "agent");
    assert!(prompt["prompt"].to_string().contains("Fix it."), "{prompt}");
    assert_eq!(running, 1, "the detached sleep ran during the task");
    assert_eq!(grade["grade"]["score"].as_f64(), Some(1.0), "{grade}");
    assert_eq!(left, 0, "a detached process outlived its graded task");
    assert!(fresh.trim().parse::<u32>().unwrap() < 10, "{fresh}");
    assert_eq!(second_running, 1);
    assert_eq!(
        sleeping(&second),
        0,
        "a detached process outlived the server"
    );
    assert_eq!(
        std::fs::read_to_string(root.path().join("fix.txt")).unwrap(),
        "fixed\n",
        "the files stay"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_peers_do_not_stop_the_server_serving() {
    let Some(python) = python() else { return };
    let root = tempfile::tempdir().unwrap();
    let Some(workspace) = start(root.path()).await else {
        return;
    };
    let cap = workspace.capability();
    let addr = workspace.addr();
    let seen = tokio::task::spawn_blocking(move || {
        // A peer that connects and never sends, one that sends garbage, one that hangs up
        // halfway through its version line.
        let silent = std::net::TcpStream::connect(addr).unwrap();
        let mut garbage = std::net::TcpStream::connect(addr).unwrap();
        let _ = garbage.write_all(&[0xff; 4096]);
        let mut halfway = std::net::TcpStream::connect(addr).unwrap();
        let _ = halfway.write_all(b"SSH-2.0-");
        drop(halfway);
        let mut agent = Agent::connect(&python, &cap, &[]);
        // 100 MB of output, through the client's window, to the last byte.
        let big = agent.ask(&json!({ "op": "run_len", "cmd": "head -c 100000000 /dev/zero" }));
        let after = agent.stdout("echo still serving");
        // An agent that kills everything it can see (its sandbox's holder included) gets a
        // fresh sandbox on its next command.
        agent.run("kill -KILL -1");
        assert_eq!(agent.stdout("cat /proc/1/comm"), "bwrap\n");
        drop((silent, garbage));
        (big, after)
    })
    .await
    .unwrap();
    workspace.stop().await;
    assert_eq!(seen.0["stdout_len"], 100_000_000, "{}", seen.0);
    assert_eq!(seen.0["exit_status"], 0);
    assert_eq!(seen.1, "still serving\n");
}

/// Accepts only the host key the workspace published.
struct Pinned(russh::keys::PublicKey);

impl russh::client::Handler for Pinned {
    type Error = russh::Error;

    async fn check_server_key(
        &mut self,
        offered: &russh::keys::PublicKeyOrCertificate,
    ) -> Result<bool, Self::Error> {
        Ok(matches!(
            offered,
            russh::keys::PublicKeyOrCertificate::PublicKey { key, .. }
                if key.key_data() == self.0.key_data()
        ))
    }
}

/// Logs in to the workspace with the published keys.
async fn log_in(workspace: &Workspace) -> russh::client::Handle<Pinned> {
    let cap = workspace.capability();
    let param = |key: &str| cap.params[key].as_str().unwrap().to_owned();
    let host_key = russh::keys::PublicKey::from_openssh(&param("host_pubkey")).unwrap();
    let client_key = russh::keys::decode_secret_key(&param("client_key"), None).unwrap();
    let config = std::sync::Arc::new(russh::client::Config::default());
    let mut handle = russh::client::connect(config, workspace.addr(), Pinned(host_key))
        .await
        .unwrap();
    let key = russh::keys::PrivateKeyWithHashAlg::new(std::sync::Arc::new(client_key), None);
    let auth = handle
        .authenticate_publickey(param("user"), key)
        .await
        .unwrap();
    assert!(auth.success(), "the published key logs in");
    handle
}

/// Runs `command` on a new session of `handle`; its stdout and exit status.
async fn exec(handle: &russh::client::Handle<Pinned>, command: &str) -> (String, Option<u32>) {
    let mut channel = handle.channel_open_session().await.unwrap();
    channel.exec(true, command).await.unwrap();
    channel.eof().await.unwrap();
    let (mut stdout, mut status) = (Vec::new(), None);
    while let Some(message) = channel.wait().await {
        match message {
            russh::ChannelMsg::Data { data } => stdout.extend_from_slice(&data),
            russh::ChannelMsg::ExitStatus { exit_status } => status = Some(exit_status),
            _ => {}
        }
    }
    (String::from_utf8_lossy(&stdout).into_owned(), status)
}

/// A client that asks for 10 000 sessions on one connection and holds what it gets: past the
/// cap per connection (64) each is refused, the sessions it holds still run commands, and
/// another client is served meanwhile and after it hangs up.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_asking_for_10000_sessions_is_bounded_and_the_server_keeps_serving() {
    let root = tempfile::tempdir().unwrap();
    let Some(workspace) = start(root.path()).await else {
        return;
    };
    let checked = tokio::time::timeout(std::time::Duration::from_secs(300), async {
        let greedy = log_in(&workspace).await;
        let mut held = Vec::new();
        let mut refused = 0;
        for _ in 0..10_000 {
            match greedy.channel_open_session().await {
                Ok(channel) => held.push(channel),
                Err(_) => refused += 1,
            }
        }
        assert_eq!(held.len(), 64, "the cap on sessions per connection");
        assert_eq!(refused, 10_000 - 64);
        // Twenty of the held sessions run a command each, at once.
        let runs = held
            .drain(..20)
            .enumerate()
            .map(|(i, mut channel)| async move {
                channel.exec(true, format!("echo {i}")).await.unwrap();
                channel.eof().await.unwrap();
                let (mut stdout, mut status) = (Vec::new(), None);
                while let Some(message) = channel.wait().await {
                    match message {
                        russh::ChannelMsg::Data { data } => stdout.extend_from_slice(&data),
                        russh::ChannelMsg::ExitStatus { exit_status } => status = Some(exit_status),
                        _ => {}
                    }
                }
                (String::from_utf8_lossy(&stdout).into_owned(), status)
            });
        let outputs = futures_util::future::join_all(runs).await;
        for (i, (stdout, status)) in outputs.into_iter().enumerate() {
            assert_eq!((stdout, status), (format!("{i}\n"), Some(0)));
        }
        let other = log_in(&workspace).await;
        assert_eq!(
            exec(&other, "echo still serving").await,
            ("still serving\n".to_owned(), Some(0))
        );
        drop(held);
        let _ = greedy
            .disconnect(russh::Disconnect::ByApplication, "", "en")
            .await;
        drop(greedy);
        assert_eq!(
            exec(&other, "echo after").await,
            ("after\n".to_owned(), Some(0))
        );
    })
    .await;
    workspace.stop().await;
    checked.expect("500 sessions and the commands on them within 5 minutes");
}

/// Reads `channel` until its stdout holds `want`; everything it read.
async fn read_until(channel: &mut russh::Channel<russh::client::Msg>, want: &str) -> String {
    let mut stdout = Vec::new();
    while !String::from_utf8_lossy(&stdout).contains(want) {
        match channel.wait().await {
            Some(russh::ChannelMsg::Data { data }) => stdout.extend_from_slice(&data),
            Some(_) => {}
            None => break,
        }
    }
    String::from_utf8_lossy(&stdout).into_owned()
}

/// A `signal` request reaches the session's command (not the program that put it in the
/// sandbox): a trapped TERM runs its handler, a KILL ends it with `exit-signal`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_signal_request_reaches_the_command() {
    let root = tempfile::tempdir().unwrap();
    let Some(workspace) = start(root.path()).await else {
        return;
    };
    tokio::time::timeout(std::time::Duration::from_secs(60), async {
        let handle = log_in(&workspace).await;
        let mut trapped = handle.channel_open_session().await.unwrap();
        trapped
            .exec(
                true,
                "trap 'echo got TERM; exit 7' TERM; echo ready; while :; do sleep 0.1; done",
            )
            .await
            .unwrap();
        read_until(&mut trapped, "ready").await;
        trapped.signal(russh::Sig::TERM).await.unwrap();
        let (mut rest, mut status) = (String::new(), None);
        while let Some(message) = trapped.wait().await {
            match message {
                russh::ChannelMsg::Data { data } => rest.push_str(&String::from_utf8_lossy(&data)),
                russh::ChannelMsg::ExitStatus { exit_status } => status = Some(exit_status),
                _ => {}
            }
        }
        assert_eq!((rest.as_str(), status), ("got TERM\n", Some(7)));

        let mut killed = handle.channel_open_session().await.unwrap();
        killed
            .exec(true, "echo ready; exec sleep 100000")
            .await
            .unwrap();
        read_until(&mut killed, "ready").await;
        killed.signal(russh::Sig::KILL).await.unwrap();
        let mut ended_by = None;
        while let Some(message) = killed.wait().await {
            if let russh::ChannelMsg::ExitSignal { signal_name, .. } = message {
                ended_by = Some(signal_name);
            }
        }
        assert!(matches!(ended_by, Some(russh::Sig::KILL)), "{ended_by:?}");
    })
    .await
    .unwrap();
    workspace.stop().await;
}

/// The host processes whose mounts show `path` (a sandbox with the root bound): none once a
/// workspace is gone.
fn sandboxes_of(path: &Path) -> usize {
    let needle = path.to_string_lossy().into_owned();
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|entry| entry.file_name().to_string_lossy().parse::<u32>().is_ok())
        .filter(|entry| {
            std::fs::read_to_string(entry.path().join("mountinfo"))
                .is_ok_and(|mounts| mounts.contains(&needle))
        })
        .count()
}

/// A start stopped at any moment (its future dropped while bwrap builds the sandbox, waits for
/// it, or joins its network) leaves no process: bwrap is stopped, what it started killed, its
/// cgroup emptied.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_start_stopped_at_any_moment_leaves_no_sandbox() {
    if !can_sandbox() {
        return;
    }
    let root = tempfile::tempdir().unwrap();
    let (mut dropped, mut started) = (0, 0);
    for i in 0..24u64 {
        let start = Workspace::builder(root.path())
            .require_isolation(true)
            .allowed_hosts(["pypi.org"])
            .start();
        match tokio::time::timeout(std::time::Duration::from_millis(i * 3), start).await {
            Ok(workspace) => {
                workspace.unwrap().stop().await;
                started += 1;
            }
            Err(_) => dropped += 1,
        }
    }
    assert!(dropped > 0, "{started} started, none was stopped half-way");
    let mut left = sandboxes_of(root.path());
    for _ in 0..200 {
        if left == 0 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(25));
        left = sandboxes_of(root.path());
    }
    assert_eq!(
        left, 0,
        "sandboxes outlived their start ({dropped} stopped half-way)"
    );
}

/// A root that already holds a tree 10 000 directories deep when the workspace starts: it
/// starts (its file tracking's baseline says what it cannot track), and serves.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_root_ten_thousand_deep_at_start_is_served() {
    let root = tempfile::tempdir().unwrap();
    {
        use rustix::fs::{Mode, OFlags};
        let mut dir = rustix::fs::open(
            root.path(),
            OFlags::DIRECTORY | OFlags::RDONLY,
            Mode::empty(),
        )
        .unwrap();
        for _ in 0..10_000 {
            rustix::fs::mkdirat(&dir, "d", Mode::from_raw_mode(0o755)).unwrap();
            dir = rustix::fs::openat(&dir, "d", OFlags::DIRECTORY | OFlags::RDONLY, Mode::empty())
                .unwrap();
        }
    }
    let workspace = Workspace::builder(root.path())
        .track_files(true)
        .start()
        .await
        .expect("a deep root starts");
    assert!(workspace.file_tracking_capability().is_some());
    let out = workspace.run("ls").await.unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "d\n");
    workspace.stop().await;
    grader_env::workspace::Root::open(root.path())
        .unwrap()
        .clear()
        .unwrap();
}
