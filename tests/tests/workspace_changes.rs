//! The change tracker against the reference's own: hud 0.6.21's
//! `hud.environment.file_tracker.FileTracker` and grader-env's `Tracker` watch the same
//! directory while a seeded random agent edits it (text edits that difflib must diff as
//! Python does, CRLF and Unicode line breaks, binary files, credential-shaped files, excluded
//! directories, the root `.gitignore`, a file over 1 MiB, links out of the root), and every
//! round's changes must agree field for field.
#![allow(clippy::unwrap_used)]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use grader_env::workspace::{Status, Tracker};
use grader_tests::python::hud_python;
use serde_json::Value;

const TMP: &str = env!("CARGO_TARGET_TMPDIR");

/// Two reference trackers over `root`: one asked for its changes each round, one only at the
/// end (its changes since the baseline).
const SCRIPT: &str = r#"
import json, sys
from hud.environment.file_tracker import FileTracker
each, once = FileTracker(sys.argv[1]), FileTracker(sys.argv[1])
each.take_baseline(); once.take_baseline()
print("ready", flush=True)
for line in sys.stdin:
    tracker = once if line.strip() == "end" else each
    print(json.dumps(tracker.take_snapshot().to_dict()), flush=True)
"#;

struct Reference {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Reference {
    fn start(python: &Path, root: &Path) -> Self {
        let mut child = Command::new(python)
            .args(["-c", SCRIPT])
            .arg(root)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        assert_eq!(line.trim(), "ready");
        Reference {
            child,
            stdin,
            stdout,
        }
    }

    fn ask(&mut self, what: &str) -> Value {
        writeln!(self.stdin, "{what}").unwrap();
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        serde_json::from_str(&line).unwrap()
    }
}

impl Drop for Reference {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A diff's comparable part: timings left out, patches keyed by path.
fn comparable(mut diff: Value) -> Value {
    let object = diff.as_object_mut().unwrap();
    object.remove("scan_duration_ms");
    object.remove("snapshot_timestamp");
    let patches = object.get_mut("patches").unwrap().as_array_mut().unwrap();
    patches.sort_by(|a, b| a["path"].as_str().cmp(&b["path"].as_str()));
    diff
}

/// A small deterministic generator (no two runs differ).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

const WORDS: [&str; 12] = [
    "fn main() {",
    "}",
    "    let x = 1;",
    "",
    "return x",
    "# comment",
    "assert add(1, 2) == 3",
    "import os",
    "    pass",
    "def f():",
    "\tindented",
    "é ünïcode ✓",
];

/// Text of `n` lines from a small vocabulary (so long files have "popular" lines, which
/// difflib's heuristic treats apart), with a line break of the generator's choice.
fn text(rng: &mut Lcg, n: usize) -> Vec<u8> {
    let breaks = ["\n", "\n", "\n", "\r\n", "\r", "\u{2028}", "\u{0b}"];
    let mut out = String::new();
    for _ in 0..n {
        out.push_str(WORDS[rng.below(WORDS.len())]);
        out.push_str(breaks[rng.below(breaks.len())]);
    }
    if rng.below(3) == 0 {
        out.push_str("no newline at end");
    }
    out.into_bytes()
}

/// Edits a text file's lines: inserts, deletes and replaces a few.
fn edit(rng: &mut Lcg, path: &Path) {
    let old = std::fs::read_to_string(path).unwrap_or_default();
    let mut lines: Vec<String> = old.split('\n').map(str::to_owned).collect();
    for _ in 0..=rng.below(4) {
        let at = rng.below(lines.len() + 1);
        match rng.below(3) {
            0 => lines.insert(at, WORDS[rng.below(WORDS.len())].to_owned()),
            1 if at < lines.len() => {
                lines.remove(at);
            }
            _ if at < lines.len() => lines[at] = format!("changed {}", rng.next()),
            _ => lines.push("appended".to_owned()),
        }
    }
    std::fs::write(path, lines.join("\n")).unwrap();
}

fn files_under(root: &Path, dir: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![root.join(dir)];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let kind = entry.file_type().unwrap();
            if kind.is_dir() {
                stack.push(entry.path());
            } else if kind.is_file() {
                found.push(entry.path());
            }
        }
    }
    found.sort();
    found
}

