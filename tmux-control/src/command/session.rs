//! Sessions: `new-session`, `list-sessions`, `kill-session`,
//! `rename-session`, `has-session`.

use std::path::PathBuf;

use crate::command::format::{RowSpec, bytes_to_path, join_lines, lossy, unvis, window_name_arg};
use crate::command::{CREATED_FORMAT, Command, CommandLine, Created, Spawn, Target, ok_body, unit};
use crate::error::Result;
use crate::ids::SessionId;
use crate::proto::Reply;
use crate::version::Version;

/// `new-session -d -P -F …`: creates a session and returns its ids.
///
/// Always detached (`-d`): in control mode a non-detached `new-session`
/// would switch the connection's own client to the new session. Without
/// [`size`](NewSession::size) the first window gets the server's
/// `default-size` (80x24 unless configured).
///
/// The session name, window name and start directory are escaped for tmux's
/// format expansion, so they are taken literally; note that tmux itself
/// replaces `:` and `.` in session names.
///
/// ```
/// use tmux_control::command::{CommandLine, NewSession};
/// let cmd = NewSession::new()
///     .session_name("build")
///     .window_name("make")
///     .start_directory("/src/#1")
///     .size(100, 30)
///     .env("CI", "1")
///     .command("make -j4; exec bash");
/// assert_eq!(
///     CommandLine::of(&cmd)?.to_string(),
///     "new-session -d -P -F '#{session_id} #{window_id} #{pane_id}' -s 'build' -n 'make' \
///      -x 100 -y 30 -c '/src/##1' -e 'CI=1' -- 'make -j4; exec bash'"
/// );
/// # Ok::<(), tmux_control::Error>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NewSession {
    name: Option<Vec<u8>>,
    window_name: Option<Vec<u8>>,
    width: Option<u32>,
    height: Option<u32>,
    pub(super) spawn: Spawn,
}

impl NewSession {
    /// A session with tmux's defaults: a generated name, the default shell.
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, NewSession};
    /// assert_eq!(
    ///     CommandLine::of(&NewSession::new())?.to_string(),
    ///     "new-session -d -P -F '#{session_id} #{window_id} #{pane_id}'"
    /// );
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// The session's name (`-s`).
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, NewSession};
    /// let line = CommandLine::of(&NewSession::new().session_name("#x"))?;
    /// assert!(line.to_string().ends_with(" -s '##x'"));
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn session_name(mut self, name: impl AsRef<[u8]>) -> Self {
        self.name = Some(name.as_ref().to_vec());
        self
    }

    /// The first window's name (`-n`, taken literally); it also turns
    /// automatic renaming off. Sent in tmux's escaped form, like
    /// [`NewWindow::window_name`](crate::command::NewWindow::window_name).
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, NewSession};
    /// let line = CommandLine::of(&NewSession::new().window_name("editor"))?;
    /// assert!(line.to_string().ends_with(" -n 'editor'"));
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn window_name(mut self, name: impl AsRef<[u8]>) -> Self {
        self.window_name = Some(name.as_ref().to_vec());
        self
    }

    /// The size of the first window (`-x`, `-y`).
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, NewSession};
    /// let line = CommandLine::of(&NewSession::new().size(200, 50))?;
    /// assert!(line.to_string().ends_with(" -x 200 -y 50"));
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn size(mut self, width: u32, height: u32) -> Self {
        self.width = Some(width);
        self.height = Some(height);
        self
    }
}

spawn_methods!(NewSession, "NewSession::new()");

impl Command for NewSession {
    type Output = Created;

    const NAME: &'static str = "new-session";

    fn encode(&self, line: &mut CommandLine) -> Result<()> {
        line.word(Self::NAME)?
            .word("-d")?
            .word("-P")?
            .flag_arg("-F", CREATED_FORMAT)?;
        if let Some(name) = &self.name {
            line.flag_literal("-s", name)?;
        }
        if let Some(name) = &self.window_name {
            // Stored, and read back, like every other window name (see
            // `window_name_arg`).
            let name = window_name_arg(line.version(), name);
            line.flag_literal("-n", name)?;
        }
        if let Some(w) = self.width {
            line.number("-x", w)?;
        }
        if let Some(h) = self.height {
            line.number("-y", h)?;
        }
        self.spawn.write(line)
    }

