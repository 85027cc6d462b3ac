//! [`Tracker`] and [`Changes`]: what changed under a directory since a baseline, as the
//! reference's file tracker (`hud.environment.file_tracker.FileTracker`) computes it, as a Rust
//! value a grader reads.

use std::collections::HashMap;
use std::fs;
use std::io::Read as _;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use serde::Serialize;
use sha2::{Digest as _, Sha256};

use std::ffi::CStr;
use std::os::fd::{AsFd as _, BorrowedFd};

use rustix::fs::{AtFlags, FileType};

use super::difflib::unified_diff;
use super::pattern::{self, DEFAULT_EXCLUDES, SECRET_DENY};
use super::root::{MAX_DEPTH, Root, is_dot, open_regular, own_dir};

/// Files larger than this are not tracked at all (the reference's `DEFAULT_MAX_FILE_SIZE`,
/// 10 MB).
pub const DEFAULT_MAX_FILE_SIZE: u64 = 10 * 1024 * 1024;
/// The most bytes of new file content one scan reads (50 MB); past it a changed file is
/// tracked by size and time only.
const MAX_SCAN_CONTENT_BYTES: u64 = 50 * 1024 * 1024;
/// The most bytes of patches one set of changes holds (50 MB); the rest is left out and
/// [`Changes::truncated`] says so.
const MAX_DIFF_BYTES: usize = 50 * 1024 * 1024;
/// Files larger than this get a placeholder instead of a diff (1 MiB).
const MAX_DIFF_FILE_BYTES: u64 = 1024 * 1024;
/// The longest path, relative to the root, a scan tracks (4096 bytes, Linux's `PATH_MAX`): a
/// longer one is listed in [`Changes::untracked`].
pub const MAX_PATH_BYTES: usize = 4096;
/// How many untracked paths a scan lists (the first 100 it meets).
const MAX_UNTRACKED_LISTED: usize = 100;

/// Why a tracker could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TrackerError {
    /// The root is missing or is not a directory.
    #[error("cannot track changes under `{}`: {reason}", path.display())]
    Root {
        /// The root as given.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
}

/// How a file changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// It is new.
    Added,
    /// Its content changed.
    Modified,
    /// It is gone.
    Deleted,
}

/// One changed file: its path relative to the root (`/`-separated), how it changed, and its
/// patch: a unified diff for text (`a/PATH`, `b/PATH`, 3 lines of context, as Python's
/// `difflib`), or a one-line placeholder for a secret (`Secret file changed (content
/// redacted): PATH`), a file over 1 MiB (`File too large to diff (N -> M bytes): PATH`) or a
/// binary one (`Binary file changed: PATH`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Change {
    /// The path relative to the root.
    pub path: String,
    /// How it changed.
    pub status: Status,
    /// The unified diff, or the placeholder.
    pub patch: String,
    /// Its size before, in bytes (0 when added).
    pub size_before: u64,
    /// Its size after, in bytes (0 when deleted).
    pub size_after: u64,
    /// The SHA-256 of its content before (`redacted:…`, `overlimit:…` for what was not read).
    pub content_hash_before: Option<String>,
    /// The SHA-256 of its content after.
    pub content_hash_after: Option<String>,
}

/// What changed under a root between two scans: the reference's `DiffResult`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Changes {
    /// The changed files, smallest first (by the larger of the two sizes), then by path.
    #[serde(rename = "patches")]
    pub files: Vec<Change>,
    /// How many files the later scan tracked.
    pub files_scanned: usize,
    /// How many files changed (those left out by the patch budget included).
    pub files_changed: usize,
    /// Whether changes were left out because the patches would exceed 50 MB.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
    /// Directories and files the scan did not track because they are deeper than
    /// [`MAX_DEPTH`] or their path is longer than [`MAX_PATH_BYTES`] (the first 100; the
    /// reference has no such bound, and fails on such a tree). Empty, and not serialized, when
    /// the whole root was tracked.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub untracked: Vec<String>,
}

impl Changes {
    /// The change of `path`, if it changed.
    #[must_use]
    pub fn get(&self, path: &str) -> Option<&Change> {
        self.files.iter().find(|change| change.path == path)
    }

    /// Whether any changed path matches `pattern`, a glob over the whole relative path (`*`
    /// also crosses `/`, as Python's `fnmatch`): `changes.touched("tests/*")`.
    #[must_use]
    pub fn touched(&self, pattern: &str) -> bool {
        self.files
            .iter()
            .any(|change| pattern::fnmatch(&change.path, pattern))
    }

