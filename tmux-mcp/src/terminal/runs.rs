//! The state of `run` calls kept between calls: a run in progress and, once
//! seen, how it ended. Kept by the connection ([`crate::terminal::backend::Conn`]) and
//! used by the `run` tool ([`crate::tools::run`]).

use std::time::Instant;

use tmux_control::PaneId;
use tmux_control::shell::{ShellKind, ShellTracker};

/// A run in progress, kept between calls so that a run that outlives one
/// call can be resumed by the next.
#[derive(Debug, Clone)]
pub(crate) struct RunState {
    /// The pane it runs in.
    pub(crate) pane: PaneId,
    /// The integrated shell it was typed into, or `None`: the wrapped form.
    pub(crate) shell: Option<ShellKind>,
    /// Reads its marks (for an integrated shell, the shell's own tracker is
    /// used instead, up to date).
    pub(crate) tracker: ShellTracker,
    /// Offset of the pane's output when it was typed: its end comes after.
    pub(crate) typed_at: u64,
    /// When it was typed.
    pub(crate) started: Instant,
    /// The command as given.
    pub(crate) command: String,
    /// Its end, once seen by something other than a wait for it (the
    /// shell marked it while no call waited): kept for the call that
    /// collects it.
    pub(crate) ended: Option<Ended>,
    /// Set when the run was given up without an end: why (its pane was
    /// respawned, or a later run with `force` took the pane over).
    pub(crate) abandoned: Option<&'static str>,
    /// The shell the command was typed into (a local pane only).
    pub(crate) program: Option<TypedInto>,
    /// How many calls wait for it now: while one does, its end is that
    /// call's to report, not an attention event's.
    pub(crate) waiters: u32,
}

/// Why a wrapped run was found interrupted (see [`RunState::abandoned`]):
/// its shell is back at its prompt without the end marker.
pub(crate) const INTERRUPTED: &str = "the command was interrupted";

/// Marks every run in `pane` that has not ended as abandoned, for `why`
/// (see [`RunState::abandoned`]); the call that resumes one says so.
pub(crate) fn abandon(
    runs: &std::sync::Mutex<std::collections::HashMap<String, RunState>>,
    pane: PaneId,
    why: &'static str,
) {
    let mut runs = runs.lock().unwrap_or_else(|e| e.into_inner());
    for run in runs.values_mut() {
        if run.pane == pane && run.ended.is_none() && run.abandoned.is_none() {
            run.abandoned = Some(why);
        }
    }
}

/// The process a command was typed into: the terminal's foreground process
/// then (a command may run under a wrapper, the pane's first process).
#[derive(Debug, Clone)]
pub(crate) struct TypedInto {
    /// Its pid.
    pub(crate) pid: u32,
    /// Its command line then: a shell that `exec`s another program keeps
    /// its pid and changes its command line.
    pub(crate) cmdline: Vec<u8>,
    /// The pane's terminal.
    pub(crate) tty: std::path::PathBuf,
}

impl TypedInto {
    /// Whether this process, as it was, reads the terminal now (at its
    /// prompt, or a `read` of its own), by the kernel's evidence.
    pub(crate) fn reads_terminal(&self) -> bool {
        let evidence = crate::terminal::probe::probe(self.pid, &self.tty);
        evidence.foreground == Some(self.pid) && evidence.reading_terminal == Some(true)
    }

    /// Whether it now runs another program (it ran `exec`).
    pub(crate) fn replaced(&self) -> bool {
        crate::terminal::probe::cmdline(self.pid).is_some_and(|now| now != self.cmdline)
    }
}

/// How a command line ended, as its marks tell.
#[derive(Debug, Clone)]
pub(crate) struct Ended {
    /// Offset of the first byte of its output.
    pub(crate) output_start: u64,
    /// Offset just after its last byte of output.
    pub(crate) output_end: u64,
    /// Offset just after its end mark.
    pub(crate) end: u64,
    /// Its exit status, when the shell gave one.
    pub(crate) status: Option<i32>,
    /// The statuses of its pipeline, when the shell gave them.
    pub(crate) pipestatus: Vec<i32>,
}
