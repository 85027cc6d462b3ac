//! The JSON log (Inspect AI's log format version 2, as `write_eval_log(log, format="json")`
//! writes it): one JSON object, the header's fields first, then the samples, then the
//! reductions, written as they come.

use std::fs::File;
use std::io::{BufWriter, Write};

use serde_json::{Map, Value};

/// A JSON log being written: the header is out, the samples go one at a time.
pub(super) struct JsonLog {
    out: BufWriter<File>,
    first: bool,
}

impl JsonLog {
    /// Writes the header's fields (everything before the samples) and opens the samples.
    pub(super) fn start(file: File, header: &Map<String, Value>) -> std::io::Result<Self> {
        let mut out = BufWriter::with_capacity(1 << 20, file);
        // The header comes before the samples, as Inspect AI's streaming header reader needs.
        out.write_all(b"{")?;
        for (key, value) in header {
            serde_json::to_writer(&mut out, key)?;
            out.write_all(b":")?;
            serde_json::to_writer(&mut out, value)?;
            out.write_all(b",")?;
        }
        out.write_all(b"\"samples\":[")?;
        Ok(JsonLog { out, first: true })
    }

    /// Writes one sample.
    pub(super) fn sample(&mut self, sample: &Map<String, Value>) -> std::io::Result<()> {
        if !self.first {
            self.out.write_all(b",")?;
        }
        self.first = false;
        serde_json::to_writer(&mut self.out, sample)?;
        Ok(())
    }

    /// Closes the samples, writes the reductions (a JSON array, by `reductions`) and returns
    /// the file, flushed.
    pub(super) fn finish(
        mut self,
        reductions: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
    ) -> std::io::Result<File> {
        self.out.write_all(b"],\"reductions\":")?;
        reductions(&mut self.out)?;
        self.out.write_all(b"}\n")?;
        self.out.into_inner().map_err(|error| error.into_error())
    }
}
