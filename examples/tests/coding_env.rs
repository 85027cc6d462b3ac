//! The `coding_env` example as hud runs it: a process that prints its port line and nothing
//! else on stdout, graded through its control channel after the `coding_agent` example worked
//! in its workspace over SSH, stopped by SIGTERM. Docker is not available to these tests: they
//! run the container recipe's command (`coding_env --host 0.0.0.0 --port …`) as a plain process
//! instead. The workspace is sandboxed where bwrap can sandbox, and serves without isolation
//! elsewhere: the agent works over SSH either way (`coding_env_ssh.rs` checks the sandbox).
#![allow(missing_docs, clippy::unwrap_used)]

mod support;

use grader_tests::child::Bounded as _;
use support::{coding_agent, examples_dir};

use std::io::{BufRead as _, BufReader, Read as _};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

struct Served {
    child: Child,
    port: u16,
    stdout: BufReader<std::process::ChildStdout>,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve(dir: &std::path::Path, args: &[&str]) -> Served {
    let mut child = Command::new(dir.join("coding_env"))
        .args(args)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    let port = line
        .strip_prefix("HUD_SERVE_PORT=")
        .and_then(|p| p.trim_end().parse().ok())
        .unwrap_or_else(|| panic!("not the port line: {line:?}"));
    Served {
        child,
        port,
        stdout,
    }
}

#[test]
fn the_agent_is_graded_by_the_served_template_and_sigterm_stops_it() {
    let dir = examples_dir();
    // The container recipe's command: every interface, a fixed port.
    let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = probe.local_addr().unwrap().port();
    drop(probe);
    let port_arg = port.to_string();
    let mut served = serve(&dir, &["--host", "0.0.0.0", "--port", &port_arg]);
    assert_eq!(served.port, port);

    let (fixed, said) = coding_agent(&dir, served.port, &[]);
    assert_eq!(fixed["score"], 1.0, "{said}\n{fixed}");
    // The verdict: the agent's `total` on hidden random cases, compared by the grader.
    assert_eq!(fixed["subscores"][0]["name"], "hidden_cases");
    assert_eq!(fixed["subscores"][0]["info"]["cases"], 26);
    assert_eq!(
        fixed["subscores"][0]["info"]["wrong"],
        serde_json::json!([])
    );
    assert_eq!(fixed["subscores"][1]["name"], "tests_tampered");
    // The agent found the checkout over SSH, its test failing, and made it pass.
    assert!(said.contains("./tests:\ntest_checkout.py\n"), "{said}");
    assert!(said.contains("the tests before: exit Some(1)"), "{said}");
    assert!(said.contains("the tests after: exit Some(0)"), "{said}");
    assert_eq!(fixed["subscores"][1]["value"], 0.0);
    assert_eq!(
        fixed["subscores"][1]["info"]["changed"],
        serde_json::json!([])
    );
    // The grade ran inside the workspace's sandbox wherever bwrap can make one (CI installs
    // it); elsewhere in the unsandboxed root.
    let isolated = said.contains("(isolation \"bwrap\")");
    assert!(
        isolated || (std::env::var_os("CI").is_none() && said.contains("(isolation \"none\")")),
        "{said}"
    );

    // Editing the test to expect what the code returns makes the visible test pass, and
    // fixes nothing: the hidden cases fail, and the penalty fires.
    let (cheated, said) = coding_agent(&dir, served.port, &["--cheat"]);
    assert!(said.contains("the tests after: exit Some(0)"), "{said}");
    assert!(cheated["score"].as_f64().unwrap() < 0.0, "{cheated}");
    assert!(cheated["subscores"][0]["value"].as_f64().unwrap() < 1.0);
    assert_eq!(cheated["subscores"][1]["value"], 1.0);
    // The penalty says what the agent did to the tests: the tracker's patch.
    let changed = &cheated["subscores"][1]["info"]["changed"][0];
    assert_eq!(changed["path"], "tests/test_checkout.py");
    assert_eq!(changed["status"], "modified");
    assert!(
        changed["patch"]
            .as_str()
            .unwrap()
            .starts_with("--- a/tests/test_checkout.py\n+++ b/tests/test_checkout.py\n@@"),
        "{changed}"
    );

    // Each task starts from a fresh checkout: the last task's edit is gone.
    let (emptied, said) = coding_agent(&dir, served.port, &["--empty-tests"]);
    assert!(said.contains("the tests before: exit Some(1)"), "{said}");
    assert!(emptied["score"].as_f64().unwrap() < 1.0, "{emptied}");
    assert_eq!(emptied["subscores"][1]["value"], 1.0);

    let sent = Instant::now();
    let status = Command::new("kill")
        .args(["-TERM", &served.child.id().to_string()])
        .status_bounded();
    assert!(status.success());
    let code = loop {
        if let Some(status) = served.child.try_wait().unwrap() {
            break status.code();
        }
        assert!(
            sent.elapsed() < Duration::from_secs(10),
            "still running after SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(code, Some(143));
    let mut rest = String::new();
    served.stdout.read_to_string(&mut rest).unwrap();
    assert_eq!(rest, "", "nothing but the port line on stdout");
}

#[test]
fn a_bad_option_is_a_usage_error() {
    let dir = examples_dir();
    let output = Command::new(dir.join("coding_env"))
        .args(["--port", "many"])
        .output_bounded();
    assert_eq!(output.status.code(), Some(2));
    assert!(output.stdout.is_empty());
    assert!(String::from_utf8_lossy(&output.stderr).contains("not a port"));
}
