//! Every command reads `s3://` URLs beside local paths, against a real S3-compatible server
//! (moto) on 127.0.0.1: the chunks an evaluation wrote under a prefix read as one file, one
//! object read as a file, `merge` storing its output as one object that every command reads
//! back, and a missing bucket or denied access failing with the URL named and the secret key
//! not shown. Every command reads `gs://` URLs the same way, against a real Google Cloud
//! Storage emulator (fake-gcs-server) on 127.0.0.1.

#![allow(clippy::unwrap_used)]

mod support;

use std::path::Path;

use grader_tests::gcs_server::GcsServer;
use grader_tests::local_server::inherited_store_variables;
use grader_tests::s3_server::{S3Server, SECRET_KEY};
use predicates::prelude::PredicateBooleanExt as _;
use predicates::str::contains;
use support::{evaluation_file, grader, samples, temp_dir};

const TMP: &str = env!("CARGO_TARGET_TMPDIR");

/// `grader` without the object store settings inherited from whoever runs the tests.
fn store_grader() -> assert_cmd::Command {
    let mut command = grader();
    for name in inherited_store_variables() {
        command.env_remove(name);
    }
    command
}

/// `grader` pointed at the server on `port`.
fn grader_at(port: u16) -> assert_cmd::Command {
    let mut command = store_grader();
    command.envs(S3Server::env(port));
    command
}

/// A real object store on 127.0.0.1 that every command reads from.
trait Store {
    const SCHEME: &'static str;
    /// `grader` pointed at this store.
    fn grader(&self) -> assert_cmd::Command;
    fn create_bucket(&self, bucket: &str);
    fn put_object(&self, bucket: &str, key: &str, bytes: &[u8]);
}

impl Store for S3Server {
    const SCHEME: &'static str = "s3";
    fn grader(&self) -> assert_cmd::Command {
        grader_at(self.port())
    }
    fn create_bucket(&self, bucket: &str) {
        S3Server::create_bucket(self, bucket);
    }
    fn put_object(&self, bucket: &str, key: &str, bytes: &[u8]) {
        S3Server::put_object(self, bucket, key, bytes);
    }
}

impl Store for GcsServer {
    const SCHEME: &'static str = "gs";
    fn grader(&self) -> assert_cmd::Command {
        let mut command = store_grader();
        command.envs(self.env());
        command
    }
    fn create_bucket(&self, bucket: &str) {
        GcsServer::create_bucket(self, bucket);
    }
    fn put_object(&self, bucket: &str, key: &str, bytes: &[u8]) {
        GcsServer::put_object(self, bucket, key, bytes);
    }
}

/// Uploads `path`'s lines as an evaluation's chunks of 7 lines under `bucket/prefix`, spread
/// over 2 shards' folders as a sharded run leaves them (each line in its own shard).
fn upload_as_chunks(store: &impl Store, bucket: &str, prefix: &str, path: &Path) -> usize {
    let text = std::fs::read_to_string(path).unwrap();
    let mut parts: [Vec<&str>; 2] = [Vec::new(), Vec::new()];
    for line in text.lines() {
        let id = serde_json::from_str::<serde_json::Value>(line).unwrap()["id"]
            .as_str()
            .unwrap()
            .to_owned();
        let shard = grader_eval::Shard::new(1, 2).unwrap();
        parts[usize::from(shard.contains(&id))].push(line);
    }
    let mut chunks = 0;
    for (index, lines) in parts.iter().enumerate() {
        for (number, chunk) in lines.chunks(7).enumerate() {
            let key = format!("{prefix}/part-{index}-of-2/chunk-{number:06}.jsonl");
            store.put_object(bucket, &key, (chunk.join("\n") + "\n").as_bytes());
            chunks += 1;
        }
    }
    chunks
}

fn summary_json(command: &mut assert_cmd::Command) -> serde_json::Value {
    let output = command.output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let mut value: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    value["grading_secs"] = serde_json::Value::Null;
    value
}

