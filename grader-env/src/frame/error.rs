//! Why a frame could not be read or written.

use std::time::Duration;

/// Why a frame could not be read.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    /// The frame is longer than the limit. The message is the reference's.
    #[error("{0}")]
    TooLarge(String),
    /// The bytes are not a JSON object (the reference closes the connection without a reply).
    #[error("malformed frame: {0}")]
    Malformed(String),
    /// The frame stopped arriving: its bytes did not all come within the timeout.
    #[error(
        "Control-channel frame not completed within {} s ({received} bytes received); \
         connection closed.",
        timeout.as_secs_f64()
    )]
    TimedOut {
        /// The frame timeout.
        timeout: Duration,
        /// The bytes of the frame that had arrived.
        received: usize,
    },
    /// Buffering more of the frame would pass the server's budget of buffered bytes.
    #[error(
        "The server is buffering all it may ({budget} bytes of large frames); a frame of more \
         than {received} bytes is refused now. Try again later."
    )]
    Busy {
        /// The bytes of the frame that had arrived.
        received: usize,
        /// What all buffers together may grow by.
        budget: usize,
    },
    /// No frame came for the idle timeout on a control connection with no task (none running,
    /// none held for its session).
    #[error(
        "Control connection idle for {} s with no task; closed. Send `hello` (hud's client \
         does every 120 s) to keep an idle connection open.",
        timeout.as_secs_f64()
    )]
    Idle {
        /// The idle timeout.
        timeout: Duration,
    },
    /// The connection was idle, with no task, when a new one came and the server held as many
    /// as it may: it gave its place to the new one.
    #[error(
        "Control connection closed to admit a new one: it was idle with no task, and the \
         server holds as many connections as it may."
    )]
    Evicted,
    /// Reading from the socket failed.
    #[error("reading a frame failed: {0}")]
    Io(#[from] std::io::Error),
}
