//! The `coding_env` example served as hud runs it (a real process, its port line read), its
//! workspace driven over SSH by hud 0.6.21's own client (`hud.connect`, `client.open("shell")`
//! through the control channel's tunnel, `SSHClient`) and by the `coding_agent` example's Rust
//! client: every check of an agent's session (the binding's params, exec with its exit status
//! and both streams, stdin, the cwd, no `HUD_*` variables, host directories hidden, the
//! control channel unreachable, its own PID namespace, nothing left running after the task,
//! seen from the host), and `fix-tests` graded on what was done over SSH alone.
//!
//! Skips, saying why, where bwrap cannot sandbox or python3 is missing; under CI both are
//! failures. Every command a session runs is bounded by the client (60 s); every wait on the
//! host is a bounded loop.
#![allow(missing_docs, clippy::unwrap_used)] // a test that cannot unwrap has failed

mod support;

use support::{coding_agent, examples_dir};

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use grader_tests::driver::Driver;
use grader_tests::env_process::EnvProcess;
use grader_tests::python::hud_python;
use grader_tests::sandboxing::{can_sandbox, sleeping};
use serde_json::json;

/// The example served, with a secret `HUD_*` variable in its environment.
fn serve(dir: &Path) -> EnvProcess {
    let mut command = Command::new(dir.join("coding_env"));
    command
        .env("HUD_API_KEY", "sk-served-secret")
        .env("HUD_ENV_MARK", "from-the-server");
    EnvProcess::spawn(command, Duration::from_secs(60))
}

/// A marker no other test uses: a sleep of that many seconds is as good as forever.
fn marker(n: u32) -> String {
    format!("{}{n:02}", 800_000 + std::process::id() % 90_000)
}

/// hud 0.6.21's client and `SSHClient` in a Python process answering one request per line.
struct HudAgent;

impl HudAgent {
    fn connect(python: &Path, port: u16) -> Driver {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data/ssh_agent.py");
        Driver::spawn(
            Command::new(python)
                .arg(script)
                .arg(format!("tcp://127.0.0.1:{port}")),
        )
    }
}

/// Waits (at most 5 s) for no host process to sleep for `mark`; returns how many still do.
fn gone(mark: &str) -> usize {
    let mut left = sleeping(mark);
    for _ in 0..200 {
        if left == 0 {
            break;
        }
        std::thread::sleep(Duration::from_millis(25));
        left = sleeping(mark);
    }
    left
}

