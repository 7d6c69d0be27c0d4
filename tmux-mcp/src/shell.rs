//! Shell integration in tmux-mcp's terminals: which panes run a shell with
//! the library's hooks ([`tmux_control::ShellIntegration`]), and where each
//! such shell stands, read from its marks.
//!
//! A new terminal without a command whose shell is bash, zsh or fish is
//! started with the hooks and a fresh nonce. The pane's user option
//! `@tmux-mcp-shell` holds `KIND NONCE`, so a restarted tmux-mcp finds its
//! integrated shells again. The state of each shell is a
//! [`ShellTracker`] fed from the pane's log on demand (no task, no timer):
//! whoever asks brings it up to date first.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;

use crate::regions::{Region, Regions};
use tmux_control::command::{Key, OptionScope, SendKeys, SetOption, ShowOption};
use tmux_control::{
    FinishedCommand, Launch, PaneChunk, PaneId, PaneOutput, ShellEvent, ShellIntegration,
    ShellKind, ShellPhase, ShellTracker, Tmux, shell_nonce,
};

/// The pane option that marks an integrated shell.
const OPTION: &str = "@tmux-mcp-shell";

/// One integrated shell.
#[derive(Debug, Clone)]
pub(crate) struct ShellSlot {
    /// Which shell.
    pub(crate) kind: ShellKind,
    /// Its marks, read up to [`ShellTracker::resume_offset`].
    pub(crate) tracker: ShellTracker,
    /// The last command line it finished.
    pub(crate) last: Option<FinishedCommand>,
    /// Found again after a restart of tmux-mcp (its first marks were not
    /// seen, so `Starting` means "at a prompt drawn before").
    pub(crate) recovered: bool,
}

impl ShellSlot {
    /// Where the shell stands; a recovered shell that printed no mark since
    /// is at the prompt it showed before.
    pub(crate) fn phase(&self) -> ShellPhase {
        match self.tracker.phase() {
            ShellPhase::Starting if self.recovered => ShellPhase::Ready,
            phase => phase,
        }
    }

    /// Feeds the pane's log from where the tracker stopped to its end, and
    /// returns the command lines that finished in it.
    fn catch_up(&mut self, po: &PaneOutput) -> Vec<FinishedCommand> {
        let mut finished = Vec::new();
        loop {
            let from = self.tracker.resume_offset();
            let (at, bytes) = po.read_from(from, 1 << 20);
            if at > from {
                // The log no longer holds those bytes.
                self.tracker.skip_to(at);
            }
            if bytes.is_empty() {
                return finished;
            }
            for event in self.tracker.feed(at, &bytes) {
                if let ShellEvent::Finished(done) = event {
                    self.last = Some(done.clone());
                    finished.push(done);
                }
            }
        }
    }
}

/// The integrated shells of one connection.
pub(crate) struct Shells {
    hooks: Option<ShellIntegration>,
    slots: Mutex<HashMap<PaneId, ShellSlot>>,
    /// Every pane's command lines (integrated shells' from their marks,
    /// others' from `run`).
    pub(crate) regions: std::sync::Arc<Regions>,
}

impl Shells {
    /// Installs the hooks into `dir` when `enabled`; without them (or if
    /// they cannot be written) new shells run as they are.
    pub(crate) fn new(enabled: bool, dir: PathBuf) -> Self {
        let hooks = if enabled {
            match ShellIntegration::install(&dir) {
                Ok(hooks) => Some(hooks),
                Err(e) => {
                    tracing::warn!(dir = %dir.display(), error = %e, "cannot write the shell integration hooks; shells run without them");
                    None
                }
            }
        } else {
            None
        };
        Self {
            hooks,
            slots: Mutex::new(HashMap::new()),
            regions: std::sync::Arc::default(),
        }
    }

    fn slots(&self) -> std::sync::MutexGuard<'_, HashMap<PaneId, ShellSlot>> {
        self.slots.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// How to start the server's default shell with the hooks, when it is
    /// one that has them and no `default-command` replaces it.
    pub(crate) async fn launch(&self, tmux: &Tmux) -> Option<(ShellKind, String, Launch)> {
        let hooks = self.hooks.as_ref()?;
        if tmux.default_command().await.ok()?.is_some() {
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
        self.slots().insert(pane, slot);
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
        if !self.slots().contains_key(&pane) {
            let value = tmux
                .run(ShowOption::new(OptionScope::Pane, OPTION).target(pane))
                .await
                .ok()??;
            let text = value.as_str()?.trim().to_owned();
            let (kind, nonce) = text.split_once(' ')?;
            let kind = ShellKind::of(kind)?;
            let slot = ShellSlot {
                kind,
                tracker: ShellTracker::new(nonce, po.start_offset()),
                last: None,
                recovered: true,
            };
            self.slots().entry(pane).or_insert(slot);
        }
        let mut slots = self.slots();
        let slot = slots.get_mut(&pane)?;
        for done in slot.catch_up(po) {
            self.regions.record(pane, Region::marked(&done));
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

    /// Forgets a pane whose program was replaced (respawned), here and in
    /// the pane's option.
    pub(crate) async fn forget(&self, tmux: &Tmux, pane: PaneId) {
        self.slots().remove(&pane);
        self.regions.forget(pane);
        let _ = tmux
            .run(SetOption::unset(OptionScope::Pane, OPTION).target(pane))
            .await;
    }
}
