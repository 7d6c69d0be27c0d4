//! The server and its clients: `list-clients`, `detach-client`,
//! `kill-server`.

use std::path::PathBuf;

use crate::command::format::{RowSpec, bytes_to_path, join_lines, lossy, unvis};
use crate::command::{Command, CommandLine, ok_body, unit};
use crate::error::Result;
use crate::ids::{PaneId, SessionId, WindowId};
use crate::proto::Reply;
use crate::version::Version;

/// One row of [`ListClients`].
///
/// ```
/// use tmux_control::command::{ClientInfo, Command, ListClients};
/// use tmux_control::proto::Reply;
/// let row = "1 4242 80 24 1764662400 1764662000 @2 %3 0 /dev/pts/3 $1 /dev/pts/3";
/// let reply = Reply { time: 0, number: 1, flags: 1, error: false, body: vec![row.into()] };
/// let clients: Vec<ClientInfo> = ListClients::all().parse(reply, &tmux_control::Version::OLDEST_SUPPORTED)?;
/// assert!(clients[0].control_mode);
/// assert_eq!(clients[0].session, Some(tmux_control::SessionId(1)));
/// assert_eq!((clients[0].window, clients[0].pane), (Some(tmux_control::WindowId(2)), Some(tmux_control::PaneId(3))));
/// assert_eq!((clients[0].activity, clients[0].zoomed), (Some(1764662400), false));
/// # Ok::<(), tmux_control::Error>(())
/// ```
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ClientInfo {
    /// `#{client_name}`: the name to target it with.
    pub name: String,
    /// `#{session_id}`: the session it is attached to.
    pub session: Option<SessionId>,
    /// `#{client_control_mode}`: a control-mode client (like this
    /// library's connections) rather than a terminal.
    pub control_mode: bool,
    /// `#{client_pid}`: its process.
    pub pid: Option<u32>,
    /// `#{client_width}`, when tmux knows it (a control client that never
    /// gave a size has none).
    pub width: Option<u32>,
    /// `#{client_height}`, when tmux knows it.
    pub height: Option<u32>,
    /// `#{client_tty}`: its terminal.
    pub tty: PathBuf,
    /// `#{client_activity}`: when it last sent input (a key, or a resume),
    /// in seconds since the Unix epoch; tmux sets it when the client
    /// attaches too.
    pub activity: Option<u64>,
    /// `#{client_created}`: when it attached, in seconds since the Unix
    /// epoch (an `activity` equal to it saw no input yet).
    pub created: Option<u64>,
    /// `#{window_id}`: the window it shows (its session's current window).
    pub window: Option<WindowId>,
    /// `#{pane_id}`: that window's active pane, where its keys go.
    pub pane: Option<PaneId>,
    /// `#{window_zoomed_flag}`: that window is zoomed, so only its active
    /// pane is seen.
    pub zoomed: bool,
}

const CLIENT_ROW: RowSpec = RowSpec {
    fixed: &[
        "client_control_mode",
        "client_pid",
        "client_width",
        "client_height",
        "client_activity",
        "client_created",
        "window_id",
        "pane_id",
        "window_zoomed_flag",
    ],
    text: &["client_name", "session_id", "client_tty"],
};

/// `list-clients -F …`: the clients of the server, or of one session.
///
/// ```
/// use tmux_control::command::{CommandLine, ListClients};
/// use tmux_control::SessionId;
/// let line = CommandLine::of(&ListClients::in_session(SessionId(2)))?.to_string();
/// assert!(line.starts_with("list-clients -t $2 -F '#{client_control_mode} "), "{line}");
/// # Ok::<(), tmux_control::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListClients {
    session: Option<SessionId>,
}

impl ListClients {
    /// Every client of the server.
    ///
    /// ```
    /// use tmux_control::command::{Command, ListClients};
    /// assert_eq!(ListClients::all().name(), "list-clients");
    /// ```
    pub fn all() -> Self {
        Self { session: None }
    }

