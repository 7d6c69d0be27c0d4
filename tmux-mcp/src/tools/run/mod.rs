//! The `run` tool (toolset `execute`): type a shell command, wait for it to
//! finish, and return its output and exact exit status.
//!
//! In a shell with shell integration (docs/tools.md) the command is typed
//! as it is and its end, status and pipeline statuses come from the
//! shell's own marks; anywhere else it is typed in the wrapped form of
//! [`crate::terminal::markers`]. Both forms are read by one
//! `tmux_control::shell::ShellTracker`.
//!
//! This file holds the tool and the steps of a run; each step is a file:
//! `preflight` the checks, refusals and waits before typing (the pane's
//! program started, a run still in progress, integration loaded, text or
//! a continuation prompt on the input line, a full-screen program or a
//! non-shell, the prompt drawn); `typing` typing the command and recording
//! the run; `await_end` waiting for its end, with every way a run can end.
//! `reply` holds the arguments, the reply (built in one place,
//! `RunResult::new`) and its text; `input` whether a running command
//! waits for input.

use std::time::Duration;

use rmcp::handler::server::wrapper::Parameters;
use rmcp::{tool, tool_router};
use tmux_control::PaneOutput;
use tmux_control::shell::FinishedCommand;

mod await_end;
mod input;
mod preflight;
mod reply;
mod typing;

pub(crate) use reply::{RunArgs, RunMode, RunResult, RunStatus};

use crate::mcp::server::TmuxMcp;
use crate::mcp::wait::CallCtx;
use crate::reply::{Json, ToolError};
use crate::terminal::actors::Sharing;
use crate::terminal::backend::Conn;
use crate::terminal::runs::Ended;
use crate::tools::{Guarded, refuse_nul};
use preflight::{Prompt, STARTING};

/// What `start_run` did.
enum Started {
    /// Typed the command: its run id, the pane, and who else uses it.
    Typed(String, PaneOutput, Option<Sharing>),
    /// Typed nothing: the integrated shell has not drawn its first prompt.
    NotReady(Box<RunResult>),
}

// ---------------------------------------------------------------- run

const RUN: &str = "Run one shell command in a pane whose shell waits at its prompt, wait for it to end, and return its output and exact exit_status (and pipestatus). cd and variables persist; multi-line commands work. For interactive programs use send_text. \
In bash, zsh or fish with shell integration (mode=integrated: panes from create_terminal, or integrate=true) the command is typed as given; other shells get it between invisible markers (mode=wrapped). output is only the command's own; a long one is in the text only (failure-like lines, head, tail, cursors for read_output) and output is null. \
status=running: timeout_secs passed; call run with run_id to keep waiting, or send_keys [\"C-c\"] to interrupt. status=waiting_for_input: it reads the terminal (echo=false: a secret); answer with send_text, then resume with run_id. \
A refusal says why and what to do. human_typing: a person is typing there; nothing was typed, retry later.";

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
                    .start_run(
                        &conn,
                        target,
                        command,
                        (args.force, args.integrate, args.over_person),
                        limit,
                    )
                    .await?
                {
                    Started::Typed(run_id, po, sharing) => {
                        let mut reply = self
                            .wait_run(&conn, &po, (&run_id, true), limit, budget, &cc)
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
                self.wait_run(&conn, &po, (run_id, false), limit, budget, &cc)
                    .await
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
    /// Starts a run of `command` in `target`: the checks and waits before
    /// typing ([`preflight`]), then the typing ([`typing`]).
    async fn start_run(
        &self,
        conn: &Conn,
        target: &str,
        command: &str,
        (force, integrate, over_person): (bool, Option<bool>, bool),
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
            .take_turn(r.pane, crate::mcp::actors::current())
            .await;
        let po = conn.follow(r.pane).await?;
        let busy = self.busy(conn, &po, r.pane).await;
        conn.shells
            .await_announcement(&conn.tmux, &po, STARTING.min(limit))
            .await;
        // Read after the waits above: from before them, tmux's name of the
        // foreground program can still be the command just interrupted.
        let row = preflight::started_row(conn, &po, r.pane).await?;
        let mut shell = conn.shells.get(&conn.tmux, &po).await;
        if self.integrates(integrate, &row)
            && busy.is_none()
            && shell.is_none()
            && !row.alternate_on
        {
            shell = preflight::integrate(conn, &po, &row, limit, &what).await?;
        }
        if let Some(id) = busy {
            preflight::take_over(conn, r.pane, &id, force, shell.is_some(), &what)?;
        }
        let shell = preflight::settle_running(conn, &po, shell, force).await;
        preflight::check_pane(conn, &po, r.pane, &row, shell.as_ref(), force, &what)?;
        if let Prompt::NotDrawn(since) =
            preflight::await_prompt(conn, &po, shell.as_ref(), limit).await
        {
            let mut result = RunResult::new(
                r.pane,
                "",
                RunStatus::ShellStarting,
                RunMode::Integrated,
                po.end_offset(),
                ms(since.elapsed()),
            );
            result.sharing = turn.sharing();
            return Ok(Started::NotReady(Box::new(result)));
        }
        // The last check before typing: never over a person.
        let checked = self
            .check_people(conn, &po, (r.pane, row.window), &what, over_person, limit)
            .await?;
        match typing::type_command(conn, r.pane, po, &row, shell.is_some(), command, turn).await? {
            Started::Typed(run_id, po, sharing) => {
                let sharing = Sharing::with_people(
                    sharing,
                    checked.watching,
                    checked.waited_ms,
                    checked.typed_over,
                );
                Ok(Started::Typed(run_id, po, sharing))
            }
            other => Ok(other),
        }
    }
}

/// A run's end as its shell's marks tell it.
fn ended(f: FinishedCommand) -> Ended {
    Ended {
        output_start: f.output_start,
        output_end: f.output_end,
        end: f.end,
        status: f.status,
        pipestatus: f.pipestatus,
    }
}
