//! The artifacts a `filetracking/1` `flush` carries: the content of the documents, images and
//! HTML files the agent added or modified, as the reference's `FileTracker._capture_artifacts`
//! reads them (its extensions, its limits, and a file never read through a link or outside
//! the root, nor when it changed since the scan saw it).

use std::io::Read as _;
use std::os::unix::fs::MetadataExt as _;
use std::path::Path;

use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};

use super::changes::{Diff, Entry, ScanTime, Snapshot, Status, Tracker, hex, mtime_ns, round2};
use super::root::Root;

/// The extensions whose files are captured, with the content type each is sent as (the
/// reference's `DEFAULT_CAPTURE_EXTENSIONS` and `CAPTURE_CONTENT_TYPES`).
pub const CAPTURE_CONTENT_TYPES: &[(&str, &str)] = &[
    (
        ".docx",
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    ),
    (".htm", "text/html"),
    (".html", "text/html"),
    (".jpeg", "image/jpeg"),
    (".jpg", "image/jpeg"),
    (".pdf", "application/pdf"),
    (".png", "image/png"),
    (
        ".pptx",
        "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    ),
    (".webp", "image/webp"),
    (".xlsm", "application/vnd.ms-excel.sheet.macroEnabled.12"),
    (
        ".xlsx",
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    ),
];

/// The most files one capture carries.
const MAX_CAPTURE_FILES: usize = 20;
/// The largest file captured (5 MiB).
const MAX_CAPTURE_FILE_BYTES: u64 = 5 * 1024 * 1024;
/// The most bytes one capture carries, before base64 (15 MiB).
const MAX_CAPTURE_TOTAL_BYTES: u64 = 15 * 1024 * 1024;

/// One captured file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Artifact {
    /// The path relative to the root.
    pub path: String,
    /// Added or modified since the agent's baseline.
    pub status: Status,
    /// Its size in bytes.
    pub size: u64,
    /// The SHA-256 of the content captured.
    pub content_hash: String,
    /// The content type, by extension.
    pub content_type: &'static str,
    /// The content, base64.
    pub data: String,
}

/// The artifacts of a `flush`: the reference's capture payload.
#[derive(Debug, Clone, PartialEq)]
pub struct Capture {
    /// When the scan ended, in seconds since the Unix epoch.
    pub snapshot_timestamp: f64,
    /// How long the scan took, in milliseconds.
    pub scan_duration_ms: f64,
    /// How many files the scan tracked.
    pub files_scanned: usize,
    /// How many files were added or modified since the agent's baseline.
    pub files_changed: usize,
    /// How many of those have a captured extension and are not secrets.
    pub files_eligible: usize,
    /// How many eligible files were left out: past a limit, or changed since the scan.
    pub files_skipped: usize,
    /// The captured files, by path.
    pub files: Vec<Artifact>,
    /// Whether a limit left files out (20 files, 5 MiB each, 15 MiB in all).
    pub truncated: bool,
}

impl Capture {
    /// The wire form, as the reference's: `files_captured` is the number of `files`, each
    /// `{path, size, content_hash, content_type, file: {type, data, media_type}, status}`;
    /// `truncated` only when true.
    #[must_use]
    pub fn to_json(&self) -> Value {
        let files: Vec<Value> = self
            .files
            .iter()
            .map(|file| {
                json!({
                    "path": file.path,
                    "size": file.size,
                    "content_hash": file.content_hash,
                    "content_type": file.content_type,
                    "file": {"type": "file", "data": file.data, "media_type": file.content_type},
                    "status": file.status,
                })
            })
            .collect();
        let mut out = json!({
            "snapshot_timestamp": self.snapshot_timestamp,
            "scan_duration_ms": round2(self.scan_duration_ms),
            "files_scanned": self.files_scanned,
            "files_changed": self.files_changed,
            "files_eligible": self.files_eligible,
            "files_captured": self.files.len(),
            "files_skipped": self.files_skipped,
            "files": files,
        });
        if self.truncated
            && let Value::Object(map) = &mut out
        {
            map.insert("truncated".into(), Value::Bool(true));
        }
        out
    }
}

/// The `filetracking/1` reply to `flush`: the changes since the last scan and the changed
/// artifacts' content.
#[derive(Debug, Clone, PartialEq)]
pub struct Flush {
    /// The changes since the last scan (as [`Tracker::diff_scan`]).
    pub diff: Diff,
    /// The artifacts added or modified since the agent's baseline.
    pub capture: Capture,
}

impl Flush {
    /// The wire form: `{"diff": ..., "capture": ...}`.
    #[must_use]
    pub fn to_json(&self) -> Value {
        json!({"diff": self.diff.to_json(), "capture": self.capture.to_json()})
    }
}