    /// Whether nothing changed.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.files_changed == 0
    }

    /// The `filetracking/1` wire form of a `diff` reply, without the scan's time
    /// ([`Diff::to_json`] has it).
    #[must_use]
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or_default()
    }
}

/// [`Changes`] with the time of the scan that found them: the reference's `DiffResult` whole,
/// the `filetracking/1` reply to `diff` and `setup`.
#[derive(Debug, Clone, PartialEq)]
pub struct Diff {
    /// The changes.
    pub changes: Changes,
    /// When the later scan ended, in seconds since the Unix epoch.
    pub snapshot_timestamp: f64,
    /// How long the later scan took, in milliseconds.
    pub scan_duration_ms: f64,
}

impl Diff {
    /// The wire form, as the reference's `DiffResult.to_dict()`: `snapshot_timestamp`,
    /// `scan_duration_ms` (rounded to 2 decimals), `files_scanned`, `files_changed`,
    /// `patches`, and `truncated` only when true.
    #[must_use]
    pub fn to_json(&self) -> serde_json::Value {
        let mut out = serde_json::Map::new();
        out.insert("snapshot_timestamp".into(), self.snapshot_timestamp.into());
        out.insert(
            "scan_duration_ms".into(),
            round2(self.scan_duration_ms).into(),
        );
        if let serde_json::Value::Object(changes) = self.changes.to_json() {
            let mut changes = changes;
            for key in ["files_scanned", "files_changed", "patches", "truncated"] {
                if let Some(value) = changes.remove(key) {
                    out.insert(key.into(), value);
                }
            }
        }
        serde_json::Value::Object(out)
    }
}

/// Python's `round(x, 2)`, for timings.
pub(super) fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// One file of a manifest: the `filetracking/1` `snapshot` reply lists them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ManifestEntry {
    /// The path relative to the root.
    pub path: String,
    /// Its size in bytes.
    pub size: u64,
    /// The SHA-256 of its content (or the placeholder of what was not read).
    pub content_hash: String,
}

/// What a scan knows of one file.
#[derive(Debug, Clone)]
pub(super) struct Entry {
    pub(super) size: u64,
    pub(super) mtime_ns: i128,
    pub(super) hash: Arc<str>,
    /// The text, with universal newlines (split into lines only to diff); `None` for binary,
    /// unreadable, over a limit, or a secret.
    text: Option<Arc<str>>,
    pub(super) redacted: bool,
}

pub(super) type Snapshot = HashMap<String, Entry>;

/// What one scan found: the files, and what it left untracked (see [`MAX_DEPTH`]).
#[derive(Debug, Clone, Default)]
pub(super) struct Scan {
    pub(super) files: Snapshot,
    pub(super) untracked: Vec<String>,
}

/// When a scan ended (seconds since the Unix epoch) and how long it took (milliseconds).
#[derive(Debug, Clone, Copy)]
pub(super) struct ScanTime {
    pub(super) timestamp: f64,
    pub(super) duration_ms: f64,
}

/// Tracks what changes under a directory, from a baseline taken when it starts: the files
/// added, removed and modified, with unified diffs for text, as the reference's file tracker
/// (hud 0.6.21) computes them, with its limits, its excludes ([`DEFAULT_EXCLUDES`], and the
/// root `.gitignore`'s patterns) and its deny list for credential-shaped paths
/// ([`SECRET_DENY`]: tracked by size and time, never read).
///
/// Symbolic links are not followed, in or out of the root: a link is neither a file nor a
/// directory here, so one pointing at a host path outside the root reads nothing there.
///
/// ```
/// use grader_env::workspace::Tracker;
///
/// let root = std::env::temp_dir().join(format!("doc-tracker-{}", std::process::id()));
/// std::fs::create_dir_all(root.join("tests"))?;
/// std::fs::write(root.join("tests/test_app.py"), "assert add(1, 2) == 3\n")?;
/// let tracker = Tracker::start(&root)?;
///
/// // The agent empties the tests.
/// std::fs::write(root.join("tests/test_app.py"), "")?;
/// let changes = tracker.changes();
/// assert!(changes.touched("tests/*"));
/// assert_eq!(
///     changes.get("tests/test_app.py").unwrap().patch,
///     "--- a/tests/test_app.py\n+++ b/tests/test_app.py\n@@ -1 +0,0 @@\n-assert add(1, 2) == 3"
/// );
/// # std::fs::remove_dir_all(&root)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Tracker {
    root: PathBuf,
    excludes: Vec<String>,
    max_file_size: u64,
    pub(super) baseline: Snapshot,
    previous: Snapshot,
}

