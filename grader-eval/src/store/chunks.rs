//! The layout under a URL: a folder per shard (`part-I-of-N/`) of numbered chunk objects
//! (`chunk-K.jsonl`), each holding whole lines; how the chunks are listed (refusing runs of
//! different shard counts), fetched and read back as [`Line`]s, and which shards have none
//! ([`MissingShards`]).

use std::fmt;

use bytes::Bytes;
use futures_util::StreamExt as _;
use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, ObjectStoreExt as _};

use super::messages::describe;
use super::url::StoreUrl;
use crate::error::StoreError;
use crate::line::Line;
use crate::shard::Shard;

impl StoreUrl {
    /// The folder of a shard's chunks.
    pub(super) fn part(&self, shard: Shard) -> ObjectPath {
        self.prefix
            .clone()
            .join(part_name(shard.index(), shard.count()))
    }
}

pub(super) fn part_name(index: u32, count: u32) -> String {
    format!("part-{index}-of-{count}")
}

pub(super) fn chunk_name(number: u64) -> String {
    format!("chunk-{number:06}.jsonl")
}

/// One chunk object found under a URL.
#[derive(Debug, Clone)]
pub(super) struct Chunk {
    pub(super) index: u32,
    pub(super) count: u32,
    pub(super) number: u64,
    pub(super) location: ObjectPath,
}

/// `part-I-of-N/chunk-K.jsonl` right under `prefix`, parsed.
fn parse_chunk(prefix: &ObjectPath, location: &ObjectPath) -> Option<Chunk> {
    let mut rest = location.prefix_match(prefix)?;
    let part = rest.next()?;
    let chunk = rest.next()?;
    if rest.next().is_some() {
        return None;
    }
    let (index, count) = part.as_ref().strip_prefix("part-")?.split_once("-of-")?;
    let number = chunk
        .as_ref()
        .strip_prefix("chunk-")?
        .strip_suffix(".jsonl")?;
    let digits = |text: &str| !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit());
    // At most 18 digits, so that the chunk after it is still numbered (a writer makes one
    // chunk at a time from 0: no run reaches 10^18).
    if !(digits(index) && digits(count) && digits(number)) || number.len() > 18 {
        return None;
    }
    let chunk = Chunk {
        index: index.parse().ok()?,
        count: count.parse().ok()?,
        number: number.parse().ok()?,
        location: location.clone(),
    };
    (chunk.index < chunk.count).then_some(chunk)
}

/// Every chunk under the URL, by shard and then by number.
pub(super) async fn list_chunks(
    store: &dyn ObjectStore,
    url: &StoreUrl,
) -> Result<Vec<Chunk>, StoreError> {
    let prefix = (!url.prefix.as_ref().is_empty()).then_some(&url.prefix);
    let mut listing = store.list(prefix);
    let mut chunks = Vec::new();
    while let Some(meta) = listing.next().await {
        let meta = meta.map_err(|error| StoreError::Request {
            url: url.to_string(),
            action: "list the chunks",
            message: describe(&error),
        })?;
        if let Some(chunk) = parse_chunk(&url.prefix, &meta.location) {
            chunks.push(chunk);
        }
    }
    chunks.sort_by_key(|chunk| (chunk.count, chunk.index, chunk.number));
    Ok(chunks)
}

/// The chunks at `url` as a reader reads them: [`list_chunks`], refusing chunks of runs with
/// different shard counts.
pub(super) async fn list_run(
    store: &dyn ObjectStore,
    url: &StoreUrl,
) -> Result<Vec<Chunk>, StoreError> {
    let chunks = list_chunks(store, url).await?;
    let mut counts: Vec<u32> = chunks.iter().map(|chunk| chunk.count).collect();
    counts.dedup();
    if counts.len() > 1 {
        return Err(StoreError::MixedShards {
            url: url.to_string(),
            counts,
        });
    }
    Ok(chunks)
}

/// The lines of one chunk, which must end in a newline.
pub(super) fn chunk_lines(url: &str, bytes: &[u8]) -> Result<Vec<Line>, StoreError> {
    let corrupt = |line_number, message: String| StoreError::Corrupt {
        url: url.to_owned(),
        line_number,
        message,
    };
    if !bytes.is_empty() && bytes.last() != Some(&b'\n') {
        let lines = bytes.iter().filter(|&&b| b == b'\n').count() as u64;
        return Err(corrupt(
            lines + 1,
            "the chunk does not end in a newline".to_owned(),
        ));
    }
    let mut lines = Vec::new();
    for (number, text) in bytes.split(|&b| b == b'\n').enumerate() {
        if text.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let line = serde_json::from_slice::<Line>(text)
            .map_err(|error| corrupt(number as u64 + 1, error.to_string()))?;
        lines.push(line);
    }
    Ok(lines)
}

/// How many chunks are fetched at once when a run resumes or a reader reads ahead.
pub(super) const FETCH_AHEAD: usize = 8;

/// A chunk's whole content.
pub(super) async fn fetch_whole(
    store: &dyn ObjectStore,
    url: &StoreUrl,
    chunk: Chunk,
) -> Result<(Chunk, Bytes), StoreError> {
    let read = url.request(&chunk.location, "read the chunk");
    let bytes = store
        .get(&chunk.location)
        .await
        .map_err(&read)?
        .bytes()
        .await
        .map_err(&read)?;
    Ok((chunk, bytes))
}

