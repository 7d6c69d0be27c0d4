//! What `run` checks, refuses and waits for before it types: the pane's
//! program started, a run still in progress ([`TmuxMcp::busy`]),
//! integration loaded when asked for, text or a continuation prompt on the
//! shell's input line, a full-screen program or a non-shell, and the
//! shell's prompt drawn.

use std::time::{Duration, Instant};

use tmux_control::command::PaneInfo;
use tmux_control::shell::{ShellKind, ShellPhase, ShellTracker};
use tmux_control::{PaneId, PaneOutput, PaneState};

use super::ended;
use crate::mcp::server::TmuxMcp;
use crate::reply::ToolError;
use crate::terminal::backend::Conn;
use crate::terminal::runs::RunState;
use crate::terminal::shell::ShellSlot;
use crate::tools::check_typable;

/// The longest `run` waits for a just-started pane's program to show as
/// its foreground command (a true timer: a deadline).
pub(super) const STARTING: Duration = Duration::from_secs(3);

/// The longest `run` waits for an integrated shell that has started its
/// prompt to finish drawing it (a true timer: a deadline; a prompt that a
/// theme redraws without the end mark is typed into after it).
const PROMPT_DRAWN: Duration = Duration::from_secs(1);

/// The longest a run waits, before it refuses a pane with a run in
/// progress, for an integrated shell to mark that run's end (a true timer:
/// a deadline; an interrupt sent just before takes the shell a moment).
const INTERRUPT_SETTLE: Duration = Duration::from_millis(500);

/// The pane's row once its program runs: a pane whose program is still
/// starting (tmux shows a start-up name until the program runs) is read
/// again after tmux's next report of the foreground command (pushed, about
/// once a second), or after [`STARTING`].
pub(super) async fn started_row(
    conn: &Conn,
    po: &PaneOutput,
    pane: PaneId,
) -> Result<PaneInfo, ToolError> {
    let row = conn.pane_row(pane).await?;
    if !PaneState::is_start_up_name(&row.current_command) {
        return Ok(row);
    }
    let mut changes = po.state_changes();
    let settled = async {
        let mut state = po.state();
        loop {
            if state
                .current_command
                .as_deref()
                .is_some_and(|c| !PaneState::is_start_up_name(c))
            {
                return;
            }
            match changes.next().await {
                Some(next) => state = next,
                None => return,
            }
        }
    };
    let _ = tokio::time::timeout(STARTING, settled).await;
    conn.pane_row(pane).await
}

impl TmuxMcp {
    /// The run still in progress in `pane`, if any. A run in an integrated
    /// shell whose end the shell has marked since is not in progress, even
    /// if no call collected it yet (it was interrupted, say): its end is
    /// kept for the call that does.
    pub(super) async fn busy(&self, conn: &Conn, po: &PaneOutput, pane: PaneId) -> Option<String> {
        let (id, state) = {
            let runs = conn.runs.lock().unwrap_or_else(|e| e.into_inner());
            runs.iter()
                .find(|(_, s)| s.pane == pane && s.ended.is_none() && s.abandoned.is_none())
                .map(|(id, s)| (id.clone(), s.clone()))?
        };
        if state.shell.is_none() {
            return wrapped_busy(conn, po, id, &state).await;
        }
        integrated_busy(conn, po, id, &state).await
    }

    /// Whether `run` loads shell integration into the pane's shell: asked
    /// for in this call (refused where it cannot be done), or by the
    /// server's --integrate-existing (where it can be).
    pub(super) fn integrates(&self, integrate: Option<bool>, row: &PaneInfo) -> bool {
        let asked = integrate == Some(true);
        integrate.unwrap_or(self.inner.config.integrate_existing)
            && (asked || ShellKind::of(&row.current_command).is_some())
    }
}

/// [`TmuxMcp::busy`] for a run `id` in the wrapped form.
async fn wrapped_busy(
    conn: &Conn,
    po: &PaneOutput,
    id: String,
    state: &RunState,
) -> Option<String> {
    match wrapped_settled(conn, po, state).await {
        Some(false) => None,
        Some(true) => {
            if let Some(run) = conn
                .runs
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .get_mut(&id)
            {
                run.abandoned = Some(crate::terminal::runs::INTERRUPTED);
            }
            None
        }
        None => Some(id),
    }
}

