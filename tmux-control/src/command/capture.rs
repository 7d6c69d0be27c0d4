//! `capture-pane -p`: a pane's screen and history as lines.

use bytes::Bytes;

use crate::command::format::unvis;
use crate::command::{Command, CommandLine, Target, ok_body};
use crate::error::Result;
use crate::proto::Reply;
use crate::version::Version;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Bound {
    Line(i32),
    Edge,
}

/// `capture-pane -p -C -t TARGET …`: the text of a pane, one [`Bytes`] per
/// line.
///
/// Lines are numbered as tmux does: 0 is the top line of the visible screen,
/// negative numbers reach into the history. Without a range the visible
/// screen is captured. tmux always returns at least one line.
///
/// `-C` is always given: tmux then writes backslashes as `\\` and the escape
/// sequences of [`escapes`](CapturePane::escapes) as `\033`, and this command
/// decodes each line with [`unvis`](crate::command::unvis). So every line is
/// exact on every tmux version, including 3.4/3.5, which vis-escape control
/// characters in replies.
///
/// ```
/// use tmux_control::command::{Command, CommandLine, CapturePane};
/// use tmux_control::proto::Reply;
/// use tmux_control::PaneId;
///
/// let cmd = CapturePane::new(PaneId(0)).whole_history().escapes();
/// assert_eq!(CommandLine::of(&cmd)?.to_string(), "capture-pane -p -C -t %0 -S - -E - -e");
/// let reply = Reply { time: 0, number: 1, flags: 1, error: false,
///                     body: vec![r"\033[1mbold\033[0m C:\\dir".into(), "".into()] };
/// let lines = cmd.parse(reply, &tmux_control::Version::OLDEST_SUPPORTED)?;
/// assert_eq!(&lines[0][..], b"\x1b[1mbold\x1b[0m C:\\dir");
/// assert_eq!(lines.len(), 2);
/// # Ok::<(), tmux_control::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CapturePane {
    target: Target,
    start: Option<Bound>,
    end: Option<Bound>,
    escapes: bool,
    join: bool,
    trailing_spaces: bool,
    saved: bool,
}

impl CapturePane {
    /// Captures the visible screen of the pane `target`.
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, CapturePane};
    /// assert_eq!(CommandLine::of(&CapturePane::new("p"))?.to_string(), "capture-pane -p -C -t 'p'");
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn new(target: impl Into<Target>) -> Self {
        Self {
            target: target.into(),
            start: None,
            end: None,
            escapes: false,
            join: false,
            trailing_spaces: false,
            saved: false,
        }
    }

    /// The normal screen that a full-screen program's alternate screen
    /// hides (`-a -q`): what the pane shows again when the program ends.
    /// Empty when the pane is not on the alternate screen.
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, CapturePane};
    /// let line = CommandLine::of(&CapturePane::new("p").saved_screen())?;
    /// assert!(line.to_string().ends_with(" -a -q"));
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn saved_screen(mut self) -> Self {
        self.saved = true;
        self
    }

    /// First line (`-S N`); negative numbers are history lines.
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, CapturePane};
    /// let line = CommandLine::of(&CapturePane::new("p").start(-100))?;
    /// assert!(line.to_string().ends_with(" -S -100"));
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn start(mut self, line: i32) -> Self {
        self.start = Some(Bound::Line(line));
        self
    }

    /// Start at the oldest history line (`-S -`).
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, CapturePane};
    /// let line = CommandLine::of(&CapturePane::new("p").from_history_start())?;
    /// assert!(line.to_string().ends_with(" -S -"));
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn from_history_start(mut self) -> Self {
        self.start = Some(Bound::Edge);
        self
    }

    /// Last line (`-E N`).
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, CapturePane};
    /// let line = CommandLine::of(&CapturePane::new("p").end(5))?;
    /// assert!(line.to_string().ends_with(" -E 5"));
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn end(mut self, line: i32) -> Self {
        self.end = Some(Bound::Line(line));
        self
    }

    /// End at the last line of the visible screen (`-E -`).
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, CapturePane};
    /// let line = CommandLine::of(&CapturePane::new("p").to_visible_end())?;
    /// assert!(line.to_string().ends_with(" -E -"));
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn to_visible_end(mut self) -> Self {
        self.end = Some(Bound::Edge);
        self
    }

    /// The whole history and the visible screen (`-S - -E -`).
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, CapturePane};
    /// let line = CommandLine::of(&CapturePane::new("p").whole_history())?;
    /// assert!(line.to_string().ends_with(" -S - -E -"));
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn whole_history(self) -> Self {
        self.from_history_start().to_visible_end()
    }

    /// Include colours and attributes as escape sequences (`-e`).
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, CapturePane};
    /// assert!(CommandLine::of(&CapturePane::new("p").escapes())?.to_string().ends_with(" -e"));
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn escapes(mut self) -> Self {
        self.escapes = true;
        self
    }

    /// Join lines that were wrapped because they were wider than the pane
    /// (`-J`; this also keeps trailing spaces).
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, CapturePane};
    /// assert!(CommandLine::of(&CapturePane::new("p").join_wrapped())?.to_string().ends_with(" -J"));
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn join_wrapped(mut self) -> Self {
        self.join = true;
        self
    }

    /// Keep the trailing spaces the program wrote at the end of each line
    /// (`-N`; on tmux 3.4 and later also `-T`, so that the line is not padded
    /// with the empty cells up to the pane's width).
    ///
    /// ```
    /// use tmux_control::command::{CommandLine, CapturePane};
    /// use tmux_control::Version;
    /// let cmd = CapturePane::new("p").trailing_spaces();
    /// assert!(CommandLine::of(&cmd)?.to_string().ends_with(" -N"));
    /// assert!(CommandLine::of_version(&cmd, Version::parse("3.4"))?.to_string().ends_with(" -N -T"));
    /// # Ok::<(), tmux_control::Error>(())
    /// ```
    pub fn trailing_spaces(mut self) -> Self {
        self.trailing_spaces = true;
        self
    }
}

