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

/// Everything that can go wrong in tmux-control. [`Error::kind`] says what
/// kind of failure it is, without reading tmux's message.
///
/// ```
/// use tmux_control::{Error, ErrorKind};
/// let e = Error::InvalidArgument("empty command".into());
/// assert_eq!(e.to_string(), "invalid argument: empty command");
/// assert_eq!(e.kind(), ErrorKind::InvalidArgument);
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

/// What kind of failure an [`Error`] is, for deciding what to do about it
/// without matching tmux's message text: see [`Error::kind`].
///
/// New kinds may be added; match with a wildcard arm.
///
/// ```
/// use tmux_control::{Error, ErrorKind};
/// let e = Error::Command { command: "kill-pane".into(), message: "can't find pane: %9".into() };
/// match e.kind() {
///     ErrorKind::NotFound => println!("already gone"),
///     ErrorKind::Closed | ErrorKind::Timeout => println!("reconnect and retry"),
///     _ => println!("report it: {e}"),
/// }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// tmux refused the command because a session, window, pane, client or
    /// paste buffer it names does not exist (or no longer does). Always an
    /// [`Error::Command`].
    NotFound,
    /// tmux ran the command and refused it for any other reason (a bad
    /// flag or value, an index in use, a name tmux rejects). Always an
    /// [`Error::Command`]; its message says why.
    Refused,
    /// The library refused an argument before sending anything to tmux
    /// ([`Error::InvalidArgument`]).
    InvalidArgument,
    /// The connection has ended ([`Error::Closed`]).
    Closed,
    /// A deadline passed ([`Error::Timeout`]).
    Timeout,
    /// What tmux wrote could not be framed ([`Error::Protocol`]).
    Protocol,
    /// tmux answered, but not in the shape the command expects
    /// ([`Error::UnexpectedReply`]).
    UnexpectedReply,
    /// The tmux program could not be started ([`Error::Spawn`]).
    Spawn,
    /// Reading from or writing to tmux failed ([`Error::Io`]).
    Io,
}

impl std::fmt::Display for ErrorKind {
    /// A short lower-case description.
    ///
    /// ```
    /// assert_eq!(tmux_control::ErrorKind::NotFound.to_string(), "not found");
    /// ```
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ErrorKind::NotFound => "not found",
            ErrorKind::Refused => "refused by tmux",
            ErrorKind::InvalidArgument => "invalid argument",
            ErrorKind::Closed => "connection closed",
            ErrorKind::Timeout => "timed out",
            ErrorKind::Protocol => "protocol error",
            ErrorKind::UnexpectedReply => "unexpected reply",
            ErrorKind::Spawn => "could not start tmux",
            ErrorKind::Io => "I/O error",
        })
    }
}

impl Error {
    /// What kind of failure this is.
    ///
    /// For [`Error::Command`] the kind comes from tmux's message, read here
    /// and nowhere else: [`ErrorKind::NotFound`] for the messages tmux (3.3a
    /// to 3.8) gives when a target or buffer does not exist, such as
    /// `can't find pane: %9`, `can't find window: @3`, `can't find session:
    /// work`, `can't find client: x`, `no such session: work` (options and
    /// environment), `no buffer NAME`, `no buffers` and `unknown buffer:
    /// NAME`; [`ErrorKind::Refused`] for every other message. A missing
    /// option or environment variable is not `NotFound`
    /// ([`ShowOption`](crate::command::ShowOption) and
    /// [`ShowEnvironment`](crate::command::ShowEnvironment) answer `None`).
    ///
    /// ```
    /// use tmux_control::{Error, ErrorKind};
    /// let failed = |message: &str| Error::Command { command: "x".into(), message: message.into() };
    /// assert_eq!(failed("can't find pane: %9").kind(), ErrorKind::NotFound);
    /// assert_eq!(failed("no buffer clip").kind(), ErrorKind::NotFound);
    /// assert_eq!(failed("create window failed: index 0 in use").kind(), ErrorKind::Refused);
    /// assert_eq!(Error::InvalidArgument("empty".into()).kind(), ErrorKind::InvalidArgument);
    /// ```
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::Command { message, .. } => command_kind(message),
            Error::Spawn { .. } => ErrorKind::Spawn,
            Error::Closed(_) => ErrorKind::Closed,
            Error::InvalidArgument(_) => ErrorKind::InvalidArgument,
            Error::UnexpectedReply { .. } => ErrorKind::UnexpectedReply,
            Error::Protocol(_) => ErrorKind::Protocol,
            Error::Io(_) => ErrorKind::Io,
            Error::Timeout(_) => ErrorKind::Timeout,
        }
    }
}