/// Whether a wrapped run has settled, looking again for a moment if it
/// seems not to have. Ended (`Some(false)`): the shell printed the end
/// mark (fish goes on to it after an interrupt), and the call that resumes
/// the run reads its end the same way. Back (`Some(true)`): the shell
/// reads the terminal again at its prompt without the end mark (local
/// panes: the kernel's evidence): interrupted.
async fn wrapped_settled(conn: &Conn, po: &PaneOutput, state: &RunState) -> Option<bool> {
    // Behind a lock only to be shared by the checks below (one task).
    let end = std::sync::Mutex::new(EndMark::new(&state.tracker, state.typed_at));
    let settled = || {
        let ended = end
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .seen(po);
        if ended {
            Some(false)
        } else {
            let back = state
                .program
                .as_ref()
                .is_some_and(|p| !p.replaced() && p.reads_terminal())
                && conn.shells.at_prompt(po, state.typed_at);
            back.then_some(true)
        }
    };
    let mut verdict = settled();
    if verdict.is_none() {
        // Just interrupted, the shell may not have drawn its prompt
        // yet: look again as its output comes, and once more at the
        // deadline (INTERRUPT_SETTLE, a true timer: the kernel says
        // the shell reads the terminal only after its prompt).
        let mut stream = po.stream_from(po.end_offset());
        let settle = async {
            while stream.next().await.is_some() {
                if settled().is_some() {
                    return;
                }
            }
        };
        let _ = tokio::time::timeout(INTERRUPT_SETTLE, settle).await;
        verdict = settled();
    }
    verdict
}

/// [`TmuxMcp::busy`] for a run `id` in an integrated shell.
async fn integrated_busy(
    conn: &Conn,
    po: &PaneOutput,
    id: String,
    state: &RunState,
) -> Option<String> {
    // Just interrupted, the shell may not have marked the end yet:
    // give it a moment (INTERRUPT_SETTLE) to do so.
    let not_running = |p| p != ShellPhase::Running;
    let slot = conn
        .shells
        .wait_for(&conn.tmux, po, not_running, INTERRUPT_SETTLE)
        .await;
    let last = slot
        .and_then(|s| s.last)
        .filter(|last| last.end > state.typed_at);
    let Some(f) = last else {
        return Some(id);
    };
    if let Some(run) = conn
        .runs
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get_mut(&id)
    {
        run.ended = Some(ended(f));
    }
    None
}

/// Loads shell integration into the pane's shell (bash, zsh or fish; any
/// other program is refused) and waits, within `limit`, for the prompt its
/// hooks mark.
pub(super) async fn integrate(
    conn: &Conn,
    po: &PaneOutput,
    row: &PaneInfo,
    limit: Duration,
    what: &str,
) -> Result<Option<ShellSlot>, ToolError> {
    let Some(kind) = ShellKind::of(&row.current_command) else {
        return Err(ToolError::new(
            what,
            format!(
                "integrate=true needs bash, zsh or fish in the pane, not {:?}",
                row.current_command
            ),
            "Leave integrate out to run in the wrapped form",
        ));
    };
    conn.shells
        .install_into(&conn.tmux, po, kind)
        .await
        .map_err(|why| {
            ToolError::new(
                what.to_owned(),
                why,
                "Leave integrate out to run in the wrapped form",
            )
        })?;
    // The hooks mark the next prompt; it comes once the loading
    // line has run.
    let drawn = |p| matches!(p, ShellPhase::Prompt | ShellPhase::Ready);
    Ok(conn.shells.wait_for(&conn.tmux, po, drawn, limit).await)
}

