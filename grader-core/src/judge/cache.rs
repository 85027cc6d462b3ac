//! Remembering replies: a [`JudgeCache`] maps everything that changes a judge's answer to the
//! reply it gave, in memory and optionally on disk.
//!
//! The key is a SHA-256 over this crate's version, the endpoint's URL and the whole request
//! body (model, sampling fields, both prompts with the criterion, question and answer in them,
//! the response schema). Headers and the API key are not part of it. Only replies that gave a
//! verdict are stored.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// A reply worth keeping: the model's text and what it cost.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CachedReply {
    /// The message content the verdict was read from.
    pub content: String,
    /// Prompt tokens, if the endpoint said.
    pub prompt_tokens: Option<u64>,
    /// Completion tokens, if the endpoint said.
    pub completion_tokens: Option<u64>,
}

/// A cache of judge replies, shared by every clone (clones are cheap).
///
/// ```
/// use grader_core::judge::{JudgeCache, JudgeConfig};
///
/// let cache = JudgeCache::in_memory();
/// let config = JudgeConfig::new().cache(cache.clone());
/// assert_eq!(cache.len(), 0);
/// # drop(config);
/// ```
#[derive(Debug, Clone, Default)]
pub struct JudgeCache {
    inner: Arc<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    memory: Mutex<HashMap<String, CachedReply>>,
    dir: Option<PathBuf>,
}

impl JudgeCache {
    /// A cache that lives as long as its last clone.
    #[must_use]
    pub fn in_memory() -> Self {
        JudgeCache::default()
    }

    /// A cache in memory backed by one JSON file per reply in `dir` (created when first
    /// written), so that replies survive the process. A file that cannot be read is a miss; one
    /// that cannot be written is logged and skipped.
    #[must_use]
    pub fn on_disk(dir: impl Into<PathBuf>) -> Self {
        JudgeCache {
            inner: Arc::new(Inner {
                memory: Mutex::default(),
                dir: Some(dir.into()),
            }),
        }
    }

    /// The key of a request: hex SHA-256 of the crate version, the URL and the body.
    #[must_use]
    pub fn key(url: &str, body: &[u8]) -> String {
        let mut hash = Sha256::new();
        for part in [env!("CARGO_PKG_VERSION").as_bytes(), url.as_bytes(), body] {
            hash.update((part.len() as u64).to_le_bytes());
            hash.update(part);
        }
        hash.finalize()
            .iter()
            .map(|byte| format!("{byte:02x}"))
            .collect()
    }

    /// How many replies are in memory.
    #[must_use]
    pub fn len(&self) -> usize {
        self.memory().len()
    }

    /// Whether no reply is in memory.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn memory(&self) -> std::sync::MutexGuard<'_, HashMap<String, CachedReply>> {
        self.inner
            .memory
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The reply stored under `key`, from memory or disk.
    #[must_use]
    pub fn get(&self, key: &str) -> Option<CachedReply> {
        if let Some(reply) = self.memory().get(key) {
            return Some(reply.clone());
        }
        let dir = self.inner.dir.as_ref()?;
        let text = std::fs::read(dir.join(format!("{key}.json"))).ok()?;
        let reply: CachedReply = serde_json::from_slice(&text).ok()?;
        self.memory().insert(key.to_owned(), reply.clone());
        Some(reply)
    }

    /// Stores `reply` under `key`.
    pub fn put(&self, key: &str, reply: &CachedReply) {
        self.memory().insert(key.to_owned(), reply.clone());
        let Some(dir) = self.inner.dir.as_ref() else {
            return;
        };
        let write = || -> std::io::Result<()> {
            std::fs::create_dir_all(dir)?;
            let json = serde_json::to_vec(reply).map_err(std::io::Error::other)?;
            // Write then rename, so a reader never sees half a file.
            static WRITES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
            let n = WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let temporary = dir.join(format!(".{key}.{}.{n}.tmp", std::process::id()));
            std::fs::write(&temporary, json)?;
            std::fs::rename(&temporary, dir.join(format!("{key}.json")))
        };
        if let Err(error) = write() {
            tracing::warn!(%error, dir = %dir.display(), "could not store a judge reply on disk");
        }
    }
}
