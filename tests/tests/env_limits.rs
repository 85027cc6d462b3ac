//! The environment server at its limits, with real clients on 127.0.0.1: hostile connections
//! hold every place they can (silent connections, frames that stop half way, frames larger than
//! the budget of buffered bytes), and hud 0.6.21's own client is still served; what the server
//! refused is counted in its stats, and the bytes it buffered never pass its budget.
#![allow(clippy::unwrap_used)] // a test that cannot unwrap has failed

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpStream;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use grader_env::{Environment, NoArgs, ServeConfig, Server, ServerStats, Session, Template};
use grader_tests::env_process::EnvProcess;
use grader_tests::python::hud_python;
use serde_json::{Value, json};

const PROBE: &str = env!("CARGO_BIN_EXE_env-probe");

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct EchoArgs {
    word: String,
}

fn environment() -> Environment {
    Environment::new("limits")
        .template(Template::new(
            "echo",
            |args: EchoArgs, session: Session| async move {
                let answer = session.prompt(format!("Repeat {}", args.word)).await?;
                Ok::<_, grader_env::PromptError>(answer == args.word.as_str())
            },
        ))
        .and_then(|env| {
            env.template(Template::new(
                "ping",
                |_: NoArgs, session: Session| async move {
                    session.prompt("ping").await?;
                    Ok::<_, grader_env::PromptError>(1.0)
                },
            ))
        })
        .unwrap()
}

/// An environment served in this process, so the test can read its stats.
struct InProcess {
    runtime: tokio::runtime::Runtime,
    server: Option<Server>,
}

impl InProcess {
    fn serve(config: &ServeConfig) -> InProcess {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let server = runtime.block_on(environment().bind(config)).unwrap();
        InProcess {
            runtime,
            server: Some(server),
        }
    }

    fn server(&self) -> &Server {
        self.server.as_ref().unwrap()
    }

    fn port(&self) -> u16 {
        self.server().local_addr().port()
    }

    fn stats(&self) -> ServerStats {
        self.server().stats()
    }

