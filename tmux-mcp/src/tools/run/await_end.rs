//! Waiting for a run to end, and every way a run can end: its end mark
//! (completed), given up or found interrupted before this call, the
//! terminal read (waiting for input; interrupted, or its shell replaced,
//! when the shell itself reads it), the pane exited or gone, or the time
//! limit (still running).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tmux_control::shell::{ShellEvent, ShellPhase, ShellTracker};
use tmux_control::{PaneChunk, PaneExit, PaneOutput, PaneStream, WaitError};

use super::input::waiting_for_input;
use super::{RunMode, RunResult, RunStatus, ended, ms};
use crate::mcp::server::TmuxMcp;
use crate::mcp::wait::{CallCtx, Waited};
use crate::reply::{Json, ToolError};
use crate::terminal::backend::Conn;
use crate::terminal::probe::Evidence;
use crate::terminal::region::TypedBy;
use crate::terminal::regions::Region;
use crate::terminal::runs::{Ended, RunState};
use crate::terminal::shell::ShellSlot;

/// How the wait for a run ended.
enum End {
    /// Its end mark came: how it ended.
    Finished(Ended),
    /// It was given up before (respawn, or a later run with force=true).
    Abandoned,
    /// A wrapped run found interrupted before.
    Interrupted,
    /// The terminal is read, with the kernel's evidence.
    Input(Evidence),
    /// The pane's program exited.
    Exited(PaneExit),
    /// The pane is gone.
    Gone,
    /// The time limit passed, or the client cancelled the call.
    Timeout,
}

