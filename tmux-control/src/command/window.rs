//! Windows: `new-window`, `list-windows`, `kill-window`, `rename-window`,
//! `select-window`, `resize-window`.
//!
//! (Longer than 600 lines with its doc examples and unit tests; the code
//! is one small builder per command of this family, kept together so the
//! family reads as one page.)

use crate::command::format::{RowSpec, join_lines, lossy, unvis, window_name_arg};
use crate::command::target::write_opt;
use crate::command::{
    CREATED_FORMAT, Command, CommandLine, Created, Spawn, Target, escape_format, ok_body, unit,
};
use crate::error::{Error, Result};
use crate::ids::{SessionId, WindowId};
use crate::proto::Reply;
use crate::version::Version;

/// `new-window -d -P -F …`: creates a window and returns its ids.
///
/// Always detached (`-d`), so the session's current window does not change.
/// The target names where the window goes: a session (`$1`, next free
/// index) or a session and index (`main:5`, which must be free).
///
/// ```
/// use tmux_control::command::{CommandLine, NewWindow};
/// use tmux_control::SessionId;
/// let cmd = NewWindow::new()
///     .target(SessionId(1))
///     .window_name("logs")
///     .start_directory("/var/log")
///     .env("LESS", "-R")
///     .command("tail -f syslog");
/// assert_eq!(
///     CommandLine::of(&cmd)?.to_string(),
///     "new-window -d -P -F '#{session_id} #{window_id} #{pane_id}' -t $1 -n 'logs' \
///      -c '/var/log' -e 'LESS=-R' -- 'tail -f syslog'"
/// );
/// # Ok::<(), tmux_control::Error>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NewWindow {
    target: Option<Target>,
    name: Option<Vec<u8>>,
    pub(super) spawn: Spawn,
}

impl NewWindow {
    /// A window in the connection's current session, with the default shell.
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, NewWindow};
    /// assert_eq!(
    ///     CommandLine::of(&NewWindow::new())?.to_string(),
    ///     "new-window -d -P -F '#{session_id} #{window_id} #{pane_id}'"
    /// );
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// Where to create the window (`-t`): a session, or `session:index`.
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, NewWindow};
    /// let line = CommandLine::of(&NewWindow::new().target("main:7"))?;
    /// assert!(line.to_string().ends_with(" -t 'main:7'"));
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn target(mut self, target: impl Into<Target>) -> Self {
        self.target = Some(target.into());
        self
    }

    /// The window's name (`-n`, taken literally); it also turns automatic
    /// renaming off for the window. The name is sent in tmux's escaped form
    /// (backslash doubled, control characters as `\t`, `\ooo`…), the form
    /// tmux itself gives names set with `rename-window`, so that
    /// [`WindowInfo::name`] reads it back exactly.
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, NewWindow};
    /// let line = CommandLine::of(&NewWindow::new().window_name("#1"))?;
    /// assert!(line.to_string().ends_with(" -n '##1'"));
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn window_name(mut self, name: impl AsRef<[u8]>) -> Self {
        self.name = Some(name.as_ref().to_vec());
        self
    }
}

spawn_methods!(NewWindow, "NewWindow::new()");

impl Command for NewWindow {
    type Output = Created;

    const NAME: &'static str = "new-window";

    fn encode(&self, line: &mut CommandLine) -> Result<()> {
        line.word(Self::NAME)?
            .word("-d")?
            .word("-P")?
            .flag_arg("-F", CREATED_FORMAT)?;
        write_opt(self.target.as_ref(), line)?;
        if let Some(name) = &self.name {
            // Stored, and read back, like every other window name (see
            // `window_name_arg`).
            let name = window_name_arg(line.version(), name);
            line.flag_literal("-n", name)?;
        }
        self.spawn.write(line)
    }

    fn parse(self, reply: Reply, _version: &Version) -> Result<Created> {
        Created::parse(Self::NAME, reply)
    }
}

