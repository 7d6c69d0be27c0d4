//! [`NewPane`]: the commands that start a program in a new pane, as one
//! type for [`Tmux::spawn`](crate::Tmux::spawn).

use super::{NewSession, NewWindow, RespawnPane, Spawn, SplitWindow};
use crate::ids::PaneId;

/// A new session, window or split whose program [`Tmux::spawn`] starts
/// already followed, from its first byte. Made from the builder with
/// `into()`.
///
/// [`Tmux::spawn`]: crate::Tmux::spawn
///
/// ```
/// use tmux_control::command::{NewPane, NewSession};
/// let what: NewPane = NewSession::new().session_name("build").command("make").into();
/// assert!(matches!(what, NewPane::Session(_)));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum NewPane {
    /// `new-session`.
    Session(NewSession),
    /// `new-window`.
    Window(NewWindow),
    /// `split-window`.
    Split(SplitWindow),
}

impl From<NewSession> for NewPane {
    fn from(c: NewSession) -> Self {
        NewPane::Session(c)
    }
}

impl From<NewWindow> for NewPane {
    fn from(c: NewWindow) -> Self {
        NewPane::Window(c)
    }
}

impl From<SplitWindow> for NewPane {
    fn from(c: SplitWindow) -> Self {
        NewPane::Split(c)
    }
}

impl NewPane {
    fn spawn(&self) -> &Spawn {
        match self {
            NewPane::Session(c) => &c.spawn,
            NewPane::Window(c) => &c.spawn,
            NewPane::Split(c) => &c.spawn,
        }
    }

    fn spawn_mut(&mut self) -> &mut Spawn {
        match self {
            NewPane::Session(c) => &mut c.spawn,
            NewPane::Window(c) => &mut c.spawn,
            NewPane::Split(c) => &mut c.spawn,
        }
    }

    /// The shell command the caller asked for, if any.
    pub(crate) fn program(&self) -> Option<&[u8]> {
        self.spawn().command.as_deref()
    }

    /// The same command, running `placeholder` instead of the program.
    pub(crate) fn parked(&self, placeholder: &str) -> NewPane {
        let mut parked = self.clone();
        parked.spawn_mut().command = Some(placeholder.as_bytes().to_vec());
        parked
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
