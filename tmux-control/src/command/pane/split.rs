//! `split-window`: splits a pane, returning the new pane's ids.

use crate::command::target::write_opt;
use crate::command::{CREATED_FORMAT, Command, CommandLine, Created, Size, Spawn, Target};
use crate::error::Result;
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
    pub(in crate::command) spawn: Spawn,
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

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::command::test_util::*;
    use crate::ids::PaneId;

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
}