/// One row of [`ListWindows`].
///
/// ```
/// use tmux_control::command::{Command, ListWindows};
/// use tmux_control::proto::Reply;
/// use tmux_control::{SessionId, WindowId};
///
/// let row = "$0 @1 0 1 80 24 1 0 b25d,80x24,0,0,0 b25d,80x24,0,0,0 * bash";
/// let reply = Reply { time: 0, number: 1, flags: 1, error: false, body: vec![row.into()] };
/// let windows = ListWindows::in_session(SessionId(0)).parse(reply, &tmux_control::Version::OLDEST_SUPPORTED)?;
/// assert_eq!(windows[0].id, WindowId(1));
/// assert_eq!(windows[0].name, "bash");
/// assert_eq!((windows[0].width, windows[0].height), (80, 24));
/// assert!(windows[0].active);
/// # Ok::<(), tmux_control::Error>(())
/// ```
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct WindowInfo {
    /// `#{session_id}`: the session this row was listed for (a window
    /// linked into several sessions appears once per session with `-a`).
    pub session: SessionId,
    /// `#{window_id}`.
    pub id: WindowId,
    /// `#{window_index}`: its index in that session.
    pub index: u32,
    /// `#{window_name}`, decoded with [`unvis`](crate::command::unvis)
    /// (invalid UTF-8 replaced).
    pub name: String,
    /// `#{window_active}`: the session's current window.
    pub active: bool,
    /// `#{window_width}`.
    pub width: u32,
    /// `#{window_height}`.
    pub height: u32,
    /// `#{window_panes}`: how many panes it has.
    pub panes: u32,
    /// `#{window_zoomed_flag}`: a pane is zoomed.
    pub zoomed: bool,
    /// `#{window_layout}`: the layout string.
    pub layout: String,
    /// `#{window_visible_layout}`: the layout as shown (differs while zoomed).
    pub visible_layout: String,
    /// `#{window_flags}`: `*` current, `-` last, `#` activity, `!` bell,
    /// `~` silence, `M` marked, `Z` zoomed; may be empty.
    pub flags: String,
}

const WINDOW_ROW: RowSpec = RowSpec {
    fixed: &[
        "session_id",
        "window_id",
        "window_index",
        "window_active",
        "window_width",
        "window_height",
        "window_panes",
        "window_zoomed_flag",
        "window_layout",
        "window_visible_layout",
        "window_flags",
    ],
    text: &["window_name"],
};

/// `list-windows -F …`: the windows of one session, or of all sessions.
///
/// ```
/// use tmux_control::command::{CommandLine, ListWindows};
/// use tmux_control::SessionId;
/// let line = CommandLine::of(&ListWindows::in_session(SessionId(2)))?.to_string();
/// assert!(line.starts_with("list-windows -t $2 -F '#{session_id} #{window_id} "));
/// let line = CommandLine::of(&ListWindows::all())?.to_string();
/// assert!(line.starts_with("list-windows -a -F "));
/// # Ok::<(), tmux_control::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListWindows {
    target: Option<Target>,
}

impl ListWindows {
    /// The windows of the session `target` (`-t`).
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, ListWindows};
    /// assert!(CommandLine::of(&ListWindows::in_session("=main"))?.to_string().starts_with("list-windows -t '=main' "));
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn in_session(target: impl Into<Target>) -> Self {
        Self {
            target: Some(target.into()),
        }
    }

    /// The windows of every session (`-a`).
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, ListWindows};
    /// assert!(CommandLine::of(&ListWindows::all())?.to_string().starts_with("list-windows -a "));
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn all() -> Self {
        Self { target: None }
    }
}

impl Command for ListWindows {
    type Output = Vec<WindowInfo>;

    const NAME: &'static str = "list-windows";

    fn encode(&self, line: &mut CommandLine) -> Result<()> {
        line.word(Self::NAME)?;
        match &self.target {
            Some(t) => t.write(line)?,
            None => {
                line.word("-a")?;
            }
        }
        line.flag_arg("-F", WINDOW_ROW.format())?;
        Ok(())
    }

