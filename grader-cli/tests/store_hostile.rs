//! An object store's error reply cannot act on the terminal: a real HTTP server on 127.0.0.1
//! answers every request with 403 and a `<Message>` holding escape sequences (OSC 52, which
//! writes the clipboard; OSC 0, which sets the title; a screen clear) and a forged line, and
//! every command that reads `s3://` prints its error with none of them acting.
#![cfg(feature = "object-store")]
#![allow(clippy::unwrap_used)]

mod support;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use grader_tests::local_server::inherited_store_variables;
use grader_tests::s3_server::S3Server;
use support::grader;

/// What the server's error message holds.
const HOSTILE: &str =
    "denied\u{1b}]52;c;cm0gLXJmIH4K\u{7}\u{1b}]0;owned\u{7}\u{1b}[2J\nreward 1.0000 PASS";

/// Serves 403 with [`HOSTILE`] in an S3 error document to every request until dropped.
struct Forbidding {
    port: u16,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Forbidding {
    fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = Arc::clone(&stop);
        let thread = std::thread::spawn(move || {
            // Bounded: the test's commands make a few requests each.
            for _ in 0..200_000 {
                if stopping.load(Ordering::Relaxed) {
                    return;
                }
                match listener.accept() {
                    Ok((stream, _)) => answer(stream),
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        Forbidding {
            port,
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for Forbidding {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Reads one request (headers and a body of its `Content-Length`) and answers 403.
fn answer(stream: std::net::TcpStream) {
    stream.set_nonblocking(false).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let mut reader = BufReader::new(stream);
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let lower = line.to_ascii_lowercase();
        if let Some(value) = lower.strip_prefix("content-length:") {
            length = value.trim().parse().unwrap_or(0);
        }
        if line == "\r\n" {
            break;
        }
    }
    let mut body = vec![0; length];
    let _ = reader.read_exact(&mut body);
    let document = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>AccessDenied</Code>\
         <Message>{HOSTILE}</Message><RequestId>1</RequestId></Error>"
    );
    let reply = format!(
        "HTTP/1.1 403 Forbidden\r\nContent-Type: application/xml\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{document}",
        document.len()
    );
    let _ = reader.get_mut().write_all(reply.as_bytes());
}

#[test]
fn an_error_reply_with_escape_sequences_prints_inert() {
    let server = Forbidding::start();
    for args in [
        vec!["show", "s3://evals/runs/a"],
        vec!["summary", "s3://evals/runs/a"],
        vec!["validate", "s3://evals/runs/a"],
        vec!["diff", "s3://evals/runs/a", "s3://evals/runs/b"],
    ] {
        let mut command = grader();
        for name in inherited_store_variables() {
            command.env_remove(name);
        }
        let output = command
            .envs(S3Server::env(server.port))
            .args(&args)
            .timeout(Duration::from_secs(120))
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        let stderr = &output.stderr;
        for byte in [0x1b_u8, 0x07] {
            assert!(
                !stderr.contains(&byte),
                "{args:?} printed byte {byte:#04x}: {}",
                String::from_utf8_lossy(stderr)
            );
        }
        let text = String::from_utf8_lossy(stderr);
        assert!(text.contains("s3://evals/runs/a"), "{args:?}: {text}");
        // The server's message is there, escaped: the test reached what it tests.
        assert!(text.contains("denied\\u{1b}]52;c;"), "{args:?}: {text}");
        // No line of the output starts with the forged text.
        assert!(
            !text.lines().any(|line| line.starts_with("reward 1.0000")),
            "{args:?}: {text}"
        );
    }
}
