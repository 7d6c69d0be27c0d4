//! Typing the command of `run`, once the checks before it passed: as it is
//! into an integrated shell, else in the wrapped form of
//! [`crate::terminal::markers`] (fish's own where fish reads it); the run is recorded
//! before the Enter key that starts it.

use std::time::{Duration, Instant};

use tmux_control::command::PaneInfo;
use tmux_control::shell::{ShellKind, ShellTracker, shell_nonce};
use tmux_control::{PaneId, PaneOutput};

use super::Started;
use crate::reply::ToolError;
use crate::terminal::actors::Turn;
use crate::terminal::backend::Conn;
use crate::terminal::markers::wrapper_line;
use crate::terminal::runs::{RunState, TypedInto};
use crate::tools::{paste, press_enter, type_text};

/// Types `command` into `pane` (`integrated`: it has an integrated shell)
/// and presses Enter, within the pane's input `turn`.
pub(super) async fn type_command(
    conn: &Conn,
    pane: PaneId,
    po: PaneOutput,
    row: &PaneInfo,
    integrated: bool,
    command: &str,
    turn: Turn,
) -> Result<Started, ToolError> {
    let shell = if integrated {
        conn.shells.get(&conn.tmux, &po).await
    } else {
        None
    };
    if shell.is_none() {
        conn.shells.wrapped_prompt(&po).await;
    }
    let run_id = shell_nonce();
    let (line, tracker) = match &shell {
        Some(slot) => (command.to_owned(), slot.tracker.clone()),
        None => (
            wrapper_line(command, &run_id, read_by_fish(row, conn.remote)),
            ShellTracker::new(&run_id, po.end_offset()),
        ),
    };
    let from = po.end_offset();
    conn.note_input(pane, from);
    conn.note_unsubmitted(pane, false);
    turn.typed(from);
    type_line(conn, pane, &line).await?;
    let typed_at = po.end_offset();
    {
        let mut runs = conn.runs.lock().unwrap_or_else(|e| e.into_inner());
        runs.retain(|_, s| s.started.elapsed() < Duration::from_secs(24 * 3600));
        runs.insert(
            run_id.clone(),
            RunState {
                pane,
                shell: shell.as_ref().map(|s| s.kind),
                tracker,
                typed_at,
                started: Instant::now(),
                ended: None,
                abandoned: None,
                program: typed_into(conn, row),
                // The call typing it waits for it next (`wait_run`).
                waiters: 1,
                command: command.to_owned(),
            },
        );
    }
    if let Err(e) = press_enter(conn, pane).await {
        conn.runs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&run_id);
        return Err(e);
    }
    Ok(Started::Typed(run_id, po, turn.sharing()))
}

/// Types `line` on the shell's input line, without Enter.
async fn type_line(conn: &Conn, pane: PaneId, line: &str) -> Result<(), ToolError> {
    // Text with control characters (newlines, tabs) goes in as one
    // bracketed paste, so that the shell's line editor inserts it
    // instead of acting on it (a tab would complete, a newline run).
    if line.chars().any(|c| c < ' ' || c == '\x7f') {
        paste(conn, pane, line, true).await
    } else {
        type_text(conn, pane, line).await.map(drop)
    }
}

/// The shell that reads the typed line: the terminal's foreground process
/// (a command may run under a wrapper, the pane's first process); none on
/// another machine.
fn typed_into(conn: &Conn, row: &PaneInfo) -> Option<TypedInto> {
    if conn.remote {
        return None;
    }
    row.pid.and_then(|pid| {
        let shell = crate::terminal::probe::probe(pid, &row.tty)
            .foreground
            .unwrap_or(pid);
        crate::terminal::probe::cmdline(shell).map(|cmdline| TypedInto {
            pid: shell,
            cmdline,
            tty: row.tty.clone(),
        })
    })
}

/// Whether the line typed now is read by fish: tmux names fish as the
/// pane's program, or (a local pane) its first process is fish, or is the
/// default shell's `-c` launcher of a command line that starts fish (tmux
/// starts a command through the default shell, and under load it may not
/// have run fish yet: the line typed is read by fish all the same).
fn read_by_fish(row: &PaneInfo, remote: bool) -> bool {
    let fish = |word: &[u8]| {
        std::str::from_utf8(word)
            .ok()
            .and_then(ShellKind::of)
            .is_some_and(|k| k == ShellKind::Fish)
    };
    if fish(row.current_command.as_bytes()) {
        return true;
    }
    let Some(cmdline) = row
        .pid
        .filter(|_| !remote)
        .and_then(crate::terminal::probe::cmdline)
    else {
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
