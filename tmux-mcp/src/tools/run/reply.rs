//! The arguments and the reply of `run` (every reply built by
//! [`RunResult::new`]), and the reply's text form.

use std::fmt::Write as _;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tmux_control::PaneId;

use crate::reply::Summary;
use crate::terminal::actors::Sharing;
use crate::text::shape::{Highlight, LossReport, describe_losses};
use crate::tools::{Excerpt, Omitted};

/// Arguments of `run`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RunArgs {
    /// The pane whose shell runs it: `%3` or an exact name. Required with command.
    pub target: Option<String>,
    /// The command line. Give command or run_id.
    pub command: Option<String>,
    /// Resume waiting for a run that replied status=running.
    pub run_id: Option<String>,
    /// Default 30 s; capped at the server's --max-wait-secs (60).
    #[schemars(range(min = 0))]
    pub timeout_secs: Option<f64>,
    /// Reply size budget in bytes (default --max-reply-bytes, 8192; at least 2048).
    pub max_bytes: Option<usize>,
    /// Type even where a check refuses: a non-shell, a full-screen program, pending input, a busy shell, a run in progress (it is then abandoned).
    #[serde(default)]
    pub force: bool,
    /// Type even while a person types there or has a line pending (joining it). Only if they asked; audited.
    #[serde(default)]
    pub over_person: bool,
    /// First load shell integration into a bash, zsh or fish that lacks it (the loading line stays on screen). Default: the server's --integrate-existing (off); false never loads it.
    #[serde(default)]
    pub integrate: Option<bool>,
}

/// How a run ended (so far).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum RunStatus {
    /// The command finished; exit_status is its `$?`.
    Completed,
    /// Still running when the time limit passed: resume with run_id.
    Running,
    /// The command is blocked reading the terminal (a prompt, `read`, a password): answer with send_text, then resume with run_id.
    WaitingForInput,
    /// The integrated shell had not drawn its first prompt within the time limit (it may still be reading slow start-up files); nothing was typed.
    ShellStarting,
    /// The shell itself exited (for example the command was `exit`); exit_status is the shell's.
    PaneExited,
    /// The pane was closed.
    PaneGone,
    /// Given up without an end: the pane was respawned, or a later run with force=true took it over. No exit status.
    Abandoned,
    /// The wrapped form's shell is back at its prompt without the end marker: the command was interrupted (C-c) and the shell dropped the rest of the line. Exit status unknown (130 after C-c). The pane takes run again.
    Interrupted,
    /// The shell the command was typed into was replaced by another program (the command ran `exec`, for example `exec bash`), which now reads the terminal: no end mark can come, no exit status. The pane takes run again (in the new shell).
    ShellReplaced,
}

/// How `run` typed the command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum RunMode {
    /// As given, into a shell with shell integration.
    Integrated,
    /// Between two markers, into a shell without shell integration.
    Wrapped,
}

/// Result of `run`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct RunResult {
    /// The pane.
    pub pane: String,
    /// Identifies this run: pass it back to keep waiting while status is running.
    pub run_id: String,
    /// completed, running, waiting_for_input, shell_starting, pane_exited, pane_gone, abandoned, interrupted or shell_replaced.
    pub status: RunStatus,
    /// The command's exit status when completed (the shell's when pane_exited).
    pub exit_status: Option<i32>,
    /// With shell integration: the exit status of each command of the pipeline (bash PIPESTATUS, zsh and fish pipestatus).
    pub pipestatus: Option<Vec<i32>>,
    /// How the command was typed: integrated (as given, into a shell with shell integration) or wrapped (between markers).
    pub mode: RunMode,
    /// With shell integration: the shell's working directory after the command.
    pub cwd: Option<String>,
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
    /// When waiting_for_input: the last line the program printed (its prompt, secrets masked).
    pub prompt: Option<String>,
    /// When waiting_for_input: whether the terminal echoes what is typed (false: a password or other secret is being asked for).
    pub echo: Option<bool>,
    /// When this call typed the command: other actors (MCP clients) using this pane, if any (who typed into it last, and whom this call waited for).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sharing: Option<Sharing>,
}

