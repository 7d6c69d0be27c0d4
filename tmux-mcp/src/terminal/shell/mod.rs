//! Shell integration in tmux-mcp's terminals: which panes run a shell with
//! the library's hooks ([`tmux_control::shell::ShellIntegration`]), and where each
//! such shell stands, read from its marks.
//!
//! A new terminal without a command whose shell is bash, zsh or fish is
//! started with the hooks and a fresh nonce. On tmux-mcp's own servers the
//! `default-command` ([`Shells::prepare`]) does the same for every pane
//! opened without a command, by anyone. The pane's user option
//! `@tmux-mcp-shell` holds `KIND NONCE` (written by tmux-mcp, or by the
//! launcher of the default-command), so a restarted tmux-mcp finds its
//! integrated shells again. Local shells read the hooks from files in the
//! state directory; remote ones through the remote tmux server.
//!
//! Panes whose shell runs `run`'s wrapped form are here too (in
//! `wrapped`): where the last wrapped run ended and how the shell's prompt
//! ends, so that the next run waits for the prompt only when it has not
//! come yet.
//!
//! Each pane's shell and wrapped runs are parts of its record
//! ([`crate::terminal::record::Terminal`]); what is known about all panes
//! (the hooks, whether the server's `default-command` announces new
//! shells) is kept here.
//!
//! The state of each integrated shell is a [`ShellTracker`] fed from the
//! pane's log on demand (no task, no timer): whoever asks brings it up to
//! date first.

use std::path::PathBuf;
use std::sync::Arc;

use crate::terminal::lock::lock;
use crate::terminal::record::Terminals;
use crate::terminal::region::TypedBy;
use crate::terminal::regions::{Region, Regions};
use tmux_control::command::{DisplayMessage, Key, OptionScope, SendKeys, SetOption};
use tmux_control::shell::{
    Launch, ShellEvent, ShellIntegration, ShellKind, ShellPhase, ShellTracker, shell_nonce,
};
use tmux_control::{EmulatedScreen, PaneChunk, PaneId, PaneOutput, Tmux};

pub(crate) mod slot;
mod wrapped;

pub(crate) use slot::ShellSlot;

/// The pane option that marks an integrated shell.
const OPTION: &str = "@tmux-mcp-shell";

/// The last line of `bytes` as plain text (escape sequences removed), from
/// the last line feed or carriage return.
fn last_line(bytes: &[u8]) -> String {
    let mut plain = Vec::new();
    tmux_control::PlainText::new().feed(bytes, &mut plain);
    let text = String::from_utf8_lossy(&plain);
    text.rsplit(['\n', '\r']).next().unwrap_or("").to_owned()
}

/// Whether `echoed` (what an integrated shell's terminal showed after its
/// prompt) is a submitted line the shell waits to complete: a line end,
/// then a continuation prompt (`> `, zsh's `quote> `) last. Output of a
/// background job there ends with its own line end instead.
pub(crate) fn continues(echoed: &[u8]) -> bool {
    echoed.contains(&b'\n') && last_line(echoed).ends_with("> ")
}

/// Whether fish, given a line (`echoed` since its prompt) it has not run,
/// keeps it for more: fish draws no continuation prompt but puts a new
/// line in the command line, with the cursor indented under the prompt
/// (`screen`: nothing before the cursor on its line, and the cursor not at
/// the left edge, where output of a job in the background leaves it).
pub(crate) fn fish_continues(echoed: &[u8], screen: Option<&EmulatedScreen>) -> bool {
    echoed.contains(&b'\n')
        && screen.is_some_and(|s| {
            s.cursor_x > 0
                && s.lines.get(s.cursor_y as usize).is_some_and(|line| {
                    line.chars()
                        .take(s.cursor_x as usize)
                        .all(char::is_whitespace)
                })
        })
}

