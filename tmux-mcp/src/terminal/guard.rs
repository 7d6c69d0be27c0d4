//! The self-kill guard: where this process itself runs in tmux, if it does.
//!
//! tmux puts `TMUX=socket_path,server_pid,session_id` and `TMUX_PANE=%N` in
//! the environment of every pane's processes. When the MCP client (and so
//! this server) runs inside a pane of the very server the tools act on,
//! killing that pane, its window, its session or the server would kill the
//! client itself, and typing into it would type into the client's own
//! terminal. Those actions are refused.

use std::path::{Path, PathBuf};

use tmux_control::{PaneId, SessionId};

/// Where the calling process sits in tmux, read from its environment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Caller {
    /// The socket of the server the caller runs in (`TMUX`'s first field).
    pub socket: Option<PathBuf>,
    /// The caller's pane (`TMUX_PANE`).
    pub pane: Option<PaneId>,
    /// The caller's session (`TMUX`'s third field).
    pub session: Option<SessionId>,
    /// `TMUX_PANE` is set but `TMUX` is not (or unreadable): the server is
    /// unknown, so guarded actions are refused everywhere.
    pub unknown_server: bool,
}

/// What the guard knows about the caller relative to one tmux server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Relation {
    /// The caller does not run in this server.
    Outside,
    /// The caller runs in this server, in this pane (if known) and session.
    Inside {
        /// The caller's pane.
        pane: Option<PaneId>,
        /// The caller's session.
        session: Option<SessionId>,
    },
    /// Cannot tell; treat as inside.
    Unknown,
}

impl Caller {
    /// Reads `TMUX` and `TMUX_PANE` from this process's environment.
    pub fn from_env() -> Self {
        let tmux = std::env::var("TMUX").ok();
        let pane = std::env::var("TMUX_PANE").ok();
        Self::from_values(tmux.as_deref(), pane.as_deref())
    }

    /// Parses the two variables' values.
    pub fn from_values(tmux: Option<&str>, tmux_pane: Option<&str>) -> Self {
        let pane = tmux_pane.and_then(|p| p.trim().parse::<PaneId>().ok());
        let (socket, session) = match tmux.filter(|t| !t.is_empty()) {
            Some(value) => {
                // The socket path may itself contain commas: the last two
                // fields are the pid and the session id.
                let mut parts = value.rsplitn(3, ',');
                let session = parts.next().and_then(|s| s.parse::<u32>().ok());
                let _pid = parts.next();
                let socket = parts.next().filter(|s| !s.is_empty()).map(PathBuf::from);
                match socket {
                    Some(socket) => (Some(socket), session.map(SessionId)),
                    None => (Some(PathBuf::from(value)), None),
                }
            }
            None => (None, None),
        };
        let unknown_server = socket.is_none() && tmux_pane.is_some_and(|p| !p.trim().is_empty());
        Self {
            socket,
            pane,
            session,
            unknown_server,
        }
    }

    /// How the caller relates to the server whose socket is `server_socket`
    /// (`None` when the server's socket is not known).
    pub fn relation(&self, server_socket: Option<&Path>) -> Relation {
        if self.unknown_server {
            return Relation::Unknown;
        }
        let Some(mine) = &self.socket else {
            return Relation::Outside;
        };
        let Some(theirs) = server_socket else {
            return Relation::Unknown;
        };
        if same_file(mine, theirs) {
            Relation::Inside {
                pane: self.pane,
                session: self.session,
            }
        } else {
            Relation::Outside
        }
    }
}

fn same_file(a: &Path, b: &Path) -> bool {
    if a == b {
        return true;
    }
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// The socket path tmux uses for `-L name`: `$TMUX_TMPDIR` (or `/tmp`),
/// then `tmux-UID/name`.
pub(crate) fn socket_for_name(name: &str) -> PathBuf {
    let base = std::env::var_os("TMUX_TMPDIR")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/tmp"));
    base.join(format!("tmux-{}", current_uid())).join(name)
}

/// This process's user id, read from the owner of `/proc/self`.
pub(crate) fn current_uid() -> u32 {
    use std::os::unix::fs::MetadataExt as _;
    std::fs::metadata("/proc/self")
        .map(|m| m.uid())
        .unwrap_or(0)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn parses_tmux_variables() {
        let c = Caller::from_values(Some("/tmp/tmux-1000/default,1234,5"), Some("%12"));
        assert_eq!(
            c.socket.as_deref(),
            Some(Path::new("/tmp/tmux-1000/default"))
        );
        assert_eq!(c.session, Some(SessionId(5)));
        assert_eq!(c.pane, Some(PaneId(12)));
        assert!(!c.unknown_server);
        let commas = Caller::from_values(Some("/tmp/a,b/sock,1,0"), None);
        assert_eq!(commas.socket.as_deref(), Some(Path::new("/tmp/a,b/sock")));
        assert_eq!(Caller::from_values(None, None), Caller::default());
        assert!(Caller::from_values(None, Some("%1")).unknown_server);
    }

    #[test]
    fn relation_to_a_server() {
        let c = Caller::from_values(Some("/tmp/tmux-0/work,1,2"), Some("%3"));
        assert_eq!(
            c.relation(Some(Path::new("/tmp/tmux-0/work"))),
            Relation::Inside {
                pane: Some(PaneId(3)),
                session: Some(SessionId(2))
            }
        );
        assert_eq!(
            c.relation(Some(Path::new("/tmp/tmux-0/other"))),
            Relation::Outside
        );
        assert_eq!(c.relation(None), Relation::Unknown);
        assert_eq!(Caller::default().relation(None), Relation::Outside);
        assert_eq!(
            Caller::from_values(None, Some("%1")).relation(Some(Path::new("/x"))),
            Relation::Unknown
        );
    }

    #[test]
    fn names_resolve_under_the_uid_directory() {
        let p = socket_for_name("tmux-mcp");
        assert!(p.ends_with(format!("tmux-{}/tmux-mcp", current_uid())));
    }
}