    fn parse(self, reply: Reply, _version: &Version) -> Result<Created> {
        Created::parse(Self::NAME, reply)
    }
}

/// One row of [`ListSessions`].
///
/// ```
/// use tmux_control::command::{Command, ListSessions};
/// use tmux_control::proto::Reply;
/// use tmux_control::SessionId;
///
/// let row = "$0 2 1 1795959886 1795959890 main  /tmp";
/// let reply = Reply { time: 0, number: 1, flags: 1, error: false, body: vec![row.into()] };
/// let sessions = ListSessions::new().parse(reply, &tmux_control::Version::OLDEST_SUPPORTED)?;
/// assert_eq!(sessions[0].id, SessionId(0));
/// assert_eq!(sessions[0].name, "main");
/// assert_eq!(sessions[0].windows, 2);
/// assert_eq!(sessions[0].group, None);
/// # Ok::<(), tmux_control::Error>(())
/// ```
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SessionInfo {
    /// `#{session_id}`.
    pub id: SessionId,
    /// `#{session_name}`, decoded with [`unvis`](crate::command::unvis)
    /// (invalid UTF-8 replaced).
    pub name: String,
    /// `#{session_windows}`: how many windows it has.
    pub windows: u32,
    /// `#{session_attached}`: how many clients are attached to it
    /// (control clients included).
    pub attached: u32,
    /// `#{session_created}`: when it was created, seconds since the epoch.
    pub created: u64,
    /// `#{session_activity}`: last activity, seconds since the epoch.
    pub activity: u64,
    /// `#{session_group}`: its group's name, if it is in a group.
    pub group: Option<String>,
    /// `#{session_path}`: its working directory.
    pub path: PathBuf,
}

const SESSION_ROW: RowSpec = RowSpec {
    fixed: &[
        "session_id",
        "session_windows",
        "session_attached",
        "session_created",
        "session_activity",
    ],
    text: &["session_name", "session_group", "session_path"],
};

/// `list-sessions -F …`: every session of the server.
///
/// ```
/// use tmux_control::command::{CommandLine, ListSessions};
/// assert!(CommandLine::of(&ListSessions::new())?.to_string().starts_with(
///     "list-sessions -F '#{session_id} #{session_windows} "
/// ));
/// # Ok::<(), tmux_control::Error>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ListSessions {}

impl ListSessions {
    /// Lists all sessions.
    ///
    /// ```
    /// use tmux_control::command::{Command, ListSessions};
    /// assert_eq!(ListSessions::new().name(), "list-sessions");
    /// ```
    pub fn new() -> Self {
        Self::default()
    }
}

impl Command for ListSessions {
    type Output = Vec<SessionInfo>;

    const NAME: &'static str = "list-sessions";

    fn encode(&self, line: &mut CommandLine) -> Result<()> {
        let format = SESSION_ROW.format();
        line.word(Self::NAME)?.flag_arg("-F", format)?;
        Ok(())
    }

    fn parse(self, reply: Reply, _version: &Version) -> Result<Vec<SessionInfo>> {
        let body = join_lines(&ok_body(Self::NAME, reply)?);
        SESSION_ROW
            .parse(Self::NAME, &body)?
            .iter()
            .map(|row| {
                let group = unvis(row.text(1));
                Ok(SessionInfo {
                    id: row.session(0)?,
                    windows: row.u32(1, "session_windows")?,
                    attached: row.u32(2, "session_attached")?,
                    created: row.u64(3, "session_created")?,
                    activity: row.u64(4, "session_activity")?,
                    name: lossy(&unvis(row.text(0))),
                    group: (!group.is_empty()).then(|| lossy(&group)),
                    path: bytes_to_path(row.text(2)),
                })
            })
            .collect()
    }
}