#[test]
fn every_command_reads_an_evaluation_s_chunks_and_single_objects() {
    if let Some(server) = S3Server::start(TMP, false) {
        every_command_reads(&server);
    }
}

#[test]
fn every_command_reads_an_evaluation_s_chunks_and_single_objects_in_google_cloud_storage() {
    if let Some(server) = GcsServer::start(TMP) {
        every_command_reads(&server);
    }
}

fn every_command_reads<S: Store>(store: &S) {
    store.create_bucket("evals");
    let dir = temp_dir();
    let local = dir.path().join("local.jsonl");
    evaluation_file(&local, samples(30, |i| ((i % 3) as f64 / 2.0, 1.0)), 2);
    let chunks = upload_as_chunks(store, "evals", "runs/a", &local);
    assert!(chunks >= 4, "{chunks} chunks");
    store.put_object("evals", "files/one.jsonl", &std::fs::read(&local).unwrap());
    let url = &format!("{}://evals/runs/a", S::SCHEME);
    let one = &format!("{}://evals/files/one.jsonl", S::SCHEME);

    let whole = summary_json(grader().args(["summary", "--json"]).arg(&local));
    assert_eq!(
        summary_json(store.grader().args(["summary", "--json", url])),
        whole
    );
    assert_eq!(
        summary_json(store.grader().args(["summary", "--json", one])),
        whole
    );

    let merged = dir.path().join("merged.jsonl");
    store
        .grader()
        .args(["merge", url, "-o"])
        .arg(&merged)
        .assert()
        .code(0)
        .stderr(contains("60 lines from 1 files (0 duplicates left out)"))
        .stderr(contains("note").not());
    let sorted = |path: &Path| {
        let mut lines: Vec<String> = std::fs::read_to_string(path)
            .unwrap()
            .lines()
            .map(|line| {
                let mut value: serde_json::Value = serde_json::from_str(line).unwrap();
                value["duration_secs"] = serde_json::Value::Null;
                value.to_string()
            })
            .collect();
        lines.sort();
        lines
    };
    assert_eq!(sorted(&merged), sorted(&local));

    store.grader().args(["validate", url]).assert().code(0);
    let shown = store.grader().args(["show", url]).output().unwrap();
    assert_eq!(shown.status.code(), Some(0), "{shown:?}");
    let shown = String::from_utf8(shown.stdout).unwrap();
    assert!(shown.contains("q17") && shown.contains("tests"), "{shown}");
    let diff = store
        .grader()
        .args(["diff", "--json"])
        .arg(&local)
        .arg(url)
        .output()
        .unwrap();
    assert_eq!(diff.status.code(), Some(0), "{diff:?}");
    let diff: serde_json::Value = serde_json::from_slice(&diff.stdout).unwrap();
    assert_eq!(diff["new"]["file"], url.as_str());
    assert_eq!(diff["base"]["mean"], diff["new"]["mean"]);
    for list in [
        "reward_changes",
        "new_errors",
        "only_in_base",
        "only_in_new",
    ] {
        assert_eq!(diff[list], serde_json::json!([]), "{list}");
    }
    let page = dir.path().join("page.html");
    store
        .grader()
        .args(["report", url, "-o"])
        .arg(&page)
        .assert()
        .code(0);
    assert!(std::fs::read_to_string(&page).unwrap().contains("q17"));
}