impl Tracker {
    /// Starts tracking `root` with the reference's defaults: takes the baseline now.
    ///
    /// # Errors
    /// When `root` is not a directory.
    pub fn start(root: impl AsRef<Path>) -> Result<Tracker, TrackerError> {
        Tracker::with_excludes(root, DEFAULT_EXCLUDES)
    }

    /// As [`start`](Self::start), leaving out `excludes` instead of [`DEFAULT_EXCLUDES`] (the
    /// root `.gitignore` is honoured either way; the deny list always applies).
    ///
    /// # Errors
    /// When `root` is not a directory.
    pub fn with_excludes<S: AsRef<str>>(
        root: impl AsRef<Path>,
        excludes: &[S],
    ) -> Result<Tracker, TrackerError> {
        let given = root.as_ref();
        let failed = |reason: String| TrackerError::Root {
            path: given.to_owned(),
            reason,
        };
        let root = fs::canonicalize(given).map_err(|e| failed(e.to_string()))?;
        if !root.is_dir() {
            return Err(failed("is not a directory".to_owned()));
        }
        let mut excludes: Vec<String> = excludes.iter().map(|s| s.as_ref().to_owned()).collect();
        excludes.extend(gitignore(&root));
        let mut tracker = Tracker {
            root,
            excludes,
            max_file_size: DEFAULT_MAX_FILE_SIZE,
            baseline: Snapshot::new(),
            previous: Snapshot::new(),
        };
        let baseline = tracker.scan();
        if !baseline.untracked.is_empty() {
            tracing::warn!(
                root = %tracker.root.display(),
                untracked = ?baseline.untracked,
                "the change tracker does not track these paths: deeper than {MAX_DEPTH} \
                 directories or longer than {MAX_PATH_BYTES} bytes"
            );
        }
        tracker.baseline = baseline.files.clone();
        tracker.previous = baseline.files;
        Ok(tracker)
    }

    /// The root, resolved.
    #[must_use]
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// What changed since the baseline (the task's start): the agent's changes. Scans the
    /// root again; the baseline stays.
    #[must_use]
    pub fn changes(&self) -> Changes {
        let current = self.scan_after(&self.baseline);
        let mut changes = diff(&self.baseline, &current.files).0;
        changes.untracked = current.untracked;
        changes
    }

    /// What changed since the last `diff` (or the baseline), then remembers the current
    /// state for the next one: the reference's `take_snapshot`, the `filetracking/1` `diff`
    /// method. Changes left out by the patch budget stay pending for the next call.
    pub fn diff(&mut self) -> Changes {
        self.diff_scan().changes
    }

    /// As [`diff`](Self::diff), with the scan's time: the whole `filetracking/1` `diff` reply.
    pub fn diff_scan(&mut self) -> Diff {
        let (current, time) = self.scan_timed();
        self.diff_current(current, time)
    }