    /// Waits (20 s at most) until the stats satisfy `done`.
    fn wait_for(&self, what: &str, done: impl Fn(&ServerStats) -> bool) -> ServerStats {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let stats = self.stats();
            if done(&stats) {
                return stats;
            }
            assert!(Instant::now() < deadline, "never {what}: {stats:?}");
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

impl Drop for InProcess {
    fn drop(&mut self) {
        if let Some(server) = self.server.take() {
            self.runtime.block_on(server.shutdown());
        }
    }
}

fn connect(port: u16) -> TcpStream {
    let stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    stream
}

/// Everything the server sends until it closes the connection (a reset counts as closed).
fn until_closed(stream: &mut TcpStream) -> String {
    let mut bytes = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        match stream.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => bytes.extend_from_slice(&chunk[..n]),
            Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => {
                panic!("the server kept the connection open")
            }
            Err(_) => break,
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

fn call(stream: &mut TcpStream, frame: &Value) -> Value {
    let mut line = frame.to_string();
    line.push('\n');
    stream.write_all(line.as_bytes()).unwrap();
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut reply = String::new();
    reader.read_line(&mut reply).unwrap();
    serde_json::from_str(&reply).unwrap()
}

fn rpc(id: u64, method: &str, params: &Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// Runs hud's own client against the server: one task started and graded.
const HUD_CLIENT: &str = r#"
import asyncio, json, sys
from hud import Runtime, connect
from hud.eval.run import Grade

async def main():
    async with connect(Runtime(f"tcp://127.0.0.1:{sys.stdin.read().strip()}")) as client:
        prompt = await client.start_task("echo", {"word": "served"})
        grade = Grade.from_dict(await client.grade({"answer": "served"}))
        print(json.dumps({"prompt": prompt, "reward": grade.reward}))

asyncio.run(main())
"#;

fn hud_client_is_served(python: &Path, port: u16) {
    let seen: Value = serde_json::from_str(&grader_tests::python::run_script(
        python,
        HUD_CLIENT,
        &port.to_string(),
    ))
    .unwrap();
    assert_eq!(
        seen,
        json!({"prompt": {"prompt": "Repeat served"}, "reward": 1.0})
    );
}

#[test]
fn hostile_connections_and_half_frames_leave_hud_s_client_served() {
    let Some(python) = hud_python(env!("CARGO_TARGET_TMPDIR")) else {
        return;
    };
    let growth = 256 << 10;
    // A small buffer is kept for each of 8 new connections and 8 control sessions.
    let budget = 2 * 8 * grader_env::frame::SMALL_BUFFER + growth;
    let env = InProcess::serve(
        &ServeConfig::default()
            .max_connections(8)
            .buffered_bytes(budget)
            .frame_timeout(Duration::from_secs(600)),
    );
    let port = env.port();

    // A half frame that takes most of the budget is buffered, and held (by a session with a
    // task: never idle).
    let mut greedy = connect(port);
    call(
        &mut greedy,
        &rpc(
            1,
            "tasks.start",
            &json!({"id": "echo", "args": {"word": "w"}}),
        ),
    );
    greedy.write_all(&vec![b'x'; 200 << 10]).unwrap();
    env.wait_for("buffered the greedy half frame", |s| {
        s.buffered_bytes >= 200 << 10
    });
    // Two more are refused (with an error frame) and closed: the budget is spent.
    for _ in 0..2 {
        let mut late = connect(port);
        let _ = late.write_all(&vec![b'y'; 200 << 10]);
        let said = until_closed(&mut late);
        assert!(
            said.is_empty() || said.contains("buffering all it may"),
            "{said}"
        );
    }
    let stats = env.wait_for("refused two frames", |s| s.refused_frames == 2);
    assert!(stats.peak_buffered_bytes <= budget, "{stats:?}");

    // Sessions with a task take every other place; one more connection is refused at once,
    // since none of them is idle.
    let mut holding: Vec<TcpStream> = (0..7)
        .map(|_| {
            let mut stream = connect(port);
            let prompt = call(
                &mut stream,
                &rpc(
                    1,
                    "tasks.start",
                    &json!({"id": "echo", "args": {"word": "w"}}),
                ),
            );
            assert_eq!(prompt["result"]["prompt"], "Repeat w");
            stream
        })
        .collect();
    env.wait_for("admitted all eight", |s| s.connections == 8);
    let mut over = connect(port);
    let refused = call(&mut over, &rpc(1, "hello", &json!({})));
    assert_eq!(
        refused["error"]["message"],
        "The server holds 8 connections, as many as it may, each with a task or a request; \
         try again later.",
        "{refused}"
    );
    assert_eq!(until_closed(&mut over), "");
    assert_eq!(env.stats().refused_connections, 1);

    // One place freed: hud's client gets it and is served while the others still hold theirs.
    drop(holding.pop());
    env.wait_for("freed a place", |s| s.connections == 7);
    hud_client_is_served(&python, port);

    // The greedy connection was only held, never dropped: its frame completes at last, and is
    // refused, since parsing it beside the buffer it fills would pass the budget.
    greedy.write_all(b"\n").unwrap();
    let said = until_closed(&mut greedy);
    assert!(said.contains("buffering all it may"), "{said}");
    let stats = env.stats();
    assert!(stats.peak_buffered_bytes <= budget, "{stats:?}");
    assert_eq!(stats.timed_out, 0);
    // Each session with a task was kept: graded now.
    for stream in &mut holding {
        let grade = call(stream, &rpc(2, "tasks.grade", &json!({"answer": "w"})));
        assert_eq!(grade["result"]["score"], 1.0);
    }
    assert_eq!(env.stats().evicted, 0);
    drop(holding);
    env.wait_for("closed every connection", |s| {
        s.connections == 0 && s.buffered_bytes == 0
    });
}

/// The red team's lock-out: every place taken by a connection that sent one valid frame and
/// then stays idle. hud's client still connects, is served and graded: it takes the place of
/// the connection idle the longest, which is told why it is closed.
#[test]
fn a_full_table_of_idle_connections_never_locks_a_new_client_out() {
    let Some(python) = hud_python(env!("CARGO_TARGET_TMPDIR")) else {
        return;
    };
    let env = InProcess::serve(&ServeConfig::default().max_connections(16));
    let port = env.port();
    let mut idle: Vec<TcpStream> = (0..16)
        .map(|_| {
            let mut stream = connect(port);
            let hello = call(&mut stream, &rpc(1, "hello", &json!({})));
            assert!(hello["result"]["session_id"].is_string(), "{hello}");
            stream
        })
        .collect();
    env.wait_for("admitted all sixteen", |s| s.connections == 16);
    hud_client_is_served(&python, port);
    let stats = env.stats();
    assert_eq!(stats.refused_connections, 0, "{stats:?}");
    assert!(stats.evicted >= 1, "{stats:?}");
    // One of them (the one idle the longest) gave its place, and was told so; the others are
    // still served.
    let evicted = told_to_make_room(&mut idle);
    let reply = call(
        &mut idle[(evicted + 1) % 16],
        &rpc(2, "tasks.list", &json!({})),
    );
    assert!(reply["result"]["tasks"].is_array(), "{reply}");
}

/// Which of `connections` was closed to admit a new one (it says so); the others are open.
fn told_to_make_room(connections: &mut [TcpStream]) -> usize {
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut buffer = [0u8; 4096];
    loop {
        for (at, stream) in connections.iter_mut().enumerate() {
            stream
                .set_read_timeout(Some(Duration::from_millis(10)))
                .unwrap();
            if let Ok(read) = stream.read(&mut buffer) {
                stream
                    .set_read_timeout(Some(Duration::from_secs(20)))
                    .unwrap();
                let said =
                    String::from_utf8_lossy(&buffer[..read]).into_owned() + &until_closed(stream);
                assert!(
                    said.contains("Control connection closed to admit a new one"),
                    "{said}"
                );
                return at;
            }
        }
        assert!(Instant::now() < deadline, "none was closed");
    }
}

/// The same with the environment binary's defaults (512 connections, or fewer under a low
/// open-file limit): as many connections as it admits each send `hello` and stay idle, and
/// hud's client is still served.
#[test]
fn the_defaults_serve_hud_s_client_past_a_table_of_idle_sessions() {
    let Some(python) = hud_python(env!("CARGO_TARGET_TMPDIR")) else {
        return;
    };
    let env = EnvProcess::spawn(Command::new(PROBE), Duration::from_secs(20));
    let max = grader_env::server::default_max_connections();
    let mut idle = Vec::with_capacity(max);
    for _ in 0..max {
        let mut stream = connect(env.port);
        let hello = call(&mut stream, &rpc(1, "hello", &json!({})));
        assert!(hello["result"]["session_id"].is_string(), "{hello}");
        idle.push(stream);
    }
    hud_client_is_served(&python, env.port);
    told_to_make_room(&mut idle);
}

/// A control connection with no task is closed after the idle timeout, saying why; a session
/// awaiting its grade idles past it and is graded.
#[test]
fn an_idle_connection_without_a_task_is_closed_and_one_with_a_task_is_not() {
    let env = InProcess::serve(&ServeConfig::default().idle_timeout(Duration::from_millis(300)));
    let port = env.port();
    let mut with_task = connect(port);
    call(
        &mut with_task,
        &rpc(
            1,
            "tasks.start",
            &json!({"id": "echo", "args": {"word": "w"}}),
        ),
    );
    let mut without = connect(port);
    call(&mut without, &rpc(1, "hello", &json!({})));
    let said = until_closed(&mut without);
    assert!(
        said.contains("Control connection idle for 0.3 s with no task; closed"),
        "{said}"
    );
    // Counted as closed, then its place given back.
    env.wait_for("closed the idle one", |s| {
        s.idle_closed == 1 && s.connections == 1
    });
    std::thread::sleep(Duration::from_millis(500));
    let grade = call(
        &mut with_task,
        &rpc(2, "tasks.grade", &json!({"answer": "w"})),
    );
    assert_eq!(grade["result"]["score"], 1.0);
    // Graded, it holds no task any more: now it is idle, and closed in its turn.
    let said = until_closed(&mut with_task);
    assert!(said.contains("idle for 0.3 s"), "{said}");
}

/// A TCP service that accepts connections and keeps each open until its peer hangs up; its
/// port.
fn holding_service() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            // Held until the peer hangs up.
            std::thread::spawn(move || std::io::copy(&mut stream, &mut std::io::sink()));
        }
    });
    port
}