/// The beginnings of the messages tmux gives for a target or buffer that
/// does not exist, each followed by the name it looked for. From tmux's
/// sources, unchanged from 3.3a to 3.8: target lookup (`cmd-find.c`), the
/// option and environment commands (`options.c`, `cmd-set-environment.c`,
/// `cmd-show-environment.c`) and the buffer commands (`cmd-save-buffer.c`
/// for show-buffer, `cmd-paste-buffer.c`, `paste.c`, `cmd-set-buffer.c` for
/// set-buffer and delete-buffer).
const NOT_FOUND_PREFIXES: &[&str] = &[
    "can't find session: ",
    "can't find window: ",
    "can't find pane: ",
    "can't find client: ",
    "no such session: ",
    "no such window: ",
    "no such pane: ",
    "no buffer ",
    "unknown buffer: ",
];

/// Whole messages that mean a buffer does not exist: `no buffers` (show-buffer
/// without `-b` and no buffer at all), `no buffer` (delete-buffer without
/// `-b`, and the same then).
const NOT_FOUND_MESSAGES: &[&str] = &["no buffers", "no buffer"];

/// The kind of an `%error` reply's message. tmux writes the error last, so
/// only the last non-empty line counts (a raw command may have printed
/// output before failing).
fn command_kind(message: &str) -> ErrorKind {
    let last = message
        .lines()
        .rev()
        .map(str::trim_end)
        .find(|l| !l.is_empty())
        .unwrap_or_default();
    let not_found = NOT_FOUND_MESSAGES.contains(&last)
        || NOT_FOUND_PREFIXES.iter().any(|p| last.starts_with(p));
    if not_found {
        ErrorKind::NotFound
    } else {
        ErrorKind::Refused
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::Io(Arc::new(e))
    }
}

/// Shorthand for results of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(message: &str) -> ErrorKind {
        Error::Command {
            command: "x".into(),
            message: message.into(),
        }
        .kind()
    }

    #[test]
    fn missing_targets_and_buffers_are_not_found() {
        for message in [
            "can't find pane: %99",
            "can't find pane: 9",
            "can't find window: @3",
            "can't find window: nosuch",
            "can't find session: $4",
            "can't find session: a b: c",
            "can't find client: /dev/pts/9",
            "no such session: work",
            "no such window: @1",
            "no such pane: %2",
            "no buffer clip",
            "no buffer ",
            "no buffers",
            "no buffer",
            "unknown buffer: clip",
            // Output before the error, and a trailing newline.
            "some output\ncan't find pane: %1\n",
        ] {
            assert_eq!(kind(message), ErrorKind::NotFound, "{message:?}");
        }
    }

    #[test]
    fn other_refusals_are_refused() {
        for message in [
            "",
            "create window failed: index 0 in use",
            "invalid session name: a:b",
            "unknown command: bogus",
            "unknown flag -Q",
            "unknown option: nosuch",
            "invalid option: @x",
            "unknown variable: FOO",
            "can't find terminfo database",
            "can't specify pane here",
            "no current client",
            "no buffersx",
            "no bufferx",
            "width invalid",
            // Only the last line counts.
            "can't find pane: %1\nsize missing",
            // tmux's own words, not a prefix found later in the line.
            "pane said: can't find pane: %1",
        ] {
            assert_eq!(kind(message), ErrorKind::Refused, "{message:?}");
        }
    }

    #[test]
    fn other_variants_have_their_own_kind() {
        let io = || std::io::Error::other("x");
        assert_eq!(Error::from(io()).kind(), ErrorKind::Io);
        assert_eq!(
            Error::Spawn {
                program: "tmux".into(),
                source: Arc::new(io())
            }
            .kind(),
            ErrorKind::Spawn
        );
        assert_eq!(
            Error::Closed(Arc::new(Closed::default())).kind(),
            ErrorKind::Closed
        );
        assert_eq!(
            Error::InvalidArgument(String::new()).kind(),
            ErrorKind::InvalidArgument
        );
        assert_eq!(
            Error::UnexpectedReply {
                command: "x".into(),
                detail: String::new()
            }
            .kind(),
            ErrorKind::UnexpectedReply
        );
        assert_eq!(
            Error::Timeout(std::time::Duration::from_secs(1)).kind(),
            ErrorKind::Timeout
        );
        assert_eq!(ErrorKind::Refused.to_string(), "refused by tmux");
    }
}
