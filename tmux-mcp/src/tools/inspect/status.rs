//! What a terminal is doing, with the evidence: at its prompt, running a
//! command, waiting for input, starting, or exited. From the shell's own
//! marks where it has shell integration, the pane's state as tmux pushes
//! it, and the kernel ([`crate::terminal::probe`]). `pane_info` reports it and
//! `wait_for_state` waits for it.

use std::time::Instant;

use rmcp::handler::server::wrapper::Parameters;
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tmux_control::command::PaneInfo;
use tmux_control::shell::{ShellKind, ShellPhase};
use tmux_control::{PaneOutput, PaneState};

use crate::mcp::server::TmuxMcp;
use crate::mcp::wait::{CallCtx, PROGRESS_EVERY, Waited};
use crate::reply::{Json, Summary, ToolError};
use crate::terminal::backend::Conn;
use crate::terminal::probe::probe;
use crate::tools::WaitStatus;
use crate::tools::inspect::{cancelled, ms};

/// What a terminal is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum TerminalState {
    /// The shell has not drawn its first prompt yet (reading its start-up files).
    Starting,
    /// A shell waits at its prompt for a command line.
    AtPrompt,
    /// A command (or the pane's program) is running and not reading the terminal.
    Running,
    /// The foreground program is blocked reading the terminal: it waits for input.
    WaitingForInput,
    /// The pane's program has exited (the pane is kept, dead).
    Exited,
    /// Not enough evidence (a server on another machine, a pane without a shell that tmux-mcp knows).
    Unknown,
}

impl TerminalState {
    fn as_str(self) -> &'static str {
        match self {
            TerminalState::Starting => "starting",
            TerminalState::AtPrompt => "at_prompt",
            TerminalState::Running => "running",
            TerminalState::WaitingForInput => "waiting_for_input",
            TerminalState::Exited => "exited",
            TerminalState::Unknown => "unknown",
        }
    }
}

/// A terminal's state and the evidence for it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct StateFacts {
    /// What the terminal is doing.
    pub state: TerminalState,
    /// The shell with shell integration in the pane (bash, zsh, fish), if any.
    pub shell_integration: Option<String>,
    /// With shell integration: where the shell stands by its own marks (starting, prompt, ready, running).
    pub shell_phase: Option<String>,
    /// With shell integration: the working directory the shell last reported.
    pub shell_cwd: Option<String>,
    /// With shell integration: the exit status of the last command line the shell finished.
    pub last_exit_status: Option<i32>,
    /// Process id of the terminal's foreground process group (from the kernel).
    pub foreground_pid: Option<u32>,
    /// Name of the foreground process (from the kernel).
    pub foreground_command: Option<String>,
    /// Whether the foreground process is blocked reading the terminal (from the kernel).
    pub reading_terminal: Option<bool>,
    /// Whether the terminal echoes typed input while a program reads it; false while a password or other secret is asked for. Null at a shell's prompt (its line editor turns echo off to draw what is typed itself).
    pub echo: Option<bool>,
}

impl StateFacts {
    /// One line for text replies.
    pub(crate) fn describe(&self) -> String {
        let mut s = format!("state {}", self.state.as_str());
        if let Some(shell) = &self.shell_integration {
            s.push_str(&format!(" ({shell} with shell integration)"));
        }
        if let Some(cmd) = &self.foreground_command {
            s.push_str(&format!(", foreground {cmd}"));
        }
        if self.echo == Some(false) {
            s.push_str(", echo off (a secret is being asked for)");
        }
        s
    }
}

/// Works out what `row`'s pane is doing.
pub(crate) async fn facts(conn: &Conn, po: &PaneOutput, row: &PaneInfo) -> StateFacts {
    let shell = conn.shells.get(&conn.tmux, po).await;
    let evidence = match (row.dead, row.pid) {
        (false, Some(pid)) => probe(pid, &row.tty),
        _ => Default::default(),
    };
    let reading = evidence.reading_terminal;
    let shell_in_front = evidence.foreground.is_some() && evidence.foreground == row.pid;
    let state = if row.dead {
        TerminalState::Exited
    } else if let Some(slot) = &shell {
        match slot.phase() {
            ShellPhase::Starting => TerminalState::Starting,
            ShellPhase::Prompt | ShellPhase::Ready => TerminalState::AtPrompt,
            _ if reading == Some(true) => TerminalState::WaitingForInput,
            _ => TerminalState::Running,
        }
    } else {
        let a_shell = PaneState::is_posix_shell(&row.current_command)
            || ShellKind::of(&row.current_command).is_some();
        match reading {
            None => TerminalState::Unknown,
            // A shell in front, reading: its prompt (its own `read` cannot
            // be told apart without shell integration).
            Some(true) if shell_in_front && a_shell => TerminalState::AtPrompt,
            Some(true) => TerminalState::WaitingForInput,
            Some(false) => TerminalState::Running,
        }
    };
    StateFacts {
        state,
        shell_integration: shell.as_ref().map(|s| s.kind.name().to_owned()),
        shell_phase: shell.as_ref().map(|s| {
            match s.phase() {
                ShellPhase::Starting => "starting",
                ShellPhase::Prompt => "prompt",
                ShellPhase::Ready => "ready",
                _ => "running",
            }
            .to_owned()
        }),
        shell_cwd: shell
            .as_ref()
            .and_then(|s| s.tracker.directory())
            .map(|d| d.display().to_string()),
        last_exit_status: shell
            .as_ref()
            .and_then(|s| s.last.as_ref())
            .and_then(|l| l.status),
        foreground_pid: evidence.foreground,
        foreground_command: evidence.command,
        reading_terminal: reading,
        // At a shell's prompt its line editor turns echo off to draw what
        // is typed itself: that is no secret, so echo is not reported.
        echo: evidence.echo.filter(|_| state != TerminalState::AtPrompt),
    }
}