/// Capability streams (the agents' SSH) are capped apart from control connections: streams
/// never take a control connection's place, and one stream past their cap is refused, saying
/// so, while control connections are still admitted.
#[test]
fn capability_streams_are_capped_apart_from_control_connections() {
    let service = holding_service();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let config = ServeConfig::default().max_connections(2).max_streams(3);
    let server = runtime
        .block_on(
            environment()
                .capability(grader_env::Capability::new(
                    "service",
                    "tcp/1",
                    format!("tcp://127.0.0.1:{service}"),
                ))
                .unwrap()
                .bind(&config),
        )
        .unwrap();
    let env = InProcess {
        runtime,
        server: Some(server),
    };
    let port = env.port();
    let open = rpc(1, "tunnel.open", &json!({"capability": "service"}));
    let mut streams: Vec<TcpStream> = (0..3)
        .map(|_| {
            let mut stream = connect(port);
            let reply = call(&mut stream, &open);
            assert_eq!(reply["result"]["capability"], "service", "{reply}");
            stream
        })
        .collect();
    env.wait_for("three streams", |s| s.streams == 3 && s.connections == 0);
    // Both control places are free: two sessions start tasks.
    let mut sessions: Vec<TcpStream> = (0..2)
        .map(|_| {
            let mut stream = connect(port);
            let prompt = call(
                &mut stream,
                &rpc(
                    1,
                    "tasks.start",
                    &json!({"id": "echo", "args": {"word": "w"}}),
                ),
            );
            assert_eq!(prompt["result"]["prompt"], "Repeat w");
            stream
        })
        .collect();
    // A fourth stream is refused, with a frame that says why.
    let mut fourth = connect(port);
    let reply = call(&mut fourth, &open);
    assert_eq!(
        reply["error"]["message"],
        "The server holds 3 capability streams, as many as it may; try again later."
    );
    let stats = env.wait_for("refused a stream", |s| {
        s.refused_streams == 1 && s.connections == 2
    });
    assert_eq!((stats.streams, stats.connections), (3, 2), "{stats:?}");
    // A stream closed frees its place for another.
    drop(streams.pop());
    env.wait_for("freed a stream", |s| s.streams == 2);
    let mut again = connect(port);
    assert_eq!(call(&mut again, &open)["result"]["capability"], "service");
    for session in &mut sessions {
        let grade = call(session, &rpc(2, "tasks.grade", &json!({"answer": "w"})));
        assert_eq!(grade["result"]["score"], 1.0);
    }
}

