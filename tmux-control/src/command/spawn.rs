//! [`NewPane`]: the commands that start a program in a new pane, as one
//! type for [`Tmux::spawn`](crate::Tmux::spawn).

use super::{NewSession, NewWindow, RespawnPane, Spawn, SplitWindow};
use crate::ids::PaneId;

/// A new session, window or split whose program [`Tmux::spawn`] starts
/// already followed, from its first byte. Made from the builder with
/// `into()` or [`NewPane::from`].
///
/// [`Tmux::spawn`]: crate::Tmux::spawn
///
/// ```
/// use tmux_control::command::{NewPane, NewSession};
/// let what = NewPane::from(NewSession::new().session_name("build").command("make"))
///     .remain_on_exit();
/// # let _ = what;
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewPane {
    pub(crate) kind: NewPaneKind,
    pub(crate) remain_on_exit: bool,
}

/// Which command creates the pane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum NewPaneKind {
    Session(NewSession),
    Window(NewWindow),
    Split(SplitWindow),
}

impl From<NewSession> for NewPane {
    fn from(c: NewSession) -> Self {
        NewPane::of(NewPaneKind::Session(c))
    }
}

impl From<NewWindow> for NewPane {
    fn from(c: NewWindow) -> Self {
        NewPane::of(NewPaneKind::Window(c))
    }
}

impl From<SplitWindow> for NewPane {
    fn from(c: SplitWindow) -> Self {
        NewPane::of(NewPaneKind::Split(c))
    }
}

impl NewPane {
    fn of(kind: NewPaneKind) -> Self {
        Self {
            kind,
            remain_on_exit: false,
        }
    }

    /// Keep the pane, and its program's exit status, when the program exits
    /// (the pane's `remain-on-exit`, set before the program starts, so
    /// even a program that exits at once is kept).
    ///
    /// ```
    /// use tmux_control::command::{NewPane, NewWindow};
    /// let what = NewPane::from(NewWindow::new().command("exit 3")).remain_on_exit();
    /// # let _ = what;
    /// ```
    pub fn remain_on_exit(mut self) -> Self {
        self.remain_on_exit = true;
        self
    }

    /// The new pane's working directory, whatever creates it (the
    /// builder's `start_directory`, for a caller that sets it once for
    /// a session, a window or a split).
    ///
    /// ```
    /// use tmux_control::command::{NewPane, SplitWindow};
    /// let what = NewPane::from(SplitWindow::new())
    ///     .start_directory("/tmp")
    ///     .env("MODE", "test")
    ///     .command("make check");
    /// # let _ = what;
    /// ```
    pub fn start_directory(mut self, dir: impl AsRef<[u8]>) -> Self {
        self.spawn_mut().start_directory = Some(dir.as_ref().to_vec());
        self
    }

    /// Sets an environment variable for the new pane (the builder's
    /// `env`; see [`NewPane::start_directory`] for an example).
    pub fn env(mut self, name: impl Into<String>, value: impl AsRef<[u8]>) -> Self {
        self.spawn_mut().env.push(name, value);
        self
    }

    /// The command to run instead of the default shell (the builder's
    /// `command`; see [`NewPane::start_directory`] for an example).
    pub fn command(mut self, command: impl AsRef<[u8]>) -> Self {
        self.spawn_mut().command = Some(command.as_ref().to_vec());
        self
    }

    fn spawn(&self) -> &Spawn {
        match &self.kind {
            NewPaneKind::Session(c) => &c.spawn,
            NewPaneKind::Window(c) => &c.spawn,
            NewPaneKind::Split(c) => &c.spawn,
        }
    }

    fn spawn_mut(&mut self) -> &mut Spawn {
        match &mut self.kind {
            NewPaneKind::Session(c) => &mut c.spawn,
            NewPaneKind::Window(c) => &mut c.spawn,
            NewPaneKind::Split(c) => &mut c.spawn,
        }
    }

    /// The shell command the caller asked for, if any.
    pub(crate) fn program(&self) -> Option<&[u8]> {
        self.spawn().command.as_deref()
    }

    /// The same command, running `placeholder` instead of the program.
    pub(crate) fn parked(&self, placeholder: &str) -> NewPaneKind {
        let mut parked = self.clone();
        parked.spawn_mut().command = Some(placeholder.as_bytes().to_vec());
        parked.kind
    }

    /// The `respawn-pane -k` that replaces the placeholder in `pane` with
    /// `program`, in the asked-for directory and environment.
    pub(crate) fn respawn(&self, pane: PaneId, program: &[u8]) -> RespawnPane {
        let mut respawn = RespawnPane::new(pane).kill();
        respawn.spawn = self.spawn().clone();
        respawn.spawn.command = Some(program.to_vec());
        respawn
    }
}

impl RespawnPane {
    /// The pane to respawn.
    pub(crate) fn target(&self) -> &super::Target {
        &self.target
    }

    /// Whether a command is given (else tmux runs the pane's start command).
    pub(crate) fn has_command(&self) -> bool {
        self.spawn.command.is_some()
    }

    /// Puts `prefix` before the command, when one is given.
    pub(crate) fn prefix_command(&mut self, prefix: &str) {
        if let Some(command) = &mut self.spawn.command {
            let mut wrapped = prefix.as_bytes().to_vec();
            wrapped.extend_from_slice(command);
            *command = wrapped;
        }
    }
}
