//! The commands that act on a pane: `kill-pane`, `select-pane`, `resize-pane`, `respawn-pane`.

use crate::command::{Command, CommandLine, Size, Spawn, Target, unit};
use crate::error::Result;
use crate::proto::Reply;
use crate::version::Version;

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
    pub(in crate::command) target: Target,
    kill: bool,
    pub(in crate::command) spawn: Spawn,
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
    use crate::ids::PaneId;

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
