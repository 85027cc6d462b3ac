//! What the tests' servers on 127.0.0.1 (moto, Azurite) share: a free port, and waiting until
//! a server just started answers.

use std::net::TcpListener;
use std::path::Path;
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
    loop {
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