impl Tracker {
    /// The changes since the last scan (as [`diff_scan`](Self::diff_scan)) and the content of
    /// the artifacts (documents, images, HTML: [`CAPTURE_CONTENT_TYPES`]) added or modified
    /// since the agent's baseline, from one scan: the reference's `flush_changes`, the
    /// `filetracking/1` `flush` method. Secrets are never captured.
    pub fn flush(&mut self) -> Flush {
        let (current, time) = self.scan_timed();
        let capture = capture(self.root(), &self.baseline, &current.files, time);
        Flush {
            diff: self.diff_current(current, time),
            capture,
        }
    }
}

/// The artifacts of `current` added or modified since `baseline`.
fn capture(root: &Path, baseline: &Snapshot, current: &Snapshot, time: ScanTime) -> Capture {
    let mut changed: Vec<(&String, &Entry, Status)> = current
        .iter()
        .filter_map(|(path, entry)| match baseline.get(path) {
            None => Some((path, entry, Status::Added)),
            Some(old) if old.hash != entry.hash => Some((path, entry, Status::Modified)),
            Some(_) => None,
        })
        .collect();
    changed.sort_by(|a, b| a.0.cmp(b.0));
    let mut out = Capture {
        snapshot_timestamp: time.timestamp,
        scan_duration_ms: time.duration_ms,
        files_scanned: current.len(),
        files_changed: changed.len(),
        files_eligible: 0,
        files_skipped: 0,
        files: Vec::new(),
        truncated: false,
    };
    let mut total = 0u64;
    for (path, entry, status) in changed {
        let Some(content_type) = content_type(path) else {
            continue;
        };
        if entry.redacted {
            continue;
        }
        out.files_eligible += 1;
        if out.files.len() >= MAX_CAPTURE_FILES
            || entry.size > MAX_CAPTURE_FILE_BYTES
            || total + entry.size > MAX_CAPTURE_TOTAL_BYTES
        {
            out.files_skipped += 1;
            out.truncated = true;
            continue;
        }
        match read_artifact(root, path, entry) {
            Some((data, content_hash)) => {
                total += entry.size;
                out.files.push(Artifact {
                    path: path.clone(),
                    status,
                    size: entry.size,
                    content_hash,
                    content_type,
                    data: base64(&data),
                });
            }
            None => out.files_skipped += 1,
        }
    }
    out
}

/// The content type of a captured extension (Python's `PurePosixPath(path).suffix.lower()`).
fn content_type(path: &str) -> Option<&'static str> {
    let name = path.rsplit('/').next().unwrap_or(path);
    let at = name.rfind('.')?;
    if at == 0 || at + 1 == name.len() {
        return None;
    }
    let suffix = name[at..].to_lowercase();
    CAPTURE_CONTENT_TYPES
        .iter()
        .find(|(extension, _)| *extension == suffix)
        .map(|(_, content_type)| *content_type)
}

/// The file's bytes and their SHA-256, when it is a regular file inside the root reached
/// without a link, and it is still what the scan saw (size, time, and content where the scan
/// hashed it) before and after reading.
fn read_artifact(root: &Path, rel: &str, entry: &Entry) -> Option<(Vec<u8>, String)> {
    let mut file = Root::open(root).ok()?.open_file(rel).ok()?;
    let before = file.metadata().ok()?;
    if before.len() != entry.size
        || mtime_ns(&before) != entry.mtime_ns
        || before.len() > MAX_CAPTURE_FILE_BYTES
    {
        return None;
    }
    let mut data = Vec::new();
    (&mut file)
        .take(entry.size.saturating_add(1))
        .read_to_end(&mut data)
        .ok()?;
    let after = file.metadata().ok()?;
    if data.len() as u64 != entry.size
        || after.len() != entry.size
        || mtime_ns(&after) != entry.mtime_ns
        || after.dev() != before.dev()
        || after.ino() != before.ino()
    {
        return None;
    }
    let hash = hex(&Sha256::digest(&data));
    if entry.hash.len() == 64 && *entry.hash != *hash {
        return None;
    }
    Some((data, hash))
}

/// Standard base64 with padding.
fn base64(data: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for (i, shift) in [18, 12, 6, 0].into_iter().enumerate() {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[((n >> shift) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_is_the_standard_alphabet_with_padding() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
        assert_eq!(base64(&[0xff, 0xfe, 0x00]), "//4A");
    }

    #[test]
    fn suffixes_are_read_as_pythons_pure_posix_path() {
        assert_eq!(content_type("out/report.PDF"), Some("application/pdf"));
        assert_eq!(content_type("index.html"), Some("text/html"));
        assert_eq!(content_type(".html"), None);
        assert_eq!(content_type("dir.png/notes"), None);
        assert_eq!(content_type("file.png."), None);
        assert_eq!(content_type("archive.tar.png"), Some("image/png"));
    }
}