impl TmuxMcp {
    /// Waits, within `limit`, for run `run_id` in `po`'s pane to end, and
    /// replies how it ended (so far), with its output within `budget`.
    /// `typed`: this call typed it (and counted itself a waiter then).
    pub(super) async fn wait_run(
        &self,
        conn: &Conn,
        po: &PaneOutput,
        (run_id, typed): (&str, bool),
        limit: Duration,
        budget: usize,
        cc: &CallCtx,
    ) -> Result<Json<RunResult>, ToolError> {
        let what = format!("Waiting for run {run_id}");
        // While this call waits, the run's end is its to report.
        let _waiting = Waiting::on(conn, run_id, typed);
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
        let (end, started_at) = match ended_before(&state, slot.as_ref()) {
            Some(end) => (end, None),
            None => await_end(conn, po, &state, &mut tracker, limit, cc, &what).await,
        };
        let elapsed_ms = ms(state.started.elapsed());
        let mode = if state.shell.is_some() {
            RunMode::Integrated
        } else {
            RunMode::Wrapped
        };
        let mut result = RunResult::new(
            state.pane,
            run_id,
            RunStatus::Running,
            mode,
            po.end_offset(),
            elapsed_ms,
        );
        result.output_cursor = started_at;
        let (finished, out_end) =
            judge(conn, po, &state, &tracker, started_at, &end, &mut result).await;
        if let Some(start) = result.output_cursor {
            let stop = out_end.unwrap_or_else(|| po.end_offset());
            result.set_output(self.excerpt(po, start, stop, budget));
        }
        if result.status == RunStatus::WaitingForInput {
            result.prompt = result
                .output_text
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .map(str::to_owned);
        }
        keep(conn, run_id, finished, tracker, out_end);
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

/// A call that waits for a run, counted in its [`RunState::waiters`] for
/// as long as it lives (dropped also when the call is cancelled).
struct Waiting<'c> {
    conn: &'c Conn,
    run_id: &'c str,
}

impl<'c> Waiting<'c> {
    /// Counts a call that waits for `run_id` (one that `typed` it was
    /// counted when the run was made, so that no end goes untold between).
    fn on(conn: &'c Conn, run_id: &'c str, typed: bool) -> Self {
        if !typed
            && let Some(run) = conn
                .runs
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .get_mut(run_id)
        {
            run.waiters += 1;
        }
        Self { conn, run_id }
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        let mut runs = self.conn.runs.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(run) = runs.get_mut(self.run_id) {
            run.waiters = run.waiters.saturating_sub(1);
        }
    }
}

/// How the run ended before this call waits for it, if it did: given up,
/// found interrupted, or its end seen (by an earlier check, or by its
/// integrated shell `slot` since it was typed).
fn ended_before(state: &RunState, slot: Option<&ShellSlot>) -> Option<End> {
    if state.abandoned == Some(crate::terminal::runs::INTERRUPTED) {
        return Some(End::Interrupted);
    }
    if state.abandoned.is_some() {
        return Some(End::Abandoned);
    }
    state
        .ended
        .clone()
        .or_else(|| {
            slot.and_then(|s| s.last.clone())
                .filter(|last| last.end > state.typed_at)
                .map(ended)
        })
        .map(End::Finished)
}

/// Waits, within `limit`, for the run's end mark (read with `tracker`),
/// the terminal read, or the pane's exit; also where the command's output
/// starts, once its start mark is read.
async fn await_end(
    conn: &Conn,
    po: &PaneOutput,
    state: &RunState,
    tracker: &mut ShellTracker,
    limit: Duration,
    cc: &CallCtx,
    what: &str,
) -> (End, Option<u64>) {
    let mut stream = po.stream_from(tracker.resume_offset());
    // A start already read (by an earlier call, or when the
    // shell was brought up to date just now).
    let begun = tracker
        .command_start()
        .filter(|at| tracker.phase() == ShellPhase::Running && *at > state.typed_at);
    let mut started_at = begun;
    let running = AtomicBool::new(begun.is_some());
    let scan = read_marks(
        &mut stream,
        tracker,
        state.typed_at,
        &mut started_at,
        &running,
    );
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
    let outcome = cc
        .wait(what, limit, async {
            tokio::time::timeout(limit, both)
                .await
                .unwrap_or(End::Timeout)
        })
        .await;
    let end = match outcome {
        Waited::Cancelled => End::Timeout,
        Waited::Done(e) => e,
    };
    (end, started_at)
}

/// Reads the run's marks from `stream` as its output comes, until its end
/// mark (after `typed_at`) or the stream's end (the pane is gone); its
/// start mark sets `started_at` and `running`.
async fn read_marks(
    stream: &mut PaneStream,
    tracker: &mut ShellTracker,
    typed_at: u64,
    started_at: &mut Option<u64>,
    running: &AtomicBool,
) -> End {
    loop {
        match stream.next().await {
            Some(PaneChunk::Output { offset, data }) => {
                for event in tracker.feed(offset, &data) {
                    match event {
                        ShellEvent::Started(at) if at > typed_at => {
                            *started_at = Some(at);
                            running.store(true, Ordering::Relaxed);
                        }
                        ShellEvent::Finished(f) if f.end > typed_at => {
                            return End::Finished(ended(f));
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
}

/// Sets `result` from how the run ended; returns whether the run is over
/// (nothing to resume) and, when it completed, where its output ends.
async fn judge(
    conn: &Conn,
    po: &PaneOutput,
    state: &RunState,
    tracker: &ShellTracker,
    started_at: Option<u64>,
    end: &End,
    result: &mut RunResult,
) -> (bool, Option<u64>) {
    match end {
        End::Finished(f) => {
            completed(conn, po, state, tracker, f, result).await;
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
    }
}

/// Sets `result` from the run's end mark, `f`, and records its region.
async fn completed(
    conn: &Conn,
    po: &PaneOutput,
    state: &RunState,
    tracker: &ShellTracker,
    f: &Ended,
    result: &mut RunResult,
) {
    if state.shell.is_none() {
        // The wrapped form has no mark for the next prompt: the
        // next run waits for it (in the output after this end)
        // only if it comes before the prompt does.
        conn.shells.wrapped_ended(state.pane, f.end);
    } else {
        result.pipestatus = Some(f.pipestatus.clone());
        result.cwd = tracker.directory().map(|d| d.display().to_string());
    }
    record_region(conn, po, state, f, result.elapsed_ms).await;
    result.status = RunStatus::Completed;
    result.exit_status = f.status;
    result.output_cursor = Some(f.output_start);
    result.cursor = f.end;
    // Waits without a cursor start after what was just reported.
    conn.note_input(state.pane, f.end);
}

/// The command's region: recorded from the shell's marks (brought up to
/// date here), or by run for the wrapped form.
async fn record_region(conn: &Conn, po: &PaneOutput, state: &RunState, f: &Ended, elapsed_ms: u64) {
    if state.shell.is_some() {
        let _ = conn.shells.get(&conn.tmux, po).await;
        // The region may be on disk already (the attention watch records
        // regions as their marks arrive): what run adds is written too.
        if let Some(region) =
            conn.shells
                .regions
                .annotate(state.pane, f.end, &state.command, elapsed_ms)
            && let Some(journal) = conn.journals.get(state.pane)
        {
            journal.rewrite_region(&region, po);
        }
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
                typed_by: Some(TypedBy::Actor(crate::mcp::actors::current())),
            },
        );
    }
}

/// Forgets run `run_id` once it is over (`finished`; its output ended at
/// `out_end` when it completed), or keeps the marks read so far
/// (`tracker`) for the call that resumes it.
fn keep(conn: &Conn, run_id: &str, finished: bool, tracker: ShellTracker, out_end: Option<u64>) {
    let mut runs = conn.runs.lock().unwrap_or_else(|e| e.into_inner());
    if finished {
        // Noted before the run goes, under the runs' lock: the attention
        // watch that reads its region finds the one or the other.
        if let (Some(run), Some(end)) = (runs.get(run_id), out_end) {
            conn.collected(run.pane, end);
        }
        runs.remove(run_id);
    } else if let Some(s) = runs.get_mut(run_id) {
        s.tracker = tracker;
    }
}