/// The layout the agent starts from.
fn lay_out(root: &Path, rng: &mut Lcg) {
    for dir in [
        "src",
        "tests",
        "node_modules/pkg",
        ".git",
        "build",
        ".ssh",
        "__pycache__",
    ] {
        std::fs::create_dir_all(root.join(dir)).unwrap();
    }
    for k in 0..6 {
        std::fs::write(root.join(format!("src/mod{k}.rs")), {
            let n = 5 + rng.below(40);
            text(rng, n)
        })
        .unwrap();
    }
    std::fs::write(root.join("src/long.py"), text(rng, 600)).unwrap();
    std::fs::write(root.join("tests/test_app.py"), text(rng, 12)).unwrap();
    std::fs::write(root.join("node_modules/pkg/index.js"), "x").unwrap();
    std::fs::write(root.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(root.join("build/out.txt"), "built\n").unwrap();
    std::fs::write(root.join("__pycache__/m.cpython-311.pyc"), [0u8, 1, 2]).unwrap();
    std::fs::write(
        root.join(".gitignore"),
        "/build/\n*.log\n# comment\n!important.log\n",
    )
    .unwrap();
    std::fs::write(root.join(".env"), "OPENAI_API_KEY=sk-secret\n").unwrap();
    std::fs::write(root.join(".ssh/id_rsa"), "-----BEGIN KEY-----\n").unwrap();
    std::fs::write(root.join("api_key.json"), "{\"key\": \"secret\"}\n").unwrap();
    std::fs::write(root.join("image.bin"), [0xff, 0xfe, 0x00, 0x80]).unwrap();
    std::fs::write(root.join("big.txt"), "x".repeat(1024 * 1024 + 10)).unwrap();
    std::os::unix::fs::symlink("/etc/passwd", root.join("passwd-link")).unwrap();
    std::os::unix::fs::symlink("/etc", root.join("etc-link")).unwrap();
}

/// One round of an agent's edits.
fn act(root: &Path, rng: &mut Lcg, round: usize) {
    let sources = files_under(root, "src");
    for _ in 0..=rng.below(3) {
        if sources.is_empty() {
            break;
        }
        let pick = rng.below(sources.len());
        edit(rng, &sources[pick]);
    }
    match round % 6 {
        0 => std::fs::write(root.join(format!("src/new{round}.rs")), text(rng, 8)).unwrap(),
        1 => {
            if let Some(victim) = sources.iter().rev().find(|p| !p.ends_with("long.py")) {
                std::fs::remove_file(victim).unwrap();
            }
        }
        2 => {
            std::fs::write(root.join(".env"), format!("OPENAI_API_KEY=sk-{round}\n")).unwrap();
            std::fs::write(root.join("debug.log"), "ignored by .gitignore\n").unwrap();
        }
        3 => {
            std::fs::write(root.join("tests/test_app.py"), "").unwrap();
            std::fs::write(root.join("image.bin"), [0xfe, 0xff, round as u8]).unwrap();
        }
        4 => {
            std::fs::write(root.join("big.txt"), "y".repeat(1024 * 1024 + round)).unwrap();
            std::fs::write(root.join("node_modules/pkg/index.js"), "changed").unwrap();
        }
        _ => edit(rng, &root.join("src/long.py")),
    }
}

#[test]
fn the_tracker_agrees_with_the_references_round_by_round() {
    let Some(python) = hud_python(TMP) else {
        return;
    };
    let root = Path::new(TMP).join(format!("workspace-changes-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).unwrap();
    let mut rng = Lcg(0x5eed);
    lay_out(&root, &mut rng);

    let mut reference = Reference::start(&python, &root);
    let mut tracker = Tracker::start(&root).unwrap();
    let mut compared = 0;
    // Diffs of the 600-line file, whose lines difflib's heuristic counts as "popular".
    let mut long_diffs = 0;
    for round in 0..24 {
        // A new second for the file times, as an agent's edits between two polls have.
        std::thread::sleep(std::time::Duration::from_millis(20));
        act(&root, &mut rng, round);
        let theirs = comparable(reference.ask("diff"));
        let ours = comparable(tracker.diff().to_json());
        assert_eq!(ours, theirs, "round {round}");
        compared += theirs["patches"].as_array().unwrap().len();
        long_diffs += theirs["patches"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| p["path"] == "src/long.py" && p["status"] == "modified")
            .count();
    }
    assert!(compared > 50, "the rounds changed files: {compared}");
    assert!(long_diffs >= 4, "the long file was diffed: {long_diffs}");

    // Since the baseline: the agent's changes, as a grader reads them.
    let changes = tracker.changes();
    let theirs = comparable(reference.ask("end"));
    assert_eq!(comparable(changes.to_json()), theirs);
    assert!(changes.touched("tests/*"));
    let env = changes.get(".env").unwrap();
    assert_eq!(env.status, Status::Modified);
    assert_eq!(env.patch, "Secret file changed (content redacted): .env\n");
    assert!(
        !changes.to_json().to_string().contains("sk-"),
        "no secret shown"
    );
    for left_out in [
        "node_modules/pkg/index.js",
        "debug.log",
        "build/out.txt",
        "passwd-link",
    ] {
        assert!(changes.get(left_out).is_none(), "{left_out}");
    }
    assert!(
        changes
            .files
            .iter()
            .all(|c| !c.path.starts_with("etc-link"))
    );
    drop(reference);
    std::fs::remove_dir_all(&root).unwrap();
}

/// Makes a chain of `depth` directories named `d` under `root`, without a path longer than the
/// system allows (each step from the last one's descriptor), and a file at the bottom.
fn deep_tree(root: &Path, depth: usize) {
    use rustix::fs::{Mode, OFlags};
    let mut dir =
        rustix::fs::open(root, OFlags::DIRECTORY | OFlags::RDONLY, Mode::empty()).unwrap();
    for _ in 0..depth {
        rustix::fs::mkdirat(&dir, "d", Mode::from_raw_mode(0o755)).unwrap();
        dir = rustix::fs::openat(&dir, "d", OFlags::DIRECTORY | OFlags::RDONLY, Mode::empty())
            .unwrap();
    }
    let file = rustix::fs::openat(
        &dir,
        "bottom.txt",
        OFlags::CREATE | OFlags::WRONLY,
        Mode::from_raw_mode(0o644),
    )
    .unwrap();
    rustix::io::write(&file, b"deep\n").unwrap();
}

/// A root that already holds a tree 10 000 directories deep (which overflowed a recursive
/// walk's stack and took the server down): the tracker starts, tracks what is within its
/// bounds, and lists what it left untracked; removing the tree through `Root` works too.
#[test]
fn a_tree_ten_thousand_deep_is_tracked_to_the_bound_and_listed() {
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("top.txt"), "top\n").unwrap();
    deep_tree(root.path(), 10_000);
    let tracker = Tracker::start(root.path()).unwrap();
    std::fs::write(root.path().join("top.txt"), "changed\n").unwrap();
    let changes = tracker.changes();
    assert_eq!(changes.get("top.txt").unwrap().status, Status::Modified);
    let depth = grader_env::workspace::MAX_DEPTH;
    let untracked = "d/".repeat(depth) + "d";
    assert_eq!(changes.untracked.len(), 1, "{:?}", changes.untracked);
    assert_eq!(changes.untracked[0], untracked);
    assert_eq!(changes.to_json()["untracked"][0], untracked.as_str());
    assert_eq!(changes.files_scanned, 1, "the deep file is past the bound");

    grader_env::workspace::Root::open(root.path())
        .unwrap()
        .clear()
        .unwrap();
    assert_eq!(std::fs::read_dir(root.path()).unwrap().count(), 0);
}

/// Links are never followed, whatever the agent swaps while the tracker reads: a directory
/// replaced by a link out of the root reads as nothing.
#[test]
fn a_directory_swapped_for_a_link_out_of_the_root_is_not_read() {
    let root = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.txt"), "host only\n").unwrap();
    std::fs::create_dir(root.path().join("tests")).unwrap();
    std::fs::write(root.path().join("tests/t.py"), "assert True\n").unwrap();
    let tracker = Tracker::start(root.path()).unwrap();
    std::fs::remove_dir_all(root.path().join("tests")).unwrap();
    std::os::unix::fs::symlink(outside.path(), root.path().join("tests")).unwrap();
    let changes = tracker.changes();
    assert_eq!(changes.get("tests/t.py").unwrap().status, Status::Deleted);
    assert!(
        changes.get("tests/secret.txt").is_none(),
        "{:?}",
        changes.files
    );
}
