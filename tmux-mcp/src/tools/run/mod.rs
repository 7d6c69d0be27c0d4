//! The `run` tool (toolset `execute`): type a shell command, wait for it to
//! finish, and return its output and exact exit status.
//!
//! In a shell with shell integration (docs/tools.md) the command is typed
//! as it is and its end, status and pipeline statuses come from the
//! shell's own marks; anywhere else it is typed in the wrapped form of
//! [`crate::markers`]. Both forms are read by one
//! `tmux_control::ShellTracker`.
//!
//! `reply` holds the arguments, the reply and its text; `input` whether a
//! running command waits for input.
//!
//! (Over 600 lines: starting a run, with its refusals, and waiting for it,
//! with every way a run can end; issue 23 moves the per-pane state it reads
//! into one record.)

use std::time::{Duration, Instant};

use rmcp::handler::server::wrapper::Parameters;
use rmcp::{tool, tool_router};
use tmux_control::{
    PaneChunk, PaneExit, PaneId, PaneOutput, PaneState, ShellEvent, ShellKind, ShellPhase,
    ShellTracker, WaitError, shell_nonce,
};

mod input;
mod reply;

pub use reply::{RunArgs, RunMode, RunResult, RunStatus};

use crate::actors::Sharing;
use crate::backend::Conn;
use crate::markers::wrapper_line;
use crate::regions::Region;
use crate::reply::{Json, ToolError};
use crate::runs::{Ended, RunState};
use crate::server::TmuxMcp;
use crate::tools::{Guarded, check_typable, paste, press_enter, refuse_nul, type_text};
use input::waiting_for_input;

/// The longest `run` waits for a just-started pane's program to show as
/// its foreground command (a true timer: a deadline).
const STARTING: Duration = Duration::from_secs(3);

/// The longest `run` waits for an integrated shell that has started its
/// prompt to finish drawing it (a true timer: a deadline; a prompt that a
/// theme redraws without the end mark is typed into after it).
const PROMPT_DRAWN: Duration = Duration::from_secs(1);

/// The longest a run waits, before it refuses a pane with a run in
/// progress, for an integrated shell to mark that run's end (a true timer:
/// a deadline; an interrupt sent just before takes the shell a moment).
const INTERRUPT_SETTLE: Duration = Duration::from_millis(500);

/// What `start_run` did.
enum Started {
    /// Typed the command: its run id, the pane, and who else uses it.
    Typed(String, PaneOutput, Option<Sharing>),
    /// Typed nothing: the integrated shell has not drawn its first prompt.
    NotReady(Box<RunResult>),
}

use crate::probe::Evidence;
use crate::wait::{CallCtx, Waited};

// ---------------------------------------------------------------- run

const RUN: &str = "Run one shell command in a terminal whose shell waits at its prompt, wait for it to finish, and return its output and exact exit status. \
In a bash, zsh or fish with shell integration (mode=integrated: terminals made by create_terminal, panes opened on tmux-mcp's own server, or integrate=true) the command is typed exactly as given and the shell's own marks give its output, $? and pipestatus; in other shells (mode=wrapped) it is typed between two invisible markers. The result holds only the command's own output; cd and variables persist; multi-line commands work. \
Bounded by timeout_secs (default 30, capped by the server), with progress notifications. Still running then: status=running and a run_id; call run with run_id to keep waiting. send_keys [\"C-c\"] interrupts: in an integrated shell the run completes with 130 and the pane is free. A command that reads the terminal returns at once with status=waiting_for_input, its prompt line and echo (false: a secret is asked for): answer with send_text, then resume. \
Returns status (completed, running, waiting_for_input, shell_starting, pane_exited, pane_gone, abandoned, interrupted, shell_replaced), exit_status, pipestatus, mode, output (secrets masked; the whole reply stays within max_bytes, 8 KB by default: long output comes in the text only, failure-like lines first, then head and tail and cursors for read_output; structured output is then null, with highlights and omitted), losses when output is missing, and cursors. \
Refuses a pane in copy mode, a full-screen program or a non-shell (force=true skips these two), and a pane with a command still running (force=true gives that run up: resuming it answers abandoned; respawn does too).";

