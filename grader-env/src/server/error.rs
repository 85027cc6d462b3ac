//! Why serving could not start.

/// Why serving could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// Bad command-line arguments.
    #[error("{0}")]
    Usage(String),
    /// An `initialize` hook of the environment failed.
    #[error("environment {env:?}: an initialize hook failed: {message}")]
    Initialize {
        /// The environment.
        env: String,
        /// The hook's message.
        message: String,
    },
    /// The address could not be bound.
    #[error("environment {env:?}: cannot listen on {address}: {source}")]
    Bind {
        /// The environment.
        env: String,
        /// The address.
        address: String,
        /// The cause.
        source: std::io::Error,
    },
    /// Writing the port line or waiting for signals failed.
    #[error("environment {env:?}: {source}")]
    Io {
        /// The environment.
        env: String,
        /// The cause.
        source: std::io::Error,
    },
}