#[test]
fn a_frame_that_stops_arriving_is_dropped_and_an_idle_session_is_not() {
    let env = InProcess::serve(&ServeConfig::default().frame_timeout(Duration::from_millis(300)));
    let port = env.port();
    // A session awaiting its grade, idle from here on.
    let mut idle = connect(port);
    call(&mut idle, &rpc(1, "hello", &json!({})));
    let prompt = call(
        &mut idle,
        &rpc(
            2,
            "tasks.start",
            &json!({"id": "echo", "args": {"word": "w"}}),
        ),
    );
    assert_eq!(prompt["result"]["prompt"], "Repeat w");

    // A session whose next frame stops half way, a connection that never says anything, and
    // one whose first frame stops half way.
    let mut stalled = connect(port);
    call(&mut stalled, &rpc(1, "hello", &json!({})));
    stalled
        .write_all(br#"{"jsonrpc":"2.0","id":2,"method":"tasks.li"#)
        .unwrap();
    let mut silent = connect(port);
    let mut half_first = connect(port);
    half_first.write_all(br#"{"jsonrpc""#).unwrap();

    let said = until_closed(&mut half_first);
    assert!(
        said.contains("not completed within 0.3 s (10 bytes received)"),
        "{said}"
    );
    let said = until_closed(&mut stalled);
    assert!(
        said.contains("Control-channel frame not completed within 0.3 s (42 bytes received)"),
        "{said}"
    );
    let said = until_closed(&mut silent);
    assert!(
        said.contains("not completed within 0.3 s (0 bytes received)"),
        "{said}"
    );
    let stats = env.wait_for("timed out all three", |s| s.timed_out == 3);
    assert_eq!(stats.refused_connections + stats.refused_frames, 0);

    // The idle session waited longer than the timeout (since before the stalled frame began)
    // and is still served.
    let grade = call(&mut idle, &rpc(3, "tasks.grade", &json!({"answer": "w"})));
    assert_eq!(grade["result"]["score"], 1.0);
}

#[test]
fn a_peer_that_never_reads_its_replies_is_closed() {
    let env = InProcess::serve(&ServeConfig::default().frame_timeout(Duration::from_millis(300)));
    let mut greedy = connect(env.port());
    let request = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tasks.list\"}\n";
    // Requests without end, none of the replies read: the socket buffers fill, the server's
    // write stalls, and the frame timeout closes the connection (the writes then fail).
    let writer = std::thread::spawn(move || {
        for _ in 0..2_000_000 {
            if greedy.write_all(request).is_err() {
                return true;
            }
        }
        false
    });
    let stats = env.wait_for("closed the connection", |s| s.timed_out == 1);
    assert!(writer.join().unwrap(), "the server kept reading: {stats:?}");
    env.wait_for("released it", |s| s.connections == 0);
}

#[test]
fn a_large_frame_grows_a_buffer_that_shrinks_back() {
    let env = InProcess::serve(&ServeConfig::default());
    let mut client = connect(env.port());
    call(&mut client, &rpc(1, "hello", &json!({})));
    let baseline = env.stats().buffered_bytes;
    assert!(baseline <= grader_env::frame::SMALL_BUFFER, "{baseline}");
    call(
        &mut client,
        &rpc(
            2,
            "tasks.start",
            &json!({"id": "echo", "args": {"word": "w"}}),
        ),
    );
    let answer = "w".repeat(3 << 20);
    let grade = call(
        &mut client,
        &rpc(3, "tasks.grade", &json!({"answer": answer})),
    );
    assert_eq!(grade["result"]["score"], 0.0);
    let stats = env.wait_for("shrunk back", |s| s.buffered_bytes == baseline);
    assert!(stats.peak_buffered_bytes > 3 << 20, "{stats:?}");
}

#[test]
fn a_frame_that_would_pass_the_budget_once_parsed_is_refused() {
    let growth = 8 << 20;
    // A small buffer is kept for each of 8 new connections and 8 control sessions.
    let budget = 2 * 8 * grader_env::frame::SMALL_BUFFER + growth;
    let env = InProcess::serve(
        &ServeConfig::default()
            .max_connections(8)
            .buffered_bytes(budget),
    );
    let start = rpc(
        1,
        "tasks.start",
        &json!({"id": "echo", "args": {"word": "w"}}),
    );
    // A megabyte of zeros is half a million values: far more than 8 MiB once parsed.
    let mut zeros = connect(env.port());
    call(&mut zeros, &start);
    let answer = format!("[{}0]", "0,".repeat(1 << 19));
    let frame = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tasks.grade\",\"params\":{{\"answer\":{answer}}}}}\n"
    );
    zeros.write_all(frame.as_bytes()).unwrap();
    let said = until_closed(&mut zeros);
    assert!(said.contains("buffering all it may"), "{said}");
    let stats = env.wait_for("refused the frame", |s| s.refused_frames == 1);
    assert!(stats.peak_buffered_bytes <= budget, "{stats:?}");
    // A megabyte of text costs about a megabyte: graded.
    let mut text = connect(env.port());
    call(&mut text, &start);
    let grade = call(
        &mut text,
        &rpc(3, "tasks.grade", &json!({"answer": "x".repeat(1 << 20)})),
    );
    assert_eq!(grade["result"]["score"], 0.0);
    let stats = env.stats();
    assert!(stats.peak_buffered_bytes <= budget, "{stats:?}");
}

fn peak_resident_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.split_whitespace().next()?.parse().ok())
        .unwrap()
}

