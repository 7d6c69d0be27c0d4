//! One live connection ([`Conn`]) and the checks of the targets and names tools give.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use tmux_control::command::{ListPanes, PaneInfo};
use tmux_control::{PaneId, PaneOutput, Resolved, SessionId, Tmux, WindowId};

use crate::reply::ToolError;
use crate::terminal::actors::PaneActors;
use crate::terminal::attention::Attention;
use crate::terminal::journal::journals::Journals;
use crate::terminal::presence::Humans;
use crate::terminal::record::Terminals;
use crate::terminal::runs::RunState;
use crate::terminal::shell::Shells;

use super::HOME_SESSION;

/// One live control connection and what the server tracks on it.
pub(crate) struct Conn {
    /// The connection.
    pub(crate) tmux: Tmux,
    /// The home session, window and pane.
    pub(crate) home: (SessionId, WindowId, PaneId),
    /// The server's socket, as the server itself reports it.
    pub(crate) socket_path: Option<PathBuf>,
    /// One record per followed pane: everything this connection knows
    /// about it, kept by the concerns below (and its input, kept there).
    pub(crate) terminals: Arc<Terminals>,
    /// Runs started by the `run` tool, by run id.
    pub(crate) runs: Mutex<HashMap<String, RunState>>,
    /// The terminals whose shells run with shell integration.
    pub(crate) shells: Shells,
    /// Each followed pane's cooked, durable log.
    pub(crate) journals: Arc<Journals>,
    /// On a remote host (its socket path is the remote machine's).
    pub(crate) remote: bool,
    /// Who created each pane and typed into it; input turns.
    pub(crate) actors: PaneActors,
    /// How many people's tmux clients the server has (pushed).
    pub(crate) humans: Humans,
    /// The process's attention log, and this connection's host in it.
    pub(crate) attention: Arc<Attention>,
    pub(crate) host: Arc<str>,
    /// The ends (output end offsets) of the last runs a call collected,
    /// by pane: their regions are no attention events.
    pub(crate) collected: Mutex<std::collections::VecDeque<(PaneId, u64)>>,
    /// This connection, for the tasks it starts (set once it is shared).
    pub(crate) me: std::sync::OnceLock<std::sync::Weak<Conn>>,
}

/// How many collected runs [`Conn::collected`] remembers.
const COLLECTED: usize = 64;

impl Conn {
    /// Resolves a target (an id or an exact name) to ids.
    pub(crate) async fn resolve(&self, target: &str) -> Result<Resolved, ToolError> {
        let normalized = normalize_target(target)?;
        let what = format!("Finding target {target:?}");
        let resolved = self.tmux.resolve(normalized).await;
        if let Ok(r) = &resolved {
            crate::terminal::record::touched(r.pane);
        }
        resolved.map_err(|e| match e.kind() {
                tmux_control::ErrorKind::NotFound => ToolError::new(
                    what,
                    format!(
                        "{target:?} does not exist on this tmux server{} ({e})",
                        if self.remote { " (a remote host: ids are per host)" } else { "" }
                    ),
                    "Call list_terminals and use an id from it (%N pane, @N window, $N session) or an exact session name",
                ),
                _ => ToolError::tmux(what, &e),
            })
    }

    /// Whether `r` is in tmux-mcp's own home session.
    pub(crate) fn is_home(&self, r: &Resolved) -> bool {
        r.session == self.home.0
    }

    /// Refuses a target in the home session.
    pub(crate) fn refuse_home(&self, r: &Resolved, what: &str) -> Result<(), ToolError> {
        if self.is_home(r) {
            return Err(ToolError::new(
                what,
                format!(
                    "{HOME_SESSION} ({}) is tmux-mcp's own control session",
                    r.session
                ),
                "Use create_terminal to get a terminal of your own, and target it",
            ));
        }
        Ok(())
    }

