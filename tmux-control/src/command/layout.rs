//! `select-layout`: arranging a window's panes.

use crate::command::{Command, CommandLine, Target, unit};
use crate::error::Result;
use crate::proto::Reply;
use crate::version::Version;

/// `select-layout -t TARGET LAYOUT`: one of tmux's named layouts
/// (`even-horizontal`, `even-vertical`, `main-horizontal`,
/// `main-vertical`, `tiled`) or a layout string as `#{window_layout}`
/// gives it, taken literally.
///
/// ```
/// use tmux_control::command::{CommandLine, SelectLayout};
/// use tmux_control::WindowId;
/// let cmd = SelectLayout::new(WindowId(2), "tiled");
/// assert_eq!(CommandLine::of(&cmd)?.to_string(), "select-layout -t @2 'tiled'");
/// # Ok::<(), tmux_control::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SelectLayout {
    target: Target,
    layout: Vec<u8>,
}

impl SelectLayout {
    /// Arranges the panes of the window `target` as `layout`.
    pub fn new(target: impl Into<Target>, layout: impl AsRef<[u8]>) -> Self {
        Self {
            target: target.into(),
            layout: layout.as_ref().to_vec(),
        }
    }
}

impl Command for SelectLayout {
    type Output = ();

    const NAME: &'static str = "select-layout";

    fn encode(&self, line: &mut CommandLine) -> Result<()> {
        line.word(Self::NAME)?;
        self.target.write(line)?;
        line.arg(&self.layout)?;
        Ok(())
    }

    fn parse(self, reply: Reply, _version: &Version) -> Result<()> {
        unit(Self::NAME, reply)
    }
}
