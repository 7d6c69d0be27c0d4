//! [`Tmux::spawn`]: starting a program in a new pane that is followed from
//! its first byte, so callers need no start-up gate of their own.
//!
//! The pane is created running a placeholder that prints nothing, then
//! followed (its route is in the connection's table, or its observer is
//! attached, before the next step is sent), then `respawn-pane -k` replaces
//! the placeholder with the program in the asked-for directory and
//! environment. Whatever the program writes, from its first byte, arrives
//! in the pane's log. The pane's start command is the program, so a later
//! `respawn-pane` without a command runs it again.

use super::PaneOutput;
use super::Tmux;
use super::state::PaneState;
use crate::command::{
    DisplayMessage, KillPane, NewPane, NewPaneKind, OptionScope, RespawnPane, SetOption,
    ShowOption, Target, unvis,
};
use crate::error::Result;
use crate::ids::{PaneId, SessionId, WindowId};

/// What the pane runs until the program replaces it: nothing visible,
/// and it never exits on its own.
const PLACEHOLDER: &str = "exec sleep 2147483647";

/// Put before a program's command line: the shell lingers a moment after
/// the command, so that what it writes just before it exits reaches the
/// connection. Without it tmux loses that output, every time on 3.3a and
/// now and then on later versions (seen on 3.7c on a busy machine).
const LINGER: &str = "trap 'sleep 0.25' EXIT; ";

/// A pane started by [`Tmux::spawn`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Spawned {
    /// The session the pane belongs to.
    pub session: SessionId,
    /// The window the pane is in.
    pub window: WindowId,
    /// The new pane.
    pub pane: PaneId,
    /// Its output, followed since before the program started.
    pub output: PaneOutput,
    /// The output offset at which the program started: everything it
    /// wrote is at this offset and after.
    pub start: u64,
}

impl Tmux {
    /// Starts a program in a new session, window or split, already
    /// followed: every byte the program writes is in
    /// [`Spawned::output`] from [`Spawned::start`] on, with no start-up
    /// gate in the caller. Without a command the pane runs what tmux
    /// would run (`default-command`, else `default-shell` as a login
    /// shell).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use std::time::Duration;
    /// use tmux_control::command::NewWindow;
    /// use tmux_control::{IsolatedServer, Pattern, Tmux};
    /// let server = IsolatedServer::new()?;
    /// let tmux = Tmux::connect(server.server()).await?;
    /// // Printed the instant it starts, and still not missed.
    /// let started = tmux.spawn(NewWindow::new().command("echo first words; exec sleep 60")).await?;
    /// let seen = started.output.expect_from(Pattern::literal("first words"), started.start);
    /// seen.wait(Duration::from_secs(10)).await?;
    /// # Ok(()) }
    /// ```
    pub async fn spawn(&self, what: impl Into<NewPane>) -> Result<Spawned> {
        let what = what.into();
        let created = match what.parked(PLACEHOLDER) {
            NewPaneKind::Session(c) => self.run(c).await?,
            NewPaneKind::Window(c) => self.run(c).await?,
            NewPaneKind::Split(c) => self.run(c).await?,
        };
        match self.start_followed(&what, created.pane).await {
            Ok((output, start)) => Ok(Spawned {
                session: created.session,
                window: created.window,
                pane: created.pane,
                output,
                start,
            }),
            Err(e) => {
                // Leave no parked pane behind.
                let _ = self.run(KillPane::new(created.pane)).await;
                Err(e)
            }
        }
    }

    async fn start_followed(&self, what: &NewPane, pane: PaneId) -> Result<(PaneOutput, u64)> {
        let output = self.follow(pane).await?;
        let (shell, default) = match what.program() {
            Some(_) => (self.default_shell().await?, None),
            None => {
                let (shell, default) = tokio::join!(self.default_shell(), self.default_command());
                (shell?, default?)
            }
        };
        let program = match (what.program(), default) {
            (Some(program), _) => program.to_vec(),
            (None, Some(command)) => command.into_bytes(),
            // tmux runs the default shell as a login shell.
            (None, None) => format!("exec {} -l", crate::quote::quote(&shell)).into_bytes(),
        };
        let mut respawn = what.respawn(pane, &program);
        linger(&shell, &mut respawn);
        if what.remain_on_exit {
            self.run(SetOption::new(OptionScope::Pane, "remain-on-exit", "on").target(pane))
                .await?;
        }
        let start = output.end_offset();
        self.run(respawn).await?;
        // respawn-pane clears the screen and homes the cursor; the
        // placeholder wrote nothing, so the new program's bytes start at
        // `start` on a blank screen.
        #[cfg(feature = "emulator")]
        output.log.reset_emulator_at(start);
        Ok((output, start))
    }

