//! Where to serve and the limits on what peers may hold.

use std::time::Duration;

use super::error::ServeError;
use super::limits::{DEFAULT_BUFFERED_BYTES, DEFAULT_FRAME_TIMEOUT, default_max_connections};

/// Where to listen: `127.0.0.1` on a free port by default.
///
/// ```
/// use grader_env::ServeConfig;
///
/// let config = ServeConfig::from_args(["--host", "0.0.0.0", "--port", "8765"])?;
/// assert_eq!(config.address(), "0.0.0.0:8765");
/// let config = config.max_connections(64).frame_timeout(std::time::Duration::from_secs(5));
/// assert_eq!(config.limits().0, 64);
/// let config = ServeConfig::from_args(["--max-connections=16", "--frame-timeout", "2.5"])?;
/// assert_eq!(config.limits().0, 16);
/// assert_eq!(config.limits().2, std::time::Duration::from_millis(2500));
/// assert!(ServeConfig::from_args(["--frame-timeout", "0"]).is_err());
/// assert!(ServeConfig::from_args(["--port", "many"]).is_err());
/// # Ok::<(), grader_env::ServeError>(())
/// ```
///
/// It also sets what the server lets its peers hold as a whole (see
/// [`ServerStats`](super::ServerStats)): at most
/// [`max_connections`](Self::max_connections) open connections (default
/// [`default_max_connections`]: 512, or half the open-file limit when lower), at most
/// [`buffered_bytes`](Self::buffered_bytes) bytes buffered for frames still arriving (default
/// [`DEFAULT_BUFFERED_BYTES`], 128 MiB), and [`frame_timeout`](Self::frame_timeout) for a
/// frame to arrive once begun, or for a new connection's first frame (default
/// [`DEFAULT_FRAME_TIMEOUT`], 30 s). A connection idle between frames (a session awaiting its
/// grade) is never timed out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServeConfig {
    host: String,
    port: u16,
    max_connections: usize,
    buffered_bytes: usize,
    frame_timeout: Duration,
}

impl Default for ServeConfig {
    fn default() -> Self {
        ServeConfig {
            host: "127.0.0.1".to_owned(),
            port: 0,
            max_connections: default_max_connections(),
            buffered_bytes: DEFAULT_BUFFERED_BYTES,
            frame_timeout: DEFAULT_FRAME_TIMEOUT,
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

    /// Caps the connections open at once (at least 1); one more is answered with an error
    /// frame and closed.
    #[must_use]
    pub fn max_connections(mut self, max: usize) -> Self {
        self.max_connections = max.max(1);
        self
    }

    /// Bounds the bytes all connections' read buffers hold together. Each connection's small
    /// buffer ([`SMALL_BUFFER`](crate::frame::SMALL_BUFFER), 1 KiB) is kept for it out of the
    /// budget; what is left is what buffers may grow by for large frames (give at least one
    /// [`FRAME_LIMIT`](crate::frame::FRAME_LIMIT) more than `max_connections` KiB for frames
    /// of the largest size to be read). A frame that would pass it is refused with an error
    /// frame and its connection closed.
    #[must_use]
    pub fn buffered_bytes(mut self, bytes: usize) -> Self {
        self.buffered_bytes = bytes;
        self
    }

    /// Sets how long a frame may take to arrive once its first byte has (and a new connection
    /// to send its first frame); after that its connection is closed with an error frame.
    #[must_use]
    pub fn frame_timeout(mut self, timeout: Duration) -> Self {
        self.frame_timeout = timeout;
        self
    }

    /// The limits: connections, buffered bytes, frame timeout.
    #[must_use]
    pub fn limits(&self) -> (usize, usize, Duration) {
        (
            self.max_connections,
            self.buffered_bytes,
            self.frame_timeout,
        )
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
    /// `--max-connections N`, `--buffered-bytes BYTES` and `--frame-timeout SECONDS`, from
    /// command-line arguments (without the program name).
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
                "--max-connections" | "--buffered-bytes" => {
                    let text = value()?;
                    let number: usize = text.parse().map_err(|_| {
                        ServeError::Usage(format!("{key}: not a whole number: {text:?}"))
                    })?;
                    config = if key == "--max-connections" {
                        config.max_connections(number)
                    } else {
                        config.buffered_bytes(number)
                    };
                }
                "--frame-timeout" => {
                    let text = value()?;
                    let timeout = text
                        .parse::<f64>()
                        .ok()
                        .and_then(|seconds| Duration::try_from_secs_f64(seconds).ok())
                        .filter(|timeout| !timeout.is_zero())
                        .ok_or_else(|| {
                            ServeError::Usage(format!("{key}: not a number of seconds: {text:?}"))
                        })?;
                    config.frame_timeout = timeout;
                }
                _ => return Err(ServeError::Usage(format!("unknown argument: {arg:?}"))),
            }
        }
        Ok(config)
    }
}