/// Run `id` is still in progress in `pane`: with `force` the caller takes
/// the pane over, else the refusal (what to do next depends on whether
/// the pane has an integrated shell, `integrated`).
pub(super) fn take_over(
    conn: &Conn,
    pane: PaneId,
    id: &str,
    force: bool,
    integrated: bool,
    what: &str,
) -> Result<(), ToolError> {
    if force {
        // The caller takes the pane over: the unfinished run is
        // given up (its resume says so), not waited for.
        crate::terminal::runs::abandon(
            &conn.runs,
            pane,
            "a later run with force=true took the pane over",
        );
        return Ok(());
    }
    let how = if integrated {
        "or interrupt it with send_keys keys=[\"C-c\"] and then resume it to collect its end (130)"
    } else {
        "or interrupt it with send_keys keys=[\"C-c\"]: in the wrapped form the shell then drops the end marker, so run again with force=true (which gives the old run up) or respawn the pane"
    };
    Err(ToolError::new(
        what,
        format!("run {id:?} is still in progress in this pane"),
        format!("Call run with run_id={id:?} to wait for it, {how}"),
    ))
}

/// The integrated shell `shell` as it is once a command it runs has had a
/// moment to end (without `force`).
pub(super) async fn settle_running(
    conn: &Conn,
    po: &PaneOutput,
    shell: Option<ShellSlot>,
    force: bool,
) -> Option<ShellSlot> {
    if !force
        && shell
            .as_ref()
            .is_some_and(|s| s.phase() == ShellPhase::Running)
    {
        // A command typed by other means may be just ending (its output
        // is in, its end mark not yet): give it a moment
        // (INTERRUPT_SETTLE) before refusing.
        let not_running = |p| p != ShellPhase::Running;
        let _ = conn
            .shells
            .wait_for(&conn.tmux, po, not_running, INTERRUPT_SETTLE)
            .await;
        return conn.shells.get(&conn.tmux, po).await;
    }
    shell
}

/// The refusals of a pane that does not take a command now (`force`
/// skips all but [`check_typable`]'s): text left on the input line, a
/// continuation prompt, a full-screen program, a program that is no shell,
/// a command that run did not start.
pub(super) fn check_pane(
    conn: &Conn,
    po: &PaneOutput,
    pane: PaneId,
    row: &PaneInfo,
    shell: Option<&ShellSlot>,
    force: bool,
    what: &str,
) -> Result<(), ToolError> {
    check_typable(row, false, what)?;
    if !force && conn.unsubmitted(pane) {
        return Err(ToolError::new(
            what,
            "text typed with send_text or paste_text and no Enter is still on the shell's input line: the command would be typed after it and run joined to it",
            "Submit it with send_keys keys=[\"Enter\"], or clear the line with send_keys keys=[\"C-u\"], then run again; force=true types the command anyway",
        ));
    }
    if !force && at_continuation(conn, po, shell) {
        return Err(continuation(what));
    }
    if !force && row.alternate_on {
        return Err(ToolError::new(
            what,
            format!(
                "a full-screen program ({}) is running in the pane, not a shell prompt",
                row.current_command
            ),
            "Use send_text / send_keys to talk to it, or quit it first; force=true types the command anyway",
        ));
    }
    // An integrated shell at its prompt says so itself (tmux's name of
    // the foreground program can lag behind a program that just ended).
    let at_prompt =
        shell.is_some_and(|s| matches!(s.phase(), ShellPhase::Prompt | ShellPhase::Ready));
    // An integrated shell is the pane's program whatever tmux names
    // (a shell just respawned or still starting shows another name for
    // a moment); what it runs is checked from its phase below.
    let a_shell = shell.is_some()
        || PaneState::is_posix_shell(&row.current_command)
        || ShellKind::of(&row.current_command).is_some();
    if !force && !at_prompt && !a_shell {
        return Err(ToolError::new(
            what,
            format!(
                "the pane's foreground program is {:?}, not a shell (bash, zsh, fish, sh, dash, ksh)",
                row.current_command
            ),
            "Use send_text and wait_for_output to talk to this program; force=true types the command anyway",
        ));
    }
    if !force && shell.is_some_and(|s| s.phase() == ShellPhase::Running) {
        return Err(ToolError::new(
            what,
            "the shell is running a command that run did not start (typed with send_text, or by a human)",
            "Wait for it with wait_for_output or wait_for_idle, or interrupt it with send_keys keys=[\"C-c\"]; force=true types the command anyway",
        ));
    }
    Ok(())
}

