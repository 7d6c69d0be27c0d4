//! A followed pane's visible screen, captured only when it can have changed.

use super::PaneOutput;
use crate::command::CapturePane;

/// A pane's visible screen, as `capture-pane` renders it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Screen {
    /// The lines of the screen, top to bottom, without escape sequences.
    pub lines: Vec<String>,
    /// The output offset the capture reflects (at least).
    pub offset: u64,
    /// `true` when nothing changed since the previous capture, so no tmux
    /// round trip was made.
    pub cached: bool,
}

impl PaneOutput {
    /// The pane's visible screen. Captured over the connection
    /// (`capture-pane -p`) only when the pane wrote output, was resized or
    /// changed mode since the last capture; otherwise the cached screen is
    /// returned without a round trip.
    pub async fn screen(&self) -> crate::error::Result<Screen> {
        let key = {
            let g = self.log.lock();
            (g.end, g.state.layout_generation, g.state.in_mode)
        };
        if let Some((cached_key, lines)) = self.log.screen_cache().clone()
            && cached_key == key
        {
            return Ok(Screen {
                lines,
                offset: key.0,
                cached: true,
            });
        }
        let body = self.tmux.run(CapturePane::new(self.log.pane())).await?;
        let lines: Vec<String> = body
            .iter()
            .map(|l| String::from_utf8_lossy(l).into_owned())
            .collect();
        *self.log.screen_cache() = Some((key, lines.clone()));
        Ok(Screen {
            lines,
            offset: key.0,
            cached: false,
        })
    }
}