    /// What changed since the last scan (the setup's changes, when called as a task starts),
    /// then takes the current state as the agent's baseline: the reference's
    /// `take_setup_snapshot`, the `filetracking/1` `setup` method. The baseline is the whole
    /// current state even when the patch budget left changes out of the reply.
    ///
    /// ```
    /// use grader_env::workspace::Tracker;
    ///
    /// let root = std::env::temp_dir().join(format!("doc-setup-{}", std::process::id()));
    /// std::fs::create_dir_all(&root)?;
    /// let mut tracker = Tracker::start(&root)?;
    /// std::fs::write(root.join("task.md"), "Fix the bug.\n")?; // the task's setup
    /// assert_eq!(tracker.setup().changes.files[0].path, "task.md");
    ///
    /// std::fs::write(root.join("fix.py"), "print(1)\n")?; // the agent
    /// let reply = tracker.diff_scan().to_json();
    /// assert_eq!(reply["patches"][0]["path"], "fix.py");
    /// assert_eq!(tracker.manifest().len(), 2);
    /// # std::fs::remove_dir_all(&root)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn setup(&mut self) -> Diff {
        let (current, time) = self.scan_timed();
        let (mut changes, _) = diff(&self.previous, &current.files);
        changes.untracked = current.untracked;
        self.baseline = current.files.clone();
        self.previous = current.files;
        timed(changes, time)
    }

    /// Takes the current state as the agent's baseline, reporting nothing: the reference's
    /// `advance_baseline`, the `filetracking/1` `advance` method.
    pub fn advance(&mut self) {
        let (current, _) = self.scan_timed();
        self.baseline = current.files.clone();
        self.previous = current.files;
    }

    /// The files of the last scan, by path, without their content and without secrets: the
    /// reference's `current_manifest`, the `filetracking/1` `snapshot` method (it scans
    /// nothing).
    #[must_use]
    pub fn manifest(&self) -> Vec<ManifestEntry> {
        let mut files: Vec<ManifestEntry> = self
            .previous
            .iter()
            .filter(|(_, entry)| !entry.redacted)
            .map(|(path, entry)| ManifestEntry {
                path: path.clone(),
                size: entry.size,
                content_hash: entry.hash.to_string(),
            })
            .collect();
        files.sort_by(|a, b| a.path.cmp(&b.path));
        files
    }

    /// Diffs `current` against the last scan and keeps it as the last scan (with the changes
    /// the patch budget left out still pending).
    pub(super) fn diff_current(&mut self, current: Scan, time: ScanTime) -> Diff {
        let Scan {
            files: mut current,
            untracked,
        } = current;
        let (mut changes, skipped) = diff(&self.previous, &current);
        changes.untracked = untracked;
        for path in skipped {
            match self.previous.get(&path) {
                Some(old) => {
                    current.insert(path, old.clone());
                }
                None => {
                    current.remove(&path);
                }
            }
        }
        self.previous = current;
        timed(changes, time)
    }

    /// A scan reusing what the last one read, with its time.
    pub(super) fn scan_timed(&self) -> (Scan, ScanTime) {
        let start = Instant::now();
        let files = self.scan_after(&self.previous);
        let duration_ms = start.elapsed().as_secs_f64() * 1000.0;
        let timestamp = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0.0, |since| since.as_secs_f64());
        (
            files,
            ScanTime {
                timestamp,
                duration_ms,
            },
        )
    }

    fn scan(&self) -> Scan {
        self.scan_after(&Snapshot::new())
    }

    /// A scan that reuses what `previous` read of a file whose size and time are unchanged.
    ///
    /// It walks the root on descriptors, depth first without recursion, opening each entry
    /// beneath its directory's descriptor without following a link, so that nothing the agent
    /// does meanwhile (a directory swapped for a link out of the root, a file for a FIFO)
    /// makes it read outside the root or wait. It goes [`MAX_DEPTH`] directories deep and
    /// tracks paths up to [`MAX_PATH_BYTES`], listing what lies beyond as untracked.
    fn scan_after(&self, previous: &Snapshot) -> Scan {
        let mut scan = Scan::default();
        let mut budget = 0;
        let Ok(root) = Root::open(&self.root) else {
            return scan;
        };
        let Ok(top) = own_dir(root.fd(), c".") else {
            return scan;
        };
        let untracked = |path: String, scan: &mut Scan| {
            if scan.untracked.len() < MAX_UNTRACKED_LISTED {
                scan.untracked.push(path);
            }
        };
        // Each frame: a directory's entries (one descriptor) and its path with a final `/`.
        let mut stack: Vec<(rustix::fs::Dir, String)> = vec![(top, String::new())];
        loop {
            let depth = stack.len();
            let Some((entries, prefix)) = stack.last_mut() else {
                break;
            };
            let Some(Ok(entry)) = entries.next() else {
                stack.pop();
                continue;
            };
            let Ok(dir) = entries.fd() else {
                stack.pop();
                continue;
            };
            let name = entry.file_name();
            if is_dot(name) {
                continue;
            }
            let Ok(text) = name.to_str() else {
                // Python reads such a name as surrogate escapes; left out here.
                continue;
            };
            let rel = format!("{prefix}{text}");
            let kind = match entry.file_type() {
                FileType::Unknown => match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)
                {
                    Ok(stat) => FileType::from_raw_mode(stat.st_mode),
                    Err(_) => continue,
                },
                kind => kind,
            };
            let is_dir = kind == FileType::Directory;
            if pattern::matches(&rel, is_dir, &self.excludes) {
                continue;
            }
            if rel.len() > MAX_PATH_BYTES {
                untracked(rel, &mut scan);
                continue;
            }
            if is_dir {
                if depth > MAX_DEPTH {
                    untracked(rel, &mut scan);
                } else if let Ok(child) = own_dir(dir, name) {
                    stack.push((child, format!("{rel}/")));
                }
                continue;
            }
            if kind != FileType::RegularFile {
                continue;
            }
            let Ok(stat) = rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) else {
                continue;
            };
            if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile
                || stat.st_size.unsigned_abs() > self.max_file_size
            {
                continue;
            }
            let entry = build(dir, name, &rel, &stat, previous.get(&rel), &mut budget);
            scan.files.insert(rel, entry);
        }
        scan
    }
}

