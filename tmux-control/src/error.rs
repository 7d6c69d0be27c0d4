//! The library's error type.

use std::sync::Arc;

use crate::proto::FrameError;

/// Why the connection to tmux ended.
///
/// Every request that was pending when the connection ended, and every later
/// one, fails with [`Error::Closed`] carrying the same `Closed`.
///
/// ```
/// use tmux_control::Closed;
/// let mut c = Closed::default();
/// c.reason = Some("server exited unexpectedly".into());
/// c.exit_status = Some(1);
/// assert!(c.to_string().contains("server exited unexpectedly"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Closed {
    /// The reason tmux gave on its `%exit` line, if any.
    pub reason: Option<String>,
    /// What the tmux client process wrote to stderr (trimmed, bounded).
    pub stderr: String,
    /// The client process's exit status, when it has been reaped.
    pub exit_status: Option<i32>,
}

impl std::fmt::Display for Closed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the tmux control connection closed")?;
        match &self.reason {
            Some(r) if !r.is_empty() => write!(f, ": {r}")?,
            _ => {}
        }
        if let Some(code) = self.exit_status {
            write!(f, " (client exit status {code})")?;
        }
        if !self.stderr.is_empty() {
            write!(f, "; tmux said: {}", self.stderr)?;
        }
        Ok(())
    }
}

/// Everything that can go wrong in tmux-control.
///
/// ```
/// use tmux_control::Error;
/// let e = Error::InvalidArgument("empty command".into());
/// assert_eq!(e.to_string(), "invalid argument: empty command");
/// ```
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// tmux ran the command and reported failure (`%error`).
    #[error("tmux command `{command}` failed: {message}")]
    Command {
        /// The command's name (for example `new-session`).
        command: String,
        /// tmux's error text (the reply body, lines joined with `\n`).
        message: String,
    },
    /// The tmux program could not be started (for example, not installed).
    #[error("could not start `{program}`: {source}")]
    Spawn {
        /// The program that was run.
        program: String,
        /// The operating system's error.
        source: Arc<std::io::Error>,
    },
    /// The connection ended; see [`Closed`].
    #[error("{0}")]
    Closed(Arc<Closed>),
    /// An argument cannot be sent to tmux as given.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// tmux answered, but not in the shape the command expects.
    #[error("unexpected reply to `{command}`: {detail}")]
    UnexpectedReply {
        /// The command's name.
        command: String,
        /// What did not fit.
        detail: String,
    },
    /// The reply could not be framed (too large, malformed).
    #[error("protocol error: {0}")]
    Protocol(#[from] FrameError),
    /// An I/O error talking to the tmux process.
    #[error("I/O error: {0}")]
    Io(Arc<std::io::Error>),
    /// A deadline passed.
    #[error("timed out after {0:?}")]
    Timeout(std::time::Duration),
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::Io(Arc::new(e))
    }
}

/// Shorthand for results of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