    /// The clients attached to `session`.
    ///
    /// ```
    /// use tmux_control::command::ListClients;
    /// let _ = ListClients::in_session(tmux_control::SessionId(0));
    /// ```
    pub fn in_session(session: SessionId) -> Self {
        Self {
            session: Some(session),
        }
    }
}

impl Command for ListClients {
    type Output = Vec<ClientInfo>;

    const NAME: &'static str = "list-clients";

    fn encode(&self, line: &mut CommandLine) -> Result<()> {
        line.word(Self::NAME)?;
        if let Some(session) = self.session {
            line.word("-t")?.word(&session.to_string())?;
        }
        line.flag_arg("-F", CLIENT_ROW.format())?;
        Ok(())
    }

    fn parse(self, reply: Reply, _version: &Version) -> Result<Vec<ClientInfo>> {
        let body = join_lines(&ok_body(Self::NAME, reply)?);
        CLIENT_ROW
            .parse(Self::NAME, &body)?
            .iter()
            .map(|row| {
                Ok(ClientInfo {
                    control_mode: row.flag(0, "client_control_mode")?,
                    pid: row.opt_u32(1, "client_pid")?,
                    width: row.opt_u32(2, "client_width")?,
                    height: row.opt_u32(3, "client_height")?,
                    name: lossy(&unvis(row.text(0))),
                    session: SessionId::from_bytes(row.text(1)),
                    tty: bytes_to_path(row.text(2)),
                    activity: row.opt_u64(4, "client_activity")?,
                    created: row.opt_u64(5, "client_created")?,
                    window: WindowId::from_bytes(row.field(6)),
                    pane: PaneId::from_bytes(row.field(7)),
                    zoomed: row.field(8) == b"1",
                })
            })
            .collect()
    }
}

/// `detach-client`: detaches one client by name (`-t`), or every client
/// of a session (`-s`).
///
/// ```
/// use tmux_control::command::{CommandLine, DetachClient};
/// use tmux_control::SessionId;
/// assert_eq!(CommandLine::of(&DetachClient::client("/dev/pts/3"))?.to_string(), "detach-client -t '/dev/pts/3'");
/// assert_eq!(CommandLine::of(&DetachClient::session(SessionId(1)))?.to_string(), "detach-client -s $1");
/// # Ok::<(), tmux_control::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DetachClient {
    which: Detach,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Detach {
    Client(String),
    Session(SessionId),
}

impl DetachClient {
    /// Detaches the client named `name` (a [`ClientInfo::name`]).
    pub fn client(name: impl Into<String>) -> Self {
        Self {
            which: Detach::Client(name.into()),
        }
    }

    /// Detaches every client attached to `session`, control clients
    /// included.
    pub fn session(session: SessionId) -> Self {
        Self {
            which: Detach::Session(session),
        }
    }
}

impl Command for DetachClient {
    type Output = ();

    const NAME: &'static str = "detach-client";

    fn encode(&self, line: &mut CommandLine) -> Result<()> {
        line.word(Self::NAME)?;
        match &self.which {
            Detach::Client(name) => line.word("-t")?.arg(name)?,
            Detach::Session(session) => line.word("-s")?.word(&session.to_string())?,
        };
        Ok(())
    }

    fn parse(self, reply: Reply, _version: &Version) -> Result<()> {
        unit(Self::NAME, reply)
    }
}

/// `kill-server`: ends the tmux server, every session with it. The
/// connection that sends it usually ends before the reply arrives, so
/// [`Error::Closed`](crate::Error::Closed) is its normal outcome.
///
/// ```
/// use tmux_control::command::{CommandLine, KillServer};
/// assert_eq!(CommandLine::of(&KillServer)?.to_string(), "kill-server");
/// # Ok::<(), tmux_control::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct KillServer;

impl Command for KillServer {
    type Output = ();

    const NAME: &'static str = "kill-server";

    fn encode(&self, line: &mut CommandLine) -> Result<()> {
        line.word(Self::NAME)?;
        Ok(())
    }

    fn parse(self, reply: Reply, _version: &Version) -> Result<()> {
        unit(Self::NAME, reply)
    }
}
