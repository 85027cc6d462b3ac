//! What a subcommand can fail with ([`CliError`]) and the exit codes the command ends with.
//! At the bottom of the crate: every module may import it, and it imports none of them.

use std::path::PathBuf;

/// Exit code: everything was fine.
pub const EXIT_OK: u8 = 0;
/// Exit code: the data is invalid (or worse, for `diff --fail-if-worse`).
pub const EXIT_INVALID: u8 = 1;
/// Exit code: the command line is wrong or a file cannot be read.
pub const EXIT_USAGE: u8 = 2;

/// What a subcommand failed with, before it could finish: the data itself is fine or not
/// looked at (problems in the data are reported by the subcommand and give [`EXIT_INVALID`]).
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// A file could not be opened or read.
    #[error("{path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A file could not be written.
    #[error("{path}: cannot write: {source}")]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The data could not be used (for `show`, `summary`, `diff`, `report`: a line that is not
    /// a result). `validate` reports these without stopping.
    #[error("{0}")]
    Invalid(String),
    /// The command line names something the files do not have (a subscore to gate on, say).
    #[error("{0}")]
    Usage(String),
    /// Object storage could not be listed or read (a missing bucket, denied access, a
    /// network failure): the message names the URL, never a credential.
    #[cfg(feature = "object-store")]
    #[error(transparent)]
    Store(#[from] grader_eval::store::StoreError),
    /// The summary could not write or read its temporary files (`summary`, `diff`, `report`
    /// on more lines than its memory budget holds): the message names the directory.
    #[error(transparent)]
    Spill(#[from] grader_eval::summary::SpillError),
    /// Writing the output failed (a closed pipe, a full disk).
    #[error("cannot write the output: {0}")]
    Output(#[from] std::io::Error),
}

impl CliError {
    /// The exit code this error ends the command with.
    #[must_use]
    pub fn exit_code(&self) -> u8 {
        match self {
            CliError::Invalid(_) => EXIT_INVALID,
            CliError::Read { .. }
            | CliError::Write { .. }
            | CliError::Usage(_)
            | CliError::Spill(_)
            | CliError::Output(_) => EXIT_USAGE,
            #[cfg(feature = "object-store")]
            CliError::Store(_) => EXIT_USAGE,
        }
    }
}
