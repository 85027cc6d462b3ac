//! Frames of the control channel: one compact JSON object per line, at most
//! [`FRAME_LIMIT`] bytes without its newline, read with bounded memory.
//!
//! The messages of [`FrameError::TooLarge`] are the reference's (`hud/environment/utils.py`).
//!
//! Frames are read as the reference's `json.loads` reads them (see [`FrameReader::read_frame`]).
//! The memory a reader holds is small between frames and grows only while a large one
//! arrives.
//!
//! Where this differs from the reference: frames are written as UTF-8 (the reference escapes
//! non-ASCII characters as `\uXXXX`; the JSON is the same, and the size limit counts the
//! escaped form as the reference does) with serde_json's numbers (`1e-7` where Python writes
//! `1e-07`; a request id is written back as Python writes it); a lone surrogate in a string,
//! which Python keeps, is read as U+FFFD; a frame with `NaN` or `Infinity` literals, which Python's
//! `json.loads` accepts, is malformed here; and the count in the "exceeds the limit" message
//! is the whole frame when it arrived over several reads, where the reference's count depends
//! on how the bytes arrived.

mod budget;
mod error;
mod parse;

use std::time::Duration;

use serde_json::{Map, Value, json};
use tokio::io::{AsyncRead, AsyncReadExt as _};
use tokio::time::Instant;

pub(crate) use budget::{Budget, Held};
pub use error::FrameError;
pub use parse::MAX_DEPTH;
pub(crate) use parse::{Id, Request};

/// The largest frame either side may send, in bytes, not counting its newline: 16 MiB, as the
/// reference's `CONTROL_FRAME_LIMIT_BYTES`.
pub const FRAME_LIMIT: usize = 16 * 1024 * 1024;

/// The capacity a reader's buffer starts with and shrinks back to after a large frame.
pub const SMALL_BUFFER: usize = 1024;

/// Reads newline-delimited frames with a byte limit: its buffer starts small
/// ([`SMALL_BUFFER`]), grows only while a large frame arrives (never past the limit plus its
/// newline), and shrinks back once that frame is read.
///
/// Reading is cancel-safe: a partial frame stays buffered inside the reader.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
/// use grader_env::frame::FrameReader;
///
/// let mut reader = FrameReader::new(&b"{\"id\":1}\n{\"id\":2}"[..], 64);
/// assert_eq!(reader.read_frame().await?.unwrap()["id"], 1);
/// assert_eq!(reader.read_frame().await?.unwrap()["id"], 2);
/// assert!(reader.read_frame().await?.is_none());
///
/// let mut reader = FrameReader::new(&[b'x'; 100][..], 64);
/// assert!(reader.read_frame().await.is_err());
/// # Ok::<(), grader_env::frame::FrameError>(())
/// # }).unwrap();
/// ```
#[derive(Debug)]
pub struct FrameReader<R> {
    inner: R,
    /// Bytes read; `buf[start..]` is not consumed yet.
    buf: Vec<u8>,
    start: usize,
    /// How many bytes after `start` are known to hold no newline.
    scanned: usize,
    limit: usize,
    timeout: Option<Duration>,
    /// When the first bytes of the frame now arriving came.
    began: Option<Instant>,
    /// Whether the frame now arriving came over more than one read.
    spanned: bool,
    charge: Charge,
}

/// What a reader's buffer is counted as in its budget; released when the reader goes.
#[derive(Debug)]
struct Charge {
    budget: Budget,
    small: usize,
    growth: usize,
}

impl Drop for Charge {
    fn drop(&mut self) {
        self.budget.release_small(self.small);
        self.budget.release_growth(self.growth);
    }
}

impl<R: AsyncRead + Unpin> FrameReader<R> {
    /// A reader of frames of at most `limit` bytes (without the newline) from `inner`.
    pub fn new(inner: R, limit: usize) -> Self {
        Self::budgeted(inner, limit, Budget::unlimited())
    }

    /// A reader whose buffer counts against `budget`.
    pub(crate) fn budgeted(inner: R, limit: usize, budget: Budget) -> Self {
        FrameReader {
            inner,
            buf: Vec::new(),
            start: 0,
            scanned: 0,
            limit,
            timeout: None,
            began: None,
            spanned: false,
            charge: Charge {
                budget,
                small: 0,
                growth: 0,
            },
        }
    }

    /// Refuses a frame whose bytes have not all arrived `timeout` after its first one
    /// ([`FrameError::TimedOut`]); waiting between frames has no limit.
    #[must_use]
    pub fn frame_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// The bytes its buffer holds now (its capacity).
    #[must_use]
    pub fn buffered(&self) -> usize {
        self.buf.capacity()
    }

    /// The bytes of the next frame that have arrived.
    pub(crate) fn pending(&self) -> usize {
        self.buf.len() - self.start
    }

