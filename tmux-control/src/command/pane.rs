//! Panes: `split-window`, `list-panes`, `kill-pane`, `select-pane`,
//! `resize-pane`, `respawn-pane`.
//!
//! (Longer than 600 lines with its doc examples and unit tests; the code
//! is one small builder per command of this family, kept together so the
//! family reads as one page.)

use std::path::PathBuf;

use crate::command::format::{RowSpec, bytes_to_path, join_lines, lossy};
use crate::command::target::write_opt;
use crate::command::{
    CREATED_FORMAT, Command, CommandLine, Created, Size, Spawn, Target, ok_body, unit,
};
use crate::error::Result;
use crate::ids::{PaneId, SessionId, WindowId};
use crate::proto::Reply;
use crate::version::Version;

/// `split-window -d -P -F …`: splits a pane and returns the new pane's ids.
///
/// Always detached (`-d`), so the active pane does not change. By default
/// the new pane goes below the target ([`vertical`](SplitWindow::vertical));
/// [`horizontal`](SplitWindow::horizontal) puts it to the right.
///
/// ```
/// use tmux_control::command::{CommandLine, Size, SplitWindow};
/// use tmux_control::PaneId;
/// let cmd = SplitWindow::new()
///     .target(PaneId(0))
///     .horizontal()
///     .size(Size::Percent(30))
///     .start_directory("/tmp")
///     .command("watch date");
/// assert_eq!(
///     CommandLine::of(&cmd)?.to_string(),
///     "split-window -d -P -F '#{session_id} #{window_id} #{pane_id}' -t %0 -h -l 30% \
///      -c '/tmp' -- 'watch date'"
/// );
/// # Ok::<(), tmux_control::Error>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SplitWindow {
    target: Option<Target>,
    direction: Option<&'static str>,
    before: bool,
    full: bool,
    size: Option<Size>,
    pub(super) spawn: Spawn,
}

impl SplitWindow {
    /// Splits the current pane of the connection's session; prefer
    /// [`target`](SplitWindow::target).
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, SplitWindow};
    /// assert_eq!(
    ///     CommandLine::of(&SplitWindow::new())?.to_string(),
    ///     "split-window -d -P -F '#{session_id} #{window_id} #{pane_id}'"
    /// );
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// The pane to split (`-t`).
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, SplitWindow};
    /// use tmux_control::PaneId;
    /// let line = CommandLine::of(&SplitWindow::new().target(PaneId(2)))?;
    /// assert!(line.to_string().ends_with(" -t %2"));
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn target(mut self, target: impl Into<Target>) -> Self {
        self.target = Some(target.into());
        self
    }

    /// Side by side: the new pane to the right (`-h`).
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, SplitWindow};
    /// assert!(CommandLine::of(&SplitWindow::new().horizontal())?.to_string().ends_with(" -h"));
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn horizontal(mut self) -> Self {
        self.direction = Some("-h");
        self
    }

    /// Stacked: the new pane below (`-v`, tmux's default).
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, SplitWindow};
    /// assert!(CommandLine::of(&SplitWindow::new().vertical())?.to_string().ends_with(" -v"));
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn vertical(mut self) -> Self {
        self.direction = Some("-v");
        self
    }

    /// Put the new pane left of or above the target instead (`-b`).
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, SplitWindow};
    /// assert!(CommandLine::of(&SplitWindow::new().before())?.to_string().ends_with(" -b"));
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn before(mut self) -> Self {
        self.before = true;
        self
    }

    /// Span the full width or height of the window (`-f`).
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, SplitWindow};
    /// assert!(CommandLine::of(&SplitWindow::new().full())?.to_string().ends_with(" -f"));
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn full(mut self) -> Self {
        self.full = true;
        self
    }

    /// The new pane's size (`-l`), in cells or percent.
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, Size, SplitWindow};
    /// let line = CommandLine::of(&SplitWindow::new().size(Size::Cells(10)))?;
    /// assert!(line.to_string().ends_with(" -l 10"));
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn size(mut self, size: Size) -> Self {
        self.size = Some(size);
        self
    }
}

spawn_methods!(SplitWindow, "SplitWindow::new()");

impl Command for SplitWindow {
    type Output = Created;

    const NAME: &'static str = "split-window";

