//! Reading and seeding a followed pane's emulated screen (feature
//! `emulator`): [`PaneOutput::emulated_screen`] and
//! [`PaneOutput::resync_screen`], on top of the pane's log (`log.rs`,
//! which feeds the emulator) and the emulator itself (`emulator.rs`).

use std::sync::Arc;

use super::PaneOutput;
use super::emulator::{EmulatedScreen, SEED_FORMAT, SEED_TRIES, SeedState, seeded};
use super::log::PaneLog;
use crate::command::{CapturePane, DisplayMessage};
use crate::connection::Connection;
use crate::error::Result;

impl PaneOutput {
    /// The pane's visible screen from the emulator fed with its output
    /// (feature `emulator`), with no tmux round trip; `None` while the
    /// emulator is not in sync with tmux (output it did not see was lost,
    /// or the pane wrote without pause while it was being seeded): then
    /// [`PaneOutput::resync_screen`] seeds it again, and
    /// [`PaneOutput::screen`] asks tmux.
    ///
    /// It can differ from tmux's own screen where the emulator reads a
    /// sequence differently; docs/architecture.md lists the known cases.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use std::time::Duration;
    /// use tmux_control::command::NewWindow;
    /// use tmux_control::{IsolatedServer, Pattern, Tmux};
    /// let server = IsolatedServer::new()?;
    /// let tmux = Tmux::connect(server.server()).await?;
    /// let started = tmux.spawn(NewWindow::new().command("printf 'one\\ntwo'; exec sleep 60")).await?;
    /// let out = &started.output;
    /// out.expect_from(Pattern::literal("two"), started.start).wait(Duration::from_secs(10)).await?;
    /// let screen = out.emulated_screen().expect("in sync");
    /// assert_eq!(&screen.lines[..2], ["one", "two"]);
    /// assert_eq!((screen.cursor_x, screen.cursor_y), (3, 1));
    /// # Ok(()) }
    /// ```
    pub fn emulated_screen(&self) -> Option<EmulatedScreen> {
        let mut slot = self.log.emulator();
        self.log.catch_up(&mut slot);
        // Written as tmux's captures write them: tabs kept since 3.6.
        let tabs = self.tmux.version().capture_keeps_tabs();
        slot.as_ref().map(|e| e.screen(tabs))
    }

    /// The pane's width and height as its emulator knows them (feature
    /// `emulator`): from tmux when it was seeded, and from every resize
    /// since, with no tmux round trip and without feeding the emulator the
    /// output it has not read yet; `None` while there is no emulator in
    /// sync (see [`PaneOutput::emulated_screen`]).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use std::time::Duration;
    /// use tmux_control::command::NewWindow;
    /// use tmux_control::{IsolatedServer, Pattern, Tmux};
    /// let server = IsolatedServer::new()?;
    /// let tmux = Tmux::connect(server.server()).await?;
    /// let started = tmux.spawn(NewWindow::new().command("printf ready; exec sleep 60")).await?;
    /// let out = &started.output;
    /// out.expect_from(Pattern::literal("ready"), started.start).wait(Duration::from_secs(10)).await?;
    /// let (width, height) = out.emulated_size().expect("in sync");
    /// assert!(width > 0 && height > 0);
    /// # Ok(()) }
    /// ```
    pub fn emulated_size(&self) -> Option<(u32, u32)> {
        self.log.emulator().as_ref().map(|e| e.size())
    }

    /// Seeds the emulator again from tmux's screen (`capture-pane -e` and
    /// the cursor, size, modes and scroll region, and on the alternate
    /// screen the normal screen it hides, in one pipelined round trip), taken at a moment when the pane wrote nothing and was not
    /// resized while tmux answered; tries a few times. Returns whether the
    /// emulator is in sync. Following a pane seeds it once already.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use tmux_control::command::NewWindow;
    /// use tmux_control::{IsolatedServer, Tmux};
    /// let server = IsolatedServer::new()?;
    /// let tmux = Tmux::connect(server.server()).await?;
    /// let window = tmux.run(NewWindow::new().command("exec sleep 60")).await?;
    /// let out = tmux.follow(window.pane).await?;
    /// assert!(out.resync_screen().await?);
    /// assert!(out.emulated_screen().is_some());
    /// # Ok(()) }
    /// ```
    pub async fn resync_screen(&self) -> Result<bool> {
        seed(&self.log, self.tmux.connection()).await
    }
}

/// Seeds `log`'s emulator from tmux; see [`PaneOutput::resync_screen`].
pub(super) async fn seed(log: &Arc<PaneLog>, tmux: &Connection) -> Result<bool> {
    let pane = log.pane();
    let moment = || {
        let g = log.lock();
        (g.end, g.pauses, g.state.layout_generation)
    };
    for _ in 0..SEED_TRIES {
        let before = moment();
        let (lines, saved, state) = tokio::join!(
            tmux.run(CapturePane::new(pane).escapes()),
            tmux.run(CapturePane::new(pane).escapes().saved_screen()),
            tmux.run(DisplayMessage::format(SEED_FORMAT).target(pane)),
        );
        let (lines, saved, state) = (lines?, saved?, state?);
        if moment() != before {
            // The pane wrote, lost output or was resized while tmux
            // answered: the capture may not be the screen at `before.0`.
            continue;
        }
        let Some(state) = SeedState::parse(&state) else {
            return Ok(false);
        };
        // tmux writes every pane output it read before a command ahead of
        // that command's reply, so with nothing new since `before` the
        // capture is the screen after exactly `before.0` bytes.
        *log.emulator() = Some(seeded(&lines, &saved, state, before.0));
        return Ok(true);
    }
    *log.emulator() = None;
    Ok(false)
}