    /// The underlying reader and the bytes read ahead of the last frame.
    pub fn into_parts(self) -> (R, Vec<u8>) {
        let rest = self.buf[self.start..].to_vec();
        (self.inner, rest)
    }

    /// Makes room for the next read: the unread part moved to the front, the buffer grown
    /// (counted in the budget) when it is full.
    fn make_room(&mut self) -> Result<(), FrameError> {
        if self.buf.len() < self.buf.capacity() {
            return Ok(());
        }
        if self.start > 0 {
            self.buf.drain(..self.start);
            self.start = 0;
            if self.buf.len() < self.buf.capacity() {
                return Ok(());
            }
        }
        let capacity = self.buf.capacity();
        let largest = self.limit.saturating_add(1).max(SMALL_BUFFER);
        let wanted = if capacity == 0 {
            SMALL_BUFFER
        } else {
            capacity.saturating_mul(2).min(largest)
        };
        let growth = wanted.saturating_sub(SMALL_BUFFER);
        if growth > self.charge.growth {
            let more = growth - self.charge.growth;
            if !self.charge.budget.try_grow(more) {
                return Err(FrameError::Busy {
                    received: self.buf.len(),
                    budget: self.charge.budget.growth_limit(),
                });
            }
            self.charge.growth = growth;
        }
        self.buf.reserve_exact(wanted - self.buf.len());
        let small = self.buf.capacity().min(SMALL_BUFFER);
        if small > self.charge.small {
            self.charge.budget.charge_small(small - self.charge.small);
            self.charge.small = small;
        }
        Ok(())
    }

    /// Marks the frame ending at `end` (its newline included) as read; the buffer shrinks back
    /// to [`SMALL_BUFFER`] once what is left fits.
    fn consume(&mut self, end: usize) {
        self.start = end;
        self.scanned = 0;
        self.spanned = false;
        if self.start == self.buf.len() {
            self.buf.clear();
            self.start = 0;
            self.began = None;
        } else {
            // The next frame's first bytes are already here.
            self.began = Some(Instant::now());
        }
        if self.buf.capacity() > SMALL_BUFFER && self.buf.len() - self.start <= SMALL_BUFFER {
            self.buf.drain(..self.start);
            self.start = 0;
            self.buf.shrink_to(SMALL_BUFFER);
            let growth = self.buf.capacity().saturating_sub(SMALL_BUFFER);
            self.charge
                .budget
                .release_growth(self.charge.growth - growth.min(self.charge.growth));
            self.charge.growth = growth.min(self.charge.growth);
        }
    }

    /// The range of the next frame in the buffer (with its newline, when it had one), or
    /// `None` at the end of the stream.
    async fn next_line(&mut self) -> Result<Option<std::ops::Range<usize>>, FrameError> {
        loop {
            let from = self.start + self.scanned;
            if let Some(at) = self.buf[from..].iter().position(|&b| b == b'\n') {
                let end = from + at;
                let size = end - self.start;
                if size > self.limit {
                    return Err(FrameError::TooLarge(if self.spanned {
                        exceeds(self.limit, size)
                    } else {
                        format!(
                            "Control-channel frame is {size} bytes; limit is {} bytes.",
                            self.limit
                        )
                    }));
                }
                return Ok(Some(self.start..end + 1));
            }
            let pending = self.buf.len() - self.start;
            self.scanned = pending;
            if pending > self.limit {
                return Err(FrameError::TooLarge(exceeds(self.limit, pending)));
            }
            self.make_room()?;
            let deadline = match (self.timeout, self.began) {
                (Some(timeout), Some(began)) if pending > 0 => Some((began + timeout, timeout)),
                _ => None,
            };
            let read = self.inner.read_buf(&mut self.buf);
            let count = match deadline {
                Some((deadline, timeout)) => tokio::time::timeout_at(deadline, read)
                    .await
                    .map_err(|_| FrameError::TimedOut {
                        timeout,
                        received: pending,
                    })??,
                None => read.await?,
            };
            if count == 0 {
                if pending == 0 {
                    return Ok(None);
                }
                let end = self.buf.len();
                return Ok(Some(self.start..end));
            }
            if pending > 0 {
                self.spanned = true;
            } else {
                self.began = Some(Instant::now());
            }
        }
    }

    /// The next frame's bytes (with its newline, when it had one), or `None` at the end of the
    /// stream. A last frame without a newline is still a frame, as for the reference.
    ///
    /// # Errors
    /// [`FrameError::TooLarge`] once more than the limit has arrived without a newline (the
    /// connection must then be closed), [`FrameError::TimedOut`] when the frame stopped
    /// arriving, [`FrameError::Io`] when reading fails.
    pub async fn read_line(&mut self) -> Result<Option<Vec<u8>>, FrameError> {
        let Some(range) = self.next_line().await? else {
            return Ok(None);
        };
        let line = self.buf[range.clone()].to_vec();
        self.consume(range.end);
        Ok(Some(line))
    }

