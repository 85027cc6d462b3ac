//! Evaluations in object storage against a real S3-compatible server (moto) on 127.0.0.1: a
//! run killed with SIGKILL resumes from its chunks, shards are read back, and `merge` and the
//! summary of the URL equal those of a local run; a missing bucket, denied access, a network
//! failure in the middle of an upload and a wrong shard setting each fail with an error that
//! names the URL and not the secret key, losing and doubling no line. An Azure SAS token from
//! the environment stays out of a network error too. A bucket policy denying uploads under one
//! prefix and reads under another (enforced by moto as by S3) fails runs, merges and reads
//! with the URL named, storing nothing where uploads are denied. A merge larger than a part is
//! stored by a multipart upload and reads back byte for byte. Against a real Azure Blob server
//! (Azurite) on 127.0.0.1, a sharded run under an `az://` prefix and its merge into one blob
//! read back as the local run. Against a real Google Cloud Storage emulator (fake-gcs-server)
//! on 127.0.0.1, which reads but refuses `object_store`'s uploads, chunks under a `gs://`
//! prefix read back as the local run, a run finds them and resumes after them, and a refused
//! upload fails naming the URL.

use grader_tests::child::{self, Bounded as _};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use grader_tests::azurite::{ACCOUNT_KEY, Azurite};
use grader_tests::gcs_server::{GcsServer, PRIVATE_KEY};
use grader_tests::lines::by_pair;
use grader_tests::local_server::inherited_store_variables;
use grader_tests::s3_server::{CutProxy, S3Server, SECRET_KEY};

const PROBE: &str = env!("CARGO_BIN_EXE_store-probe");
const TMP: &str = env!("CARGO_TARGET_TMPDIR");

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(TMP).join("eval-store").join(name);
    if dir.exists() {
        std::fs::remove_dir_all(&dir).expect("clear the scratch folder");
    }
    std::fs::create_dir_all(&dir).expect("make the scratch folder");
    dir
}