    fn parse(self, reply: Reply, _version: &Version) -> Result<Vec<WindowInfo>> {
        let body = join_lines(&ok_body(Self::NAME, reply)?);
        WINDOW_ROW
            .parse(Self::NAME, &body)?
            .iter()
            .map(|row| {
                Ok(WindowInfo {
                    session: row.session(0)?,
                    id: row.window(1)?,
                    index: row.u32(2, "window_index")?,
                    active: row.flag(3, "window_active")?,
                    width: row.u32(4, "window_width")?,
                    height: row.u32(5, "window_height")?,
                    panes: row.u32(6, "window_panes")?,
                    zoomed: row.flag(7, "window_zoomed_flag")?,
                    layout: row.string(8),
                    visible_layout: row.string(9),
                    flags: row.string(10),
                    name: lossy(&unvis(row.text(0))),
                })
            })
            .collect()
    }
}

/// `kill-window -t TARGET`.
///
/// ```
/// use tmux_control::command::{CommandLine, KillWindow};
/// use tmux_control::WindowId;
/// assert_eq!(CommandLine::of(&KillWindow::new(WindowId(4)))?.to_string(), "kill-window -t @4");
/// # Ok::<(), tmux_control::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KillWindow {
    target: Target,
}

impl KillWindow {
    /// Kills the window `target`.
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, KillWindow};
    /// assert_eq!(CommandLine::of(&KillWindow::new("main:2"))?.to_string(), "kill-window -t 'main:2'");
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn new(target: impl Into<Target>) -> Self {
        Self {
            target: target.into(),
        }
    }
}

impl Command for KillWindow {
    type Output = ();

    const NAME: &'static str = "kill-window";

    fn encode(&self, line: &mut CommandLine) -> Result<()> {
        line.word(Self::NAME)?;
        self.target.write(line)
    }

    fn parse(self, reply: Reply, _version: &Version) -> Result<()> {
        unit(Self::NAME, reply)
    }
}

/// `rename-window -t TARGET -- NAME`; the name is taken literally. Renaming
/// turns the window's automatic renaming off.
///
/// ```
/// use tmux_control::command::{CommandLine, RenameWindow};
/// use tmux_control::WindowId;
/// let cmd = RenameWindow::new(WindowId(1), "logs #2");
/// assert_eq!(CommandLine::of(&cmd)?.to_string(), "rename-window -t @1 -- 'logs ##2'");
/// # Ok::<(), tmux_control::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenameWindow {
    target: Target,
    name: Vec<u8>,
}

impl RenameWindow {
    /// Renames the window `target` to `name`.
    ///
    /// ```
    /// use tmux_control::command::{Command, RenameWindow};
    /// assert_eq!(RenameWindow::new("main:0", "x").name(), "rename-window");
    /// ```
    pub fn new(target: impl Into<Target>, name: impl AsRef<[u8]>) -> Self {
        Self {
            target: target.into(),
            name: name.as_ref().to_vec(),
        }
    }
}

impl Command for RenameWindow {
    type Output = ();

    const NAME: &'static str = "rename-window";

    fn encode(&self, line: &mut CommandLine) -> Result<()> {
        line.word(Self::NAME)?;
        self.target.write(line)?;
        line.end_of_flags().arg(escape_format(&self.name))?;
        Ok(())
    }

    fn parse(self, reply: Reply, _version: &Version) -> Result<()> {
        unit(Self::NAME, reply)
    }
}

/// `select-window -t TARGET`: makes it its session's current window.
///
/// ```
/// use tmux_control::command::{CommandLine, SelectWindow};
/// use tmux_control::WindowId;
/// assert_eq!(CommandLine::of(&SelectWindow::new(WindowId(3)))?.to_string(), "select-window -t @3");
/// # Ok::<(), tmux_control::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SelectWindow {
    target: Target,
}

impl SelectWindow {
    /// Selects the window `target`.
    ///
    /// ```
    /// use tmux_control::command::{Command, SelectWindow};
    /// assert_eq!(SelectWindow::new("main:1").name(), "select-window");
    /// ```
    pub fn new(target: impl Into<Target>) -> Self {
        Self {
            target: target.into(),
        }
    }
}

