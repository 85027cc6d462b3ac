//! The `object_storage` example as a newcomer runs it, against a real S3-compatible server
//! (moto) on 127.0.0.1: the first run writes every line and merges them into one object, the
//! second resumes them all and replaces the object with the same lines.
#![allow(missing_docs)]

use grader_tests::child::Bounded as _;
use std::path::Path;
use std::process::Command;

use grader_tests::s3_server::S3Server;

fn run_example(port: u16, url: &str) -> String {
    let target_dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("CARGO_TARGET_TMPDIR is inside the target directory");
    let output = Command::new(env!("CARGO"))
        .args(["run", "--quiet", "--package", "grader-examples"])
        .arg("--target-dir")
        .arg(target_dir)
        .args(["--example", "object_storage", "--"])
        .arg(url)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .envs(S3Server::env(port))
        .output_bounded();
    let stdout = String::from_utf8(output.stdout).expect("the output is UTF-8");
    assert!(
        output.status.success(),
        "the example failed with {}\n--- stdout\n{stdout}\n--- stderr\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

#[test]
fn object_storage_writes_its_chunks_then_resumes_them_all() {
    let Some(server) = S3Server::start(env!("CARGO_TARGET_TMPDIR"), false) else {
        return;
    };
    server.create_bucket("demo");
    let url = "s3://demo/evals/run-1";
    let first = run_example(server.port(), url);
    assert!(
        first.contains("run: 1000 lines written to s3://demo/evals/run-1, 0 resumed"),
        "{first}"
    );
    assert!(
        first.contains("summary: 1000 lines, 500 samples, mean "),
        "{first}"
    );
    let chunks = server.keys("demo", "evals/run-1/");
    // A chunk goes once 200 lines wait; lines that finish together stay together.
    assert!(
        (4..=5).contains(&chunks.len()),
        "1000 lines in chunks of 200: {chunks:?}"
    );
    assert!(
        first.contains("merged: 1000 lines into s3://demo/evals/run-1.jsonl"),
        "{first}"
    );
    assert_eq!(
        server.count_lines("demo", "evals/run-1.jsonl"),
        (1000, 1),
        "one object beside the chunks"
    );
    let second = run_example(server.port(), url);
    assert!(second.contains("run: 0 lines written"), "{second}");
    assert!(second.contains("1000 resumed"), "{second}");
    assert!(second.contains("summary: 1000 lines"), "{second}");
    assert!(second.contains("merged: 1000 lines"), "{second}");
    assert_eq!(server.count_lines("demo", "evals/run-1.jsonl"), (1000, 1));
}