/// `kill-session -t TARGET`.
///
/// ```
/// use tmux_control::command::{CommandLine, KillSession};
/// use tmux_control::SessionId;
/// assert_eq!(CommandLine::of(&KillSession::new(SessionId(2)))?.to_string(), "kill-session -t $2");
/// # Ok::<(), tmux_control::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KillSession {
    target: Target,
}

impl KillSession {
    /// Kills the session `target`.
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, KillSession};
    /// assert_eq!(CommandLine::of(&KillSession::new("=old"))?.to_string(), "kill-session -t '=old'");
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn new(target: impl Into<Target>) -> Self {
        Self {
            target: target.into(),
        }
    }
}

impl Command for KillSession {
    type Output = ();

    const NAME: &'static str = "kill-session";

    fn encode(&self, line: &mut CommandLine) -> Result<()> {
        line.word(Self::NAME)?;
        self.target.write(line)
    }

    fn parse(self, reply: Reply, _version: &Version) -> Result<()> {
        unit(Self::NAME, reply)
    }
}

/// `rename-session -t TARGET -- NAME`; the name is taken literally (escaped
/// for format expansion).
///
/// ```
/// use tmux_control::command::{CommandLine, RenameSession};
/// use tmux_control::SessionId;
/// let cmd = RenameSession::new(SessionId(0), "-new #1");
/// assert_eq!(CommandLine::of(&cmd)?.to_string(), "rename-session -t $0 -- '-new ##1'");
/// # Ok::<(), tmux_control::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenameSession {
    target: Target,
    name: Vec<u8>,
}

impl RenameSession {
    /// Renames the session `target` to `name`.
    ///
    /// ```
    /// use tmux_control::command::{Command, RenameSession};
    /// assert_eq!(RenameSession::new("old", "new").name(), "rename-session");
    /// ```
    pub fn new(target: impl Into<Target>, name: impl AsRef<[u8]>) -> Self {
        Self {
            target: target.into(),
            name: name.as_ref().to_vec(),
        }
    }
}

impl Command for RenameSession {
    type Output = ();

    const NAME: &'static str = "rename-session";

    fn encode(&self, line: &mut CommandLine) -> Result<()> {
        line.word(Self::NAME)?;
        self.target.write(line)?;
        line.end_of_flags()
            .arg(crate::command::escape_format(&self.name))?;
        Ok(())
    }

    fn parse(self, reply: Reply, _version: &Version) -> Result<()> {
        unit(Self::NAME, reply)
    }
}

/// `has-session -t TARGET`: whether the session exists.
///
/// Any `%error` reply counts as "no" (tmux answers `can't find session: …`).
///
/// ```
/// use tmux_control::command::{Command, CommandLine, HasSession};
/// use tmux_control::proto::Reply;
/// let cmd = HasSession::new("=main");
/// assert_eq!(CommandLine::of(&cmd)?.to_string(), "has-session -t '=main'");
/// let missing = Reply { time: 0, number: 1, flags: 1, error: true,
///                       body: vec!["can't find session: main".into()] };
/// assert_eq!(cmd.parse(missing, &tmux_control::Version::OLDEST_SUPPORTED)?, false);
/// # Ok::<(), tmux_control::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HasSession {
    target: Target,
}

impl HasSession {
    /// Asks whether the session `target` exists.
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, HasSession};
    /// use tmux_control::SessionId;
    /// assert_eq!(CommandLine::of(&HasSession::new(SessionId(3)))?.to_string(), "has-session -t $3");
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn new(target: impl Into<Target>) -> Self {
        Self {
            target: target.into(),
        }
    }
}

impl Command for HasSession {
    type Output = bool;

    const NAME: &'static str = "has-session";

    fn encode(&self, line: &mut CommandLine) -> Result<()> {
        line.word(Self::NAME)?;
        self.target.write(line)
    }