impl Command for SelectWindow {
    type Output = ();

    const NAME: &'static str = "select-window";

    fn encode(&self, line: &mut CommandLine) -> Result<()> {
        line.word(Self::NAME)?;
        self.target.write(line)
    }

    fn parse(self, reply: Reply, _version: &Version) -> Result<()> {
        unit(Self::NAME, reply)
    }
}

/// `resize-window -t TARGET …`: sets a window's size.
///
/// tmux sets the window's `window-size` option to `manual` when it is
/// resized this way, so clients attaching later do not change its size.
///
/// ```
/// use tmux_control::command::{CommandLine, ResizeWindow};
/// use tmux_control::WindowId;
/// let cmd = ResizeWindow::new(WindowId(1)).size(200, 50);
/// assert_eq!(CommandLine::of(&cmd)?.to_string(), "resize-window -t @1 -x 200 -y 50");
/// # Ok::<(), tmux_control::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResizeWindow {
    target: Target,
    width: Option<u32>,
    height: Option<u32>,
    fit: Option<&'static str>,
}

impl ResizeWindow {
    /// Resizes the window `target`; give a size or a fit.
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, ResizeWindow};
    /// assert!(CommandLine::of(&ResizeWindow::new("main:0")).is_err());
    /// ```
    pub fn new(target: impl Into<Target>) -> Self {
        Self {
            target: target.into(),
            width: None,
            height: None,
            fit: None,
        }
    }

    /// Width and height in cells (`-x`, `-y`).
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, ResizeWindow};
    /// let line = CommandLine::of(&ResizeWindow::new("w").size(80, 24))?;
    /// assert!(line.to_string().ends_with(" -x 80 -y 24"));
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn size(self, width: u32, height: u32) -> Self {
        self.width(width).height(height)
    }

    /// Width in cells (`-x`).
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, ResizeWindow};
    /// let line = CommandLine::of(&ResizeWindow::new("w").width(120))?;
    /// assert!(line.to_string().ends_with(" -x 120"));
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn width(mut self, width: u32) -> Self {
        self.width = Some(width);
        self
    }

    /// Height in cells (`-y`).
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, ResizeWindow};
    /// let line = CommandLine::of(&ResizeWindow::new("w").height(40))?;
    /// assert!(line.to_string().ends_with(" -y 40"));
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn height(mut self, height: u32) -> Self {
        self.height = Some(height);
        self
    }

    /// Fit the smallest session containing the window (`-a`).
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, ResizeWindow};
    /// let line = CommandLine::of(&ResizeWindow::new("w").smallest())?;
    /// assert_eq!(line.to_string(), "resize-window -t 'w' -a");
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn smallest(mut self) -> Self {
        self.fit = Some("-a");
        self
    }

    /// Fit the largest session containing the window (`-A`).
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, ResizeWindow};
    /// let line = CommandLine::of(&ResizeWindow::new("w").largest())?;
    /// assert_eq!(line.to_string(), "resize-window -t 'w' -A");
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn largest(mut self) -> Self {
        self.fit = Some("-A");
        self
    }
}

impl Command for ResizeWindow {
    type Output = ();

    const NAME: &'static str = "resize-window";

    fn encode(&self, line: &mut CommandLine) -> Result<()> {
        if self.width.is_none() && self.height.is_none() && self.fit.is_none() {
            return Err(Error::InvalidArgument(
                "resize-window needs a width, a height, smallest() or largest()".into(),
            ));
        }
        line.word(Self::NAME)?;
        self.target.write(line)?;
        if let Some(w) = self.width {
            line.number("-x", w)?;
        }
        if let Some(h) = self.height {
            line.number("-y", h)?;
        }
        if let Some(fit) = self.fit {
            line.word(fit)?;
        }
        Ok(())
    }