    fn encode(&self, line: &mut CommandLine) -> Result<()> {
        line.word(Self::NAME)?
            .word("-d")?
            .word("-P")?
            .flag_arg("-F", CREATED_FORMAT)?;
        write_opt(self.target.as_ref(), line)?;
        if let Some(d) = self.direction {
            line.word(d)?;
        }
        line.flag_if("-b", self.before)?.flag_if("-f", self.full)?;
        if let Some(size) = self.size {
            line.word("-l")?.word(&size.word()?)?;
        }
        self.spawn.write(line)
    }

    fn parse(self, reply: Reply, _version: &Version) -> Result<Created> {
        Created::parse(Self::NAME, reply)
    }
}

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

/// `kill-pane -t TARGET`.
///
/// ```
/// use tmux_control::command::{CommandLine, KillPane};
/// use tmux_control::PaneId;
/// assert_eq!(CommandLine::of(&KillPane::new(PaneId(7)))?.to_string(), "kill-pane -t %7");
/// # Ok::<(), tmux_control::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KillPane {
    target: Target,
}

impl KillPane {
    /// Kills the pane `target` (and its window, if it was the last pane).
    ///
    /// ```
    /// use tmux_control::command::{Command, KillPane};
    /// assert_eq!(KillPane::new("main:0.1").name(), "kill-pane");
    /// ```
    pub fn new(target: impl Into<Target>) -> Self {
        Self {
            target: target.into(),
        }
    }
}

impl Command for KillPane {
    type Output = ();

    const NAME: &'static str = "kill-pane";

    fn encode(&self, line: &mut CommandLine) -> Result<()> {
        line.word(Self::NAME)?;
        self.target.write(line)
    }

    fn parse(self, reply: Reply, _version: &Version) -> Result<()> {
        unit(Self::NAME, reply)
    }
}

/// `select-pane -t TARGET [-T TITLE]`: makes it its window's active pane,
/// and optionally sets its title (taken literally).
///
/// ```
/// use tmux_control::command::{CommandLine, SelectPane};
/// use tmux_control::PaneId;
/// assert_eq!(CommandLine::of(&SelectPane::new(PaneId(1)))?.to_string(), "select-pane -t %1");
/// let cmd = SelectPane::new(PaneId(1)).title("build #3");
/// assert_eq!(CommandLine::of(&cmd)?.to_string(), "select-pane -t %1 -T 'build ##3'");
/// # Ok::<(), tmux_control::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SelectPane {
    target: Target,
    title: Option<Vec<u8>>,
}

impl SelectPane {
    /// Selects the pane `target`.
    ///
    /// ```
    /// use tmux_control::command::{Command, SelectPane};
    /// assert_eq!(SelectPane::new("main:0.1").name(), "select-pane");
    /// ```
    pub fn new(target: impl Into<Target>) -> Self {
        Self {
            target: target.into(),
            title: None,
        }
    }

    /// Sets the pane's title (`-T`) *instead of* selecting it: with `-T`
    /// tmux sets the title and returns without changing the active pane.
    /// tmux ignores titles that contain control characters or invalid UTF-8.
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, SelectPane};
    /// let line = CommandLine::of(&SelectPane::new("p").title("t"))?;
    /// assert!(line.to_string().ends_with(" -T 't'"));
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn title(mut self, title: impl AsRef<[u8]>) -> Self {
        self.title = Some(title.as_ref().to_vec());
        self
    }
}

impl Command for SelectPane {
    type Output = ();

    const NAME: &'static str = "select-pane";

    fn encode(&self, line: &mut CommandLine) -> Result<()> {
        line.word(Self::NAME)?;
        self.target.write(line)?;
        if let Some(title) = &self.title {
            line.flag_literal("-T", title)?;
        }
        Ok(())
    }

    fn parse(self, reply: Reply, _version: &Version) -> Result<()> {
        unit(Self::NAME, reply)
    }
}

/// A direction for [`ResizePane::adjust`].
///
/// ```
/// use tmux_control::command::{CommandLine, Direction, ResizePane};
/// let line = CommandLine::of(&ResizePane::adjust("p", Direction::Left, 3))?;
/// assert_eq!(line.to_string(), "resize-pane -t 'p' -L 3");
/// # Ok::<(), tmux_control::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    /// `-U`.
    Up,
    /// `-D`.
    Down,
    /// `-L`.
    Left,
    /// `-R`.
    Right,
}