/// A 16 MiB frame of zeros took 1.2 GB to parse (70 times its size), enough for one connection
/// to take a server in a 1 GiB container down: the default budget refuses it, and the server's
/// peak resident set stays near the frame's own size.
#[test]
fn a_16_mib_frame_of_zeros_no_longer_takes_a_gigabyte() {
    let env = EnvProcess::spawn(Command::new(PROBE), Duration::from_secs(20));
    let mut client = connect(env.port);
    call(
        &mut client,
        &rpc(
            1,
            "tasks.start",
            &json!({"id": "echo", "args": {"word": "w"}}),
        ),
    );
    let count = (16 << 20) / 2 - 100;
    let mut frame =
        br#"{"jsonrpc":"2.0","id":2,"method":"tasks.grade","params":{"answer":["#.to_vec();
    frame.extend_from_slice(&b"0,".repeat(count));
    frame.extend_from_slice(b"0]}}\n");
    assert!(frame.len() <= (16 << 20) + 1);
    client.write_all(&frame).unwrap();
    let said = until_closed(&mut client);
    assert!(said.contains("buffering all it may"), "{said}");
    let peak = peak_resident_kib(env.pid());
    assert!(peak < 128 << 10, "peak resident set {peak} KiB");
}

/// With 256 file descriptors, 300 silent connections used to lock every new client out. The
/// table of new connections (an eighth of the descriptors by default) holds 32; each
/// connection past it takes the place of the one silent the longest, which is closed saying so;
/// the others are closed once the frame timeout passes without a first frame; and hud's
/// client is served.
#[test]
fn silent_connections_past_the_descriptor_limit_do_not_lock_clients_out() {
    let Some(python) = hud_python(env!("CARGO_TARGET_TMPDIR")) else {
        return;
    };
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg("ulimit -n 256 && exec \"$0\" --frame-timeout 1")
        .arg(PROBE)
        .stderr(std::process::Stdio::null());
    let env = EnvProcess::spawn(command, Duration::from_secs(20));
    let mut hostile: Vec<TcpStream> = (0..300).map(|_| connect(env.port)).collect();
    let mut evicted = 0;
    let mut timed_out = 0;
    for stream in &mut hostile {
        let said = until_closed(stream);
        if said.contains("closed to admit a new one") {
            evicted += 1;
        } else if said.contains("not completed within 1 s") {
            timed_out += 1;
        }
    }
    // Each was answered: closed for a newer one over the cap (an eighth of 256), or once the
    // frame timeout passed without a first frame.
    assert_eq!(
        evicted + timed_out,
        300,
        "{evicted} evicted, {timed_out} timed out"
    );
    assert!(evicted > 0, "{evicted} evicted, {timed_out} timed out");
    hud_client_is_served(&python, env.port);
}