    /// The next frame as a JSON object, or `None` at the end of the stream. The bytes are read
    /// as the reference's `json.loads` reads them (a byte-order mark skipped, lone surrogates
    /// accepted as U+FFFD, nesting up to [`MAX_DEPTH`]).
    ///
    /// # Errors
    /// As [`read_line`](Self::read_line), and [`FrameError::Malformed`] when the line is not
    /// a JSON object.
    pub async fn read_frame(&mut self) -> Result<Option<Map<String, Value>>, FrameError> {
        Ok(self.read_request().await?.map(|request| request.msg))
    }

    /// The next frame with its exact id.
    pub(crate) async fn read_request(&mut self) -> Result<Option<Request>, FrameError> {
        let Some(range) = self.next_line().await? else {
            return Ok(None);
        };
        let request = parse::request(&self.buf[range.clone()], &self.charge.budget);
        self.consume(range.end);
        request.map(Some)
    }
}

fn exceeds(limit: usize, received: usize) -> String {
    format!(
        "Control-channel frame exceeds the limit of {limit} bytes (received at least {received} \
         bytes)."
    )
}

/// Encodes a frame as compact JSON plus its newline, refusing one over the limit with the
/// reference's message. The size is counted as the reference counts it, with every character
/// outside printable ASCII escaped (`é` counts six bytes), though the frame is sent as UTF-8.
///
/// ```
/// use grader_env::frame::encode_frame;
///
/// let frame = serde_json::json!({"result": "é"});
/// assert_eq!(encode_frame(&frame, 64)?, "{\"result\":\"é\"}\n".as_bytes());
/// assert!(encode_frame(&frame, 16).is_err()); // 15 bytes of UTF-8, 19 escaped
/// # Ok::<(), grader_env::frame::FrameError>(())
/// ```
///
/// # Errors
/// [`FrameError::TooLarge`] when the encoded frame is longer than `limit`.
pub fn encode_frame(frame: &Value, limit: usize) -> Result<Vec<u8>, FrameError> {
    let mut data = serde_json::to_vec(frame).map_err(|e| FrameError::Malformed(e.to_string()))?;
    let what = match frame.get("method") {
        Some(method) => format!("{} request", crate::pyfmt::py_repr(method)),
        None => "response".to_owned(),
    };
    check_size(&data, limit, &what)?;
    data.push(b'\n');
    Ok(data)
}

fn check_size(data: &[u8], limit: usize, what: &str) -> Result<(), FrameError> {
    let size = parse::python_length(data);
    if size > limit {
        return Err(FrameError::TooLarge(format!(
            "Control-channel {what} is {size} bytes; limit is {limit} bytes (excluding the \
             newline). Reduce inline JSON; pass large task data by file ID and load it inside \
             the environment."
        )));
    }
    Ok(())
}

/// What a response carries.
pub(crate) enum Outcome<'a> {
    /// A success, with its result.
    Result(&'a Value),
    /// A failure, with its code and message.
    Error(i64, &'a str),
}

/// Encodes a response to the request `id` (written exactly as it came), as [`encode_frame`]
/// would encode [`reply`] or [`error`].
pub(crate) fn encode_response(
    id: &Id,
    outcome: &Outcome<'_>,
    limit: usize,
) -> Result<Vec<u8>, FrameError> {
    let mut data = Vec::with_capacity(64);
    data.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    id.write(&mut data);
    let written = match outcome {
        Outcome::Result(result) => {
            data.extend_from_slice(b",\"result\":");
            serde_json::to_writer(&mut data, result)
        }
        Outcome::Error(code, message) => {
            data.extend_from_slice(format!(",\"error\":{{\"code\":{code},\"message\":").as_bytes());
            serde_json::to_writer(&mut data, message).map(|()| data.push(b'}'))
        }
    };
    written.map_err(|e| FrameError::Malformed(e.to_string()))?;
    data.push(b'}');
    check_size(&data, limit, "response")?;
    data.push(b'\n');
    Ok(data)
}

/// A JSON-RPC 2.0 success response.
///
/// ```
/// let frame = grader_env::frame::reply(&serde_json::json!(7), serde_json::json!({"ok": true}));
/// assert_eq!(frame.to_string(), r#"{"jsonrpc":"2.0","id":7,"result":{"ok":true}}"#);
/// ```
#[must_use]
pub fn reply(id: &Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

/// A JSON-RPC 2.0 error response.
///
/// ```
/// let frame = grader_env::frame::error(&serde_json::Value::Null, -32601, "method not found: x");
/// assert_eq!(
///     frame.to_string(),
///     r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32601,"message":"method not found: x"}}"#
/// );
/// ```
#[must_use]
pub fn error(id: &Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

#[cfg(test)]
mod tests;