impl Direction {
    fn flag(self) -> &'static str {
        match self {
            Direction::Up => "-U",
            Direction::Down => "-D",
            Direction::Left => "-L",
            Direction::Right => "-R",
        }
    }
}

/// `resize-pane`: set a pane's size, move its border, or toggle zoom.
///
/// ```
/// use tmux_control::command::{CommandLine, ResizePane, Size};
/// use tmux_control::PaneId;
/// let cmd = ResizePane::new(PaneId(1)).width(Size::Percent(50)).height(Size::Cells(10));
/// assert_eq!(CommandLine::of(&cmd)?.to_string(), "resize-pane -t %1 -x 50% -y 10");
/// let zoom = ResizePane::toggle_zoom(PaneId(1));
/// assert_eq!(CommandLine::of(&zoom)?.to_string(), "resize-pane -t %1 -Z");
/// # Ok::<(), tmux_control::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResizePane {
    target: Target,
    how: Resize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Resize {
    To {
        width: Option<Size>,
        height: Option<Size>,
    },
    Adjust(Direction, u32),
    Zoom,
}

impl ResizePane {
    /// Resizes the pane `target`; give a [`width`](ResizePane::width), a
    /// [`height`](ResizePane::height) or both.
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, ResizePane};
    /// assert!(CommandLine::of(&ResizePane::new("p")).is_err());
    /// ```
    pub fn new(target: impl Into<Target>) -> Self {
        Self {
            target: target.into(),
            how: Resize::To {
                width: None,
                height: None,
            },
        }
    }

    /// The pane's width (`-x`), in cells or percent of the window.
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, ResizePane, Size};
    /// let line = CommandLine::of(&ResizePane::new("p").width(Size::Cells(40)))?;
    /// assert_eq!(line.to_string(), "resize-pane -t 'p' -x 40");
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn width(mut self, size: Size) -> Self {
        match &mut self.how {
            Resize::To { width, .. } => *width = Some(size),
            how => {
                *how = Resize::To {
                    width: Some(size),
                    height: None,
                }
            }
        }
        self
    }

    /// The pane's height (`-y`), in cells or percent of the window.
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, ResizePane, Size};
    /// let line = CommandLine::of(&ResizePane::new("p").height(Size::Percent(25)))?;
    /// assert_eq!(line.to_string(), "resize-pane -t 'p' -y 25%");
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn height(mut self, size: Size) -> Self {
        match &mut self.how {
            Resize::To { height, .. } => *height = Some(size),
            how => {
                *how = Resize::To {
                    width: None,
                    height: Some(size),
                }
            }
        }
        self
    }

    /// Moves the pane's border `cells` cells in `direction`
    /// (`-U`/`-D`/`-L`/`-R N`).
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, Direction, ResizePane};
    /// let line = CommandLine::of(&ResizePane::adjust("p", Direction::Up, 2))?;
    /// assert_eq!(line.to_string(), "resize-pane -t 'p' -U 2");
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn adjust(target: impl Into<Target>, direction: Direction, cells: u32) -> Self {
        Self {
            target: target.into(),
            how: Resize::Adjust(direction, cells),
        }
    }

    /// Zooms the pane if it is not zoomed, unzooms it if it is (`-Z`).
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, ResizePane};
    /// assert_eq!(CommandLine::of(&ResizePane::toggle_zoom("p"))?.to_string(), "resize-pane -t 'p' -Z");
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn toggle_zoom(target: impl Into<Target>) -> Self {
        Self {
            target: target.into(),
            how: Resize::Zoom,
        }
    }
}

impl Command for ResizePane {
    type Output = ();

    const NAME: &'static str = "resize-pane";

    fn encode(&self, line: &mut CommandLine) -> Result<()> {
        if let Resize::To {
            width: None,
            height: None,
        } = self.how
        {
            return Err(crate::error::Error::InvalidArgument(
                "resize-pane needs a width or a height".into(),
            ));
        }
        line.word(Self::NAME)?;
        self.target.write(line)?;
        match &self.how {
            Resize::To { width, height } => {
                if let Some(w) = width {
                    line.word("-x")?.word(&w.word()?)?;
                }
                if let Some(h) = height {
                    line.word("-y")?.word(&h.word()?)?;
                }
            }
            Resize::Adjust(direction, cells) => {
                // The adjustment is a positional number; it cannot start with `-`.
                line.word(direction.flag())?.word(&cells.to_string())?;
            }
            Resize::Zoom => {
                line.word("-Z")?;
            }
        }
        Ok(())
    }