fn ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

#[tool_router(router = run_router, vis = "pub(crate)")]
impl TmuxMcp {
    #[tool(description = RUN, annotations(title = "Run command", read_only_hint = false, destructive_hint = true, idempotent_hint = false, open_world_hint = true))]
    pub(crate) async fn run(
        &self,
        Parameters(args): Parameters<RunArgs>,
        cc: CallCtx,
    ) -> Result<Json<RunResult>, ToolError> {
        let limit = self.wait_limit("run", args.timeout_secs)?;
        if let Some(command) = &args.command {
            refuse_nul(
                "run",
                "the command",
                command,
                "no shell command line can hold (nor a tmux argument)",
            )?;
        }
        let budget = self.budget(args.max_bytes);
        let conn = self.conn().await?;
        match (&args.command, &args.run_id) {
            (Some(command), None) => {
                let Some(target) = &args.target else {
                    return Err(ToolError::new(
                        "Running a command",
                        "no target was given",
                        "Give target: the pane whose shell should run it",
                    ));
                };
                match self
                    .start_run(&conn, target, command, (args.force, args.integrate), limit)
                    .await?
                {
                    Started::Typed(run_id, po, sharing) => {
                        let mut reply = self
                            .wait_run(&conn, &po, &run_id, limit, budget, &cc)
                            .await?;
                        reply.0.sharing = sharing;
                        Ok(reply)
                    }
                    Started::NotReady(result) => Ok(Json(*result)),
                }
            }
            (None, Some(run_id)) => {
                let pane = {
                    let runs = conn.runs.lock().unwrap_or_else(|e| e.into_inner());
                    runs.get(run_id).map(|s| s.pane)
                };
                let Some(pane) = pane else {
                    return Err(ToolError::new(
                        format!("Resuming run {run_id:?}"),
                        "no run with that id is in progress (it finished and was reported, or the server restarted)",
                        "Use read_output or capture_screen on the pane to see what happened",
                    ));
                };
                let po = conn.follow(pane).await?;
                self.wait_run(&conn, &po, run_id, limit, budget, &cc).await
            }
            _ => Err(ToolError::new(
                "Running a command",
                "give exactly one of command (to start) and run_id (to keep waiting)",
                "Fix the arguments",
            )),
        }
    }
}

