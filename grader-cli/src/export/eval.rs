//! The `.eval` log: the zip Inspect AI writes (`inspect_ai/log/_recorders/eval.py`) and reads a
//! piece at a time, so that `inspect view` lists a large run without reading its samples.
//!
//! Its entries, deflated, in the order Inspect AI writes them:
//!
//! - `_journal/start.json`: the log's version, eval spec and plan;
//! - `samples/{id}_epoch_{epoch}.json`: one per sample, each written as it is read;
//! - `summaries.json`: every sample's summary (the rows the viewer lists), gathered in an
//!   unnamed temporary file while the samples are written and copied in at the end;
//! - `reductions.json`: each score's per-sample reductions;
//! - `header.json`: the whole log but its samples (status, eval, plan, results, stats).
//!
//! Memory holds one sample at a time (and the zip's directory, about a hundred bytes a
//! sample); zip64 records are written past 65 535 entries, as Python's `zipfile` does.

use std::fs::File;
use std::io::{BufWriter, Seek as _, SeekFrom, Write};

use serde_json::{Map, Value};
use zip::CompressionMethod;
use zip::write::{SimpleFileOptions, StreamWriter, ZipWriter};

use super::sample::summary;

/// The header's fields that `_journal/start.json` holds.
const START_FIELDS: [&str; 3] = ["version", "eval", "plan"];

/// A `.eval` log being written.
pub(super) struct EvalLog {
    zip: ZipWriter<StreamWriter<BufWriter<File>>>,
    /// The summaries so far, as the elements of a JSON array.
    summaries: BufWriter<File>,
    summaries_written: u64,
    header: Map<String, Value>,
}

/// A zip error as an I/O error, its message kept.
fn io(error: zip::result::ZipError) -> std::io::Error {
    match error {
        zip::result::ZipError::Io(error) => error,
        other => std::io::Error::other(other),
    }
}

/// How each entry is written: deflated at level 1, the fastest (JSON of many alike samples
/// compresses well at any level: level 6, the default, made the log of 100 000 results 20%
/// smaller, and took 1.4 times the CPU to write).
fn options() -> SimpleFileOptions {
    SimpleFileOptions::default()
        .compression_method(CompressionMethod::Deflated)
        .compression_level(Some(1))
}

impl EvalLog {
    /// Starts the zip with `_journal/start.json`; the rest of `header` is written at the end.
    pub(super) fn start(file: File, header: Map<String, Value>) -> std::io::Result<Self> {
        // Written straight through, never seeking back: each entry's sizes and checksum follow
        // its data (a data descriptor, which Python's `zipfile` and the viewer read), where
        // seeking back to put them in its header flushed the buffer for every sample.
        let mut zip = ZipWriter::new_stream(BufWriter::with_capacity(1 << 20, file));
        zip.start_file("_journal/start.json", options())
            .map_err(io)?;
        let start: Map<String, Value> = START_FIELDS
            .iter()
            .filter_map(|key| Some(((*key).to_owned(), header.get(*key)?.clone())))
            .collect();
        serde_json::to_writer(&mut zip, &start)?;
        let summaries = BufWriter::with_capacity(1 << 20, tempfile::tempfile()?);
        Ok(EvalLog {
            zip,
            summaries,
            summaries_written: 0,
            header,
        })
    }

    /// Writes one sample, as `samples/{id}_epoch_{epoch}.json`, and keeps its summary.
    pub(super) fn sample(
        &mut self,
        id: &str,
        epoch: u32,
        sample: &Map<String, Value>,
    ) -> std::io::Result<()> {
        self.zip
            .start_file(format!("samples/{id}_epoch_{epoch}.json"), options())
            .map_err(io)?;
        serde_json::to_writer(&mut self.zip, sample)?;
        self.summaries.write_all(if self.summaries_written == 0 {
            b"["
        } else {
            b","
        })?;
        serde_json::to_writer(&mut self.summaries, &summary(sample))?;
        self.summaries_written += 1;
        Ok(())
    }

    /// Writes the summaries, the reductions (a JSON array, by `reductions`) and the header,
    /// and the zip's directory; returns the file, flushed.
    pub(super) fn finish(
        mut self,
        reductions: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
    ) -> std::io::Result<File> {
        self.summaries.write_all(if self.summaries_written == 0 {
            b"[]"
        } else {
            b"]"
        })?;
        let mut summaries = self
            .summaries
            .into_inner()
            .map_err(|error| error.into_error())?;
        let size = summaries.seek(SeekFrom::End(0))?;
        summaries.seek(SeekFrom::Start(0))?;
        self.zip
            .start_file(
                "summaries.json",
                options().large_file(size >= u64::from(u32::MAX)),
            )
            .map_err(io)?;
        std::io::copy(&mut summaries, &mut self.zip)?;
        drop(summaries);

        self.zip
            .start_file("reductions.json", options())
            .map_err(io)?;
        reductions(&mut self.zip)?;

        self.zip.start_file("header.json", options()).map_err(io)?;
        serde_json::to_writer(&mut self.zip, &self.header)?;
        let out = self.zip.finish().map_err(io)?.into_inner();
        out.into_inner().map_err(|error| error.into_error())
    }
}
