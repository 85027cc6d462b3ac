//! Where to serve and the limits on what peers may hold.

use std::time::Duration;

use super::error::ServeError;
use super::limits::{
    DEFAULT_BUFFERED_BYTES, DEFAULT_FRAME_TIMEOUT, DEFAULT_IDLE_TIMEOUT, default_max_connections,
    default_max_streams,
};

/// Where to listen: `127.0.0.1` on a free port by default.
///
/// ```
/// use grader_env::ServeConfig;
///
/// let config = ServeConfig::from_args(["--host", "0.0.0.0", "--port", "8765"])?;
/// assert_eq!(config.address(), "0.0.0.0:8765");
/// let config = config.max_connections(64).frame_timeout(std::time::Duration::from_secs(5));
/// assert_eq!(config.limits().max_connections, 64);
/// let config = ServeConfig::from_args([
///     "--max-connections=16",
///     "--frame-timeout",
///     "2.5",
///     "--idle-timeout=60",
///     "--max-streams=32",
/// ])?;
/// assert_eq!(config.limits().max_connections, 16);
/// assert_eq!(config.limits().frame_timeout, std::time::Duration::from_millis(2500));
/// assert_eq!(config.limits().idle_timeout, std::time::Duration::from_secs(60));
/// assert_eq!(config.limits().max_streams, 32);
/// assert!(ServeConfig::from_args(["--frame-timeout", "0"]).is_err());
/// assert!(ServeConfig::from_args(["--port", "many"]).is_err());
/// # Ok::<(), grader_env::ServeError>(())
/// ```
///
/// It also sets what the server lets its peers hold as a whole ([`Limits`]; see
/// [`ServerStats`](super::ServerStats)): at most [`max_connections`](Self::max_connections)
/// control connections (default [`default_max_connections`]: 512, or a quarter of the
/// open-file limit when lower; when they are all taken, a new connection takes the place of
/// the one idle the longest with no task), at most [`max_streams`](Self::max_streams)
/// capability streams, the agents' SSH (default [`default_max_streams`]: 512, or an eighth of
/// the open-file limit), at most [`buffered_bytes`](Self::buffered_bytes) bytes buffered for
/// frames still arriving (default [`DEFAULT_BUFFERED_BYTES`], 128 MiB),
/// [`frame_timeout`](Self::frame_timeout) for a frame to arrive once begun, or for a new
/// connection's first frame (default [`DEFAULT_FRAME_TIMEOUT`], 30 s), and
/// [`idle_timeout`](Self::idle_timeout) for a control connection with no task to stay without
/// a frame (default [`DEFAULT_IDLE_TIMEOUT`], 300 s). A session with a task (one awaiting its
/// grade for hours) is never timed out, nor is a capability stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServeConfig {
    host: String,
    port: u16,
    limits: Limits,
}

/// What a server lets its peers hold, from [`ServeConfig::limits`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Limits {
    /// Control connections open at once (those that have not sent a first frame included).
    pub max_connections: usize,
    /// Capability streams (`tunnel.open`) open at once.
    pub max_streams: usize,
    /// Bytes all connections' read buffers hold together.
    pub buffered_bytes: usize,
    /// Time for a frame to arrive once begun, for a new connection's first frame, and for the
    /// peer to take a reply.
    pub frame_timeout: Duration,
    /// Time a control connection with no task may stay without sending a frame.
    pub idle_timeout: Duration,
}

impl Default for ServeConfig {
    fn default() -> Self {
        ServeConfig {
            host: "127.0.0.1".to_owned(),
            port: 0,
            limits: Limits {
                max_connections: default_max_connections(),
                max_streams: default_max_streams(),
                buffered_bytes: DEFAULT_BUFFERED_BYTES,
                frame_timeout: DEFAULT_FRAME_TIMEOUT,
                idle_timeout: DEFAULT_IDLE_TIMEOUT,
            },
        }
    }
}

impl ServeConfig {
    /// Sets the interface to bind (`0.0.0.0` inside a container).
    #[must_use]
    pub fn host(mut self, host: impl Into<String>) -> Self {
        self.host = host.into();
        self
    }

    /// Sets the port (0, the default, picks a free one).
    #[must_use]
    pub fn port(mut self, port: u16) -> Self {
        self.port = port;
        self
    }