    fn parse(self, reply: Reply, _version: &Version) -> Result<()> {
        unit(Self::NAME, reply)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::command::test_util::*;

    #[test]
    fn new_window_lines() {
        assert_eq!(
            line(
                &NewWindow::new()
                    .target("s:")
                    .window_name("-n")
                    .start_directory("#{pane_id}")
                    .command("")
            ),
            "new-window -d -P -F '#{session_id} #{window_id} #{pane_id}' -t 's:' -n '-n' \
             -c '##{pane_id}' -- ''"
        );
        assert_eq!(
            line(&NewWindow::new().window_name("a\\b\t$HOME")),
            r"new-window -d -P -F '#{session_id} #{window_id} #{pane_id}' -n 'a\\b\t\$HOME'"
        );
        let c = NewWindow::new()
            .parse(ok(&[b"$0 @9 %9"]), &Version::OLDEST_SUPPORTED)
            .unwrap();
        assert_eq!(c.window, WindowId(9));
        assert_command_error(
            NewWindow::new().parse(err("index in use"), &Version::OLDEST_SUPPORTED),
            "new-window",
        );
    }

    #[test]
    fn list_windows() {
        assert_eq!(
            line(&ListWindows::all()),
            format!(
                "list-windows -a -F '#{{session_id}} #{{window_id}} #{{window_index}} #{{window_active}} #{{window_width}} #{{window_height}} #{{window_panes}} #{{window_zoomed_flag}} #{{window_layout}} #{{window_visible_layout}} #{{window_flags}} {}'",
                text_field("window_name")
            )
        );
        let rows = ListWindows::all()
            .parse(ok(&[
                b"$0 @0 0 1 80 24 2 1 aaaa,80x24,0,0{40x24,0,0,0,39x24,41,0,1} bbbb,80x24,0,0,1 *Z a\\sb\\\\\\\\c\\s\\\\001\\sx",
                b"$1 @2 5 0 10 5 1 0 cccc,10x5,0,0,2 cccc,10x5,0,0,2  x\\\\ny\\sz",
            ]), &Version::OLDEST_SUPPORTED)
            .unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].name, "a b\\c \u{1} x");
        assert!(rows[0].zoomed);
        assert_eq!(rows[0].flags, "*Z");
        assert_eq!(rows[0].panes, 2);
        assert_eq!(rows[1].session, SessionId(1));
        assert_eq!(rows[1].index, 5);
        assert_eq!(rows[1].flags, "");
        assert_eq!(rows[1].name, "x\ny z");
        assert!(!rows[1].active);
        assert_unexpected(
            ListWindows::all().parse(
                ok(&[b"$0 @0 0 2 80 24 2 1 l l * a"]),
                &Version::OLDEST_SUPPORTED,
            ),
            "list-windows",
        );
        assert_unexpected(
            ListWindows::all().parse(
                ok(&[b"$0 @0 0 1 80 24 2 1 l l * a b"]),
                &Version::OLDEST_SUPPORTED,
            ),
            "list-windows",
        );
        assert_unexpected(
            ListWindows::all().parse(ok(&[b"garbage"]), &Version::OLDEST_SUPPORTED),
            "list-windows",
        );
    }

    #[test]
    fn simple_window_commands() {
        assert_eq!(line(&KillWindow::new(WindowId(1))), "kill-window -t @1");
        assert_eq!(line(&SelectWindow::new("=a:1")), "select-window -t '=a:1'");
        assert_eq!(
            line(&RenameWindow::new(WindowId(1), "#[b]")),
            "rename-window -t @1 -- '#{l:#[}b]'"
        );
        assert_eq!(
            line(&ResizeWindow::new(WindowId(1)).width(10)),
            "resize-window -t @1 -x 10"
        );
        assert!(matches!(
            CommandLine::of(&ResizeWindow::new(WindowId(1))),
            Err(Error::InvalidArgument(_))
        ));
        KillWindow::new("x")
            .parse(ok(&[]), &Version::OLDEST_SUPPORTED)
            .unwrap();
        assert_command_error(
            SelectWindow::new("x").parse(err("can't find window: x"), &Version::OLDEST_SUPPORTED),
            "select-window",
        );
    }
}