impl TmuxMcp {
    async fn start_run(
        &self,
        conn: &Conn,
        target: &str,
        command: &str,
        (force, integrate): (bool, Option<bool>),
        limit: Duration,
    ) -> Result<Started, ToolError> {
        let r = conn.resolve(target).await?;
        let what = format!("Running a command in pane {}", r.pane);
        conn.refuse_home(&r, &what)?;
        self.guard(conn, &r, Guarded::Input).await?;
        if command.trim().is_empty() {
            return Err(ToolError::new(
                what,
                "the command is empty",
                "Give a command line",
            ));
        }
        // The pane's input turn, from the checks to the Enter key (not
        // while the command runs): another actor's input waits meanwhile.
        let turn = conn
            .actors
            .take_turn(r.pane, crate::actors::current())
            .await;
        let po = conn.follow(r.pane).await?;
        let mut row = conn.pane_row(r.pane).await?;
        if PaneState::is_start_up_name(&row.current_command) {
            // A pane whose program is still starting (tmux shows a start-up
            // name until the program runs). Wait for tmux's next report of the foreground
            // command (pushed, about once a second), at most STARTING.
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
            row = conn.pane_row(r.pane).await?;
        }
        let busy = self.busy(conn, &po, r.pane).await;
        conn.shells
            .await_announcement(&conn.tmux, &po, STARTING.min(limit))
            .await;
        let mut shell = conn.shells.get(&conn.tmux, &po).await;
        // Asked for in this call (refused where it cannot be done), or by
        // the server's --integrate-existing (where it can be).
        let asked = integrate == Some(true);
        let integrate = integrate.unwrap_or(self.inner.config.integrate_existing)
            && (asked || ShellKind::of(&row.current_command).is_some());
        if integrate && busy.is_none() && shell.is_none() && !row.alternate_on {
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
                .install_into(&conn.tmux, &po, kind)
                .await
                .map_err(|why| {
                    ToolError::new(
                        what.clone(),
                        why,
                        "Leave integrate out to run in the wrapped form",
                    )
                })?;
            // The hooks mark the next prompt; it comes once the loading
            // line has run.
            let drawn = |p| matches!(p, ShellPhase::Prompt | ShellPhase::Ready);
            shell = conn.shells.wait_for(&conn.tmux, &po, drawn, limit).await;
        }
        if let Some(id) = busy {
            if force {
                // The caller takes the pane over: the unfinished run is
                // given up (its resume says so), not waited for.
                crate::runs::abandon(
                    &conn.runs,
                    r.pane,
                    "a later run with force=true took the pane over",
                );
            } else {
                let how = if shell.is_some() {
                    "or interrupt it with send_keys keys=[\"C-c\"] and then resume it to collect its end (130)"
                } else {
                    "or interrupt it with send_keys keys=[\"C-c\"]: in the wrapped form the shell then drops the end marker, so run again with force=true (which gives the old run up) or respawn the pane"
                };
                return Err(ToolError::new(
                    what,
                    format!("run {id:?} is still in progress in this pane"),
                    format!("Call run with run_id={id:?} to wait for it, {how}"),
                ));
            }
        }
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
                .wait_for(&conn.tmux, &po, not_running, INTERRUPT_SETTLE)
                .await;
            shell = conn.shells.get(&conn.tmux, &po).await;
        }
        check_typable(&row, false, &what)?;
        if !force && conn.unsubmitted(r.pane) {
            return Err(ToolError::new(
                what,
                "text typed with send_text or paste_text and no Enter is still on the shell's input line: the command would be typed after it and run joined to it",
                "Submit it with send_keys keys=[\"Enter\"], or clear the line with send_keys keys=[\"C-u\"], then run again; force=true types the command anyway",
            ));
        }
        // An integrated shell that read a line but runs nothing yet (no
        // start mark since the prompt, a line end echoed after it, and a
        // continuation prompt, `> ` or `quote> `, last) waits for the rest
        // of it: an open quote, a trailing `\`, a `do` without `done`.
        if !force
            && let Some(slot) = &shell
            && let Some(from) = slot.tracker.input_start()
            && let echoed = po.read_from(from, 1 << 16).1
            && (crate::shell::continues(&echoed)
                || (slot.kind == ShellKind::Fish
                    && crate::shell::fish_continues(&echoed, po.emulated_screen().as_ref())))
        {
            return Err(continuation(what));
        }
        if !force && shell.is_none() && conn.shells.wrapped_continues(&po) {
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
        let at_prompt = shell
            .as_ref()
            .is_some_and(|s| matches!(s.phase(), ShellPhase::Prompt | ShellPhase::Ready));
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
        if let Some(slot) = &shell {
            match slot.phase() {
                ShellPhase::Running if !force => {
                    return Err(ToolError::new(
                        what,
                        "the shell is running a command that run did not start (typed with send_text, or by a human)",
                        "Wait for it with wait_for_output or wait_for_idle, or interrupt it with send_keys keys=[\"C-c\"]; force=true types the command anyway",
                    ));
                }
                ShellPhase::Prompt => {
                    let ready = |p| p == ShellPhase::Ready;
                    let _ = conn
                        .shells
                        .wait_for(&conn.tmux, &po, ready, PROMPT_DRAWN)
                        .await;
                }
                ShellPhase::Starting => {
                    // Still reading its start-up files: wait for its first
                    // prompt, within this call's time limit.
                    let started = Instant::now();
                    let drawn = |p| matches!(p, ShellPhase::Prompt | ShellPhase::Ready);
                    let now = conn.shells.wait_for(&conn.tmux, &po, drawn, limit).await;
                    if !now.is_some_and(|s| drawn(s.phase())) {
                        return Ok(Started::NotReady(Box::new(RunResult {
                            pane: r.pane.to_string(),
                            run_id: String::new(),
                            status: RunStatus::ShellStarting,
                            exit_status: None,
                            pipestatus: None,
                            mode: RunMode::Integrated,
                            cwd: None,
                            output: None,
                            highlights: Vec::new(),
                            losses: Vec::new(),
                            output_text: String::new(),
                            output_bytes: 0,
                            omitted: None,
                            missed_bytes: 0,
                            output_cursor: None,
                            cursor: po.end_offset(),
                            elapsed_ms: ms(started.elapsed()),
                            prompt: None,
                            echo: None,
                            sharing: turn.sharing(),
                        })));
                    }
                }
                _ => {}
            }
        }
        let shell = match shell {
            Some(_) => conn.shells.get(&conn.tmux, &po).await,
            None => None,
        };
        if shell.is_none() {
            conn.shells.wrapped_prompt(&po).await;
        }
        let run_id = shell_nonce();
        let (line, tracker) = match &shell {
            Some(slot) => (command.to_owned(), slot.tracker.clone()),
            None => (
                wrapper_line(command, &run_id, read_by_fish(&row, conn.remote)),
                ShellTracker::new(&run_id, po.end_offset()),
            ),
        };
        let from = po.end_offset();
        conn.note_input(r.pane, from);
        conn.note_unsubmitted(r.pane, false);
        turn.typed();
        // Text with control characters (newlines, tabs) goes in as one
        // bracketed paste, so that the shell's line editor inserts it
        // instead of acting on it (a tab would complete, a newline run).
        let typed = if line.chars().any(|c| c < ' ' || c == '\x7f') {
            paste(conn, r.pane, &line, true).await
        } else {
            type_text(conn, r.pane, &line).await.map(drop)
        };
        typed?;
        let typed_at = po.end_offset();
        {
            let mut runs = conn.runs.lock().unwrap_or_else(|e| e.into_inner());
            runs.retain(|_, s| s.started.elapsed() < Duration::from_secs(24 * 3600));
            runs.insert(
                run_id.clone(),
                RunState {
                    pane: r.pane,
                    shell: shell.as_ref().map(|s| s.kind),
                    tracker,
                    typed_at,
                    started: Instant::now(),
                    ended: None,
                    abandoned: None,
                    // The shell that reads the typed line: the terminal's
                    // foreground process (a command may run under a wrapper,
                    // the pane's first process).
                    program: if conn.remote {
                        None
                    } else {
                        row.pid.and_then(|pid| {
                            let shell =
                                crate::probe::probe(pid, &row.tty).foreground.unwrap_or(pid);
                            crate::probe::cmdline(shell).map(|cmdline| crate::runs::TypedInto {
                                pid: shell,
                                cmdline,
                                tty: row.tty.clone(),
                            })
                        })
                    },
                    command: command.to_owned(),
                },
            );
        }
        if let Err(e) = press_enter(conn, r.pane).await {
            conn.runs
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .remove(&run_id);
            return Err(e);
        }
        Ok(Started::Typed(run_id, po, turn.sharing()))
    }