fn timed(changes: Changes, time: ScanTime) -> Diff {
    Diff {
        changes,
        snapshot_timestamp: time.timestamp,
        scan_duration_ms: time.duration_ms,
    }
}

pub(super) fn mtime_ns(meta: &fs::Metadata) -> i128 {
    i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec())
}

/// The modification time of `stat`, in nanoseconds.
pub(super) fn stat_mtime_ns(stat: &rustix::fs::Stat) -> i128 {
    i128::from(stat.st_mtime) * 1_000_000_000 + i128::from(stat.st_mtime_nsec)
}

/// What a scan records of the file `name` in `dir`: the reference's `_build_entry`.
fn build(
    dir: BorrowedFd<'_>,
    name: &CStr,
    rel: &str,
    stat: &rustix::fs::Stat,
    prev: Option<&Entry>,
    budget: &mut u64,
) -> Entry {
    let (size, mtime) = (stat.st_size.unsigned_abs(), stat_mtime_ns(stat));
    if let Some(prev) = prev
        && prev.size == size
        && prev.mtime_ns == mtime
    {
        return prev.clone();
    }
    let placeholder = |kind: &str| format!("{kind}:{size}:{mtime}");
    if pattern::matches(rel, false, SECRET_DENY) {
        return Entry {
            size,
            mtime_ns: mtime,
            hash: placeholder("redacted").into(),
            text: None,
            redacted: true,
        };
    }
    let (hash, text) = if size > MAX_DIFF_FILE_BYTES {
        (placeholder("overlimit"), None)
    } else if *budget + size > MAX_SCAN_CONTENT_BYTES {
        (placeholder("budget_exceeded"), None)
    } else {
        *budget += size;
        match read(dir, name) {
            Some(bytes) => (hex(&Sha256::digest(&bytes)), text(bytes)),
            None => (format!("unreadable:{size}"), None),
        }
    };
    Entry {
        size,
        mtime_ns: mtime,
        hash: hash.into(),
        text: text.map(Arc::from),
        redacted: false,
    }
}

