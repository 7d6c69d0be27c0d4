//! The `run` tool (toolset `execute`): type a shell command wrapped in
//! OSC 133 markers, wait for it to finish, and return its output and exact
//! exit status (see [`crate::markers`] for the markers).

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use rmcp::handler::server::wrapper::Parameters;
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tmux_control::{PaneChunk, PaneExit, PaneOutput, PaneState, WaitError};

use crate::backend::Conn;
use crate::markers::{Finished, RunState, Scanner, nonce, wrapper_line};
use crate::reply::{Json, Summary, ToolError};
use crate::server::TmuxMcp;
use crate::shape::{Highlight, LossReport, describe_losses};
use crate::tools::{Guarded, Omitted, check_typable, paste, press_enter, type_text};

/// The longest `run` waits for a just-started pane's program to show as
/// its foreground command (a true timer: a deadline).
const STARTING: Duration = Duration::from_secs(3);

use crate::wait::{CallCtx, Waited};

// ---------------------------------------------------------------- run

const RUN: &str = "Run one shell command in a terminal whose shell is waiting at its prompt, wait for it to finish, and return its output and exact exit status. \
The command is typed into the pane (a human watching sees it) between two invisible markers, so the result holds exactly the command's own output: no prompt, no echo. It runs in that shell, so cd and variables persist. Needs a POSIX shell (bash, zsh, sh, dash, ksh); multi-line commands work. \
Bounded by timeout_secs (default 30, capped by the server, at most 60 unless configured), with progress notifications. If the command is still running then, the reply has status=running, the output so far and a run_id: call run again with run_id (no command) to keep waiting, or send_keys [\"C-c\"] to interrupt it. Interactive prompts (passwords, y/n) also show up as running: answer with send_text, then resume. \
Returns status (completed, running, pane_exited if the shell itself exited, pane_gone), exit_status, output (plain text, secrets masked; the whole reply stays within max_bytes, 8 KB by default: a long output comes in the text content only, first the lines that look like failures, then its first and last lines, then the cursors to read the rest with read_output; the structured output is then null, with highlights and omitted), losses when output is missing (evicted from tmux-mcp's log, or discarded by tmux), and cursors. \
Refuses a pane in copy mode, a pane running a full-screen program or something other than a shell (force=true skips the last two checks), and a pane with a run still in progress.";

/// Arguments of `run`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunArgs {
    /// The pane whose shell runs the command: an id like `%3` or an exact name. Required with command.
    pub target: Option<String>,
    /// The shell command line to run. Give either command or run_id.
    pub command: Option<String>,
    /// Resume waiting for an earlier run that replied status=running.
    pub run_id: Option<String>,
    /// Wait at most this many seconds (default 30, capped by the server).
    pub timeout_secs: Option<f64>,
    /// Size budget of the whole reply in bytes (default: the server's --max-reply-bytes, 8192; at least 2048).
    pub max_bytes: Option<usize>,
    /// Skip the checks that the pane runs a POSIX shell and no full-screen program.
    #[serde(default)]
    pub force: bool,
}

/// How a run ended (so far).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// The command finished; exit_status is its `$?`.
    Completed,
    /// Still running when the time limit passed: resume with run_id.
    Running,
    /// The shell itself exited (for example the command was `exit`); exit_status is the shell's.
    PaneExited,
    /// The pane was closed.
    PaneGone,
}

/// Result of `run`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct RunResult {
    /// The pane.
    pub pane: String,
    /// Identifies this run: pass it back to keep waiting while status is running.
    pub run_id: String,
    /// completed, running, pane_exited or pane_gone.
    pub status: RunStatus,
    /// The command's exit status when completed (the shell's when pane_exited).
    pub exit_status: Option<i32>,
    /// The command's output as plain text (secrets masked; when running, the output so far) when it is small enough to be sent in both forms of the reply; null when it is larger: the text content then carries it (whole, or its failure-like lines, head and tail and how to read the rest), highlights lists its failure-like lines and omitted what was left out.
    pub output: Option<String>,
    /// Lines of a large output that look like failures or test summaries, with their cursors (only when output is null).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub highlights: Vec<Highlight>,
    /// Output missing from the command's output, and why (evicted from the log, or discarded by tmux); only when some is.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub losses: Vec<LossReport>,
    /// The output as the text content shows it.
    #[serde(skip)]
    pub output_text: String,
    /// Bytes of raw output the command produced (so far).
    pub output_bytes: u64,
    /// A middle part of the output left out of `output` because of the size limit.
    pub omitted: Option<Omitted>,
    /// Bytes at the start of the output the pane log no longer holds.
    pub missed_bytes: u64,
    /// Cursor of the first byte of the command's output, for read_output.
    pub output_cursor: Option<u64>,
    /// Cursor after the command (completed) or of the latest output: where the next wait should start.
    pub cursor: u64,
    /// Time since the command was typed, in milliseconds.
    pub elapsed_ms: u64,
}