/// The integrated shell the pane's option names (`KIND NONCE`), if any,
/// read from the start of `po`'s log. `fresh`: its output was followed from
/// its start, so its marks tell where it stands. Otherwise it is one found
/// again (after a restart of tmux-mcp, or opened by someone else), whose
/// first prompt was drawn before ([`ShellSlot::recovered`]) unless the pane
/// has printed nothing at all: then it is still reading its start-up files.
/// One round trip.
async fn announced(tmux: &Tmux, po: &PaneOutput, fresh: bool) -> Option<ShellSlot> {
    let format = format!("#{{cursor_x}},#{{cursor_y}},#{{history_size}},#{{{OPTION}}}");
    let reply = tmux
        .run(DisplayMessage::format(format.as_str()).target(po.pane()))
        .await
        .ok()?;
    let text = String::from_utf8_lossy(&reply);
    let fields: Vec<&str> = text.trim_end().splitn(4, ',').collect();
    let [x, y, history, value] = fields[..] else {
        return None;
    };
    let printed_nothing = (x, y, history) == ("0", "0", "0");
    let (kind, nonce) = value.trim().split_once(' ')?;
    Some(ShellSlot {
        kind: ShellKind::of(kind)?,
        tracker: ShellTracker::new(nonce, po.start_offset()),
        last: None,
        recovered: !fresh && !printed_nothing,
    })
}

/// Whether a server's `default-command` is one [`Shells::prepare`] set (of
/// this version or an earlier one).
fn is_ours(command: &str) -> bool {
    command.starts_with(LAUNCHER) && command.contains(OPTION)
}

/// How the `default-command` of [`ShellIntegration::default_command`]
/// starts.
const LAUNCHER: &str = "exec /bin/sh -c ";

/// The integrated shells of one connection. Each pane's shell and wrapped
/// runs are parts of its record ([`crate::terminal::record::Terminal`]).
pub(crate) struct Shells {
    hooks: Option<ShellIntegration>,
    /// The records the panes' shells are kept in.
    terminals: Arc<Terminals>,
    /// Set once [`Shells::prepare`] made the server's `default-command`
    /// integrate and announce every new pane's shell.
    announcing: std::sync::atomic::AtomicBool,
    /// Every pane's command lines (integrated shells' from their marks,
    /// others' from `run`).
    pub(crate) regions: Arc<Regions>,
}