    /// Follows `pane`'s output. The connection keeps every followed pane
    /// until it is gone, so later calls share the log.
    /// Its cooked log ([`crate::terminal::journal`]) is opened, or recovered from
    /// an earlier run of tmux-mcp, the first time.
    pub(crate) async fn follow(&self, pane: PaneId) -> Result<PaneOutput, ToolError> {
        let po = self
            .tmux
            .follow(pane)
            .await
            .map_err(|e| ToolError::tmux(format!("Following pane {pane}"), &e))?;
        if pane != self.home.2 {
            self.journals
                .ensure(&self.tmux, &po, &self.shells.regions)
                .await;
            if let Some(me) = self.me.get().and_then(std::sync::Weak::upgrade)
                && self.terminals.entry(pane).claim_watch()
            {
                super::watch::spawn(&me, po.clone());
            }
        }
        Ok(po)
    }

    /// Notes that a call collected the run in `pane` whose output ended at
    /// `output_end` (its region is then no attention event).
    pub(crate) fn collected(&self, pane: PaneId, output_end: u64) {
        let mut collected = self.collected.lock().unwrap_or_else(|e| e.into_inner());
        if collected.len() == COLLECTED {
            collected.pop_front();
        }
        collected.push_back((pane, output_end));
    }

    /// Whether a call collected the run in `pane` whose output ended at
    /// `output_end`.
    pub(crate) fn was_collected(&self, pane: PaneId, output_end: u64) -> bool {
        self.collected
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains(&(pane, output_end))
    }

    /// Remembers the output offset just before input was sent to `pane`.
    pub(crate) fn note_input(&self, pane: PaneId, offset: u64) {
        self.terminals.update(pane, |i| i.last_at = Some(offset));
    }

    /// Notes whether text this server typed into `pane` waits on its input
    /// line unsubmitted (`true`), or the line was submitted or cleared.
    pub(crate) fn note_unsubmitted(&self, pane: PaneId, pending: bool) {
        self.terminals.update(pane, |i| i.unsubmitted = pending);
    }

    /// Whether text this server typed into `pane` waits unsubmitted.
    pub(crate) fn unsubmitted(&self, pane: PaneId) -> bool {
        self.terminals.input(pane).unsubmitted
    }

    /// The output offset just before the last input this server sent to `pane`.
    pub(crate) fn last_input(&self, pane: PaneId) -> Option<u64> {
        self.terminals.input(pane).last_at
    }

    /// Forgets everything this connection knows about `pane`, which tmux
    /// says is gone: removes its record, with its input, shell, regions,
    /// actors and durable log (whose files its own task, which calls this,
    /// removed). Runs typed into it stay, by run id, for the calls that
    /// resume them.
    pub(crate) fn forget(&self, pane: PaneId) {
        self.terminals.remove(pane);
    }

    /// How many records this connection holds about panes, and how many
    /// of them hold something of each concern: input, shells, regions,
    /// actors, durable logs.
    #[cfg(test)]
    pub(crate) fn records(&self) -> [usize; 6] {
        [
            self.terminals.len(),
            self.terminals.inputs(),
            self.shells.len(),
            self.shells.regions.len(),
            self.actors.len(),
            self.journals.len(),
        ]
    }

    /// The `list-panes` row of one pane.
    pub(crate) async fn pane_row(&self, pane: PaneId) -> Result<PaneInfo, ToolError> {
        let what = format!("Reading the state of pane {pane}");
        let rows = self
            .tmux
            .run(ListPanes::in_window(pane))
            .await
            .map_err(|e| ToolError::tmux(what.clone(), &e))?;
        rows.into_iter().find(|r| r.id == pane).ok_or_else(|| {
            ToolError::new(
                what,
                "the pane is gone",
                "Call list_terminals to see what exists",
            )
        })
    }
}

/// Checks a window name or pane title: no control characters, and no `\\`
/// or `$`, which tmux rewrites.
pub(crate) fn check_window_name(name: &str, what: &str) -> Result<(), ToolError> {
    if let Some(c) = name
        .chars()
        .find(|c| c.is_control() || matches!(c, '\\' | '$'))
    {
        return Err(ToolError::new(
            what,
            format!("the name contains {c:?}, which tmux would store differently"),
            "Use a name without control characters, '\\' and '$'",
        ));
    }
    Ok(())
}