impl Summary for RunResult {
    fn summary(&self) -> String {
        let mut s = match self.status {
            RunStatus::Completed => format!(
                "Command finished in pane {} with exit status {} ({} ms).",
                self.pane,
                self.exit_status
                    .map_or_else(|| "?".to_owned(), |c| c.to_string()),
                self.elapsed_ms
            ),
            RunStatus::Running => format!(
                "Command still running in pane {} after {} ms. To keep waiting call run with run_id={:?}; to interrupt use send_keys keys=[\"C-c\"]; if it waits for input, answer with send_text then resume.",
                self.pane, self.elapsed_ms, self.run_id
            ),
            RunStatus::PaneExited => format!(
                "The shell in pane {} exited (status {}) while running the command.",
                self.pane,
                self.exit_status
                    .map_or_else(|| "?".to_owned(), |c| c.to_string())
            ),
            RunStatus::PaneGone => {
                format!("Pane {} was closed while running the command.", self.pane)
            }
        };
        if let Some(lost) = describe_losses(&self.losses) {
            s.push(' ');
            s.push_str(&lost);
        }
        let _ = write!(s, " cursor={}", self.cursor);
        if self.output_text.is_empty() {
            s.push_str("\n(no output)");
        } else {
            s.push_str("\nOutput:\n");
            s.push_str(&self.output_text);
        }
        s
    }
}

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
        let limit = self.wait_limit(args.timeout_secs);
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
                let (run_id, po) = self.start_run(&conn, target, command, args.force).await?;
                self.wait_run(&conn, &po, &run_id, limit, budget, &cc).await
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
        force: bool,
    ) -> Result<(String, PaneOutput), ToolError> {
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
        let busy = {
            let runs = conn.runs.lock().unwrap_or_else(|e| e.into_inner());
            runs.iter()
                .find(|(_, s)| s.pane == r.pane && !s.finished)
                .map(|(id, _)| id.clone())
        };
        if let Some(id) = busy {
            return Err(ToolError::new(
                what,
                format!("run {id:?} is still in progress in this pane"),
                format!(
                    "Call run with run_id={id:?} to wait for it, or interrupt it with send_keys keys=[\"C-c\"] and then resume it to collect its end"
                ),
            ));
        }
        check_typable(&row, false, &what)?;
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
        if !force && !PaneState::is_posix_shell(&row.current_command) {
            return Err(ToolError::new(
                what,
                format!(
                    "the pane's foreground program is {:?}, not a POSIX shell (bash, zsh, sh, dash, ksh)",
                    row.current_command
                ),
                "Use send_text and wait_for_output to talk to this program; force=true types the command anyway",
            ));
        }
        let run_id = nonce();
        let scanner = Scanner::new(&run_id, po.end_offset())
            .map_err(|e| ToolError::new(what.clone(), e.to_string(), "Try again"))?;
        let line = wrapper_line(command, &run_id);
        let from = po.end_offset();
        conn.note_input(r.pane, from);
        {
            let mut runs = conn.runs.lock().unwrap_or_else(|e| e.into_inner());
            runs.retain(|_, s| !s.finished && s.started.elapsed() < Duration::from_secs(24 * 3600));
            runs.insert(
                run_id.clone(),
                RunState {
                    pane: r.pane,
                    scanner,
                    scan_from: from,
                    started: Instant::now(),
                    finished: false,
                },
            );
        }
        // Text with control characters (newlines, tabs) goes in as one
        // bracketed paste, so that the shell's line editor inserts it
        // instead of acting on it (a tab would complete, a newline run).
        let typed = if line.chars().any(|c| c < ' ' || c == '\x7f') {
            paste(conn, r.pane, &line, true).await
        } else {
            type_text(conn, r.pane, &line).await.map(drop)
        };
        if let Err(e) = typed {
            conn.runs
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .remove(&run_id);
            return Err(e);
        }
        press_enter(conn, r.pane).await?;
        Ok((run_id, po))
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
        let mut scanner = state.scanner;
        scanner.restart_at(state.scan_from);
        let mut stream = po.stream_from(state.scan_from);
        enum End {
            Finished(Finished),
            Exited(PaneExit),
            Gone,
            Timeout,
        }
        let outcome = {
            let scan = async {
                loop {
                    match stream.next().await {
                        Some(PaneChunk::Output { offset, data }) => {
                            if let Some(f) = scanner.feed(offset, &data) {
                                return End::Finished(f);
                            }
                        }
                        // What was lost is reported from the log's
                        // losses (the excerpt), not counted here.
                        Some(PaneChunk::Missed { to, .. }) => scanner.restart_at(to),
                        Some(_) => {}
                        None => return End::Gone,
                    }
                }
            };
            // Right after a respawn the followed state can still say dead.
            let stale =
                po.state().dead && conn.pane_row(state.pane).await.is_ok_and(|row| !row.dead);
            let exit = async {
                if stale {
                    std::future::pending().await
                } else {
                    po.wait_exit(limit).await
                }
            };
            let both = async {
                tokio::select! {
                    biased;
                    e = scan => e,
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
        };
        let elapsed_ms = ms(state.started.elapsed());
        let mut result = RunResult {
            pane: state.pane.to_string(),
            run_id: run_id.to_owned(),
            status: RunStatus::Running,
            exit_status: None,
            output: None,
            highlights: Vec::new(),
            losses: Vec::new(),
            output_text: String::new(),
            output_bytes: 0,
            omitted: None,
            missed_bytes: 0,
            output_cursor: scanner.output_start(),
            cursor: po.end_offset(),
            elapsed_ms,
        };
        let end = match outcome {
            Waited::Cancelled => End::Timeout,
            Waited::Done(e) => e,
        };
        let (finished, out_end) = match &end {
            End::Finished(f) => {
                // Let the shell print its next prompt, so that whatever is
                // typed next does not race with it.
                let _ = po
                    .wait_idle(Duration::from_millis(30), Duration::from_millis(300))
                    .await;
                result.status = RunStatus::Completed;
                result.exit_status = Some(f.status);
                result.output_cursor = Some(f.output_start);
                result.cursor = f.marker_end;
                // Waits without a cursor start after what was just reported.
                conn.note_input(state.pane, f.marker_end);
                (true, Some(f.output_end))
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
        {
            let mut runs = conn.runs.lock().unwrap_or_else(|e| e.into_inner());
            if finished {
                runs.remove(run_id);
            } else if let Some(s) = runs.get_mut(run_id) {
                s.scan_from = scanner.resume_offset();
                s.scanner = scanner;
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