    /// Respawns a pane (`respawn-pane`), with the same care for its last
    /// output as [`Tmux::spawn`]: a given command runs in a shell that
    /// lingers a moment after it, since tmux can lose what a program writes
    /// just before it exits. A followed pane's [`PaneState`] is read
    /// again at once, so that a wait started right after this does not see
    /// the exit of the program it replaced.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use tmux_control::command::{NewPane, NewWindow, RespawnPane};
    /// use tmux_control::{IsolatedServer, Tmux};
    /// let server = IsolatedServer::new()?;
    /// let tmux = Tmux::connect(server.server()).await?;
    /// let what = NewPane::from(NewWindow::new().command("exit 1")).remain_on_exit();
    /// let started = tmux.spawn(what).await?;
    /// started.output.wait_exit(std::time::Duration::from_secs(10)).await?;
    /// tmux.respawn(RespawnPane::new(started.pane).command("exec sleep 60")).await?;
    /// assert!(!started.output.state().dead);
    /// # Ok(()) }
    /// ```
    pub async fn respawn(&self, mut command: RespawnPane) -> Result<()> {
        if command.has_command() {
            linger(&self.default_shell().await?, &mut command);
        }
        let target = command.target().clone();
        self.run(command).await?;
        let followed = self.followed().await;
        if followed.is_empty() {
            return Ok(());
        }
        let pane = match target {
            Target::Pane(pane) => pane,
            other => self.resolve(other).await?.pane,
        };
        if let Some(output) = followed.iter().find(|o| o.pane() == pane) {
            output.refresh_state().await?;
            // respawn-pane reset the screen at a point of the output not
            // known here: the emulator starts again from tmux's screen.
            #[cfg(feature = "emulator")]
            output.resync_screen().await?;
        }
        Ok(())
    }

    /// The command a pane was started with, as it was given: tmux's quoted
    /// and escaped `#{pane_start_command}` decoded, and without what
    /// [`Tmux::spawn`] put around it.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use tmux_control::command::NewWindow;
    /// use tmux_control::{IsolatedServer, Tmux};
    /// let server = IsolatedServer::new()?;
    /// let tmux = Tmux::connect(server.server()).await?;
    /// let started = tmux.spawn(NewWindow::new().command("echo \"it's\" $HOME; exec sleep 60")).await?;
    /// assert_eq!(tmux.start_command(started.pane).await?, "echo \"it's\" $HOME; exec sleep 60");
    /// # Ok(()) }
    /// ```
    pub async fn start_command(&self, pane: PaneId) -> Result<String> {
        let shown = self
            .run(DisplayMessage::format("#{pane_start_command}").target(pane))
            .await?;
        let shown = shown.trim_ascii();
        let inner = match shown {
            [b'"', inner @ .., b'"'] | [b'\'', inner @ .., b'\''] => inner,
            other => other,
        };
        let command = String::from_utf8_lossy(&unvis(inner)).into_owned();
        Ok(match command.strip_prefix(LINGER) {
            Some(given) => given.to_owned(),
            None => command,
        })
    }

    /// The server's `default-shell`, which runs every pane's command
    /// (`/bin/sh` when it is unset).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use tmux_control::{IsolatedServer, Tmux};
    /// let server = IsolatedServer::new()?;
    /// let tmux = Tmux::connect(server.server()).await?;
    /// assert!(tmux.default_shell().await?.starts_with('/'));
    /// # Ok(()) }
    /// ```
    pub async fn default_shell(&self) -> Result<String> {
        let shell = self
            .run(ShowOption::new(OptionScope::Session, "default-shell").global())
            .await?;
        Ok(shell
            .as_ref()
            .and_then(|v| v.as_str())
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .unwrap_or("/bin/sh")
            .to_owned())
    }

    /// The server's `default-command`, when one is set: what tmux runs in
    /// a new pane given no command.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use tmux_control::{IsolatedServer, Tmux};
    /// let server = IsolatedServer::new()?;
    /// let tmux = Tmux::connect(server.server()).await?;
    /// assert_eq!(tmux.default_command().await?, None);
    /// # Ok(()) }
    /// ```
    pub async fn default_command(&self) -> Result<Option<String>> {
        let command = self
            .run(ShowOption::new(OptionScope::Session, "default-command").global())
            .await?;
        Ok(command
            .as_ref()
            .and_then(|v| v.as_str())
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .map(str::to_owned))
    }
}

/// Wraps the command in [`LINGER`] when `shell` understands it.
fn linger(shell: &str, command: &mut RespawnPane) {
    if PaneState::is_posix_shell(shell) {
        command.prefix_command(LINGER);
    }
}