const WAIT_FOR_STATE: &str = "Wait until a terminal is in one of the given states: at_prompt (a shell waits for a command line), running, waiting_for_input (the program blocks reading the terminal: a prompt, read, a password), exited, starting. \
Judged from shell integration marks, tmux, and the kernel (the foreground process, terminal reads, echo off: a secret). \
Returns status matched (the state and its evidence) or timeout (the last state seen), and a cursor.";

/// Arguments of `wait_for_state`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct WaitForStateArgs {
    /// The pane: `%3` or an exact name.
    pub target: String,
    /// The states to wait for (any of them).
    pub states: Vec<TerminalState>,
    /// Default 30 s; capped at the server's maximum (60).
    pub timeout_secs: Option<f64>,
}

/// Result of `wait_for_state`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct WaitForStateResult {
    /// The pane watched.
    pub pane: String,
    /// matched or timeout.
    pub status: WaitStatus,
    /// The state reached (or, on timeout, the last one seen) and its evidence.
    pub facts: StateFacts,
    /// Current end of the pane's output: where a later wait or read should start.
    pub cursor: u64,
    /// How long the wait took, in milliseconds.
    pub waited_ms: u64,
}

impl Summary for WaitForStateResult {
    fn summary(&self) -> String {
        match self.status {
            WaitStatus::Matched => format!(
                "Pane {} reached {} after {} ms. cursor={}",
                self.pane,
                self.facts.describe(),
                self.waited_ms,
                self.cursor
            ),
            _ => format!(
                "Pane {} did not reach the asked state within {} ms; last seen: {}. cursor={}",
                self.pane,
                self.waited_ms,
                self.facts.describe(),
                self.cursor
            ),
        }
    }
}

#[tool_router(router = status_router, vis = "pub(super)")]
impl TmuxMcp {
    #[tool(description = WAIT_FOR_STATE, annotations(title = "Wait for state", read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false))]
    pub(crate) async fn wait_for_state(
        &self,
        Parameters(args): Parameters<WaitForStateArgs>,
        cc: CallCtx,
    ) -> Result<Json<WaitForStateResult>, ToolError> {
        let limit = self.wait_limit("wait_for_state", args.timeout_secs)?;
        let conn = self.conn().await?;
        let r = conn.resolve(&args.target).await?;
        let what = format!("Waiting for pane {} to reach a state", r.pane);
        if args.states.is_empty() {
            return Err(ToolError::new(
                what,
                "states is empty",
                "Give one or more of at_prompt, running, waiting_for_input, exited, starting",
            ));
        }
        let po = conn.follow(r.pane).await?;
        let started = Instant::now();
        let mut last = None;
        let watch = async {
            loop {
                // Subscribed before looking, so that a change just after the
                // look still wakes this wait.
                let mut more = po.stream_from(po.end_offset());
                let mut changes = po.state_changes();
                let row = conn.pane_row(r.pane).await?;
                let now = facts(&conn, &po, &row).await;
                let reached = args.states.contains(&now.state);
                last = Some(now);
                if reached {
                    return Ok::<bool, ToolError>(true);
                }
                tokio::select! {
                    _ = more.next() => {}
                    _ = changes.next() => {}
                    // A true timer: the progress heartbeat; a program that
                    // starts reading the terminal prints nothing to wake on.
                    () = tokio::time::sleep(PROGRESS_EVERY) => {}
                }
            }
        };
        let outcome = cc
            .wait(&what, limit, async {
                tokio::time::timeout(limit, watch)
                    .await
                    .unwrap_or(Ok(false))
            })
            .await;
        let matched = match outcome {
            Waited::Cancelled => return Err(cancelled(&what)),
            Waited::Done(done) => done?,
        };
        let facts = match last {
            Some(f) => f,
            None => {
                let row = conn.pane_row(r.pane).await?;
                facts(&conn, &po, &row).await
            }
        };
        Ok(Json(WaitForStateResult {
            pane: r.pane.to_string(),
            status: if matched {
                WaitStatus::Matched
            } else {
                WaitStatus::Timeout
            },
            facts,
            cursor: po.end_offset(),
            waited_ms: ms(started.elapsed()),
        }))
    }
}
