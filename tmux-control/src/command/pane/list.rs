//! `list-panes`: the pane row ([`PaneInfo`]), its `-F` format and its parsing.

use std::path::PathBuf;

use crate::command::format::{RowSpec, bytes_to_path, join_lines, lossy};
use crate::command::{Command, CommandLine, Target, ok_body};
use crate::error::Result;
use crate::ids::{PaneId, SessionId, WindowId};
use crate::proto::Reply;
use crate::version::Version;

/// One row of [`ListPanes`].
///
/// ```
/// use tmux_control::command::{Command, ListPanes};
/// use tmux_control::proto::Reply;
/// use tmux_control::PaneId;
///
/// let row = "$0 @0 0 %0 0 1 80 24 0 0 4242 0  0 0 2 1 0 vm bash /root /dev/pts/0";
/// let reply = Reply { time: 0, number: 1, flags: 1, error: false, body: vec![row.into()] };
/// let panes = ListPanes::all().parse(reply, &tmux_control::Version::OLDEST_SUPPORTED)?;
/// assert_eq!(panes[0].id, PaneId(0));
/// assert_eq!(panes[0].pid, Some(4242));
/// assert_eq!(panes[0].current_command, "bash");
/// assert_eq!(panes[0].dead_status, None);
/// # Ok::<(), tmux_control::Error>(())
/// ```
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct PaneInfo {
    /// `#{session_id}`: the session this row was listed for.
    pub session: SessionId,
    /// `#{window_id}`.
    pub window: WindowId,
    /// `#{window_index}`: the window's index in that session.
    pub window_index: u32,
    /// `#{pane_id}`.
    pub id: PaneId,
    /// `#{pane_index}`: its index in the window.
    pub index: u32,
    /// `#{pane_active}`: the window's active pane.
    pub active: bool,
    /// `#{pane_width}`.
    pub width: u32,
    /// `#{pane_height}`.
    pub height: u32,
    /// `#{pane_left}`: its left column in the window.
    pub left: u32,
    /// `#{pane_top}`: its top line in the window.
    pub top: u32,
    /// `#{pane_pid}`: the process tmux started in it, if any.
    pub pid: Option<u32>,
    /// `#{pane_dead}`: its process has exited (the pane stays with
    /// `remain-on-exit`).
    pub dead: bool,
    /// `#{pane_dead_status}`: the exit status of a dead pane's process.
    pub dead_status: Option<i32>,
    /// `#{pane_in_mode}`: it is in a mode (copy mode, view mode…); keys sent
    /// to it go to the mode, not to the program.
    pub in_mode: bool,
    /// `#{alternate_on}`: the program switched to the alternate screen.
    pub alternate_on: bool,
    /// `#{cursor_x}`.
    pub cursor_x: u32,
    /// `#{cursor_y}`.
    pub cursor_y: u32,
    /// `#{history_size}`: lines in its scrollback.
    pub history_size: u32,
    /// `#{pane_title}` (invalid UTF-8 replaced).
    pub title: String,
    /// `#{pane_current_command}`: the foreground process's name (invalid
    /// UTF-8 replaced).
    pub current_command: String,
    /// `#{pane_current_path}`: the foreground process's working directory.
    pub current_path: PathBuf,
    /// `#{pane_tty}`: its pseudo-terminal.
    pub tty: PathBuf,
}

const PANE_ROW: RowSpec = RowSpec {
    fixed: &[
        "session_id",
        "window_id",
        "window_index",
        "pane_id",
        "pane_index",
        "pane_active",
        "pane_width",
        "pane_height",
        "pane_left",
        "pane_top",
        "pane_pid",
        "pane_dead",
        "pane_dead_status",
        "pane_in_mode",
        "alternate_on",
        "cursor_x",
        "cursor_y",
        "history_size",
    ],
    text: &[
        "pane_title",
        "pane_current_command",
        "pane_current_path",
        "pane_tty",
    ],
};

/// `list-panes -F …`: the panes of a window, of a session, or of the server.
///
/// ```
/// use tmux_control::command::{CommandLine, ListPanes};
/// use tmux_control::{SessionId, WindowId};
/// assert!(CommandLine::of(&ListPanes::in_window(WindowId(1)))?.to_string().starts_with("list-panes -t @1 -F '"));
/// assert!(CommandLine::of(&ListPanes::in_session(SessionId(0)))?.to_string().starts_with("list-panes -s -t $0 -F '"));
/// assert!(CommandLine::of(&ListPanes::all())?.to_string().starts_with("list-panes -a -F '"));
/// # Ok::<(), tmux_control::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListPanes {
    scope: Scope,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Scope {
    Window(Target),
    Session(Target),
    All,
}

impl ListPanes {
    /// The panes of the window `target` (`-t`).
    ///
    /// ```
    /// use tmux_control::command::{Command, ListPanes};
    /// assert_eq!(ListPanes::in_window("main:0").name(), "list-panes");
    /// ```
    pub fn in_window(target: impl Into<Target>) -> Self {
        Self {
            scope: Scope::Window(target.into()),
        }
    }