/// Checks a target and makes a bare session name exact (`=name`), so that
/// `work` never means `workshop`.
pub(super) fn normalize_target(target: &str) -> Result<String, ToolError> {
    let bad = |why: &str| {
        ToolError::new(
            format!("Reading target {target:?}"),
            why,
            "Give an id from list_terminals (%3 pane, @2 window, $1 session) or an exact name (session, session:window, session:window.pane)",
        )
    };
    if target.trim().is_empty() {
        return Err(bad("it is empty"));
    }
    if target.chars().any(char::is_control) {
        return Err(bad("it contains control characters"));
    }
    // An id: its sign and number, as tmux writes it (tmux would also read
    // `% 1` and `%01` as `%1`, and trailing junk after some forms).
    if let Some(number) = target.strip_prefix(['$', '@', '%']) {
        let canonical = !number.is_empty()
            && number.bytes().all(|b| b.is_ascii_digit())
            && (number == "0" || !number.starts_with('0'));
        if !canonical {
            return Err(bad(
                "an id is $, @ or % and its number as list_terminals shows it (%3), with no space, sign or leading zero",
            ));
        }
        return Ok(target.to_owned());
    }
    if target.starts_with('{') {
        return Ok(target.to_owned());
    }
    let name = target.strip_prefix('=').unwrap_or(target);
    let (session, place) = match name.split_once(':') {
        Some((session, place)) => (session, Some(place)),
        None => (name, None),
    };
    if session.is_empty() {
        // tmux would take the current session: tmux-mcp's own.
        return Err(bad("it names no session"));
    }
    if let Some((_, pane)) = place.and_then(|p| p.split_once('.'))
        && !(pane.is_empty()
            || (pane.bytes().all(|b| b.is_ascii_digit())
                && (pane == "0" || !pane.starts_with('0'))))
    {
        return Err(bad("the part after '.' must be the pane's index (digits)"));
    }
    // `=name` alone is not found as a pane target; `=name:` (the session's
    // current window) is.
    let exact = if target.starts_with('=') {
        target.to_owned()
    } else {
        format!("={target}")
    };
    if exact.contains(':') {
        Ok(exact)
    } else {
        Ok(format!("{exact}:"))
    }
}

/// Checks a session name: tmux forbids `:` and `.` (it would silently
/// replace them) and escapes `\` and `$` (the stored name would differ); a
/// leading `$ @ % = -` would be read as an id, an exact match marker or a
/// flag. Other shell metacharacters are fine: every argument is quoted.
pub(crate) fn check_session_name(name: &str) -> Result<(), ToolError> {
    let why = if name.is_empty() {
        Some("it is empty".to_owned())
    } else if name.len() > 200 {
        Some("it is longer than 200 bytes".to_owned())
    } else if let Some(c) = name.chars().find(|c| matches!(c, ':' | '.')) {
        Some(format!("tmux does not allow {c:?} in session names"))
    } else if name.chars().any(char::is_control) {
        Some("it contains control characters".to_owned())
    } else if let Some(c) = name.chars().find(|c| matches!(c, '\\' | '$')) {
        Some(format!(
            "tmux rewrites {c:?} in names (it would store a different name than asked)"
        ))
    } else if name.starts_with(['$', '@', '%', '=', '-']) {
        Some("it starts with a character tmux would read as an id, a match marker or a flag ($ @ % = -)".to_owned())
    } else if name == HOME_SESSION {
        Some("that name is reserved for tmux-mcp's control session".to_owned())
    } else {
        None
    };
    match why {
        Some(why) => Err(ToolError::new(
            format!("Using session name {name:?}"),
            why,
            "Choose another name; letters, digits, spaces, '-', '_' and most punctuation other than ':' and '.' work",
        )),
        None => Ok(()),
    }
}