    /// The run still in progress in `pane`, if any. A run in an integrated
    /// shell whose end the shell has marked since is not in progress, even
    /// if no call collected it yet (it was interrupted, say): its end is
    /// kept for the call that does.
    async fn busy(&self, conn: &Conn, po: &PaneOutput, pane: PaneId) -> Option<String> {
        let (id, state) = {
            let runs = conn.runs.lock().unwrap_or_else(|e| e.into_inner());
            runs.iter()
                .find(|(_, s)| s.pane == pane && s.ended.is_none() && s.abandoned.is_none())
                .map(|(id, s)| (id.clone(), s.clone()))?
        };
        if state.shell.is_none() {
            // Ended (`Some(false)`): the shell printed the end mark (fish
            // goes on to it after an interrupt), and the call that resumes
            // the run reads its end the same way. Back (`Some(true)`): the
            // shell reads the terminal again at its prompt without the end
            // mark (local panes: the kernel's evidence): interrupted.
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
            if verdict == Some(false) {
                return None;
            }
            let back_now = verdict == Some(true);
            if back_now {
                if let Some(run) = conn
                    .runs
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .get_mut(&id)
                {
                    run.abandoned = Some(crate::runs::INTERRUPTED);
                }
                return None;
            }
            return Some(id);
        }
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
            run.ended = Some(Ended {
                output_start: f.output_start,
                output_end: f.output_end,
                end: f.end,
                status: f.status,
                pipestatus: f.pipestatus,
            });
        }
        None
    }

    async fn wait_run(
        &self,
        conn: &Conn,
        po: &PaneOutput,
        run_id: &str,
        limit: Duration,
        budget: usize,
        cc: &CallCtx,
    ) -> Result<Json<RunResult>, ToolError> {
        let what = format!("Waiting for run {run_id}");
        let Some(state) = conn
            .runs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(run_id)
            .cloned()
        else {
            return Err(ToolError::new(
                what,
                "the run is not known",
                "Start it again",
            ));
        };
        // An integrated shell's own tracker, up to date (it may have seen
        // the end already); else the run's.
        let slot = match state.shell {
            Some(_) => conn.shells.get(&conn.tmux, po).await,
            None => None,
        };
        let mut tracker = slot
            .as_ref()
            .map_or_else(|| state.tracker.clone(), |s| s.tracker.clone());
        tracker.typed(state.typed_at);
        let already = state.ended.clone().or_else(|| {
            slot.as_ref()
                .and_then(|s| s.last.clone())
                .filter(|last| last.end > state.typed_at)
                .map(|f| Ended {
                    output_start: f.output_start,
                    output_end: f.output_end,
                    end: f.end,
                    status: f.status,
                    pipestatus: f.pipestatus,
                })
        });
        let mut started_at: Option<u64> = None;
        enum End {
            Finished(Ended),
            Abandoned,
            Interrupted,
            Input(Evidence),
            Exited(PaneExit),
            Gone,
            Timeout,
        }
        let outcome = match already {
            _ if state.abandoned == Some(crate::runs::INTERRUPTED) => {
                Waited::Done(End::Interrupted)
            }
            _ if state.abandoned.is_some() => Waited::Done(End::Abandoned),
            Some(ended) => Waited::Done(End::Finished(ended)),
            None => {
                let mut stream = po.stream_from(tracker.resume_offset());
                // A start already read (by an earlier call, or when the
                // shell was brought up to date just now).
                let begun = tracker
                    .command_start()
                    .filter(|at| tracker.phase() == ShellPhase::Running && *at > state.typed_at);
                started_at = started_at.or(begun);
                let running = std::sync::atomic::AtomicBool::new(begun.is_some());
                let scan = async {
                    loop {
                        match stream.next().await {
                            Some(PaneChunk::Output { offset, data }) => {
                                for event in tracker.feed(offset, &data) {
                                    match event {
                                        ShellEvent::Started(at) if at > state.typed_at => {
                                            started_at = Some(at);
                                            running
                                                .store(true, std::sync::atomic::Ordering::Relaxed);
                                        }
                                        ShellEvent::Finished(f) if f.end > state.typed_at => {
                                            return End::Finished(Ended {
                                                output_start: f.output_start,
                                                output_end: f.output_end,
                                                end: f.end,
                                                status: f.status,
                                                pipestatus: f.pipestatus,
                                            });
                                        }
                                        _ => {}
                                    }
                                }
                            }
                            // What was lost is reported from the log's
                            // losses (the excerpt), not counted here.
                            Some(PaneChunk::Missed { to, .. }) => tracker.skip_to(to),
                            Some(_) => {}
                            None => return End::Gone,
                        }
                    }
                };
                let exit = po.wait_exit(limit);
                let input = waiting_for_input(conn, po, state.pane, &running, limit);
                let both = async {
                    tokio::select! {
                        biased;
                        e = scan => e,
                        evidence = input => End::Input(evidence),
                        x = exit => match x {
                            Ok(exit) if exit.gone => End::Gone,
                            Ok(exit) => End::Exited(exit),
                            Err(WaitError::Timeout { .. }) => End::Timeout,
                            Err(_) => End::Gone,
                        },
                    }
                };
                cc.wait(&what, limit, async {
                    tokio::time::timeout(limit, both)
                        .await
                        .unwrap_or(End::Timeout)
                })
                .await
            }
        };
        let elapsed_ms = ms(state.started.elapsed());
        let mut result = RunResult {
            pane: state.pane.to_string(),
            run_id: run_id.to_owned(),
            status: RunStatus::Running,
            exit_status: None,
            pipestatus: None,
            mode: if state.shell.is_some() {
                RunMode::Integrated
            } else {
                RunMode::Wrapped
            },
            cwd: None,
            output: None,
            highlights: Vec::new(),
            losses: Vec::new(),
            output_text: String::new(),
            output_bytes: 0,
            omitted: None,
            missed_bytes: 0,
            output_cursor: started_at,
            cursor: po.end_offset(),
            elapsed_ms,
            prompt: None,
            echo: None,
            sharing: None,
        };
        let end = match outcome {
            Waited::Cancelled => End::Timeout,
            Waited::Done(e) => e,
        };
        let (finished, out_end) = match &end {
            End::Finished(f) => {
                if state.shell.is_none() {
                    // The wrapped form has no mark for the next prompt: the
                    // next run waits for it (in the output after this end)
                    // only if it comes before the prompt does.
                    conn.shells.wrapped_ended(state.pane, f.end);
                } else {
                    result.pipestatus = Some(f.pipestatus.clone());
                    result.cwd = tracker.directory().map(|d| d.display().to_string());
                }
                // The command's region: recorded from the shell's marks
                // (brought up to date here), or by run for the wrapped form.
                if state.shell.is_some() {
                    let _ = conn.shells.get(&conn.tmux, po).await;
                    conn.shells
                        .regions
                        .annotate(state.pane, f.end, &state.command, elapsed_ms);
                } else {
                    conn.shells.regions.record(
                        state.pane,
                        Region {
                            id: 0,
                            command: Some(state.command.clone()),
                            input: None,
                            cwd: None,
                            output_start: f.output_start,
                            output_end: f.output_end,
                            end: f.end,
                            status: f.status,
                            pipestatus: None,
                            duration_ms: Some(elapsed_ms),
                            integrated: false,
                            lines: None,
                            recovered: false,
                        },
                    );
                }
                result.status = RunStatus::Completed;
                result.exit_status = f.status;
                result.output_cursor = Some(f.output_start);
                result.cursor = f.end;
                // Waits without a cursor start after what was just reported.
                conn.note_input(state.pane, f.end);
                (true, Some(f.output_end))
            }
            // The terminal is read by the pane's first process itself, now
            // another program than when the command was typed: the shell
            // ran `exec`, and its end can never be marked.
            End::Input(evidence)
                if state
                    .program
                    .as_ref()
                    .is_some_and(|p| evidence.foreground == Some(p.pid) && p.replaced()) =>
            {
                conn.shells.forget(&conn.tmux, state.pane).await;
                result.status = RunStatus::ShellReplaced;
                (true, None)
            }
            // The wrapped form's own shell reads the terminal again, at its
            // prompt: the command was interrupted and the shell dropped the
            // end marker with the rest of the line.
            End::Input(evidence)
                if state.shell.is_none()
                    && state
                        .program
                        .as_ref()
                        .is_some_and(|p| evidence.foreground == Some(p.pid))
                    && conn
                        .shells
                        .at_prompt(po, started_at.unwrap_or(state.typed_at)) =>
            {
                result.status = RunStatus::Interrupted;
                (true, None)
            }
            End::Input(evidence) => {
                result.status = RunStatus::WaitingForInput;
                result.echo = evidence.echo;
                (false, None)
            }
            End::Exited(exit) => {
                result.status = RunStatus::PaneExited;
                result.exit_status = exit.status;
                (true, None)
            }
            End::Gone => {
                result.status = RunStatus::PaneGone;
                (true, None)
            }
            End::Abandoned => {
                result.status = RunStatus::Abandoned;
                (true, None)
            }
            End::Interrupted => {
                result.status = RunStatus::Interrupted;
                (true, None)
            }
            End::Timeout => (false, None),
        };
        if let Some(start) = result.output_cursor {
            let stop = out_end.unwrap_or_else(|| po.end_offset());
            let e = self.excerpt(po, start, stop, budget);
            result.output = e.structured();
            result.output_text = e.text;
            result.output_bytes = e.raw_bytes;
            result.omitted = e.omitted;
            result.missed_bytes = e.missed_bytes;
            result.highlights = e.highlights;
            result.losses = e.losses;
        }
        if result.status == RunStatus::WaitingForInput {
            result.prompt = result
                .output_text
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .map(str::to_owned);
        }
        {
            let mut runs = conn.runs.lock().unwrap_or_else(|e| e.into_inner());
            if finished {
                runs.remove(run_id);
            } else if let Some(s) = runs.get_mut(run_id) {
                s.tracker = tracker;
            }
        }
        if cc.is_cancelled() {
            return Err(ToolError::new(
                what,
                "the client cancelled the request",
                format!("The command keeps running; resume with run_id={run_id:?}"),
            ));
        }
        Ok(Json(result))
    }
}

