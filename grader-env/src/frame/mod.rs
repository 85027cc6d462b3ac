//! Frames of the control channel: one compact JSON object per line, at most
//! [`FRAME_LIMIT`] bytes without its newline, read with bounded memory.
//!
//! The messages of [`FrameError::TooLarge`] are the reference's (`hud/environment/utils.py`).
//!
//! Where this differs from the reference: frames are written as UTF-8 (the reference escapes
//! non-ASCII characters as `\uXXXX`; the JSON is the same) with serde_json's numbers (`1e-7`
//! where Python writes `1e-07`); a frame with `NaN` or `Infinity` literals, which Python's
//! `json.loads` accepts, is malformed here; and the count in the "exceeds the limit" message
//! is the whole frame when it arrived over several reads, where the reference's count depends
//! on how the bytes arrived.

use serde_json::{Map, Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncRead, BufReader};

/// The largest frame either side may send, in bytes, not counting its newline: 16 MiB, as the
/// reference's `CONTROL_FRAME_LIMIT_BYTES`.
pub const FRAME_LIMIT: usize = 16 * 1024 * 1024;

/// Why a frame could not be read.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    /// The frame is longer than the limit. The message is the reference's.
    #[error("{0}")]
    TooLarge(String),
    /// The bytes are not a JSON object (the reference closes the connection without a reply).
    #[error("malformed frame: {0}")]
    Malformed(String),
    /// Reading from the socket failed.
    #[error("reading a frame failed: {0}")]
    Io(#[from] std::io::Error),
}

/// Reads newline-delimited frames with a byte limit, keeping at most the limit plus one read
/// buffer in memory whatever the peer sends.
///
/// Reading is cancel-safe: a partial frame stays buffered inside the reader.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
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
    inner: BufReader<R>,
    line: Vec<u8>,
    limit: usize,
}

impl<R: AsyncRead + Unpin> FrameReader<R> {
    /// A reader of frames of at most `limit` bytes (without the newline) from `inner`.
    pub fn new(inner: R, limit: usize) -> Self {
        FrameReader {
            inner: BufReader::with_capacity(64 * 1024, inner),
            line: Vec::new(),
            limit,
        }
    }

    /// The underlying reader, with the bytes read ahead of the last frame still buffered.
    pub fn into_inner(self) -> BufReader<R> {
        self.inner
    }

    /// The next frame's bytes (with its newline, when it had one), or `None` at the end of the
    /// stream. A last frame without a newline is still a frame, as for the reference.
    ///
    /// # Errors
    /// [`FrameError::TooLarge`] once more than the limit has arrived without a newline (the
    /// connection must then be closed), [`FrameError::Io`] when reading fails.
    pub async fn read_line(&mut self) -> Result<Option<Vec<u8>>, FrameError> {
        loop {
            let buf = self.inner.fill_buf().await?;
            if buf.is_empty() {
                if self.line.is_empty() {
                    return Ok(None);
                }
                return Ok(Some(std::mem::take(&mut self.line)));
            }
            if let Some(at) = buf.iter().position(|&b| b == b'\n') {
                let size = self.line.len() + at;
                if size > self.limit {
                    // The reference reports a frame that arrived over several reads as
                    // "exceeds" and one read whole as "is"; the count it gives for the first
                    // depends on how the bytes arrived, here the whole frame.
                    let spanned = !self.line.is_empty();
                    self.line = Vec::new();
                    return Err(FrameError::TooLarge(if spanned {
                        exceeds(self.limit, size)
                    } else {
                        format!(
                            "Control-channel frame is {size} bytes; limit is {} bytes.",
                            self.limit
                        )
                    }));
                }
                self.line.extend_from_slice(&buf[..=at]);
                self.inner.consume(at + 1);
                return Ok(Some(std::mem::take(&mut self.line)));
            }
            let received = self.line.len() + buf.len();
            if received > self.limit {
                self.line = Vec::new();
                return Err(FrameError::TooLarge(exceeds(self.limit, received)));
            }
            let taken = buf.len();
            self.line.extend_from_slice(buf);
            self.inner.consume(taken);
        }
    }

    /// The next frame as a JSON object, or `None` at the end of the stream.
    ///
    /// # Errors
    /// As [`read_line`](Self::read_line), and [`FrameError::Malformed`] when the line is not
    /// a JSON object.
    pub async fn read_frame(&mut self) -> Result<Option<Map<String, Value>>, FrameError> {
        let Some(line) = self.read_line().await? else {
            return Ok(None);
        };
        match serde_json::from_slice::<Value>(&line) {
            Ok(Value::Object(map)) => Ok(Some(map)),
            Ok(other) => Err(FrameError::Malformed(format!(
                "a frame must be a JSON object, got {}",
                crate::pyfmt::py_type_name(&other)
            ))),
            Err(error) => Err(FrameError::Malformed(error.to_string())),
        }
    }
}

fn exceeds(limit: usize, received: usize) -> String {
    format!(
        "Control-channel frame exceeds the limit of {limit} bytes (received at least {received} \
         bytes)."
    )
}

/// Encodes a frame as compact JSON plus its newline, refusing one over the limit with the
/// reference's message.
///
/// # Errors
/// [`FrameError::TooLarge`] when the encoded frame is longer than `limit`.
pub fn encode_frame(frame: &Value, limit: usize) -> Result<Vec<u8>, FrameError> {
    let mut data = serde_json::to_vec(frame).map_err(|e| FrameError::Malformed(e.to_string()))?;
    if data.len() > limit {
        let what = match frame.get("method") {
            Some(method) => format!("{} request", crate::pyfmt::py_repr(method)),
            None => "response".to_owned(),
        };
        return Err(FrameError::TooLarge(format!(
            "Control-channel {what} is {} bytes; limit is {limit} bytes (excluding the newline). \
             Reduce inline JSON; pass large task data by file ID and load it inside the \
             environment.",
            data.len()
        )));
    }
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
