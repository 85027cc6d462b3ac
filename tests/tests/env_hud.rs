//! The environment binary against the real thing: hud 0.6.21's own client drives it, and one
//! scripted conversation (hostile frames included) gets the same replies, frame for frame,
//! from it and from hud's own Python server serving the same templates.
#![allow(clippy::unwrap_used)] // a test that cannot unwrap has failed

use grader_tests::child::{self, Bounded as _};
use std::io::{BufRead as _, BufReader, Write as _};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use grader_tests::env_process::{EnvProcess, alive, scratch};
use grader_tests::python::hud_python;
use serde_json::{Value, json};

const PROBE: &str = env!("CARGO_BIN_EXE_env-probe");

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("data/env")
        .join(name)
}

fn probe() -> EnvProcess {
    EnvProcess::spawn(Command::new(PROBE), Duration::from_secs(20))
}

fn run_python(python: &Path, script: &str, port: u16) -> Value {
    let output = Command::new(python)
        .arg(data(script))
        .arg(port.to_string())
        .output_bounded();
    assert!(
        output.status.success(),
        "{script} failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("the script prints JSON")
}

#[test]
fn hud_client_lists_starts_grades_cancels_and_resumes() {
    let Some(python) = hud_python(env!("CARGO_TARGET_TMPDIR")) else {
        return;
    };
    let env = probe();
    let seen = run_python(&python, "hud_client.py", env.port);

    assert_eq!(seen["server"], json!({"name": "probe", "version": "1.2.3"}));
    assert_eq!(
        seen["tasks"]["echo"]["args"],
        json!({
            "properties": {"word": {"title": "Word", "type": "string"}},
            "required": ["word"],
            "type": "object",
            "additionalProperties": false
        })
    );
    assert_eq!(
        seen["tasks"]["typed"]["returns"],
        json!({"items": {"type": "integer"}, "type": "array"})
    );
    assert_eq!(seen["echo_prompt"], json!({"prompt": "Repeat hi"}));
    assert_eq!(seen["echo_grade"]["reward"], 1.0);
    // The Grade hud builds from our frame carries our reward, content, info and subscores.
    let graded = &seen["graded_grade"];
    assert_eq!(graded["reward"], 0.75);
    assert_eq!(graded["content"], "partial");
    assert_eq!(graded["info"], json!({"n": 3}));
    assert_eq!(graded["subscores"][0]["name"], "a");
    assert_eq!(graded["subscores"][1]["value"], 0.5);
    assert_eq!(seen["graded_prompt"], json!({"prompt": "Grade me", "n": 3}));
    assert_eq!(seen["typed_grade"]["reward"], 1.0);
    assert_eq!(seen["typed_grade"]["info"]["raw"], "[1, 2, 3]");

    let refused = |key: &str, code: i64, message: &str| {
        assert_eq!(seen[key]["code"], code, "{key}: {}", seen[key]);
        assert_eq!(
            seen[key]["message"],
            format!("hud rpc error {code}: {message}"),
            "{key}"
        );
    };
    refused("grade_after_cancel", -32600, "no task in progress");
    refused("unknown_task", -32602, "unknown task: 'nope'");
    refused(
        "bad_args",
        -32000,
        "task 'echo': bad args ['wrong']: missing a required argument: 'word'",
    );
    refused(
        "wrong_type",
        -32000,
        "task 'echo': bad args ['word']: argument 'word': invalid type: integer `7`, expected a string",
    );
    refused("fails", -32000, "boom");
    refused("panics", -32000, "kaboom");
    refused(
        "nonfinite",
        -32000,
        "task 'nonfinite' graded with a non-finite score (nan): yield a finite number",
    );
    refused("unknown_method", -32601, "method not found: tasks.nope");
    assert_eq!(seen["still_serving"]["reward"], 1.0);
    assert_eq!(seen["resumed_same_id"], true);
    assert_eq!(seen["resumed_grade"]["reward"], 1.0);
    refused("resume_unknown", -32600, "unknown session: 'sess-00000000'");
}

/// Session ids are random and the oversize message's count depends on how the bytes arrived
/// (the reference itself words it two ways): both are normalized before comparing.
fn normalize(transcript: &Value) -> Value {
    let text = transcript.to_string();
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(at) = rest.find("sess-") {
        out.push_str(&rest[..at]);
        let id = &rest[at + 5..];
        if id.len() >= 8 && id[..8].bytes().all(|b| b.is_ascii_hexdigit()) {
            out.push_str("sess-X");
            rest = &id[8..];
        } else {
            out.push_str("sess-");
            rest = id;
        }
    }
    out.push_str(rest);
    let mut value: Value = serde_json::from_str(&out).expect("still JSON");
    for step in value.as_array_mut().into_iter().flatten() {
        for reply in step["until_eof"].as_array_mut().into_iter().flatten() {
            if let Some(message) = reply.pointer_mut("/error/message") {
                let text = message.as_str().unwrap_or_default();
                if text.starts_with("Control-channel frame ") && text.contains("16777216 bytes") {
                    *message = json!("Control-channel frame over the 16777216-byte limit");
                }
            }
        }
    }
    value
}

#[test]
fn one_conversation_gets_the_reference_servers_replies_frame_for_frame() {
    let Some(python) = hud_python(env!("CARGO_TARGET_TMPDIR")) else {
        return;
    };
    let mut reference = Command::new(&python);
    // Its server logs each refused call with a traceback: noise here.
    reference
        .arg(data("env_probe.py"))
        .stderr(std::process::Stdio::null());
    let reference = EnvProcess::spawn(reference, Duration::from_secs(60));
    let ours = probe();
    let theirs = normalize(&run_python(&python, "conversation.py", reference.port));
    let mine = normalize(&run_python(&python, "conversation.py", ours.port));
    let (theirs, mine) = (theirs.as_array().unwrap(), mine.as_array().unwrap());
    assert!(
        theirs.len() > 100,
        "the conversation ran: {} steps",
        theirs.len()
    );
    assert_eq!(theirs.len(), mine.len());
    for (step, (a, b)) in theirs.iter().zip(mine).enumerate() {
        assert_eq!(a, b, "step {step} differs:\nreference: {a}\nours:      {b}");
    }
}

struct Raw {
    stream: TcpStream,
    reader: BufReader<TcpStream>,
}

impl Raw {
    fn connect(port: u16) -> Raw {
        let stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
        stream
            .set_read_timeout(Some(Duration::from_secs(20)))
            .expect("timeout");
        let reader = BufReader::new(stream.try_clone().expect("clone"));
        Raw { stream, reader }
    }

    fn send(&mut self, frame: &Value) {
        let mut line = frame.to_string();
        line.push('\n');
        self.stream.write_all(line.as_bytes()).expect("send");
    }

    fn call(&mut self, frame: &Value) -> Value {
        self.send(frame);
        let mut line = String::new();
        self.reader.read_line(&mut line).expect("reply");
        serde_json::from_str(&line).expect("a JSON reply")
    }
}

fn rpc(id: u64, method: &str, params: &Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

fn wait_for_pid(path: &Path) -> u32 {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(pid) = std::fs::read_to_string(path)
            .ok()
            .and_then(|text| text.trim().parse().ok())
        {
            return pid;
        }
        assert!(Instant::now() < deadline, "the command never started");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn wait_dead(pid: u32) -> bool {
    let deadline = Instant::now() + Duration::from_secs(5);
    while alive(pid) {
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    true
}

/// Starts the `sleeper` template and sends its grade, which runs a command until cancelled;
/// returns the connection and the command's pid.
fn grading_sleeper(port: u16, dir: &Path, name: &str) -> (Raw, u32) {
    let pid_file = scratch(dir, name);
    let mut client = Raw::connect(port);
    client.call(&rpc(1, "hello", &json!({})));
    let prompt = client.call(&rpc(
        2,
        "tasks.start",
        &json!({"id": "sleeper", "args": {"pid_file": pid_file}}),
    ));
    assert_eq!(prompt["result"]["prompt"], "Wait");
    client.send(&rpc(3, "tasks.grade", &json!({"answer": "done"})));
    let pid = wait_for_pid(&pid_file);
    assert!(alive(pid));
    (client, pid)
}

#[test]
fn a_hang_up_during_a_grade_cancels_it_and_kills_its_command() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("env-hangup");
    let marker = scratch(&dir, "marker");
    let mut command = Command::new(PROBE);
    command.env("PROBE_MARKER", &marker);
    let env = EnvProcess::spawn(command, Duration::from_secs(20));
    let (client, pid) = grading_sleeper(env.port, &dir, "pid");
    drop(client);
    assert!(wait_dead(pid), "the grade's command outlived its session");
    let mut other = Raw::connect(env.port);
    other.call(&rpc(1, "hello", &json!({})));
    let reply = other.call(&rpc(2, "tasks.grade", &json!({"answer": "x"})));
    assert_eq!(
        reply["error"],
        json!({"code": -32600, "message": "no task in progress"})
    );
    // The session's teardown hook runs once the cancelled task is gone; it may still be
    // running when the server already answers another session, so wait for its mark.
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut marks = String::new();
    while Instant::now() < deadline {
        marks = std::fs::read_to_string(&marker).unwrap_or_default();
        if !marks.is_empty() {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(marks.lines().collect::<Vec<_>>(), ["teardown"]);
}

fn stops_on(signal: &str, code: i32) {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("env-{signal}"));
    let marker = scratch(&dir, "marker");
    // SIGINT at its default even where this run ignores it (a background job), as a terminal's
    // Ctrl-C finds a server started from it.
    let mut command = child::with_default_signals(PROBE);
    command.env("PROBE_MARKER", &marker);
    let mut env = EnvProcess::spawn(command, Duration::from_secs(20));
    let (_grading, pid) = grading_sleeper(env.port, &dir, "pid-grading");
    // A second session holds a started task, parked once its connection is gone.
    let mut parked = Raw::connect(env.port);
    parked.call(&rpc(1, "hello", &json!({})));
    parked.call(&rpc(
        2,
        "tasks.start",
        &json!({"id": "echo", "args": {"word": "w"}}),
    ));
    drop(parked);

    let sent = Instant::now();
    env.signal(signal);
    let status = env
        .wait_timeout(Duration::from_secs(10))
        .expect("the environment exits within hud's 10 s grace");
    assert!(
        sent.elapsed() < Duration::from_secs(5),
        "took {:?}",
        sent.elapsed()
    );
    assert_eq!(status.code(), Some(code));
    assert!(wait_dead(pid), "a template's command outlived the server");
    let marks = std::fs::read_to_string(&marker).unwrap_or_default();
    let marks: Vec<&str> = marks.lines().collect();
    // Both tasks were torn down, then the shutdown hook ran.
    assert_eq!(marks, ["teardown", "teardown", "shutdown"]);
    assert_eq!(env.stdout_rest(), "", "nothing but the port line on stdout");
}

#[test]
fn sigterm_cancels_templates_kills_their_commands_and_runs_the_hooks() {
    stops_on("TERM", 143);
}

#[test]
fn sigint_stops_the_same_way() {
    stops_on("INT", 130);
}

/// A whole hud rollout runs offline against the binary: `Task.run` with a scripted agent,
/// placed on a `Runtime` that points at it (no API key: hud reports nothing to the platform).
#[test]
fn a_hud_rollout_with_a_scripted_agent_is_graded_by_the_binary() {
    let Some(python) = hud_python(env!("CARGO_TARGET_TMPDIR")) else {
        return;
    };
    let env = probe();
    let output = Command::new(&python)
        .arg(data("rollout.py"))
        .arg(env.port.to_string())
        .env_remove("HUD_API_KEY")
        .output_bounded();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let seen: Value = serde_json::from_slice(&output.stdout).expect("JSON");
    assert_eq!(
        seen["runs"],
        json!([{"reward": 1.0, "evaluation": {"score": 1.0}, "prompt": "Repeat offline"}])
    );
}