impl Shells {
    /// Shell integration when `enabled`: for a local server, the hooks are
    /// written into `dir`; for a remote one (`remote_tmux`: the tmux program
    /// there), they are read through tmux ([`Shells::prepare`] publishes
    /// them), since no local path is valid there. Without them (or if they
    /// cannot be written) new shells run as they are. Each pane's shell,
    /// wrapped runs and regions are kept in its record in `terminals`.
    pub(crate) fn new(
        enabled: bool,
        dir: PathBuf,
        remote_tmux: Option<&str>,
        terminals: Arc<Terminals>,
    ) -> Self {
        let hooks = match (enabled, remote_tmux) {
            (false, _) => None,
            (true, Some(program)) => Some(ShellIntegration::through_tmux(program)),
            (true, None) => match ShellIntegration::install(&dir) {
                Ok(hooks) => Some(hooks),
                Err(e) => {
                    tracing::warn!(dir = %dir.display(), error = %e, "cannot write the shell integration hooks; shells run without them");
                    None
                }
            },
        };
        Self {
            hooks,
            regions: Arc::new(Regions::new(terminals.clone())),
            terminals,
            announcing: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// The `default-command` that integrates every new pane's shell, with
    /// these hooks.
    fn default_command(&self) -> Option<String> {
        self.hooks.as_ref()?.default_command(OPTION).ok()
    }

    /// Readies a new connection's server: publishes hooks that are read
    /// through tmux, and on a server of tmux-mcp's own (`own`) makes every
    /// pane opened without a command, by anyone (`tmux new-window`, a
    /// split), start an integrated shell that announces itself in the
    /// pane's option. A `default-command` someone else set is left alone.
    pub(crate) async fn prepare(&self, tmux: &Tmux, own: bool) {
        let Some(hooks) = &self.hooks else {
            return;
        };
        if hooks.dir().is_none()
            && let Err(e) = hooks.publish(tmux).await
        {
            tracing::warn!(error = %e, "cannot publish the shell integration hooks to the server");
            return;
        }
        let Some(ours) = self.default_command().filter(|_| own) else {
            return;
        };
        match tmux.default_command().await {
            Ok(None) => {}
            Ok(Some(theirs)) if is_ours(&theirs) => {}
            Ok(Some(_)) | Err(_) => return,
        }
        match tmux
            .run(SetOption::new(OptionScope::Session, "default-command", ours).global())
            .await
        {
            Ok(_) => self
                .announcing
                .store(true, std::sync::atomic::Ordering::Relaxed),
            Err(e) => tracing::debug!(error = %e, "cannot set the server's default-command"),
        }
    }

    /// For a pane just opened without a command (by anyone) on a server
    /// whose `default-command` [`Shells::prepare`] set, that has printed
    /// nothing yet: its shell is still starting (it announces itself before
    /// it runs, and prints its first prompt after its start-up files).
    /// Waits for the pane's first output, at most `limit` (a true timer: a
    /// deadline), and records the shell it announced as one that starts
    /// now, so that `run` waits for its first prompt instead of typing
    /// ahead. One round trip when the pane is not such a pane.
    pub(crate) async fn await_announcement(
        &self,
        tmux: &Tmux,
        po: &PaneOutput,
        limit: std::time::Duration,
    ) {
        let pane = po.pane();
        if !self.announcing.load(std::sync::atomic::Ordering::Relaxed) || self.has_slot(pane) {
            return;
        }
        // The start command last: it may hold commas (tmux shows it quoted,
        // and as the default-command for a pane opened without one).
        let format = format!(
            "#{{cursor_x}},#{{cursor_y}},#{{history_size}},#{{{OPTION}}},#{{pane_start_command}}"
        );
        let young = |reply: &[u8]| {
            let text = String::from_utf8_lossy(reply);
            let fields: Vec<&str> = text.trim_end().splitn(5, ',').collect();
            match fields[..] {
                ["0", "0", "0", _, start] => {
                    start.is_empty() || (start.contains(LAUNCHER) && start.contains(OPTION))
                }
                _ => false,
            }
        };
        let Ok(reply) = tmux
            .run(DisplayMessage::format(format.as_str()).target(pane))
            .await
        else {
            return;
        };
        if !young(&reply) {
            return;
        }
        let mut stream = po.stream_from(po.start_offset());
        let _ = tokio::time::timeout(limit, stream.next()).await;
        if let Some(slot) = announced(tmux, po, true).await {
            self.keep_first(pane, slot);
        }
    }

    /// Whether `pane` is known to run an integrated shell.
    pub(crate) fn has_slot(&self, pane: PaneId) -> bool {
        self.terminals
            .get(pane)
            .is_some_and(|t| lock(&t.shell).is_some())
    }

    /// Records `slot` as `pane`'s shell unless it has one already.
    fn keep_first(&self, pane: PaneId, slot: ShellSlot) {
        lock(&self.terminals.entry(pane).shell).get_or_insert(slot);
    }

    /// How to start the server's default shell with the hooks, when it is
    /// one that has them and no `default-command` replaces it (other than
    /// the one [`Shells::prepare`] set).
    pub(crate) async fn launch(&self, tmux: &Tmux) -> Option<(ShellKind, String, Launch)> {
        let hooks = self.hooks.as_ref()?;
        if tmux
            .default_command()
            .await
            .ok()?
            .is_some_and(|command| !is_ours(&command))
        {
            return None;
        }
        let shell = tmux.default_shell().await.ok()?;
        let kind = ShellKind::of(&shell)?;
        let nonce = shell_nonce();
        let launch = hooks.launch(kind, &shell, &nonce).ok()?;
        Some((kind, nonce, launch))
    }

    /// Loads the hooks into the `kind` shell already running at its prompt
    /// in `po`'s pane: types the line that sources them (it shows once on
    /// the screen), and records the pane as integrated from here on.
    pub(crate) async fn install_into(
        &self,
        tmux: &Tmux,
        po: &PaneOutput,
        kind: ShellKind,
    ) -> Result<(), String> {
        let hooks = self.hooks.as_ref().ok_or(
            "shell integration is off (--no-shell-integration) or its files could not be written",
        )?;
        let nonce = shell_nonce();
        let line = hooks.source_line(kind, &nonce).map_err(|e| e.to_string())?;
        let from = po.end_offset();
        self.adopt(tmux, po.pane(), kind, &nonce, from).await;
        let typed = async {
            tmux.type_text(po.pane(), &line).await?;
            tmux.run(SendKeys::keys(po.pane(), [Key::ENTER])).await
        };
        if let Err(e) = typed.await {
            self.forget(tmux, po.pane()).await;
            return Err(e.to_string());
        }
        Ok(())
    }

    /// Records that `pane` runs an integrated `kind` shell with `nonce`,
    /// whose output starts at `from`, and marks the pane so a restarted
    /// tmux-mcp knows.
    pub(crate) async fn adopt(
        &self,
        tmux: &Tmux,
        pane: PaneId,
        kind: ShellKind,
        nonce: &str,
        from: u64,
    ) {
        let slot = ShellSlot {
            kind,
            tracker: ShellTracker::new(nonce, from),
            last: None,
            recovered: false,
        };
        *lock(&self.terminals.entry(pane).shell) = Some(slot);
        let value = format!("{} {nonce}", kind.name());
        if let Err(e) = tmux
            .run(SetOption::new(OptionScope::Pane, OPTION, value).target(pane))
            .await
        {
            tracing::debug!(%pane, error = %e, "cannot mark the pane as an integrated shell");
        }
    }

    /// The pane's integrated shell, brought up to date with its output,
    /// if it has one (looked up in the pane's option the first time).
    pub(crate) async fn get(&self, tmux: &Tmux, po: &PaneOutput) -> Option<ShellSlot> {
        let pane = po.pane();
        if !self.has_slot(pane) {
            let slot = announced(tmux, po, false).await?;
            self.keep_first(pane, slot);
        }
        let terminal = self.terminals.get(pane)?;
        let mut shell = lock(&terminal.shell);
        let slot = shell.as_mut()?;
        for done in slot.catch_up(po) {
            let mut region = Region::marked(&done);
            // A command line with no input of this server's in its echo
            // was typed by a person.
            region.typed_by = done.input.map(|(from, to)| {
                terminal
                    .typed_by(from, to)
                    .map_or(TypedBy::Person, TypedBy::Actor)
            });
            self.regions.record_in(&terminal, region);
        }
        Some(slot.clone())
    }

    /// Waits, at most `limit` (a true timer: a deadline), until the pane's
    /// integrated shell is in a phase `wanted` accepts, reading its output
    /// as it arrives. Returns the shell as it stands then (`None`: not an
    /// integrated shell, or its pane ended).
    pub(crate) async fn wait_for(
        &self,
        tmux: &Tmux,
        po: &PaneOutput,
        wanted: impl Fn(ShellPhase) -> bool,
        limit: std::time::Duration,
    ) -> Option<ShellSlot> {
        let mut slot = self.get(tmux, po).await?;
        if wanted(slot.phase()) {
            return Some(slot);
        }
        let mut stream = po.stream_from(slot.tracker.resume_offset());
        let follow = async {
            while let Some(chunk) = stream.next().await {
                match chunk {
                    PaneChunk::Output { offset, data } => {
                        for event in slot.tracker.feed(offset, &data) {
                            if let ShellEvent::Finished(done) = event {
                                slot.last = Some(done);
                            }
                        }
                        if wanted(slot.phase()) {
                            return;
                        }
                    }
                    PaneChunk::Missed { to, .. } => slot.tracker.skip_to(to),
                    _ => {}
                }
            }
        };
        let _ = tokio::time::timeout(limit, follow).await;
        // What this wait read is read again from the log by the next
        // `get`, which records the regions: the stored tracker is not
        // moved past them here.
        Some(slot)
    }

    /// Before `po`'s pane is respawned with its own start command: when its
    /// shell is integrated and tmux-mcp started it (not the default-command
    /// launcher, which announces a new shell itself), the kind and a fresh
    /// nonce for the new shell. The respawn hands the nonce on in
    /// [`tmux_control::shell::NONCE_VARIABLE`] and then [`Shells::adopt`]s it, so
    /// the respawned shell is integrated as the first one was.
    pub(crate) async fn relaunch(
        &self,
        tmux: &Tmux,
        po: &PaneOutput,
    ) -> Option<(ShellKind, String)> {
        let kind = self.get(tmux, po).await?.kind;
        let start = tmux.start_command(po.pane()).await.ok()?;
        if is_ours(&start) || start.contains(OPTION) {
            return None;
        }
        Some((kind, shell_nonce()))
    }

    /// How many panes have a shell or a wrapped run's record here.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.terminals
            .count(|t| lock(&t.shell).is_some() || lock(&t.wrapped).is_some())
    }

    /// Forgets a pane whose program was replaced (respawned), here and in
    /// the pane's option.
    pub(crate) async fn forget(&self, tmux: &Tmux, pane: PaneId) {
        if let Some(terminal) = self.terminals.get(pane) {
            *lock(&terminal.shell) = None;
            *lock(&terminal.wrapped) = None;
        }
        self.regions.forget(pane);
        let _ = tmux
            .run(SetOption::unset(OptionScope::Pane, OPTION).target(pane))
            .await;
    }
}