#[test]
fn unreadable_urls_name_the_url_and_never_the_secret() {
    let Some(server) = S3Server::start(TMP, false) else {
        return;
    };
    let port = server.port();
    for args in [
        vec!["summary", "s3://no-such-bucket/runs/a"],
        vec!["show", "s3://no-such-bucket/runs/a"],
        vec!["merge", "s3://no-such-bucket/runs/a", "-o", "/dev/null"],
    ] {
        grader_at(port)
            .args(&args)
            .assert()
            .code(2)
            .stderr(contains(
                "s3://no-such-bucket/runs/a: cannot list the chunks: the bucket does not exist",
            ))
            .stderr(contains(SECRET_KEY).not());
    }
    server.create_bucket("evals");
    grader_at(port)
        .args(["validate", "s3://evals/nothing"])
        .assert()
        .code(2)
        .stderr(contains("s3://evals/nothing: no results there"));
    // A bucket's root holds no run here: its listing is not read as lines.
    for command in ["validate", "summary"] {
        grader_at(port)
            .args([command, "s3://evals"])
            .assert()
            .code(2)
            .stderr(contains("s3://evals: no results there"));
    }
    grader_at(port)
        .args(["summary", "s3://user:pass@evals/x"])
        .assert()
        .code(2)
        .stderr(contains("s3://***@evals/x: not a usable object store URL"))
        .stderr(contains("pass").not());
    let Some(strict) = S3Server::start(TMP, true) else {
        return;
    };
    grader_at(strict.port())
        .args(["summary", "s3://locked/runs/a"])
        .assert()
        .code(2)
        .stderr(contains(
            "s3://locked/runs/a: cannot list the chunks: access denied",
        ))
        .stderr(contains(SECRET_KEY).not());
}

/// `grader summary --json` of `input` from the server on `port`.
fn summary_of(port: u16, input: &std::ffi::OsStr) -> serde_json::Value {
    summary_json(grader_at(port).args(["summary", "--json"]).arg(input))
}

#[test]
fn merge_stores_its_output_as_one_object_that_every_command_reads_back() {
    let Some(server) = S3Server::start(TMP, false) else {
        return;
    };
    let port = server.port();
    server.create_bucket("evals");
    let dir = temp_dir();
    let whole = dir.path().join("whole.jsonl");
    evaluation_file(&whole, samples(30, |i| ((i % 4) as f64 / 3.0, 1.0)), 2);
    let text = std::fs::read_to_string(&whole).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    // Three shards; the last repeats a line of the second and ends in a torn line.
    let shards: Vec<_> = (0..3)
        .map(|i| dir.path().join(format!("part-{i}.jsonl")))
        .collect();
    let third = lines.len() / 3;
    std::fs::write(&shards[0], lines[..third].join("\n") + "\n").unwrap();
    std::fs::write(&shards[1], lines[third..2 * third].join("\n") + "\n").unwrap();
    let torn = &lines[0][..lines[0].len() / 2];
    std::fs::write(
        &shards[2],
        format!(
            "{}\n{}\n{torn}",
            lines[third],
            lines[2 * third..].join("\n")
        ),
    )
    .unwrap();

    let local = dir.path().join("merged.jsonl");
    grader()
        .args(["merge", "-o"])
        .arg(&local)
        .args(&shards)
        .assert()
        .code(0);
    let url = "s3://evals/merged/all.jsonl";
    grader_at(port)
        .args(["merge", "-o", url])
        .args(&shards)
        .assert()
        .code(0)
        .stderr(contains(format!(
            "{url}: {} lines from 3 files (1 duplicates left out)",
            lines.len()
        )))
        .stderr(contains("part-2.jsonl: torn last line left out"));
    assert_eq!(server.keys("evals", "merged/"), ["merged/all.jsonl"]);
    assert_eq!(
        server.get_object("evals", "merged/all.jsonl"),
        std::fs::read(&local).unwrap(),
        "the object holds the local merge's bytes"
    );
    let expected = summary_of(0, local.as_os_str());
    assert_eq!(expected["samples"], 30);
    assert_eq!(summary_of(port, url.as_ref()), expected);
    grader_at(port)
        .args(["validate", url])
        .assert()
        .code(0)
        .stdout(contains(format!("{} results", lines.len())));
    let diff = grader_at(port)
        .args(["diff", "--json"])
        .arg(&whole)
        .arg(url)
        .output()
        .unwrap();
    assert_eq!(diff.status.code(), Some(0), "{diff:?}");
    let diff: serde_json::Value = serde_json::from_slice(&diff.stdout).unwrap();
    assert_eq!(diff["base"]["mean"], diff["new"]["mean"]);
    assert_eq!(diff["reward_changes"], serde_json::json!([]));

    // Merging again replaces the object; a URL input merges into a URL output.
    grader_at(port)
        .args(["merge", "-o", "s3://evals/merged/first.jsonl"])
        .arg(&shards[0])
        .assert()
        .code(0);
    grader_at(port)
        .args(["merge", "-o", url, "s3://evals/merged/first.jsonl"])
        .assert()
        .code(0)
        .stderr(contains(format!("{url}: {third} lines from 1 files")));
    assert_eq!(
        server.get_object("evals", "merged/all.jsonl"),
        std::fs::read(&shards[0]).unwrap()
    );
}

