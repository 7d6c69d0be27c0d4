//! [`Tmux::resolve`]: any target (an id or a name) to the ids and indexes
//! of the pane it means, in one round trip.

use super::Tmux;
use crate::command::{DisplayMessage, Target};
use crate::error::{Error, Result};
use crate::ids::{PaneId, SessionId, WindowId};

/// Where a target points: the pane tmux picks for it (a session's or
/// window's active pane), and its window and session.
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Resolved {
    /// The session.
    pub session: SessionId,
    /// The session's name.
    pub session_name: String,
    /// The window.
    pub window: WindowId,
    /// The window's index in the session.
    pub window_index: u32,
    /// The pane.
    pub pane: PaneId,
    /// The pane's index in the window.
    pub pane_index: u32,
}

/// The format of the answer: fixed fields first, the free-text name last
/// (it may hold spaces; nothing follows it).
const FORMAT: &str =
    "#{session_id} #{window_id} #{pane_id} #{window_index} #{pane_index} #{session_name}";

impl Tmux {
    /// Resolves `target` the way tmux resolves `-t`: a pane, window or
    /// session id, or a name (`=name` for an exact session name,
    /// `session:window.pane`). A target that does not exist fails with
    /// an error of kind [`ErrorKind::NotFound`](crate::ErrorKind::NotFound),
    /// on every tmux version (3.3a answers such a query with empty fields,
    /// which is reported the same way).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use tmux_control::command::NewSession;
    /// use tmux_control::{IsolatedServer, Tmux};
    /// let server = IsolatedServer::new()?;
    /// let tmux = Tmux::connect(server.server()).await?;
    /// let created = tmux.run(NewSession::new().session_name("work")).await?;
    /// let found = tmux.resolve("=work:").await?;
    /// assert_eq!((found.session, found.pane), (created.session, created.pane));
    /// assert_eq!(found.session_name, "work");
    /// let missing = tmux.resolve("=no-such-session:").await.unwrap_err();
    /// assert_eq!(missing.kind(), tmux_control::ErrorKind::NotFound);
    /// # Ok(()) }
    /// ```
    pub async fn resolve(&self, target: impl Into<Target>) -> Result<Resolved> {
        let target = target.into();
        let answer = self
            .run(DisplayMessage::format(FORMAT).target(&target))
            .await?;
        let line = String::from_utf8_lossy(&answer).into_owned();
        let first = line.lines().next().unwrap_or_default();
        let mut parts = first.splitn(6, ' ');
        let parsed = (
            parts.next().and_then(|s| s.parse::<SessionId>().ok()),
            parts.next().and_then(|s| s.parse::<WindowId>().ok()),
            parts.next().and_then(|s| s.parse::<PaneId>().ok()),
            parts.next().and_then(|s| s.parse::<u32>().ok()),
            parts.next().and_then(|s| s.parse::<u32>().ok()),
            parts.next(),
        );
        match parsed {
            (
                Some(session),
                Some(window),
                Some(pane),
                Some(window_index),
                Some(pane_index),
                Some(name),
            ) => Ok(Resolved {
                session,
                session_name: name.to_owned(),
                window,
                window_index,
                pane,
                pane_index,
            }),
            // tmux 3.3a answers empty fields for a target that does not
            // exist, where later versions fail the command.
            _ if first.trim().is_empty() => Err(Error::Command {
                command: "display-message".into(),
                message: format!(
                    "can't find {}: {target}",
                    match target {
                        Target::Pane(_) => "pane",
                        Target::Window(_) => "window",
                        _ => "session",
                    }
                ),
            }),
            _ => Err(Error::UnexpectedReply {
                command: "display-message".into(),
                detail: format!("cannot read a target's ids from {first:?}"),
            }),
        }
    }
}