    fn parse(self, reply: Reply, _version: &Version) -> Result<bool> {
        Ok(!reply.error)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::command::test_util::*;

    #[test]
    fn new_session_lines() {
        assert_eq!(
            line(&NewSession::new()),
            "new-session -d -P -F '#{session_id} #{window_id} #{pane_id}'"
        );
        assert_eq!(
            line(
                &NewSession::new()
                    .session_name("a b;c")
                    .window_name("#[x]")
                    .start_directory("~/d")
                    .size(1, 2)
                    .env("K", "v\n")
                    .command("-c")
            ),
            "new-session -d -P -F '#{session_id} #{window_id} #{pane_id}' -s 'a b;c' \
             -n '#{l:#[}x]' -x 1 -y 2 -c '~/d' -e 'K=v'\"\\012\" -- '-c'"
        );
        let created = NewSession::new()
            .parse(ok(&[b"$4 @5 %6"]), &Version::OLDEST_SUPPORTED)
            .unwrap();
        assert_eq!(created.session, SessionId(4));
        assert_command_error(
            NewSession::new().parse(err("duplicate session: x"), &Version::OLDEST_SUPPORTED),
            "new-session",
        );
    }

    #[test]
    fn list_sessions() {
        assert_eq!(
            line(&ListSessions::new()),
            format!(
                "list-sessions -F '#{{session_id}} #{{session_windows}} #{{session_attached}} #{{session_created}} #{{session_activity}} {} {} {}'",
                text_field("session_name"),
                text_field("session_group"),
                text_field("session_path")
            )
        );
        let rows = ListSessions::new()
            .parse(
                ok(&[
                    b"$0 1 1 10 11 s\\\\tn\\s\xc3\xa9  /a\\nb",
                    b"$3 2 0 12 13 a\\sb\\s grp /x\\sy\xff",
                ]),
                &Version::OLDEST_SUPPORTED,
            )
            .unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].name, "s\tn é");
        assert_eq!(rows[0].path, bytes_to_path(b"/a\nb"));
        assert_eq!(rows[1].id, SessionId(3));
        assert_eq!(rows[1].name, "a b ");
        assert_eq!(rows[1].group.as_deref(), Some("grp"));
        assert_eq!(rows[1].attached, 0);
        assert_eq!(rows[1].created, 12);
        assert!(
            ListSessions::new()
                .parse(ok(&[]), &Version::OLDEST_SUPPORTED)
                .unwrap()
                .is_empty()
        );
        assert_unexpected(
            ListSessions::new().parse(ok(&[b"$0 1 1 10 main  "]), &Version::OLDEST_SUPPORTED),
            "list-sessions",
        );
        assert_unexpected(
            ListSessions::new().parse(ok(&[b"@0 1 1 10 11 main  "]), &Version::OLDEST_SUPPORTED),
            "list-sessions",
        );
        assert_unexpected(
            ListSessions::new().parse(ok(&[b"$0 x 1 10 11 main  "]), &Version::OLDEST_SUPPORTED),
            "list-sessions",
        );
        assert_command_error(
            ListSessions::new().parse(err("no server"), &Version::OLDEST_SUPPORTED),
            "list-sessions",
        );
    }

    #[test]
    fn kill_rename_has() {
        assert_eq!(line(&KillSession::new(SessionId(1))), "kill-session -t $1");
        assert_eq!(
            line(&RenameSession::new("x", "#{y}")),
            "rename-session -t 'x' -- '##{y}'"
        );
        assert!(
            HasSession::new("x")
                .parse(ok(&[]), &Version::OLDEST_SUPPORTED)
                .unwrap()
        );
        assert!(
            !HasSession::new("x")
                .parse(err("can't find session: x"), &Version::OLDEST_SUPPORTED)
                .unwrap()
        );
        assert_command_error(
            KillSession::new("x").parse(err("can't find session: x"), &Version::OLDEST_SUPPORTED),
            "kill-session",
        );
        RenameSession::new("x", "y")
            .parse(ok(&[]), &Version::OLDEST_SUPPORTED)
            .unwrap();
    }
}