#[test]
fn merge_into_a_url_refuses_a_missing_bucket_a_run_s_prefix_and_its_own_input() {
    let Some(server) = S3Server::start(TMP, false) else {
        return;
    };
    let port = server.port();
    let dir = temp_dir();
    let local = dir.path().join("local.jsonl");
    evaluation_file(&local, samples(5, |_| (1.0, 1.0)), 1);

    grader_at(port)
        .args(["merge", "-o", "s3://no-such-bucket/merged.jsonl"])
        .arg(&local)
        .assert()
        .code(2)
        .stderr(contains(
            "s3://no-such-bucket/merged.jsonl: cannot list the chunks: the bucket does not exist",
        ))
        .stderr(contains(SECRET_KEY).not());

    server.create_bucket("evals");
    upload_as_chunks(&server, "evals", "runs/a", &local);
    let before = server.keys("evals", "");
    for (output, says) in [
        (
            "s3://evals/runs/a",
            "s3://evals/runs/a: holds part-0-of-2/ from an evaluation",
        ),
        (
            "s3://evals",
            "s3://evals: not a usable object store URL: name the object to write",
        ),
    ] {
        grader_at(port)
            .args(["merge", "-o", output])
            .arg(&local)
            .assert()
            .code(2)
            .stderr(contains(says));
    }
    grader_at(port)
        .args(["merge", "s3://evals/runs/a", "-o", "s3://evals/runs/a/"])
        .assert()
        .code(1)
        .stderr(contains("s3://evals/runs/a/: the output is also an input"));
    assert_eq!(server.keys("evals", ""), before, "nothing written");
}

#[test]
fn a_run_missing_a_shard_is_read_with_a_note_naming_it() {
    let Some(server) = S3Server::start(TMP, false) else {
        return;
    };
    let port = server.port();
    server.create_bucket("evals");
    let dir = temp_dir();
    let local = dir.path().join("local.jsonl");
    evaluation_file(&local, samples(12, |_| (1.0, 1.0)), 1);
    upload_as_chunks(&server, "evals", "runs/whole", &local);
    let whole = grader_at(port)
        .args(["summary", "s3://evals/runs/whole"])
        .output()
        .unwrap();
    assert_eq!(whole.status.code(), Some(0), "{whole:?}");
    assert!(whole.stderr.is_empty(), "{whole:?}");

    // Only the first shard's chunks, as while the second has not uploaded yet.
    let keys = server.keys("evals", "runs/whole/part-0-of-2/");
    assert!(!keys.is_empty());
    for key in keys {
        let copy = key.replace("runs/whole/", "runs/half/");
        server.put_object("evals", &copy, &server.get_object("evals", &key));
    }
    let merged = dir.path().join("merged.jsonl");
    grader_at(port)
        .args(["merge", "s3://evals/runs/half", "-o"])
        .arg(&merged)
        .assert()
        .code(0)
        .stderr(contains(
            "grader: note: s3://evals/runs/half: no chunks from shard 1 of 2",
        ));
    for command in ["summary", "validate"] {
        grader_at(port)
            .args([command, "s3://evals/runs/half"])
            .assert()
            .code(0)
            .stderr(contains(
                "grader: note: s3://evals/runs/half: no chunks from shard 1 of 2: not started \
                 yet, stopped before the first upload, or given no samples",
            ));
    }
}
