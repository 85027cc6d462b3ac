//! The workspace's `filetracking/1` server against the reference's own: hud 0.6.21 drives both
//! on one root (`tests/data/filetracking_driver.py`): its eval loop's observer
//! (`hud.eval.file_tracking`) through the binding an environment publishes, and hud's
//! `read_frame` on raw connections for each method and for bad input (unknown methods, ids
//! that are not integers, a huge frame, lines that are not JSON objects); the reference is
//! hud's `FileTracker` served by its `serve_file_tracking`, as its workspace serves it. Every
//! reply must agree with the reference's, timings aside; links out of the root and
//! credential-shaped files are never read or diffed. Then the server's own bounds: its
//! connections, and nothing left once the workspace stops.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

use grader_env::workspace::Workspace;
use grader_env::{Environment, ServeConfig};
use grader_tests::driver::Driver;
use grader_tests::python::hud_python;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, AsyncWriteExt as _, BufReader as Lines};
use tokio::net::TcpStream;

const TMP: &str = env!("CARGO_TARGET_TMPDIR");

/// What a reply must never hold: the content of secrets, and of a file a link points at.
const NEVER: [&str; 4] = [
    "sk-initial-secret",
    "sk-agent-secret",
    "PRIVATE-KEY-CONTENT",
    "outside-content-XYZ",
];

/// hud 0.6.21 in a Python process, driving our server and the reference's.
struct Hud {
    driver: Driver,
    /// What the driver printed when it was ready.
    ready: Value,
}

impl Hud {
    fn start(python: &Path, root: &Path, target: &str, direct: bool) -> Self {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/filetracking_driver.py");
        let mut command = Command::new(python);
        command.arg(script).arg(root).arg(target);
        if direct {
            command.arg("direct");
        }
        let driver = Driver::spawn(&mut command);
        assert!(
            driver.greeting.get("raw").is_none(),
            "the driver did not start: {}",
            driver.greeting
        );
        let ready = driver.greeting.clone();
        Hud { driver, ready }
    }

    fn ask(&mut self, request: &Value) -> Value {
        self.driver.ask(request)
    }

    /// The lines sent on a fresh connection to each server: (ours, theirs), each the frames
    /// read until the server closed.
    fn raw(&mut self, lines: &[String]) -> (Vec<Value>, Vec<Value>) {
        let reply = self.ask(&json!({ "raw": lines }));
        let frames = |side: &str| reply[side].as_array().unwrap().clone();
        (frames("ours"), frames("theirs"))
    }

    /// As [`raw`](Self::raw), asserting that both agree, timings aside; returns ours.
    fn same(&mut self, lines: &[String]) -> Vec<Value> {
        let (ours, theirs) = self.raw(lines);
        assert_eq!(
            comparable(Value::Array(ours.clone())),
            comparable(Value::Array(theirs)),
            "for {lines:?}"
        );
        never_leaks(&Value::Array(ours.clone()));
        ours
    }
}

fn request(id: &Value, method: &str) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": {}}).to_string()
}

/// A reply's comparable part: timings left out, patches keyed by path (the reference orders
/// files of equal size as its set iterates).
fn comparable(value: Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut out = serde_json::Map::new();
            for (key, value) in map {
                if key == "snapshot_timestamp" || key == "scan_duration_ms" {
                    continue;
                }
                let mut value = comparable(value);
                if key == "patches"
                    && let Value::Array(patches) = &mut value
                {
                    patches.sort_by(|a, b| a["path"].as_str().cmp(&b["path"].as_str()));
                }
                out.insert(key, value);
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.into_iter().map(comparable).collect()),
        other => other,
    }
}

fn never_leaks(reply: &Value) {
    let text = reply.to_string();
    for secret in NEVER {
        assert!(!text.contains(secret), "{secret} leaked: {text}");
    }
}

fn paths(patches: &Value) -> Vec<&str> {
    let mut paths: Vec<&str> = patches
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["path"].as_str().unwrap())
        .collect();
    paths.sort_unstable();
    paths
}

fn write(root: &Path, path: &str, content: impl AsRef<[u8]>) {
    let path = root.join(path);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, content).unwrap();
}

/// A root with a few files, and beside it a directory the agent links to.
fn tree(name: &str) -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::Builder::new()
        .prefix(name)
        .tempdir_in(TMP)
        .unwrap();
    let root = dir.path().join("root");
    let outside = dir.path().join("outside");
    write(&outside, "secret.txt", "outside-content-XYZ\n");
    write(&root, "src/app.py", "def add(a, b):\n    return a - b\n");
    write(&root, "tests/test_app.py", "assert add(1, 2) == 3\n");
    write(&root, ".env", "OPENAI_API_KEY=sk-initial-secret\n");
    write(&root, ".gitignore", "*.log\n");
    write(&root, "node_modules/pkg/index.js", "module.exports = 1;\n");
    write(&root, "notes.txt", "first\nsecond\n");
    (dir, root, outside)
}