/// Whether the shell waits for the rest of a command line. An integrated
/// shell that read a line but runs nothing yet (no start mark since the
/// prompt, a line end echoed after it, and a continuation prompt, `> ` or
/// `quote> `, last) waits for the rest of it: an open quote, a trailing
/// `\`, a `do` without `done`. The wrapped form's shell is judged by
/// [`crate::terminal::shell::Shells::wrapped_continues`].
fn at_continuation(conn: &Conn, po: &PaneOutput, shell: Option<&ShellSlot>) -> bool {
    match shell {
        Some(slot) => {
            if let Some(from) = slot.tracker.input_start()
                && let echoed = po.read_from(from, 1 << 16).1
                && (crate::terminal::shell::continues(&echoed)
                    || (slot.kind == ShellKind::Fish
                        && crate::terminal::shell::fish_continues(
                            &echoed,
                            po.emulated_screen().as_ref(),
                        )))
            {
                return true;
            }
            false
        }
        None => conn.shells.wrapped_continues(po),
    }
}

/// The refusal of a run at a continuation prompt.
fn continuation(what: &str) -> ToolError {
    ToolError::new(
        what,
        "the shell is waiting for the rest of a command line (a continuation prompt: an open quote, a trailing backslash or an unfinished construct in what was typed before): the command would become part of it",
        "Finish that line with send_text, or drop it with send_keys keys=[\"C-c\"], then run again; force=true types the command anyway",
    )
}

/// Whether an integrated shell is ready to be typed into.
pub(super) enum Prompt {
    /// Its prompt is drawn (or there is no integrated shell to wait for).
    Drawn,
    /// It has not drawn its first prompt within the time limit, waited for
    /// since then.
    NotDrawn(Instant),
}

/// Waits for an integrated shell's prompt: one it has started drawing for
/// at most [`PROMPT_DRAWN`], and the first prompt of one still reading its
/// start-up files within this call's time limit.
pub(super) async fn await_prompt(
    conn: &Conn,
    po: &PaneOutput,
    shell: Option<&ShellSlot>,
    limit: Duration,
) -> Prompt {
    match shell.map(ShellSlot::phase) {
        Some(ShellPhase::Prompt) => {
            let ready = |p| p == ShellPhase::Ready;
            let _ = conn
                .shells
                .wait_for(&conn.tmux, po, ready, PROMPT_DRAWN)
                .await;
        }
        Some(ShellPhase::Starting) => {
            // Still reading its start-up files: wait for its first
            // prompt, within this call's time limit.
            let started = Instant::now();
            let drawn = |p| matches!(p, ShellPhase::Prompt | ShellPhase::Ready);
            let now = conn.shells.wait_for(&conn.tmux, po, drawn, limit).await;
            if !now.is_some_and(|s| drawn(s.phase())) {
                return Prompt::NotDrawn(started);
            }
        }
        _ => {}
    }
    Prompt::Drawn
}

/// Reads a wrapped run's marks in the pane's output since it was typed,
/// each call going on from where the last one stopped.
struct EndMark {
    tracker: ShellTracker,
    at: u64,
    seen: bool,
}

impl EndMark {
    /// For a run whose marks `tracker` reads, typed at `from`.
    fn new(tracker: &ShellTracker, from: u64) -> Self {
        Self {
            tracker: tracker.clone(),
            at: from,
            seen: false,
        }
    }

    /// Whether the run's end mark is in the output so far.
    fn seen(&mut self, po: &PaneOutput) -> bool {
        while !self.seen {
            let (start, bytes) = po.read_from(self.at, 1 << 20);
            if bytes.is_empty() {
                break;
            }
            self.at = start + bytes.len() as u64;
            self.seen = self
                .tracker
                .feed(start, &bytes)
                .iter()
                .any(|e| matches!(e, tmux_control::shell::ShellEvent::Finished(_)));
        }
        self.seen
    }
}