/// The probe, pointed at the S3 server (or proxy) on `port`.
fn probe(port: u16, args: &[&str]) -> Command {
    let mut command = Command::new(PROBE);
    for name in inherited_store_variables() {
        command.env_remove(name);
    }
    command
        .args(args)
        .envs(S3Server::env(port))
        .env("RUST_BACKTRACE", "0")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

/// Runs the probe to its end: exit code, stdout, stderr.
fn finish(child: Child) -> (i32, String, String) {
    let output = child::wait_with_output(child, "the probe");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

fn call(port: u16, args: &[&str]) -> (i32, String, String) {
    finish(probe(port, args).spawn().expect("start the probe"))
}

/// Waits (polling, with no deadline deciding the test) until `ready` holds or the child has
/// exited.
fn wait_until(child: &mut Child, mut ready: impl FnMut() -> bool) {
    while !ready() {
        if child.try_wait().expect("poll the probe").is_some() {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

const SAMPLES: usize = 80;
const EPOCHS: u32 = 2;
const TOTAL: usize = SAMPLES * EPOCHS as usize;

/// A local run of the probe: the reference every URL run is compared with.
fn reference(dir: &Path) -> (BTreeMap<(String, u32), String>, String) {
    let local = dir.join("local.jsonl");
    let local = local.to_str().expect("a UTF-8 path");
    let (code, _, stderr) = call(0, &["run", local, "80", "2", "4"]);
    assert_eq!(code, 0, "{stderr}");
    let (code, summary, stderr) = call(0, &["summary", local]);
    assert_eq!(code, 0, "{stderr}");
    (by_pair(Path::new(local)), summary)
}

/// `url` merged into a local file by the probe pointed at the S3 server (or proxy) on `port`,
/// as pairs, and its summary.
fn read_back(port: u16, dir: &Path, url: &str) -> (BTreeMap<(String, u32), String>, String) {
    read_back_in(&S3Server::env(port), dir, url)
}

/// As [`read_back`], for the probe run with `env`.
fn read_back_in(
    env: &[(&'static str, String)],
    dir: &Path,
    url: &str,
) -> (BTreeMap<(String, u32), String>, String) {
    let merged = dir.join("merged.jsonl");
    let merged_arg = merged.to_str().expect("a UTF-8 path");
    let (code, report, stderr) = call_in(env, &["merge", merged_arg, url]);
    assert_eq!(code, 0, "{stderr}");
    assert!(report.contains("duplicates: 0"), "{report}");
    let (code, summary, stderr) = call_in(env, &["summary", url]);
    assert_eq!(code, 0, "{stderr}");
    (by_pair(&merged), summary)
}

fn assert_clean_error(stderr: &str, url: &str) {
    assert!(stderr.contains(url), "the error names {url}: {stderr}");
    assert!(
        !stderr.contains(SECRET_KEY),
        "the secret key is shown: {stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn a_run_killed_with_sigkill_resumes_from_its_chunks_and_reads_back_as_a_local_run() {
    killed_and_resumed("sigkill", 0, false);
}

/// On two worker threads, where each lane hands the lines that ended in a poll over as one
/// buffer.
#[test]
fn a_multi_threaded_run_killed_with_sigkill_resumes_from_its_chunks_and_reads_back_as_a_local_run()
{
    killed_and_resumed("sigkill-threads", 2, false);
}

/// Through `run_shared`, where the lanes make the gradings and the awaiting task uploads the
/// lines they hand over.
#[test]
fn a_shared_run_killed_with_sigkill_resumes_from_its_chunks_and_reads_back_as_a_local_run() {
    killed_and_resumed("sigkill-shared", 2, true);
}

fn killed_and_resumed(name: &str, workers: usize, shared: bool) {
    let Some(server) = S3Server::start(TMP, false) else {
        return;
    };
    let port = server.port();
    server.create_bucket("evals");
    let dir = scratch(name);
    let (expected, expected_summary) = reference(&dir);
    assert_eq!(expected.len(), TOTAL);

    let url = "s3://evals/runs/killed";
    let workers = workers.to_string();
    let shared = if shared { "1" } else { "0" };
    let call = |port, args: &[&str]| {
        finish(
            probe(port, args)
                .env("STORE_PROBE_WORKERS", &workers)
                .env("STORE_PROBE_SHARED", shared)
                .spawn()
                .expect("start the probe"),
        )
    };
    let mut child = probe(port, &["run", url, "80", "2", "8"])
        .env("STORE_PROBE_WORKERS", &workers)
        .env("STORE_PROBE_SHARED", shared)
        .env("STORE_PROBE_DELAY_MS", "15")
        .env("STORE_PROBE_CHUNK", "10")
        .spawn()
        .expect("start the run to kill");
    wait_until(&mut child, || {
        server.keys("evals", "runs/killed/").len() >= 4
    });
    child.kill().expect("SIGKILL the run");
    let (code, _, _) = finish(child);
    assert_eq!(code, -1, "the run was killed by a signal, not finished");

    let keys = server.keys("evals", "runs/killed/");
    assert!(
        keys.iter()
            .all(|key| key.starts_with("runs/killed/part-0-of-1/chunk-")),
        "{keys:?}"
    );
    let (stored, chunks) = server.count_lines("evals", "runs/killed/");
    assert!(
        chunks >= 4 && (40..TOTAL).contains(&stored),
        "{stored} lines"
    );
    // A chunk is uploaded once 10 lines wait (lines that finish together are added together).
    assert!(stored >= chunks * 10, "{stored} lines in {chunks} chunks");

    let (code, report, stderr) = call(port, &["run", url, "80", "2", "8"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(report.contains(&format!("resumed: {stored}")), "{report}");
    assert!(
        report.contains(&format!("written: {}", TOTAL - stored)),
        "{report}"
    );
    let (lines, _) = server.count_lines("evals", "runs/killed/");
    assert_eq!(lines, TOTAL, "every pair stored once");

    let (pairs, summary) = read_back(port, &dir, url);
    assert_eq!(
        pairs, expected,
        "every pair once, with the local run's results"
    );
    assert_eq!(summary, expected_summary);

    // Running again finds everything done and writes nothing.
    let (code, report, stderr) = call(port, &["run", url, "80", "2", "8"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(report.contains("written: 0"), "{report}");
    assert!(report.contains(&format!("resumed: {TOTAL}")), "{report}");
}

#[test]
fn shards_in_one_prefix_read_back_as_one_local_run_and_a_wrong_shard_count_is_refused() {
    let Some(server) = S3Server::start(TMP, false) else {
        return;
    };
    let port = server.port();
    server.create_bucket("evals");
    let dir = scratch("shards");
    let (expected, expected_summary) = reference(&dir);

    let url = "s3://evals/sharded";
    for shard in ["0/3", "1/3", "2/3"] {
        let (code, report, stderr) = call(port, &["run", url, "80", "2", "4", shard]);
        assert_eq!(code, 0, "{stderr}");
        assert!(report.contains("written: "), "{report}");
    }
    let keys = server.keys("evals", "sharded/");
    for part in ["part-0-of-3", "part-1-of-3", "part-2-of-3"] {
        assert!(
            keys.contains(&format!("sharded/{part}/chunk-000000.jsonl")),
            "{keys:?}"
        );
    }
    let (pairs, summary) = read_back(port, &dir, url);
    assert_eq!(pairs, expected);
    assert_eq!(summary, expected_summary);

    // The shards merged into one object beside them read back as the local run too.
    let merged = "s3://evals/sharded-all.jsonl";
    let (code, report, stderr) = call(port, &["merge", merged, url]);
    assert_eq!(code, 0, "{stderr}");
    assert!(report.contains(&format!("written: {TOTAL}")), "{report}");
    let (code, summary, stderr) = call(port, &["summary", merged]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(summary, expected_summary);
    let (code, _, stderr) = call(port, &["merge", url, url]);
    assert_eq!(code, 1);
    assert!(stderr.contains("the output is also an input"), "{stderr}");

    // The same prefix with another shard count would overlap: refused, nothing written.
    let (code, _, stderr) = call(port, &["run", url, "80", "2", "4", "0/2"]);
    assert_eq!(code, 1);
    assert_clean_error(&stderr, url);
    assert!(
        stderr.contains("part-0-of-3") && stderr.contains("0/2"),
        "{stderr}"
    );
    assert_eq!(server.keys("evals", "sharded/"), keys, "nothing written");
    let (lines, _) = server.count_lines("evals", "sharded/");
    assert_eq!(lines, TOTAL);

    // A prefix mixing shard counts cannot be read as one run.
    server.put_object("evals", "sharded/part-0-of-2/chunk-000000.jsonl", b"");
    let (code, _, stderr) = call(port, &["summary", url]);
    assert_eq!(code, 1);
    assert_clean_error(&stderr, url);
    assert!(stderr.contains("[2, 3]"), "{stderr}");
}

#[test]
fn a_network_failure_mid_run_names_the_url_and_resume_loses_and_doubles_nothing() {
    let Some(server) = S3Server::start(TMP, false) else {
        return;
    };
    server.create_bucket("evals");
    let dir = scratch("network");
    let (expected, expected_summary) = reference(&dir);

    let url = "s3://evals/cut";
    let mut proxy = CutProxy::start(server.port());
    let mut child = probe(proxy.port(), &["run", url, "80", "2", "4"])
        .env("STORE_PROBE_DELAY_MS", "15")
        .env("STORE_PROBE_CHUNK", "10")
        .env("STORE_PROBE_RETRIES", "2")
        .spawn()
        .expect("start the run");
    wait_until(&mut child, || server.keys("evals", "cut/").len() >= 3);
    proxy.cut();
    let (code, _, stderr) = finish(child);
    assert_eq!(code, 1, "the run fails: {stderr}");
    assert_clean_error(&stderr, url);
    assert!(
        stderr.contains("upload the chunk: network error"),
        "{stderr}"
    );
    let (stored, _) = server.count_lines("evals", "cut/");
    assert!((30..TOTAL).contains(&stored), "{stored} lines");

    // The network is back: the resumed run does exactly what was not stored.
    let (code, report, stderr) = call(server.port(), &["run", url, "80", "2", "4"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(report.contains(&format!("resumed: {stored}")), "{report}");
    let (pairs, summary) = read_back(server.port(), &dir, url);
    assert_eq!(pairs, expected, "no line lost or doubled");
    assert_eq!(summary, expected_summary);
}

#[test]
fn a_missing_bucket_and_denied_access_name_the_url_and_never_the_secret() {
    let Some(server) = S3Server::start(TMP, false) else {
        return;
    };
    let url = "s3://no-such-bucket/runs/1";
    let (code, _, stderr) = call(server.port(), &["run", url, "10", "1", "2"]);
    assert_eq!(code, 1);
    assert_clean_error(&stderr, url);
    assert!(stderr.contains("the bucket does not exist"), "{stderr}");
    let (code, _, stderr) = call(server.port(), &["summary", url]);
    assert_eq!(code, 1);
    assert_clean_error(&stderr, url);

    // An empty prefix of a bucket that exists is not a run.
    server.create_bucket("empty");
    let (code, _, stderr) = call(server.port(), &["summary", "s3://empty/nothing"]);
    assert_eq!(code, 1);
    assert_clean_error(&stderr, "s3://empty/nothing");
    assert!(stderr.contains("no results there"), "{stderr}");

    let Some(strict) = S3Server::start(TMP, true) else {
        return;
    };
    let url = "s3://locked/runs/1";
    let (code, _, stderr) = call(strict.port(), &["run", url, "10", "1", "2"]);
    assert_eq!(code, 1);
    assert_clean_error(&stderr, url);
    assert!(stderr.contains("access denied"), "{stderr}");
    let (code, _, stderr) = call(strict.port(), &["merge", "/dev/null", url]);
    assert_eq!(code, 1);
    assert_clean_error(&stderr, url);
}

#[test]
fn waiting_lines_are_uploaded_after_the_interval_while_gradings_still_run() {
    let Some(server) = S3Server::start(TMP, false) else {
        return;
    };
    server.create_bucket("evals");
    let url = "s3://evals/slow";
    // One grading at a time, 400 ms each: 8 gradings take over 3 s, and no chunk ever fills.
    let mut child = probe(server.port(), &["run", url, "8", "1", "1"])
        .env("STORE_PROBE_DELAY_MS", "400")
        .env("STORE_PROBE_CHUNK", "1000")
        .env("STORE_PROBE_INTERVAL_MS", "100")
        .spawn()
        .expect("start the run");
    wait_until(&mut child, || !server.keys("evals", "slow/").is_empty());
    assert!(
        child.try_wait().expect("poll the probe").is_none(),
        "a chunk was uploaded while the run went on, not only at its end"
    );
    let (lines, chunks) = server.count_lines("evals", "slow/");
    assert!(lines < 8 && chunks >= 1, "{lines} lines in {chunks} chunks");
    let (code, report, stderr) = finish(child);
    assert_eq!(code, 0, "{stderr}");
    assert!(report.contains("written: 8"), "{report}");
    let (lines, chunks) = server.count_lines("evals", "slow/");
    assert_eq!(lines, 8);
    assert!(chunks >= 4, "a chunk per line or two: {chunks}");
}

#[test]
fn an_azure_sas_token_in_the_environment_never_shows_in_an_error() {
    // A port nothing listens on: the request fails as it is sent, with its address.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port();
    let sas = "sv=2020-01-01&sig=AzSasSignatureNeverShown";
    let output = Command::new(PROBE)
        .args(["run", "az://container/run", "3", "1", "1"])
        .env("AZURE_STORAGE_USE_EMULATOR", "true")
        .env("AZURE_STORAGE_ACCOUNT_NAME", "devstoreaccount1")
        .env("AZURE_STORAGE_SAS_KEY", sas)
        .env(
            "AZURITE_BLOB_STORAGE_URL",
            format!("http://127.0.0.1:{port}"),
        )
        .env("STORE_PROBE_RETRIES", "0")
        .output_bounded();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("az://container/run: cannot list the chunks: network error"),
        "{stderr}"
    );
    assert!(!stderr.contains("AzSasSignatureNeverShown"), "{stderr}");
}

/// Runs the probe with `env` to its end: exit code, stdout, stderr.
fn call_in(env: &[(&'static str, String)], args: &[&str]) -> (i32, String, String) {
    let mut command = Command::new(PROBE);
    for name in inherited_store_variables() {
        command.env_remove(name);
    }
    let child = command
        .args(args)
        .envs(env.iter().cloned())
        .env("RUST_BACKTRACE", "0")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the probe");
    finish(child)
}

#[test]
fn a_sharded_run_in_azure_blob_storage_and_its_merge_read_back_as_a_local_run() {
    let Some(azurite) = Azurite::start(TMP) else {
        return;
    };
    let env = azurite.env();
    azurite.create_container("evals");
    let dir = scratch("azure");
    let (expected, expected_summary) = reference(&dir);

    let url = "az://evals/runs/azure";
    for shard in ["0/2", "1/2"] {
        let mut env = env.clone();
        env.push(("STORE_PROBE_CHUNK", "25".to_owned()));
        let (code, report, stderr) = call_in(&env, &["run", url, "80", "2", "4", shard]);
        assert_eq!(code, 0, "{stderr}");
        assert!(report.contains("resumed: 0"), "{report}");
    }
    let blobs = azurite.blobs("evals", "runs/azure/");
    for part in ["part-0-of-2", "part-1-of-2"] {
        let chunks = blobs
            .iter()
            .filter(|blob| blob.starts_with(&format!("runs/azure/{part}/chunk-")))
            .count();
        // About 80 lines per shard, in chunks of 25.
        assert!(chunks >= 3, "{part}: {blobs:?}");
    }

    let (pairs, summary) = read_back_in(&env, &dir, url);
    assert_eq!(pairs, expected, "every pair once, as the local run's");
    assert_eq!(summary, expected_summary);

    // Merged into one blob, read back the same.
    let (code, _, stderr) = call_in(&env, &["merge", "az://evals/all.jsonl", url]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        azurite
            .blobs("evals", "all")
            .contains(&"all.jsonl".to_owned())
    );
    let (code, summary, stderr) = call_in(&env, &["summary", "az://evals/all.jsonl"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(summary, expected_summary);

    // Running a shard again finds its chunks and writes nothing.
    let (code, report, stderr) = call_in(&env, &["run", url, "80", "2", "4", "1/2"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(report.contains("written: 0"), "{report}");

    // A missing container names the URL, never the account key.
    let missing = "az://no-such-container/runs/1";
    let (code, _, stderr) = call_in(&env, &["run", missing, "3", "1", "1"]);
    assert_eq!(code, 1);
    assert!(
        stderr.contains(&format!(
            "{missing}: cannot list the chunks: the container does not exist"
        )),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    assert!(!stderr.contains(ACCOUNT_KEY), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn a_bucket_policy_denying_uploads_or_reads_fails_naming_the_url_and_stores_nothing() {
    let Some(server) = S3Server::start(TMP, false) else {
        return;
    };
    let port = server.port();
    server.create_bucket("policed");
    server.put_bucket_policy(
        "policed",
        r#"{"Version": "2012-10-17", "Statement": [
            {"Effect": "Deny", "Principal": "*", "Action": "s3:PutObject",
             "Resource": "arn:aws:s3:::policed/locked/*"},
            {"Effect": "Deny", "Principal": "*", "Action": "s3:GetObject",
             "Resource": "arn:aws:s3:::policed/sealed/*"}]}"#,
    );

    // Uploads refused by the policy: the run and a merge into the prefix fail, nothing stored.
    let url = "s3://policed/locked/run";
    let (code, _, stderr) = call(port, &["run", url, "10", "1", "2"]);
    assert_eq!(code, 1);
    assert_clean_error(&stderr, url);
    assert!(
        stderr.contains("cannot upload the chunk: access denied"),
        "{stderr}"
    );
    let dir = scratch("policy");
    let local = dir.join("local.jsonl");
    let local = local.to_str().expect("a UTF-8 path");
    let (code, _, stderr) = call(port, &["run", local, "10", "1", "2"]);
    assert_eq!(code, 0, "{stderr}");
    let merged = "s3://policed/locked/merged.jsonl";
    let (code, _, stderr) = call(port, &["merge", merged, local]);
    assert_eq!(code, 1);
    assert_clean_error(&stderr, merged);
    assert!(
        stderr.contains("cannot upload the object: access denied"),
        "{stderr}"
    );
    assert!(server.keys("policed", "locked/").is_empty());

    // Reads refused by the policy: the run's chunks are stored, but cannot be read back.
    let url = "s3://policed/sealed/run";
    let (code, report, stderr) = call(port, &["run", url, "10", "1", "2"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(report.contains("written: 10"), "{report}");
    assert!(!server.keys("policed", "sealed/").is_empty());
    for args in [
        vec!["summary", url],
        vec!["merge", local, url],
        vec!["run", url, "10", "1", "2"],
    ] {
        let (code, _, stderr) = call(port, &args);
        assert_eq!(code, 1, "{args:?}");
        assert_clean_error(&stderr, "s3://policed/sealed/run");
        assert!(
            stderr.contains("cannot read the chunk: access denied"),
            "{args:?}: {stderr}"
        );
    }
}

#[test]
fn a_merge_larger_than_a_part_is_stored_by_a_multipart_upload_and_reads_back_whole() {
    let Some(server) = S3Server::start(TMP, false) else {
        return;
    };
    let port = server.port();
    server.create_bucket("evals");
    let dir = scratch("multipart");
    // About 12 MiB of lines: one 10 MiB part and a smaller last one.
    let run = dir.join("run.jsonl");
    let run = run.to_str().expect("a UTF-8 path");
    let (code, _, stderr) = call(0, &["run", run, "40000", "1", "100"]);
    assert_eq!(code, 0, "{stderr}");
    // Merging one run's file writes its lines as they are.
    let expected = std::fs::read(run).expect("the run's file");
    assert!(expected.len() > 11 << 20, "{} bytes", expected.len());

    let url = "s3://evals/big/merged.jsonl";
    let (code, report, stderr) = call(port, &["merge", url, run]);
    assert_eq!(code, 0, "{stderr}");
    assert!(report.contains("written: 40000"), "{report}");
    let etag = server.etag("evals", "big/merged.jsonl");
    assert!(etag.ends_with("-2"), "stored in 2 parts: {etag}");
    assert!(
        server.get_object("evals", "big/merged.jsonl") == expected,
        "the object holds the run's lines"
    );
    // Read back through the store's reader: the same lines.
    let back = dir.join("back.jsonl");
    let back_arg = back.to_str().expect("a UTF-8 path");
    let (code, _, stderr) = call(port, &["merge", back_arg, url]);
    assert_eq!(code, 0, "{stderr}");
    assert!(std::fs::read(&back).expect("read back") == expected);
}

#[test]
fn chunks_in_google_cloud_storage_read_back_as_a_local_run_and_a_refused_upload_names_the_url() {
    let Some(gcs) = GcsServer::start(TMP) else {
        return;
    };
    let env = gcs.env();
    gcs.create_bucket("evals");
    let dir = scratch("gcs");
    let (expected, expected_summary) = reference(&dir);

    // Each shard run on its own, its lines stored as chunks of 25 lines, as a run on another
    // machine uploads them (the emulator takes uploads only through its JSON API).
    let mut shard_lines = Vec::new();
    for index in 0..2 {
        let local = dir.join(format!("shard-{index}.jsonl"));
        let local_arg = local.to_str().expect("a UTF-8 path");
        let shard = format!("{index}/2");
        let (code, _, stderr) = call(0, &["run", local_arg, "80", "2", "4", &shard]);
        assert_eq!(code, 0, "{stderr}");
        let text = std::fs::read_to_string(&local).expect("read the shard");
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        for (number, chunk) in lines.chunks(25).enumerate() {
            let name = format!("runs/gcs/part-{index}-of-2/chunk-{number:06}.jsonl");
            gcs.put_object("evals", &name, chunk.concat().as_bytes());
            // The first shard is also stored without its last chunk, as a run killed before
            // that upload leaves it.
            if index == 0 && (number + 1) * 25 < lines.len() {
                let name = format!("runs/cut/part-0-of-2/chunk-{number:06}.jsonl");
                gcs.put_object("evals", &name, chunk.concat().as_bytes());
            }
        }
        shard_lines.push(lines.len());
    }
    assert_eq!(shard_lines.iter().sum::<usize>(), TOTAL);
    let url = "gs://evals/runs/gcs";

    // Merged and summarized from the URL, as the local run.
    let (pairs, summary) = read_back_in(&env, &dir, url);
    assert_eq!(pairs, expected, "every pair once, as the local run's");
    assert_eq!(summary, expected_summary);

    // One object is read as a whole.
    let local = std::fs::read(dir.join("local.jsonl")).expect("read the local run");
    gcs.put_object("evals", "all.jsonl", &local);
    let (code, summary, stderr) = call_in(&env, &["summary", "gs://evals/all.jsonl"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(summary, expected_summary);

    // Running a shard again finds its chunks and uploads nothing.
    let (code, report, stderr) = call_in(&env, &["run", url, "80", "2", "4", "1/2"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(report.contains("written: 0"), "{report}");
    assert!(
        report.contains(&format!("resumed: {}", shard_lines[1])),
        "{report}"
    );

    // A shard cut short resumes after its last chunk: the lines it grades again go to the
    // next chunk, which this emulator refuses, and the error names that chunk.
    let chunks = shard_lines[0].div_ceil(25);
    let cut = "gs://evals/runs/cut";
    let (code, _, stderr) = call_in(&env, &["run", cut, "80", "2", "4", "0/2"]);
    assert_eq!(code, 1, "{stderr}");
    let next = format!("{cut}/part-0-of-2/chunk-{:06}.jsonl", chunks - 1);
    assert!(
        stderr.contains(&format!("{next}: cannot upload the chunk")),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    assert!(!stderr.contains(PRIVATE_KEY), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(
        gcs.names("evals", "runs/cut/").len(),
        chunks - 1,
        "the stored chunks are left as they were"
    );

    // A merge into one object is refused by this emulator, naming the URL.
    let (code, _, stderr) = call_in(&env, &["merge", "gs://evals/merged.jsonl", url]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("gs://evals/merged.jsonl"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    assert!(!stderr.contains(PRIVATE_KEY), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");

    // Nothing under a prefix is said so, naming the URL.
    let (code, _, stderr) = call_in(&env, &["summary", "gs://evals/runs/none"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("gs://evals/runs/none: no results there"),
        "{stderr}"
    );
}