    /// Caps the control connections open at once (at least 1). One more takes the place of
    /// the connection idle the longest with no task (closed with an error frame saying so);
    /// when none is idle, it is answered with an error frame and closed.
    #[must_use]
    pub fn max_connections(mut self, max: usize) -> Self {
        self.limits.max_connections = max.max(1);
        self
    }

    /// Caps the capability streams (`tunnel.open`, the agents' SSH) open at once (at least 1),
    /// apart from the control connections: one more is answered with an error frame and
    /// closed.
    #[must_use]
    pub fn max_streams(mut self, max: usize) -> Self {
        self.limits.max_streams = max.max(1);
        self
    }

    /// Sets how long a control connection with no task (none running, none held for its
    /// session) may stay without sending a frame; then it is closed with an error frame.
    #[must_use]
    pub fn idle_timeout(mut self, timeout: Duration) -> Self {
        self.limits.idle_timeout = timeout;
        self
    }

    /// Bounds the bytes all connections' read buffers hold together. A small buffer
    /// ([`SMALL_BUFFER`](crate::frame::SMALL_BUFFER), 1 KiB) is kept out of the budget for
    /// each place of the tables of new connections and of control sessions (`2 ×
    /// max_connections` of them); what is left is what buffers may grow by for large frames
    /// (give at least one [`FRAME_LIMIT`](crate::frame::FRAME_LIMIT) more than `2 ×
    /// max_connections` KiB for frames of the largest size to be read). A frame that would pass it is refused with an error
    /// frame and its connection closed.
    #[must_use]
    pub fn buffered_bytes(mut self, bytes: usize) -> Self {
        self.limits.buffered_bytes = bytes;
        self
    }

    /// Sets how long a frame may take to arrive once its first byte has (and a new connection
    /// to send its first frame); after that its connection is closed with an error frame.
    #[must_use]
    pub fn frame_timeout(mut self, timeout: Duration) -> Self {
        self.limits.frame_timeout = timeout;
        self
    }

    /// The limits.
    #[must_use]
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// The `host:port` to bind.
    #[must_use]
    pub fn address(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }

    /// Reads `--host HOST` and `--port PORT` (also as `--host=HOST`), the options of the
    /// reference's `python -m hud.environment.server`, and this crate's limits,
    /// `--max-connections N`, `--max-streams N`, `--buffered-bytes BYTES`, `--frame-timeout
    /// SECONDS` and `--idle-timeout SECONDS`, from command-line arguments (without the program
    /// name).
    ///
    /// # Errors
    /// [`ServeError::Usage`] for an unknown option, a missing value or a bad port.
    pub fn from_args<I, S>(args: I) -> Result<Self, ServeError>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let mut config = ServeConfig::default();
        let mut args = args.into_iter().map(Into::into);
        while let Some(arg) = args.next() {
            let (key, inline) = match arg.split_once('=') {
                Some((key, value)) => (key.to_owned(), Some(value.to_owned())),
                None => (arg.clone(), None),
            };
            let mut value = || {
                inline
                    .clone()
                    .or_else(|| args.next())
                    .ok_or_else(|| ServeError::Usage(format!("{key} needs a value")))
            };
            match key.as_str() {
                "--host" => config.host = value()?,
                "--port" => {
                    let text = value()?;
                    config.port = text
                        .parse()
                        .map_err(|_| ServeError::Usage(format!("--port: not a port: {text:?}")))?;
                }
                "--max-connections" | "--max-streams" | "--buffered-bytes" => {
                    let text = value()?;
                    let number: usize = text.parse().map_err(|_| {
                        ServeError::Usage(format!("{key}: not a whole number: {text:?}"))
                    })?;
                    config = match key.as_str() {
                        "--max-connections" => config.max_connections(number),
                        "--max-streams" => config.max_streams(number),
                        _ => config.buffered_bytes(number),
                    };
                }
                "--frame-timeout" | "--idle-timeout" => {
                    let text = value()?;
                    let timeout = text
                        .parse::<f64>()
                        .ok()
                        .and_then(|seconds| Duration::try_from_secs_f64(seconds).ok())
                        .filter(|timeout| !timeout.is_zero())
                        .ok_or_else(|| {
                            ServeError::Usage(format!("{key}: not a number of seconds: {text:?}"))
                        })?;
                    config = if key == "--frame-timeout" {
                        config.frame_timeout(timeout)
                    } else {
                        config.idle_timeout(timeout)
                    };
                }
                _ => return Err(ServeError::Usage(format!("unknown argument: {arg:?}"))),
            }
        }
        Ok(config)
    }
}