/// Whether the line typed now is read by fish: tmux names fish as the
/// pane's program, or (a local pane) its first process is fish, or is the
/// default shell's `-c` launcher of a command line that starts fish (tmux
/// starts a command through the default shell, and under load it may not
/// have run fish yet: the line typed is read by fish all the same).
fn read_by_fish(row: &tmux_control::command::PaneInfo, remote: bool) -> bool {
    let fish = |word: &[u8]| {
        std::str::from_utf8(word)
            .ok()
            .and_then(ShellKind::of)
            .is_some_and(|k| k == ShellKind::Fish)
    };
    if fish(row.current_command.as_bytes()) {
        return true;
    }
    let Some(cmdline) = row.pid.filter(|_| !remote).and_then(crate::probe::cmdline) else {
        return false;
    };
    let mut args = cmdline.split(|&b| b == 0);
    match (args.next(), args.next(), args.next()) {
        (Some(first), _, _) if fish(first) => true,
        (Some(_), Some(b"-c"), Some(line)) => line
            .split(u8::is_ascii_whitespace)
            .find(|w| !w.is_empty())
            .is_some_and(fish),
        _ => false,
    }
}

/// The refusal of a run at a continuation prompt.
fn continuation(what: String) -> ToolError {
    ToolError::new(
        what,
        "the shell is waiting for the rest of a command line (a continuation prompt: an open quote, a trailing backslash or an unfinished construct in what was typed before): the command would become part of it",
        "Finish that line with send_text, or drop it with send_keys keys=[\"C-c\"], then run again; force=true types the command anyway",
    )
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
                .any(|e| matches!(e, tmux_control::ShellEvent::Finished(_)));
        }
        self.seen
    }
}