#[test]
fn hud_client_works_and_is_graded_in_the_served_workspace() {
    let Some(python) = hud_python(env!("CARGO_TARGET_TMPDIR")) else {
        return;
    };
    if !can_sandbox() {
        return;
    }
    let dir = examples_dir();
    let served = serve(&dir);
    let port = served.port;
    // A host directory the agent must not see.
    let host = tempfile::tempdir().unwrap();
    std::fs::write(host.path().join("secret"), "host only\n").unwrap();
    let secret = host.path().join("secret");

    let mut agent = HudAgent::connect(&python, port);
    assert_eq!(agent.greeting["connected"], true, "{}", agent.greeting);
    // The binding's params, as hello published them.
    let binding = &agent.greeting["binding"];
    assert_eq!(binding["name"], "shell");
    assert_eq!(binding["protocol"], "ssh/2");
    assert!(
        binding["url"]
            .as_str()
            .unwrap()
            .starts_with("ssh://127.0.0.1:"),
        "{binding}"
    );
    let params = &binding["params"];
    assert_eq!(params["user"], "agent");
    assert_eq!(params["shell"], "bash");
    assert_eq!(params["cwd"], "/workspace");
    assert_eq!(params["isolation"], "bwrap");
    assert!(
        params["host_pubkey"]
            .as_str()
            .unwrap()
            .starts_with("ssh-ed25519 "),
        "{params}"
    );
    assert!(
        params["client_key"]
            .as_str()
            .unwrap()
            .starts_with("-----BEGIN OPENSSH PRIVATE KEY-----"),
        "{params}"
    );
    let ssh_port = binding["url"]
        .as_str()
        .unwrap()
        .rsplit_once(':')
        .unwrap()
        .1
        .to_owned();

    let prompt = agent.ask(&json!({ "op": "start", "id": "fix-tests" }));
    let text = prompt["prompt"].to_string();
    assert!(text.contains("Make the checkout tests pass"), "{prompt}");

    // Exec: both streams and the exit status.
    let both = agent.run("echo out; echo err >&2; exit 3");
    assert_eq!(
        (&both["stdout"], &both["stderr"], &both["exit_status"]),
        (&json!("out\n"), &json!("err\n"), &json!(3)),
        "{both}"
    );
    // Stdin.
    let echoed = agent.ask(&json!({ "cmd": "cat; echo .", "input": "line one\nline two\n" }));
    assert_eq!(echoed["stdout"], "line one\nline two\n.\n");
    // The cwd: the checkout, at the binding's cwd.
    assert_eq!(agent.stdout("pwd"), "/workspace\n");
    assert_eq!(
        agent.stdout("ls -A . tests"),
        ".:\ncheckout.py\ntests\n\ntests:\ntest_checkout.py\n"
    );
    let failing = agent.run("python3 -m unittest -q tests/test_checkout.py");
    assert_ne!(failing["exit_status"], 0, "the checkout's test fails first");

    // No HUD_* variable, in the session's environment or its process's.
    let env = agent.stdout("env");
    assert!(!env.contains("HUD_"), "{env}");
    let environ = agent.stdout("cat /proc/self/environ | tr '\\0' '\\n'");
    assert!(!environ.contains("sk-served-secret"), "{environ}");
    assert!(!environ.contains("from-the-server"), "{environ}");

    // Host directories hidden: only the system mounts and the checkout.
    let hidden = agent.run(&format!("cat {}", secret.display()));
    assert_ne!(hidden["exit_status"], 0, "{hidden}");
    assert_eq!(
        agent.stdout("ls /"),
        "bin\ndev\netc\nlib\nlib64\nproc\nrun\nsbin\ntmp\nusr\nworkspace\n"
    );
    let homes = agent.run("ls /root /home /var");
    assert_ne!(homes["exit_status"], 0, "{homes}");

    // The control channel (and the SSH port itself) unreachable from inside.
    for target in [port.to_string(), ssh_port] {
        let reach = agent.run(&format!(
            "exec 3<>/dev/tcp/127.0.0.1/{target} && echo reached"
        ));
        assert_ne!(reach["exit_status"], 0, "port {target} answered: {reach}");
        assert_eq!(reach["stdout"], "", "{reach}");
    }

    // Its one way out is the proxy, which lets through only the package index the example
    // allows: the control channel is refused there too.
    assert_eq!(agent.stdout("echo $https_proxy"), "http://127.0.0.1:3128\n");
    let refused = agent.stdout(&format!(
        "exec 3<>/dev/tcp/127.0.0.1/3128; \
         printf 'CONNECT 127.0.0.1:{port} HTTP/1.1\\r\\nConnection: close\\r\\n\\r\\n' >&3; \
         head -n1 <&3"
    ));
    assert_eq!(refused, "HTTP/1.1 403 Forbidden\r\n");

    // Its own PID namespace: bwrap's init is PID 1, the server's process is not there.
    assert_eq!(agent.stdout("cat /proc/1/comm"), "bwrap\n");
    let count: u32 = agent
        .stdout("ls /proc | grep -c '^[0-9]'")
        .trim()
        .parse()
        .unwrap();
    assert!(count < 10, "{count} processes visible");
    let commands = agent.stdout("cat /proc/[0-9]*/cmdline | tr '\\0' ' '");
    assert!(!commands.contains("coding_env"), "{commands}");

    // A detached process, seen from the host while the task runs.
    let mark = marker(1);
    assert_eq!(
        agent.stdout(&format!("setsid -f sleep {mark}; echo detached")),
        "detached\n"
    );
    assert_eq!(sleeping(&mark), 1, "sleep {mark} runs, seen from the host");

    // The fix, over SSH alone: hud's file helpers (`cat -- path`, `cat > path`).
    let code = agent.ask(&json!({ "op": "read", "path": "checkout.py" }));
    let fixed = code["content"]
        .as_str()
        .unwrap()
        .replace("* discount", "* (1 - discount)");
    agent.ask(&json!({ "op": "write", "path": "checkout.py", "content": fixed }));
    let passing = agent.run("python3 -m unittest -q tests/test_checkout.py");
    assert_eq!(passing["exit_status"], 0, "{passing}");

    let graded = agent.ask(&json!({ "op": "grade", "answer": "done" }));
    let grade = &graded["grade"];
    assert_eq!(grade["score"].as_f64(), Some(1.0), "{grade}");
    assert_eq!(grade["subscores"][0]["name"], "hidden_cases", "{grade}");
    assert_eq!(grade["subscores"][0]["info"]["exit_code"], 0, "{grade}");
    assert_eq!(grade["subscores"][1]["name"], "tests_tampered");
    assert_eq!(grade["subscores"][1]["value"], 0.0);
    // Nothing the agent started outlives its task, seen from the host.
    assert_eq!(
        gone(&mark),
        0,
        "a detached process outlived the graded task"
    );

    // The next task: a fresh checkout, reached with the key of a new hello (the task's end
    // took the last one); the tests emptied over SSH grade below 1.0.
    agent.ask(&json!({ "op": "start", "id": "fix-tests" }));
    agent.ask(&json!({ "op": "reconnect" }));
    let again = agent.ask(&json!({ "op": "read", "path": "checkout.py" }));
    assert!(
        again["content"].as_str().unwrap().contains("* discount\n"),
        "{again}"
    );
    agent.ask(&json!({ "op": "write", "path": "tests/test_checkout.py", "content": "" }));
    let graded = agent.ask(&json!({ "op": "grade", "answer": "done" }));
    let grade = &graded["grade"];
    assert!(grade["score"].as_f64().unwrap() < 1.0, "{grade}");
    assert_eq!(grade["subscores"][1]["value"], 1.0, "{grade}");
    let changed = &grade["subscores"][1]["info"]["changed"][0];
    assert_eq!(changed["path"], "tests/test_checkout.py");
    assert_eq!(changed["status"], "modified");
    drop(agent);

    // The Rust agent, over the same tunnel and SSH: a fix grades 1.0.
    let (fixed, said) = coding_agent(&dir, port, &[]);
    assert_eq!(fixed["score"], 1.0, "{said}\n{fixed}");
    assert!(said.contains("isolation \"bwrap\""), "{said}");
    assert!(said.contains("the tests before: exit Some(1)"), "{said}");
    assert!(said.contains("the tests after: exit Some(0)"), "{said}");
    let (emptied, said) = coding_agent(&dir, port, &["--empty-tests"]);
    assert!(
        emptied["score"].as_f64().unwrap() < 1.0,
        "{said}\n{emptied}"
    );
    assert_eq!(emptied["subscores"][1]["value"], 1.0, "{emptied}");
    drop(served);
}
