//! What the tests' servers on 127.0.0.1 (moto, Azurite, fake-gcs-server) share: a free port,
//! waiting until a server just started answers, and plain HTTP/1.0 requests to it.

use std::io::{Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Child;
use std::time::Duration;

/// A port free on 127.0.0.1 a moment ago (another process may take it before the server binds
/// it: callers try again).
///
/// # Panics
/// When no port can be bound.
#[must_use]
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("find a free port")
        .port()
}

/// Waits until `ready(server)` says the server answers, or its process (`child(server)`)
/// exits first: then the error says so, with what the server wrote to `log`.
///
/// # Errors
/// When the process exited before it answered.
///
/// # Panics
/// When the process cannot be polled.
pub fn wait_until_ready<S>(
    server: &mut S,
    child: impl Fn(&mut S) -> &mut Child,
    name: &str,
    log: &Path,
    ready: impl Fn(&S) -> bool,
) -> Result<(), String> {
    let start = std::time::Instant::now();
    loop {
        if start.elapsed() > crate::child::WATCHDOG {
            let _ = child(server).kill();
            return Err(format!(
                "{name} did not answer within {} s:\n{}",
                crate::child::WATCHDOG.as_secs(),
                std::fs::read_to_string(log).unwrap_or_default()
            ));
        }
        if let Some(status) = child(server).try_wait().expect("poll the server") {
            return Err(format!(
                "{name} exited ({status}):\n{}",
                std::fs::read_to_string(log).unwrap_or_default()
            ));
        }
        if ready(server) {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Starts a server on a free port with `start` (which returns it and the path of its log),
/// and waits until `ready(server)` says it answers. The port found free may be taken by
/// another process before the server binds it, so a server that exits first is started again
/// on another port, up to five times.
///
/// # Panics
/// When every attempt exited before it answered (the message holds each one's log).
pub fn start_on_a_free_port<S>(
    name: &str,
    mut start: impl FnMut(u16) -> (S, PathBuf),
    child: impl Fn(&mut S) -> &mut Child,
    ready: impl Fn(&S) -> bool,
) -> S {
    let mut failures = Vec::new();
    for _ in 0..5 {
        let (mut server, log) = start(free_port());
        match wait_until_ready(&mut server, &child, name, &log, &ready) {
            Ok(()) => return server,
            Err(failure) => failures.push(failure),
        }
    }
    panic!("{}", failures.join("\n"));
}

/// One HTTP/1.0 request to 127.0.0.1:`port`, with `headers` (each `Name: value`) beside `Host`
/// and `Content-Length`: the status, head and body of the answer.
///
/// # Errors
/// When the server cannot be reached or its answer has no status line.
pub fn exchange(
    port: u16,
    method: &str,
    target: &str,
    headers: &[&str],
    body: &[u8],
) -> std::io::Result<(u16, String, Vec<u8>)> {
    let mut stream = TcpStream::connect(("127.0.0.1", port))?;
    let mut head = format!(
        "{method} {target} HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\nContent-Length: {}\r\n",
        body.len()
    );
    for header in headers {
        head.push_str(header);
        head.push_str("\r\n");
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes())?;
    stream.write_all(body)?;
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer)?;
    let text_end = answer
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(|| std::io::Error::other("no end of headers"))?;
    let head = String::from_utf8_lossy(&answer[..text_end]).into_owned();
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .ok_or_else(|| std::io::Error::other(format!("no status in {head}")))?;
    Ok((status, head, answer[text_end + 4..].to_vec()))
}

/// The variables inherited from whoever runs the tests that the object store client reads
/// (credentials, endpoints, emulator settings). A test removes them from a command it points
/// at its own server, so that nothing it starts reaches another address or another account.
#[must_use]
pub fn inherited_store_variables() -> Vec<std::ffi::OsString> {
    std::env::vars_os()
        .map(|(name, _)| name)
        .filter(|name| {
            name.to_str().is_some_and(|name| {
                let name = name.to_ascii_uppercase();
                ["AWS_", "GOOGLE_", "AZURE_", "AZURITE_", "OBJECT_STORE_"]
                    .iter()
                    .any(|prefix| name.starts_with(prefix))
                    || name == "SERVICE_ACCOUNT"
            })
        })
        .collect()
}
