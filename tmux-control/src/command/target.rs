//! What a command acts on: the `-t` argument.

use std::fmt;

use crate::command::CommandLine;
use crate::error::Result;
use crate::ids::{PaneId, SessionId, WindowId};

/// The object a command acts on, written as tmux's `-t` argument.
///
/// Ids are the reliable way to name things: they never change and are never
/// reused by a server. [`Target::Name`] passes any tmux target string
/// (`main`, `main:2`, `=main`, `main:2.1`, `{last}`…) through unchanged, quoted
/// so that the command parser cannot misread it; tmux then resolves it with
/// its usual rules (prefix and pattern matching included, so prefer `=name`
/// for an exact session name).
///
/// ```
/// use tmux_control::command::{CommandLine, KillWindow, Target};
/// use tmux_control::{PaneId, SessionId, WindowId};
///
/// assert_eq!(Target::from(SessionId(1)).to_string(), "$1");
/// assert_eq!(Target::from(PaneId(4)).to_string(), "%4");
/// let line = CommandLine::of(&KillWindow::new(WindowId(2)))?;
/// assert_eq!(line.to_string(), "kill-window -t @2");
/// let line = CommandLine::of(&KillWindow::new("my session:2"))?;
/// assert_eq!(line.to_string(), "kill-window -t 'my session:2'");
/// # Ok::<(), tmux_control::Error>(())
/// ```
///
/// More kinds of target may be added (for example clients); a `match` on
/// a `Target` outside this crate needs a wildcard arm.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Target {
    /// A session, `$N`.
    Session(SessionId),
    /// A window, `@N`.
    Window(WindowId),
    /// A pane, `%N`.
    Pane(PaneId),
    /// Any tmux target string, passed to tmux as is.
    Name(String),
}

impl Target {
    /// Writes `-t TARGET`.
    pub(crate) fn write(&self, line: &mut CommandLine) -> Result<()> {
        line.word("-t")?;
        match self {
            Target::Session(id) => line.word(&id.to_string())?,
            Target::Window(id) => line.word(&id.to_string())?,
            Target::Pane(id) => line.word(&id.to_string())?,
            Target::Name(name) => line.arg(name)?,
        };
        Ok(())
    }
}

/// Writes `-t TARGET` when there is a target.
pub(crate) fn write_opt(target: Option<&Target>, line: &mut CommandLine) -> Result<()> {
    match target {
        Some(t) => t.write(line),
        None => Ok(()),
    }
}

/// The target as tmux reads it.
///
/// ```
/// use tmux_control::command::Target;
/// assert_eq!(Target::from("=main").to_string(), "=main");
/// ```
impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Target::Session(id) => id.fmt(f),
            Target::Window(id) => id.fmt(f),
            Target::Pane(id) => id.fmt(f),
            Target::Name(name) => f.write_str(name),
        }
    }
}

impl From<SessionId> for Target {
    fn from(id: SessionId) -> Self {
        Target::Session(id)
    }
}

impl From<WindowId> for Target {
    fn from(id: WindowId) -> Self {
        Target::Window(id)
    }
}

impl From<PaneId> for Target {
    fn from(id: PaneId) -> Self {
        Target::Pane(id)
    }
}

impl From<&str> for Target {
    fn from(name: &str) -> Self {
        Target::Name(name.to_owned())
    }
}

impl From<String> for Target {
    fn from(name: String) -> Self {
        Target::Name(name)
    }
}

impl From<&Target> for Target {
    fn from(target: &Target) -> Self {
        target.clone()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn line(t: impl Into<Target>) -> String {
        let mut l = CommandLine::new();
        t.into().write(&mut l).unwrap();
        l.to_string()
    }

    #[test]
    fn writes_targets() {
        assert_eq!(line(SessionId(0)), "-t $0");
        assert_eq!(line(WindowId(7)), "-t @7");
        assert_eq!(line(PaneId(12)), "-t %12");
        assert_eq!(line("main"), "-t 'main'");
        assert_eq!(line("-x"), "-t '-x'");
        assert_eq!(line("a;b"), "-t 'a;b'");
        assert_eq!(line(String::from("%3:on")), "-t '%3:on'");
        let mut l = CommandLine::new();
        write_opt(None, &mut l).unwrap();
        assert_eq!(l.to_string(), "");
    }
}