async fn tracked(root: &Path) -> Workspace {
    Workspace::builder(root)
        .sandboxed(false)
        .track_files(true)
        .start()
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_method_and_bad_input_answer_as_the_reference_does() {
    let Some(python) = hud_python(TMP) else {
        return;
    };
    let (_dir, root, outside) = tree("filetracking-raw");
    let workspace = tracked(&root).await;
    let capability = workspace.file_tracking_capability().unwrap();
    let mut hud = Hud::start(&python, &root, &capability.url, true);
    let reference = &hud.ready["reference"];
    assert_eq!(capability.name, reference["name"]);
    assert_eq!(capability.protocol, reference["protocol"]);
    assert_eq!(
        serde_json::to_value(&capability.params).unwrap(),
        reference["params"]
    );
    assert!(capability.url.starts_with("tcp://127.0.0.1:"));

    // The task's setup writes, then hud's eval loop asks for `setup` and `snapshot`.
    write(&root, "README.md", "# readme\n");
    write(
        &root,
        "src/app.py",
        "def add(a, b):\n    return a - b  # setup\n",
    );
    let ours = hud.same(&[request(&json!(1), "setup"), request(&json!(2), "snapshot")]);
    assert_eq!(
        paths(&ours[0]["result"]["patches"]),
        ["README.md", "src/app.py"]
    );
    let manifest = &ours[1]["result"];
    assert_eq!(
        paths(&manifest["files"]),
        [
            ".gitignore",
            "README.md",
            "notes.txt",
            "src/app.py",
            "tests/test_app.py"
        ]
    );
    assert_eq!(manifest["files_scanned"], 5);

    // The agent edits, writes secrets and binaries, links out of the root.
    write(&root, "src/app.py", "def add(a, b):\n    return a + b\n");
    std::fs::remove_file(root.join("notes.txt")).unwrap();
    write(&root, ".env", "OPENAI_API_KEY=sk-agent-secret\n");
    write(&root, "id_rsa", "PRIVATE-KEY-CONTENT\n");
    write(&root, ".ssh/config", "PRIVATE-KEY-CONTENT\n");
    write(&root, "debug.log", "ignored\n");
    write(&root, "node_modules/pkg/index.js", "module.exports = 2;\n");
    write(&root, "report.html", "<h1>ok</h1>\n");
    write(
        &root,
        "chart.png",
        b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff",
    );
    write(&root, "big.txt", "x".repeat(1024 * 1024 + 1));
    std::os::unix::fs::symlink(outside.join("secret.txt"), root.join("leak.txt")).unwrap();
    std::os::unix::fs::symlink(&outside, root.join("outdir")).unwrap();
    let ours = hud.same(&[request(&json!(3), "diff"), request(&json!(4), "snapshot")]);
    let diff = &ours[0]["result"];
    assert_eq!(
        paths(&diff["patches"]),
        [
            ".env",
            ".ssh/config",
            "big.txt",
            "chart.png",
            "id_rsa",
            "notes.txt",
            "report.html",
            "src/app.py"
        ]
    );
    let patch = |path: &str| {
        diff["patches"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["path"] == path)
            .unwrap()["patch"]
            .clone()
    };
    assert_eq!(
        patch(".env"),
        "Secret file changed (content redacted): .env\n"
    );
    assert_eq!(patch("chart.png"), "Binary file changed: chart.png\n");
    assert_eq!(
        patch("big.txt"),
        "File too large to diff (0 -> 1048577 bytes): big.txt\n"
    );
    assert!(
        patch("src/app.py")
            .as_str()
            .unwrap()
            .contains("+    return a + b")
    );
    let manifest = paths(&ours[1]["result"]["files"]);
    assert!(!manifest.contains(&".env") && !manifest.contains(&"id_rsa"));

    // A request whose id is not an integer is carried out and not answered.
    write(&root, "src/app.py", "def add(a, b):\n    return b + a\n");
    let ours = hud.same(&[
        request(&json!("x"), "diff"),
        request(&json!(1.5), "diff"),
        request(&Value::Null, "diff"),
        json!({"jsonrpc": "2.0", "method": "diff"}).to_string(),
        request(&json!(5), "diff"),
    ]);
    assert_eq!(ours.len(), 1, "{ours:?}");
    assert_eq!(ours[0]["id"], 5);
    assert_eq!(ours[0]["result"]["files_changed"], 0);

    // Unknown methods are error frames; the connection goes on.
    let ours = hud.same(&[
        request(&json!(6), "nope"),
        json!({"jsonrpc": "2.0", "id": 7}).to_string(),
        json!({"jsonrpc": "2.0", "id": 8, "method": 5}).to_string(),
        json!({"jsonrpc": "2.0", "id": 9, "method": null}).to_string(),
        request(&json!("s"), "nope"),
        request(&json!(true), "snapshot"),
        r#"{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"snapshot"}"#.to_owned(),
    ]);
    assert_eq!(ours.len(), 6, "{ours:?}");
    assert_eq!(
        ours[0]["error"],
        json!({"code": -32000, "message": "unknown filetracking method: 'nope'"})
    );
    assert_eq!(
        ours[1]["error"]["message"],
        "unknown filetracking method: ''"
    );
    assert_eq!(
        ours[2]["error"]["message"],
        "unknown filetracking method: 5"
    );
    assert_eq!(
        ours[3]["error"]["message"],
        "unknown filetracking method: None"
    );
    assert_eq!(ours[4]["id"], true);
    assert_eq!(ours[5]["result"]["files_scanned"], 7);

    // A huge frame, or a line that is not a JSON object, closes the connection; the server
    // serves the next one.
    let huge = json!({"jsonrpc": "2.0", "id": 10, "method": "diff", "pad": "x".repeat(1 << 20)});
    let ours = hud.same(&[huge.to_string(), request(&json!(11), "diff")]);
    assert!(ours.is_empty(), "{ours:?}");
    assert!(
        hud.same(&["{nope".to_owned(), request(&json!(12), "diff")])
            .is_empty()
    );
    assert!(
        hud.same(&["[1, 2]".to_owned(), request(&json!(13), "diff")])
            .is_empty()
    );
    assert!(
        hud.same(&[String::new(), request(&json!(13), "diff")])
            .is_empty()
    );
    assert_eq!(hud.same(&[request(&json!(14), "snapshot")]).len(), 1);

    // The end of the rollout: the last changes and the artifacts since the agent's baseline.
    write(&root, "report.html", "<h1>better</h1>\n");
    write(&root, "docs/summary.pdf", b"%PDF-1.4 tiny");
    write(&root, ".env", "OPENAI_API_KEY=sk-agent-secret-2\n");
    write(&root, "keys/credentials.html", "PRIVATE-KEY-CONTENT\n");
    let ours = hud.same(&[request(&json!(15), "flush")]);
    let capture = &ours[0]["result"]["capture"];
    assert_eq!(
        paths(&capture["files"]),
        ["chart.png", "docs/summary.pdf", "report.html"]
    );
    let report = capture["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == "report.html")
        .unwrap();
    assert_eq!(report["content_type"], "text/html");
    assert_eq!(report["file"]["data"], "PGgxPmJldHRlcjwvaDE+Cg==");
    assert_eq!(report["status"], "added");
    assert_eq!(capture["files_captured"], 3);

    // `advance`, hud's start call where a server gives no setup diff: nothing is pending.
    write(
        &root,
        "src/app.py",
        "def add(a, b):\n    return a + b + 0\n",
    );
    let ours = hud.same(&[request(&json!(16), "advance"), request(&json!(17), "diff")]);
    assert_eq!(ours[0]["result"], json!({"advanced": true}));
    assert_eq!(ours[1]["result"]["files_changed"], 0);

    drop(hud);
    workspace.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hud_eval_loop_reads_the_published_capability_as_the_reference() {
    let Some(python) = hud_python(TMP) else {
        return;
    };
    let (_dir, root, _outside) = tree("filetracking-observer");
    let env = Environment::new("coding").workspace_with(
        Workspace::builder(&root).sandboxed(false).track_files(true),
        "shell",
    );
    let server = env.bind(&ServeConfig::default()).await.unwrap();
    let control = format!("tcp://{}", server.local_addr());
    let mut hud = Hud::start(&python, &root, &control, false);
    let ours = hud.ready["ready"].clone();
    assert_eq!(ours["name"], "filetracking");
    assert_eq!(ours["protocol"], "filetracking/1");
    assert_eq!(ours["params"], hud.ready["reference"]["params"]);
    let url = ours["url"].as_str().unwrap().to_owned();

    // The task's setup, the rollout, the agent's work, the rollout's end.
    write(&root, "README.md", "# setup\n");
    hud.ask(&json!({"observe": "enter"}));
    write(&root, "src/app.py", "def add(a, b):\n    return a + b\n");
    write(&root, "page.html", "<p>done</p>\n");
    write(&root, ".env", "OPENAI_API_KEY=sk-agent-secret\n");
    let seen = hud.ask(&json!({"observe": "exit"}));
    never_leaks(&seen);
    let methods = |side: &str| -> Vec<String> {
        seen[side]
            .as_array()
            .unwrap()
            .iter()
            .map(|call| call[0].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(methods("ours"), ["setup", "snapshot", "flush"]);
    assert_eq!(methods("theirs"), methods("ours"));
    assert_eq!(
        comparable(seen["ours"].clone()),
        comparable(seen["theirs"].clone())
    );
    let setup = &seen["ours"][0][1];
    assert_eq!(paths(&setup["patches"]), ["README.md"]);
    let flush = &seen["ours"][2][1];
    assert_eq!(
        paths(&flush["diff"]["patches"]),
        [".env", "page.html", "src/app.py"]
    );
    assert_eq!(paths(&flush["capture"]["files"]), ["page.html"]);
    let mut emitted: Vec<&str> = seen["emitted"]
        .as_array()
        .unwrap()
        .iter()
        .map(|name| name.as_str().unwrap())
        .collect();
    emitted.sort_unstable();
    assert_eq!(
        emitted,
        [
            "filetracking.capture",
            "filetracking.capture",
            "filetracking.diff",
            "filetracking.diff",
            "filetracking.setup",
            "filetracking.setup",
            "filetracking.snapshot",
            "filetracking.snapshot"
        ]
    );

    // The next task: its setup rewrites the checkout, and its rollout's diffs are its own
    // agent's.
    std::fs::remove_file(root.join("page.html")).unwrap();
    write(&root, "src/app.py", "def add(a, b):\n    return a - b\n");
    hud.ask(&json!({"observe": "enter"}));
    write(&root, "tests/test_app.py", "");
    let seen = hud.ask(&json!({"observe": "exit"}));
    never_leaks(&seen);
    assert_eq!(
        comparable(seen["ours"].clone()),
        comparable(seen["theirs"].clone())
    );
    let setup = &seen["ours"][3][1];
    assert_eq!(paths(&setup["patches"]), ["page.html", "src/app.py"]);
    let flush = &seen["ours"][5][1];
    assert_eq!(paths(&flush["diff"]["patches"]), ["tests/test_app.py"]);
    assert_eq!(flush["capture"]["files_eligible"], 0);

    drop(hud);
    server.shutdown().await;
    let addr = url.trim_start_matches("tcp://");
    assert!(
        TcpStream::connect(addr).await.is_err(),
        "the filetracking server outlived the environment"
    );
}

/// Sends a `snapshot` request and reads its reply line.
async fn snapshot(stream: &mut Lines<TcpStream>, id: usize) -> Value {
    let frame = format!("{}\n", request(&json!(id), "snapshot"));
    stream.get_mut().write_all(frame.as_bytes()).await.unwrap();
    let mut line = String::new();
    stream.read_line(&mut line).await.unwrap();
    serde_json::from_str(&line).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_are_bounded_and_none_outlives_the_workspace() {
    let (_dir, root, _outside) = tree("filetracking-bounds");
    let untracked = Workspace::builder(&root)
        .sandboxed(false)
        .start()
        .await
        .unwrap();
    assert!(untracked.file_tracking_capability().is_none());
    untracked.stop().await;

    let workspace = tracked(&root).await;
    let url = workspace.file_tracking_capability().unwrap().url;
    let addr = url.trim_start_matches("tcp://").to_owned();
    let mut open = Vec::new();
    for id in 0..64 {
        let mut stream = Lines::new(TcpStream::connect(&addr).await.unwrap());
        let reply = snapshot(&mut stream, id).await;
        assert_eq!(reply["id"], id);
        assert_eq!(reply["result"]["files_scanned"], 4);
        open.push(stream);
    }
    // One more is closed at once; those open still serve.
    let mut refused = TcpStream::connect(&addr).await.unwrap();
    let mut byte = [0u8; 1];
    assert_eq!(refused.read(&mut byte).await.unwrap_or(0), 0);
    let reply = snapshot(&mut open[0], 100).await;
    assert_eq!(reply["id"], 100);

    workspace.stop().await;
    for stream in &mut open {
        let mut rest = Vec::new();
        assert_eq!(stream.read_to_end(&mut rest).await.unwrap_or(0), 0);
    }
    assert!(TcpStream::connect(&addr).await.is_err());
}
