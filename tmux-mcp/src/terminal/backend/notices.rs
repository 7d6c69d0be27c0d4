//! Attention events shown to the people at the terminals: a message on the
//! status line of each person's tmux client attached to the session of the
//! terminal that needs someone (`display-message -c CLIENT -d 5000`), for
//! the events that need someone ([`Kind::for_people`]): a command left
//! running finished, a program waits for input or asks for a secret, a
//! pane's program exited, output was lost. One task per connection reads
//! the log as it grows (pushed: a `watch` wakes it); it asks tmux for the
//! clients only when an event came and the server has a person's client.

use std::sync::{Arc, Weak};

use tmux_control::command::{ListClients, Raw};
use tmux_control::{PaneId, SessionId};

use crate::terminal::attention::{Event, Kind};

use super::Conn;

/// How long a message stays on a client's status line, in milliseconds.
const SHOWN_MS: &str = "5000";

/// Starts showing `conn`'s attention events to the people at its
/// terminals.
pub(super) fn spawn(conn: &Arc<Conn>) {
    tokio::spawn(notices(Arc::downgrade(conn)));
}

async fn notices(conn: Weak<Conn>) {
    let Some(log) = conn.upgrade().map(|c| c.attention.clone()) else {
        return;
    };
    let mut changed = log.subscribe();
    let mut after = log.last();
    while changed.changed().await.is_ok() {
        let Some(conn) = conn.upgrade() else {
            return;
        };
        if conn.tmux.is_closed() {
            return;
        }
        let read = log.read(after, 100, |e| {
            *e.host == *conn.host && e.kind.for_people() && e.pane.is_some()
        });
        after = read.next;
        if read.events.is_empty() || !conn.humans.any() {
            continue;
        }
        let Ok(clients) = conn.tmux.run(ListClients::all()).await else {
            continue;
        };
        for event in &read.events {
            let Some(pane) = event.pane else { continue };
            let Some(session) = session_of(&conn, pane).await else {
                continue;
            };
            let text = escape(&notice(event, pane));
            for client in clients
                .iter()
                .filter(|c| !c.control_mode && c.session == Some(session))
            {
                let shown = Raw::new("display-message").args([
                    "-c",
                    client.name.as_str(),
                    "-d",
                    SHOWN_MS,
                    "--",
                    text.as_str(),
                ]);
                if let Err(e) = conn.tmux.run(shown).await {
                    tracing::debug!(client = %client.name, error = %e, "cannot show an attention event");
                }
            }
        }
    }
}

/// The session `pane` is in.
async fn session_of(conn: &Conn, pane: PaneId) -> Option<SessionId> {
    conn.tmux.resolve(pane).await.ok().map(|r| r.session)
}

/// What a person's status line says of `event`.
fn notice(event: &Event, pane: PaneId) -> String {
    let d = &event.detail;
    let what = match event.kind {
        Kind::CommandFinished => format!(
            "the command an agent left running finished{}",
            d.exit_status
                .map_or_else(String::new, |s| format!(" (exit {s})"))
        ),
        Kind::WaitingForInput => format!(
            "{} waits for input",
            d.program.as_deref().unwrap_or("the program")
        ),
        Kind::AsksForSecret => format!(
            "{} asks for a secret",
            d.program.as_deref().unwrap_or("the program")
        ),
        Kind::PaneExited => format!(
            "its program exited{}",
            d.exit_status
                .map_or_else(String::new, |s| format!(" (exit {s})"))
        ),
        Kind::OutputLost => "some output was lost".to_owned(),
        other => other.name().replace('_', " "),
    };
    format!("tmux-mcp: pane {pane}: {what}")
}

/// `text` as a `display-message` shows it unchanged: `#` and `%` doubled
/// (formats and `strftime`), control characters dropped.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars().filter(|c| !c.is_control()) {
        if matches!(c, '#' | '%') {
            out.push(c);
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_shown_as_written() {
        assert_eq!(escape("100% #1\x07"), "100%% ##1");
    }
}
