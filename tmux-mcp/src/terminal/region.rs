//! One region (a command line a terminal ran, and where its output is):
//! a part of the terminal's record, beneath the record and the concerns
//! that keep regions ([`crate::terminal::regions`]) and store them (the
//! durable log).

use tmux_control::shell::FinishedCommand;

/// Regions kept per pane.
pub(crate) const KEEP: usize = 1000;

/// One command line and its result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Region {
    /// Its number in the pane, from 1.
    pub(crate) id: u64,
    /// The command as `run` typed it, when `run` did.
    pub(crate) command: Option<String>,
    /// Where the shell's echo of the command line is, when marked.
    pub(crate) input: Option<(u64, u64)>,
    /// The working directory it ran in, when the shell reported it.
    pub(crate) cwd: Option<String>,
    /// Offset of the first byte of its output.
    pub(crate) output_start: u64,
    /// Offset just after its output.
    pub(crate) output_end: u64,
    /// Offset just after its end mark.
    pub(crate) end: u64,
    /// Its exit status.
    pub(crate) status: Option<i32>,
    /// Its pipeline's statuses (shell integration only).
    pub(crate) pipestatus: Option<Vec<i32>>,
    /// How long it took, when `run` timed it.
    pub(crate) duration_ms: Option<u64>,
    /// Whether shell integration marked it (else `run`'s wrapped form).
    pub(crate) integrated: bool,
    /// Its output's first and last lines in the pane's cooked log, when
    /// recovered from disk (else looked up in the log when needed).
    pub(crate) lines: Option<(u64, u64)>,
    /// Recovered from the log of an earlier run of tmux-mcp: its offsets
    /// are not this run's (its output is read from the cooked log).
    pub(crate) recovered: bool,
    /// Who typed its command line, when that is known.
    pub(crate) typed_by: Option<TypedBy>,
}

/// Who typed a region's command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum TypedBy {
    /// An actor (an MCP client) through this server.
    Actor(std::sync::Arc<str>),
    /// Nothing this server sent: a person at a tmux client (or a program
    /// outside tmux-mcp).
    Person,
}

impl Region {
    /// A region for a command line an integrated shell finished.
    pub(crate) fn marked(f: &FinishedCommand) -> Self {
        Self {
            id: 0,
            command: None,
            input: f.input,
            cwd: f.directory.as_ref().map(|d| d.display().to_string()),
            output_start: f.output_start,
            output_end: f.output_end,
            end: f.end,
            status: f.status,
            pipestatus: Some(f.pipestatus.clone()),
            duration_ms: None,
            integrated: true,
            lines: None,
            recovered: false,
            typed_by: None,
        }
    }
}