    fn parse(self, reply: Reply, _version: &Version) -> Result<()> {
        unit(Self::NAME, reply)
    }
}

/// `respawn-pane`: starts a new process in a pane.
///
/// Without [`kill`](RespawnPane::kill) tmux refuses if the pane's process is
/// still running (`pane … still active`).
///
/// ```
/// use tmux_control::command::{CommandLine, RespawnPane};
/// use tmux_control::PaneId;
/// let cmd = RespawnPane::new(PaneId(3)).kill().start_directory("/tmp").env("X", "1").command("make");
/// assert_eq!(
///     CommandLine::of(&cmd)?.to_string(),
///     "respawn-pane -t %3 -k -c '/tmp' -e 'X=1' -- 'make'"
/// );
/// # Ok::<(), tmux_control::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RespawnPane {
    pub(super) target: Target,
    kill: bool,
    pub(super) spawn: Spawn,
}

impl RespawnPane {
    /// Respawns the pane `target` with the command it was started with.
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, RespawnPane};
    /// assert_eq!(CommandLine::of(&RespawnPane::new("p"))?.to_string(), "respawn-pane -t 'p'");
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn new(target: impl Into<Target>) -> Self {
        Self {
            target: target.into(),
            kill: false,
            spawn: Spawn::default(),
        }
    }

    /// Kill the running process first (`-k`).
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, RespawnPane};
    /// assert_eq!(CommandLine::of(&RespawnPane::new("p").kill())?.to_string(), "respawn-pane -t 'p' -k");
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn kill(mut self) -> Self {
        self.kill = true;
        self
    }
}

spawn_methods!(RespawnPane, "RespawnPane::new(\"%1\")");

impl Command for RespawnPane {
    type Output = ();

    const NAME: &'static str = "respawn-pane";

    fn encode(&self, line: &mut CommandLine) -> Result<()> {
        line.word(Self::NAME)?;
        self.target.write(line)?;
        line.flag_if("-k", self.kill)?;
        self.spawn.write(line)
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
    fn split_window_lines() {
        assert_eq!(
            line(
                &SplitWindow::new()
                    .vertical()
                    .before()
                    .full()
                    .size(Size::Cells(5))
                    .env("A", "")
            ),
            "split-window -d -P -F '#{session_id} #{window_id} #{pane_id}' -v -b -f -l 5 -e 'A='"
        );
        assert!(CommandLine::of(&SplitWindow::new().size(Size::Percent(200))).is_err());
        let c = SplitWindow::new()
            .parse(ok(&[b"$1 @1 %8"]), &Version::OLDEST_SUPPORTED)
            .unwrap();
        assert_eq!(c.pane, PaneId(8));
        assert_command_error(
            SplitWindow::new().parse(err("no space for new pane"), &Version::OLDEST_SUPPORTED),
            "split-window",
        );
    }

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

    #[test]
    fn other_pane_commands() {
        assert_eq!(line(&KillPane::new(PaneId(1))), "kill-pane -t %1");
        assert_eq!(
            line(&SelectPane::new("-x").title("#[x")),
            "select-pane -t '-x' -T '#{l:#[}x'"
        );
        assert_eq!(
            line(&ResizePane::toggle_zoom(PaneId(1)).width(Size::Cells(3))),
            "resize-pane -t %1 -x 3"
        );
        assert_eq!(
            line(&ResizePane::adjust(PaneId(1), Direction::Down, 1)),
            "resize-pane -t %1 -D 1"
        );
        assert_eq!(
            line(&ResizePane::adjust(PaneId(1), Direction::Right, 9)),
            "resize-pane -t %1 -R 9"
        );
        assert_eq!(
            line(&RespawnPane::new(PaneId(1)).command("-x")),
            "respawn-pane -t %1 -- '-x'"
        );
        assert_command_error(
            RespawnPane::new("p").parse(err("pane %1 still active"), &Version::OLDEST_SUPPORTED),
            "respawn-pane",
        );
        ResizePane::toggle_zoom("p")
            .parse(ok(&[]), &Version::OLDEST_SUPPORTED)
            .unwrap();
    }
}