    /// The panes of every window of the session `target` (`-s -t`).
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, ListPanes};
    /// assert!(CommandLine::of(&ListPanes::in_session("=main"))?.to_string().starts_with("list-panes -s -t '=main' "));
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn in_session(target: impl Into<Target>) -> Self {
        Self {
            scope: Scope::Session(target.into()),
        }
    }

    /// Every pane of the server (`-a`).
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, ListPanes};
    /// assert!(CommandLine::of(&ListPanes::all())?.to_string().starts_with("list-panes -a "));
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn all() -> Self {
        Self { scope: Scope::All }
    }
}

impl Command for ListPanes {
    type Output = Vec<PaneInfo>;

    const NAME: &'static str = "list-panes";

    fn encode(&self, line: &mut CommandLine) -> Result<()> {
        line.word(Self::NAME)?;
        match &self.scope {
            Scope::Window(t) => t.write(line)?,
            Scope::Session(t) => {
                line.word("-s")?;
                t.write(line)?;
            }
            Scope::All => {
                line.word("-a")?;
            }
        }
        line.flag_arg("-F", PANE_ROW.format())?;
        Ok(())
    }

    fn parse(self, reply: Reply, _version: &Version) -> Result<Vec<PaneInfo>> {
        let body = join_lines(&ok_body(Self::NAME, reply)?);
        PANE_ROW
            .parse(Self::NAME, &body)?
            .iter()
            .map(|row| {
                Ok(PaneInfo {
                    session: row.session(0)?,
                    window: row.window(1)?,
                    window_index: row.u32(2, "window_index")?,
                    id: row.pane(3)?,
                    index: row.u32(4, "pane_index")?,
                    active: row.flag(5, "pane_active")?,
                    width: row.u32(6, "pane_width")?,
                    height: row.u32(7, "pane_height")?,
                    left: row.u32(8, "pane_left")?,
                    top: row.u32(9, "pane_top")?,
                    pid: row.opt_u32(10, "pane_pid")?.filter(|&p| p != 0),
                    dead: row.flag(11, "pane_dead")?,
                    dead_status: row.opt_i32(12, "pane_dead_status")?,
                    in_mode: row.flag(13, "pane_in_mode")?,
                    alternate_on: row.flag(14, "alternate_on")?,
                    cursor_x: row.u32(15, "cursor_x")?,
                    cursor_y: row.u32(16, "cursor_y")?,
                    history_size: row.u32(17, "history_size")?,
                    title: lossy(row.text(0)),
                    current_command: lossy(row.text(1)),
                    current_path: bytes_to_path(row.text(2)),
                    tty: bytes_to_path(row.text(3)),
                })
            })
            .collect()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::command::test_util::*;

    #[test]
    fn list_panes() {
        assert_eq!(
            line(&ListPanes::in_window(WindowId(3))),
            format!(
                "list-panes -t @3 -F '#{{session_id}} #{{window_id}} #{{window_index}} #{{pane_id}} #{{pane_index}} #{{pane_active}} #{{pane_width}} #{{pane_height}} #{{pane_left}} #{{pane_top}} #{{pane_pid}} #{{pane_dead}} #{{pane_dead_status}} #{{pane_in_mode}} #{{alternate_on}} #{{cursor_x}} #{{cursor_y}} #{{history_size}} {} {} {} {}'",
                text_field("pane_title"),
                text_field("pane_current_command"),
                text_field("pane_current_path"),
                text_field("pane_tty")
            )
        );
        let rows = ListPanes::all()
            .parse(
                ok(&[
                    br"$0 @0 0 %0 0 1 80 24 0 0 100 0  0 0 0 0 5 vm bash /tmp/a\s\n /dev/pts/1",
                    br"$0 @1 1 %4 1 0 40 12 41 0 0 1 -1 1 1 3 4 0 t:\s1\s2   ",
                ]),
                &Version::OLDEST_SUPPORTED,
            )
            .unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].current_path, bytes_to_path(b"/tmp/a \n"));
        assert_eq!(rows[0].tty, bytes_to_path(b"/dev/pts/1"));
        assert_eq!(rows[0].history_size, 5);
        assert_eq!(rows[1].id, PaneId(4));
        assert_eq!(rows[1].pid, None);
        assert!(rows[1].dead);
        assert_eq!(rows[1].dead_status, Some(-1));
        assert!(rows[1].in_mode && rows[1].alternate_on);
        assert_eq!((rows[1].cursor_x, rows[1].cursor_y), (3, 4));
        assert_eq!(rows[1].title, "t: 1 2");
        assert_eq!(rows[1].current_command, "");
        assert_unexpected(
            ListPanes::all().parse(
                ok(&[b"$0 @1 1 %4 1 0 40 12 41 0 0 1 x 1 1 3 4 0    "]),
                &Version::OLDEST_SUPPORTED,
            ),
            "list-panes",
        );
        assert_unexpected(
            ListPanes::all().parse(ok(&[b"%0"]), &Version::OLDEST_SUPPORTED),
            "list-panes",
        );
        assert_command_error(
            ListPanes::in_window("x")
                .parse(err("can't find window: x"), &Version::OLDEST_SUPPORTED),
            "list-panes",
        );
    }
}
