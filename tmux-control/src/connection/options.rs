//! How a connection attaches: [`ConnectOptions`] and its defaults.

use std::time::Duration;

use crate::error::{Error, Result};
use crate::ids::SessionId;

/// Options for [`Tmux::connect_with`](crate::Tmux::connect_with).
///
/// ```
/// use tmux_control::ConnectOptions;
/// let opts = ConnectOptions::default().session("agents").size(120, 40);
/// assert_eq!(opts.session_name(), "agents");
/// ```
#[derive(Debug, Clone)]
pub struct ConnectOptions {
    session: String,
    create: bool,
    size: Option<(u16, u16)>,
    pause_after: Option<u32>,
    pane_log: usize,
    observer: bool,
    timeout: Duration,
    command: Option<String>,
    keep_followed: bool,
}

impl Default for ConnectOptions {
    fn default() -> Self {
        Self {
            session: Self::DEFAULT_SESSION.to_owned(),
            create: true,
            size: None,
            pause_after: Some(Self::DEFAULT_PAUSE_AFTER),
            pane_log: Self::DEFAULT_PANE_LOG,
            observer: false,
            timeout: Self::DEFAULT_TIMEOUT,
            command: None,
            keep_followed: false,
        }
    }
}

impl ConnectOptions {
    /// The session a connection attaches to when none is named.
    pub const DEFAULT_SESSION: &'static str = "tmux-control";

    /// Default for [`ConnectOptions::timeout`].
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

    /// Default `pause-after`, in seconds ([`ConnectOptions::pause_after`]).
    pub const DEFAULT_PAUSE_AFTER: u32 = 10;

    /// Default size of a followed pane's output log
    /// ([`ConnectOptions::pane_log`]): 4 MiB.
    pub const DEFAULT_PANE_LOG: usize = 4 << 20;

    /// The session to attach to (created if missing unless
    /// [`attach_only`](ConnectOptions::attach_only) is set). Default
    /// [`ConnectOptions::DEFAULT_SESSION`].
    pub fn session(mut self, name: impl Into<String>) -> Self {
        self.session = name.into();
        self
    }

    /// Fail instead of creating the session when it does not exist.
    pub fn attach_only(mut self) -> Self {
        self.create = false;
        self
    }

    /// Size of the session's first window if the connection creates it.
    pub fn size(mut self, columns: u16, rows: u16) -> Self {
        self.size = Some((columns, rows));
        self
    }

    /// Flow control: tmux pauses a pane's output to this connection once it
    /// is `seconds` behind (`pause-after`), and the connection resumes it at
    /// once, reporting the loss ([`PaneChunk::Lost`](crate::PaneChunk)).
    /// `None` turns it off: tmux then throttles the pane's program instead.
    /// Default: [`ConnectOptions::DEFAULT_PAUSE_AFTER`] seconds.
    pub fn pause_after(mut self, seconds: Option<u32>) -> Self {
        self.pause_after = seconds;
        self
    }

    /// The program the session's first pane runs if the connection creates
    /// the session (one shell command line; default: the user's shell).
    /// Useful to keep a session the library owns alive: the connection ends
    /// when its session is destroyed.
    pub fn command(mut self, command: impl Into<String>) -> Self {
        self.command = Some(command.into());
        self
    }

    /// How long connecting may take before it fails with
    /// [`Error::Timeout`] and the client process is stopped (default
    /// [`ConnectOptions::DEFAULT_TIMEOUT`]; over ssh this includes the login).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Bytes of output kept per followed pane (default 4 MiB).
    pub fn pane_log(mut self, bytes: usize) -> Self {
        self.pane_log = bytes;
        self
    }

    /// Keep following a pane once it is followed, until tmux reports it
    /// gone, even when the caller drops every [`PaneOutput`] of it: a
    /// server that follows panes across calls keeps no registry of its
    /// own. [`Tmux::followed`] lists them.
    ///
    /// By default a pane is followed while a handle or a stream of it
    /// lives.
    ///
    /// ```
    /// use tmux_control::ConnectOptions;
    /// let opts = ConnectOptions::default().keep_followed();
    /// # let _ = opts;
    /// ```
    ///
    /// [`PaneOutput`]: crate::PaneOutput
    /// [`Tmux::followed`]: crate::Tmux::followed
    pub fn keep_followed(mut self) -> Self {
        self.keep_followed = true;
        self
    }

    /// The session name in force.
    pub fn session_name(&self) -> &str {
        &self.session
    }

    /// Bytes of output kept per followed pane.
    pub(crate) fn pane_log_bytes(&self) -> usize {
        self.pane_log
    }

    /// Whether followed panes are kept without a handle.
    pub(crate) fn keeps_followed(&self) -> bool {
        self.keep_followed
    }

    /// The options of an observer: a client that attaches to an existing
    /// session (`session`) only to receive its panes' output, and that never
    /// changes a window's size.
    pub(crate) fn observer_of(&self, session: SessionId) -> Self {
        let mut options = self.clone();
        options.session = session.to_string();
        options.create = false;
        options.size = None;
        options.command = None;
        options.observer = true;
        options
    }

    /// How long connecting may take.
    pub(crate) fn connect_timeout(&self) -> Duration {
        self.timeout
    }

    /// The `pause-after` setting, in seconds.
    pub(crate) fn pause_after_seconds(&self) -> Option<u32> {
        self.pause_after
    }

    pub(crate) fn argv(&self) -> Result<Vec<String>> {
        validate_session_name(&self.session)?;
        let mut argv = Vec::new();
        if self.create {
            argv.extend(["new-session", "-A", "-s"].map(String::from));
            argv.push(self.session.clone());
            if let Some((x, y)) = self.size {
                argv.extend(["-x".into(), x.to_string(), "-y".into(), y.to_string()]);
            }
            if let Some(command) = &self.command {
                // On the command line each argv element is one argument:
                // no quoting for tmux's parser is needed, only an end to flags.
                argv.extend(["--".into(), command.clone()]);
            }
        } else {
            argv.extend(["attach-session", "-t"].map(String::from));
            // `=` asks for an exact match, never a prefix of another name;
            // a session id (`$3`) is exact already.
            if self.session.starts_with('$') {
                argv.push(self.session.clone());
            } else {
                argv.push(format!("={}", self.session));
            }
        }
        if self.observer {
            // Observers must never change a window's size.
            argv.extend(["-f".into(), "ignore-size".into()]);
        }
        Ok(argv)
    }
}

fn validate_session_name(name: &str) -> Result<()> {
    if let Some(digits) = name.strip_prefix('$')
        && !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
    {
        return Ok(());
    }
    let bad = name.is_empty()
        || name.ends_with(';')
        || name.starts_with('-')
        || name
            .bytes()
            .any(|b| b < 0x20 || b == 0x7f || b == b':' || b == b'.');
    if bad {
        return Err(Error::InvalidArgument(format!(
            "{name:?} cannot be a tmux session name (empty, ':', '.', control characters, a leading '-' or a trailing ';')"
        )));
    }
    Ok(())
}