fn write_bound(line: &mut CommandLine, flag: &str, bound: Option<Bound>) -> Result<()> {
    match bound {
        None => {}
        Some(Bound::Edge) => {
            line.word(flag)?.word("-")?;
        }
        Some(Bound::Line(n)) => {
            line.number(flag, n)?;
        }
    }
    Ok(())
}

impl Command for CapturePane {
    type Output = Vec<Bytes>;

    const NAME: &'static str = "capture-pane";

    fn encode(&self, line: &mut CommandLine) -> Result<()> {
        line.word(Self::NAME)?.word("-p")?.word("-C")?;
        self.target.write(line)?;
        write_bound(line, "-S", self.start)?;
        write_bound(line, "-E", self.end)?;
        line.flag_if("-e", self.escapes)?
            .flag_if("-J", self.join)?
            .flag_if("-N", self.trailing_spaces)?;
        // Since 3.4, `-N` alone also pads each line with the empty cells up
        // to the pane's width; `-T` (which 3.3a refuses) keeps only the
        // spaces the program wrote, as `-N` did before.
        let pads = self.trailing_spaces && !self.join;
        line.flag_if("-T", pads && line.version().capture_has_trim_flag())?;
        line.flag_if("-a", self.saved)?.flag_if("-q", self.saved)?;
        Ok(())
    }

    fn parse(self, reply: Reply, _version: &Version) -> Result<Vec<Bytes>> {
        Ok(ok_body(Self::NAME, reply)?
            .iter()
            .map(|l| {
                if memchr::memchr(b'\\', l).is_none() {
                    l.clone()
                } else {
                    Bytes::from(unvis(l))
                }
            })
            .collect())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::command::test_util::*;

    #[test]
    fn capture_lines() {
        assert_eq!(
            line(
                &CapturePane::new("p")
                    .start(-5)
                    .end(-1)
                    .join_wrapped()
                    .trailing_spaces()
                    .escapes()
            ),
            "capture-pane -p -C -t 'p' -S -5 -E -1 -e -J -N"
        );
        let lines = CapturePane::new("p")
            .parse(
                ok(&[b"plain $HOME", br"a\\b \$X", b""]),
                &Version::OLDEST_SUPPORTED,
            )
            .unwrap();
        assert_eq!(
            lines,
            vec![
                Bytes::from("plain $HOME"),
                Bytes::from("a\\b $X"),
                Bytes::new()
            ]
        );
        assert_command_error(
            CapturePane::new("p").parse(err("can't find pane: p"), &Version::OLDEST_SUPPORTED),
            "capture-pane",
        );
    }
}