impl RunResult {
    /// The reply of run `run_id` (empty: none was started) in `pane`, typed
    /// in `mode`, with `status`, the cursor of the latest output and the
    /// time since it was typed (or since the call began to wait): no exit
    /// status, output, prompt nor sharing yet. Every reply of `run` is
    /// built here; each way a run ends then sets what it knows.
    pub(super) fn new(
        pane: PaneId,
        run_id: &str,
        status: RunStatus,
        mode: RunMode,
        cursor: u64,
        elapsed_ms: u64,
    ) -> Self {
        Self {
            pane: pane.to_string(),
            run_id: run_id.to_owned(),
            status,
            exit_status: None,
            pipestatus: None,
            mode,
            cwd: None,
            output: None,
            highlights: Vec::new(),
            losses: Vec::new(),
            output_text: String::new(),
            output_bytes: 0,
            omitted: None,
            missed_bytes: 0,
            output_cursor: None,
            cursor,
            elapsed_ms,
            prompt: None,
            echo: None,
            sharing: None,
        }
    }

    /// Sets the output fields from `e`, the excerpt of the command's
    /// output.
    pub(super) fn set_output(&mut self, e: Excerpt) {
        self.output = e.structured();
        self.output_text = e.text;
        self.output_bytes = e.raw_bytes;
        self.omitted = e.omitted;
        self.missed_bytes = e.missed_bytes;
        self.highlights = e.highlights;
        self.losses = e.losses;
    }
}

impl Summary for RunResult {
    fn summary(&self) -> String {
        let mut s = match self.status {
            RunStatus::Completed => format!(
                "Command finished in pane {} with exit status {}{} ({} ms, {}).",
                self.pane,
                self.exit_status
                    .map_or_else(|| "?".to_owned(), |c| c.to_string()),
                match &self.pipestatus {
                    Some(p) if p.len() > 1 => format!(
                        " (pipeline: {})",
                        p.iter().map(i32::to_string).collect::<Vec<_>>().join(" ")
                    ),
                    _ => String::new(),
                },
                self.elapsed_ms,
                match self.mode {
                    RunMode::Integrated => "shell integration",
                    RunMode::Wrapped => "wrapped",
                }
            ),
            RunStatus::WaitingForInput => format!(
                "Command in pane {} is waiting for input after {} ms{}: {}. Answer with send_text (enter=true), then call run with run_id={:?} to keep waiting; or interrupt with send_keys keys=[\"C-c\"].",
                self.pane,
                self.elapsed_ms,
                if self.echo == Some(false) {
                    " with echo off (a password or other secret)"
                } else {
                    ""
                },
                self.prompt
                    .as_deref()
                    .map_or_else(|| "(no prompt text)".to_owned(), |p| format!("{p:?}")),
                self.run_id
            ),
            RunStatus::ShellStarting => format!(
                "The shell in pane {} has not drawn its first prompt after {} ms (it may still be reading its start-up files); nothing was typed. Call run again later, or look with capture_screen.",
                self.pane, self.elapsed_ms
            ),
            RunStatus::Running => format!(
                "Command still running in pane {} after {} ms. To keep waiting call run with run_id={:?}; to interrupt use send_keys keys=[\"C-c\"], then resume to collect its end; if it waits for input, answer with send_text then resume.",
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
            RunStatus::Interrupted => format!(
                "The command in pane {} was interrupted: the shell is back at its prompt without the end marker (it dropped the rest of the typed line), so the exit status is unknown. The pane takes run again.",
                self.pane
            ),
            RunStatus::ShellReplaced => format!(
                "The shell in pane {} was replaced while running the command (it ran exec): the new program reads the terminal, so the command's end and exit status cannot be known. The pane takes run again.",
                self.pane
            ),
            RunStatus::Abandoned => format!(
                "Run {:?} in pane {} was given up without an end (the pane was respawned, or a later run with force=true took it over); its exit status is unknown.",
                self.run_id, self.pane
            ),
        };
        if let Some(lost) = describe_losses(&self.losses) {
            s.push(' ');
            s.push_str(&lost);
        }
        let _ = write!(s, " cursor={}", self.cursor);
        s.push_str(&Sharing::sentence(self.sharing.as_ref()));
        if self.output_text.is_empty() {
            s.push_str("\n(no output)");
        } else {
            s.push_str("\nOutput:\n");
            s.push_str(&self.output_text);
        }
        s
    }
}