/// The shards of a sharded run that have no chunk at its URL: not started yet, stopped
/// before their first upload, or given no samples (a shard uploads nothing until it has a
/// line). What is read is then only part of the run.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct MissingShards {
    /// The first missing shards' indexes, in order (up to [`MissingShards::LISTED`]).
    pub first: Vec<u32>,
    /// How many shards are missing.
    pub missing: u32,
    /// How many shards the run has.
    pub count: u32,
}

impl MissingShards {
    /// How many of the missing shards' indexes are listed.
    pub const LISTED: usize = 10;

    /// The shards missing from `chunks` (sorted by count, then shard; of one count), if any.
    pub(super) fn of(chunks: &[Chunk]) -> Option<MissingShards> {
        let count = chunks.first()?.count;
        let mut present: Vec<u32> = chunks.iter().map(|chunk| chunk.index).collect();
        present.dedup();
        let missing = count - u32::try_from(present.len()).unwrap_or(count);
        if missing == 0 {
            return None;
        }
        // At most `present.len() + LISTED` indexes are looked at, however many shards.
        let mut first = Vec::new();
        let mut seen = present.iter().peekable();
        let mut index = 0;
        while first.len() < Self::LISTED && index < count {
            if seen.next_if_eq(&&index).is_none() {
                first.push(index);
            }
            index += 1;
        }
        Some(MissingShards {
            first,
            missing,
            count,
        })
    }
}

impl fmt::Display for MissingShards {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let listed: Vec<String> = self.first.iter().map(u32::to_string).collect();
        let more = self.missing as usize - self.first.len().min(self.missing as usize);
        write!(
            f,
            "no chunks from shard{} {}{} of {}: not started yet, stopped before the first \
             upload, or given no samples; what is read is part of the run",
            if self.missing == 1 { "" } else { "s" },
            listed.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            },
            self.count
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_without_chunks_are_named() {
        let chunks = |pairs: &[(u32, u64)]| -> Vec<Chunk> {
            pairs
                .iter()
                .map(|&(index, number)| Chunk {
                    index,
                    count: 5,
                    number,
                    location: ObjectPath::from("x"),
                })
                .collect()
        };
        assert_eq!(MissingShards::of(&[]), None);
        assert_eq!(
            MissingShards::of(&chunks(&[(0, 0), (1, 0), (2, 0), (3, 0), (4, 0)])),
            None
        );
        let missing = MissingShards::of(&chunks(&[(1, 0), (1, 1), (3, 0)])).expect("missing");
        assert_eq!(
            (missing.first.as_slice(), missing.missing),
            (&[0, 2, 4][..], 3)
        );
        assert_eq!(
            missing.to_string(),
            "no chunks from shards 0, 2, 4 of 5: not started yet, stopped before the first \
             upload, or given no samples; what is read is part of the run"
        );
        // A run of very many shards is not walked through: the first few are listed.
        let huge = [Chunk {
            index: 3,
            count: u32::MAX,
            number: 0,
            location: ObjectPath::from("x"),
        }];
        let missing = MissingShards::of(&huge).expect("missing");
        assert_eq!(missing.first, [0, 1, 2, 4, 5, 6, 7, 8, 9, 10]);
        assert_eq!(missing.missing, u32::MAX - 1);
        assert!(
            missing.to_string().starts_with(&format!(
                "no chunks from shards 0, 1, 2, 4, 5, 6, 7, 8, 9, 10 and {} more of {}",
                u32::MAX - 11,
                u32::MAX
            )),
            "{missing}"
        );
    }

    #[test]
    fn only_chunks_right_under_the_prefix_are_chunks() {
        let prefix = ObjectPath::from("runs/7");
        let parse = |text: &str| parse_chunk(&prefix, &ObjectPath::from(text));
        let chunk = parse("runs/7/part-1-of-3/chunk-000017.jsonl").expect("a chunk");
        assert_eq!((chunk.index, chunk.count, chunk.number), (1, 3, 17));
        assert!(parse("runs/7/part-1-of-3/chunk-1234567.jsonl").is_some());
        let largest = parse("runs/7/part-1-of-3/chunk-999999999999999999.jsonl").expect("a chunk");
        assert_eq!(largest.number + 1, 10u64.pow(18));
        // A number whose next chunk could not be numbered is not one of ours.
        assert!(parse("runs/7/part-1-of-3/chunk-18446744073709551615.jsonl").is_none());
        for other in [
            "runs/7/part-3-of-3/chunk-000001.jsonl",
            "runs/7/part-1-of-3/x/chunk-000001.jsonl",
            "runs/7/part-1-of-3/chunk-000001.json",
            "runs/7/part-a-of-3/chunk-000001.jsonl",
            "runs/7/chunk-000001.jsonl",
            "runs/70/part-0-of-1/chunk-000001.jsonl",
        ] {
            assert!(parse(other).is_none(), "{other}");
        }
        assert_eq!(chunk_name(17), "chunk-000017.jsonl");
    }

    #[test]
    fn chunks_hold_whole_lines() {
        let line = Line::failed("a", 1, crate::ErrorKind::Failed, "x", 0.0);
        let mut bytes = line.to_json_line().expect("serializes");
        bytes.extend_from_slice(&bytes.clone());
        assert_eq!(chunk_lines("u", &bytes).expect("whole lines").len(), 2);
        bytes.pop();
        let error = chunk_lines("s3://b/c", &bytes).expect_err("torn");
        assert!(error.to_string().starts_with("s3://b/c:2:"), "{error}");
    }
}