/// The bytes of the regular file `name` in `dir` (at most [`MAX_DIFF_FILE_BYTES`] and one),
/// never following a link and never waiting on a FIFO: a file replaced by anything else since
/// the scan saw it reads as unreadable.
fn read(dir: BorrowedFd<'_>, name: &CStr) -> Option<Vec<u8>> {
    let file = open_regular(dir, name).ok()?;
    let mut bytes = Vec::new();
    file.take(MAX_DIFF_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .ok()?;
    Some(bytes)
}

pub(super) fn hex(digest: &[u8]) -> String {
    use std::fmt::Write as _;
    digest
        .iter()
        .fold(String::with_capacity(64), |mut out, byte| {
            let _ = write!(out, "{byte:02x}");
            out
        })
}

/// The text Python reads: strict UTF-8 (a BOM kept), universal newlines (`\r\n` and `\r`
/// become `\n`).
fn text(bytes: Vec<u8>) -> Option<String> {
    let text = String::from_utf8(bytes).ok()?;
    if text.contains('\r') {
        Some(text.replace("\r\n", "\n").replace('\r', "\n"))
    } else {
        Some(text)
    }
}

/// `str.splitlines()` of a text read by [`text`].
fn lines(text: &str) -> Vec<&str> {
    let mut lines = Vec::new();
    let mut start = 0;
    for (i, c) in text.char_indices() {
        if matches!(
            c,
            '\n' | '\u{0b}'
                | '\u{0c}'
                | '\u{1c}'
                | '\u{1d}'
                | '\u{1e}'
                | '\u{85}'
                | '\u{2028}'
                | '\u{2029}'
        ) {
            lines.push(&text[start..i]);
            start = i + c.len_utf8();
        }
    }
    if start < text.len() {
        lines.push(&text[start..]);
    }
    lines
}

/// The root `.gitignore`'s patterns, as the reference reads them: comments, blank lines and
/// negations skipped, a leading `/` removed.
fn gitignore(root: &Path) -> Vec<String> {
    let Some(bytes) = Root::open(root)
        .ok()
        .and_then(|root| read(root.fd().as_fd(), c".gitignore"))
    else {
        return Vec::new();
    };
    String::from_utf8_lossy(&bytes)
        .replace("\r\n", "\n")
        .replace('\r', "\n")
        .split('\n')
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#') && !line.starts_with('!'))
        .map(|line| line.trim_start_matches('/').to_owned())
        .collect()
}

/// The changes from `old` to `new`, and the paths left out by the patch budget.
fn diff(old: &Snapshot, new: &Snapshot) -> (Changes, Vec<String>) {
    let mut changed: Vec<(&str, Option<&Entry>, Option<&Entry>, Status)> = Vec::new();
    for (path, before) in old {
        match new.get(path) {
            None => changed.push((path, Some(before), None, Status::Deleted)),
            Some(after) if after.hash != before.hash => {
                changed.push((path, Some(before), Some(after), Status::Modified));
            }
            Some(_) => {}
        }
    }
    for (path, after) in new {
        if !old.contains_key(path) {
            changed.push((path, None, Some(after), Status::Added));
        }
    }
    let size = |entry: Option<&Entry>| entry.map_or(0, |e| e.size);
    changed.sort_by(|x, y| {
        let (sx, sy) = (size(x.1).max(size(x.2)), size(y.1).max(size(y.2)));
        sx.cmp(&sy).then_with(|| x.0.cmp(y.0))
    });
    let mut files = Vec::new();
    let mut skipped = Vec::new();
    let mut total = 0usize;
    for (path, before, after, status) in changed {
        let patch = patch_text(path, before, after);
        if total + patch.len() > MAX_DIFF_BYTES {
            skipped.push(path.to_owned());
            continue;
        }
        total += patch.len();
        files.push(Change {
            path: path.to_owned(),
            status,
            patch,
            size_before: size(before),
            size_after: size(after),
            content_hash_before: before.map(|e| e.hash.to_string()),
            content_hash_after: after.map(|e| e.hash.to_string()),
        });
    }
    let changes = Changes {
        untracked: Vec::new(),
        files_scanned: new.len(),
        files_changed: files.len() + skipped.len(),
        truncated: !skipped.is_empty(),
        files,
    };
    (changes, skipped)
}

/// The reference's `_patch_text`.
fn patch_text(path: &str, before: Option<&Entry>, after: Option<&Entry>) -> String {
    if before.is_some_and(|e| e.redacted) || after.is_some_and(|e| e.redacted) {
        return format!("Secret file changed (content redacted): {path}\n");
    }
    let (size_before, size_after) = (before.map_or(0, |e| e.size), after.map_or(0, |e| e.size));
    if size_before > MAX_DIFF_FILE_BYTES || size_after > MAX_DIFF_FILE_BYTES {
        return format!("File too large to diff ({size_before} -> {size_after} bytes): {path}\n");
    }
    fn text(entry: Option<&Entry>) -> Option<&str> {
        match entry {
            None => Some(""),
            Some(entry) => entry.text.as_deref(),
        }
    }
    let (Some(old), Some(new)) = (text(before), text(after)) else {
        return format!("Binary file changed: {path}\n");
    };
    let (old, new) = (lines(old), lines(new));
    unified_diff(&old, &new, &format!("a/{path}"), &format!("b/{path}"))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a test that cannot unwrap has failed
mod tests {
    use super::*;

    #[test]
    fn lines_are_read_as_python_reads_text() {
        let read = text(b"a\r\nb\rc\x0bd\xc2\x85e\n\nf".to_vec()).unwrap();
        assert_eq!(lines(&read), ["a", "b", "c", "d", "e", "", "f"]);
        let bom = text(b"\xef\xbb\xbfbom\n".to_vec()).unwrap();
        assert_eq!(lines(&bom), ["\u{feff}bom"]);
        assert!(text(b"\xff\xfe".to_vec()).is_none());
        assert!(lines("").is_empty());
    }

    #[test]
    fn gitignore_lines_become_patterns() {
        let dir = std::env::temp_dir().join(format!("tracker-gitignore-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join(".gitignore"), "# c\n\n/build/\n!keep\n*.log\n").unwrap();
        assert_eq!(gitignore(&dir), ["build/", "*.log"]);
        fs::remove_dir_all(&dir).unwrap();
    }
}
