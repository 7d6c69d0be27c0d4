//! Take-over and hand-back, and what a person types in the view.
//!
//! A hold is kept in the terminal's record (`terminal::record::Hold`), so
//! the input tools and `run` see it at their last check before typing and
//! answer `human_holds`. It belongs to a web session (every tab of it holds
//! it); a second session's take-over is refused while it is held. What the
//! person types is typed into the pane as exact keys and is not this
//! server's input, so the shell's marks make each command line theirs: the
//! agent's next reply on the terminal reports it, with its status, as it
//! does for a person typing in tmux. Each batch is audited with the key's
//! name, the pane, its length and its digest, never the text.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tmux_control::command::{DisplayMessage, ResizeWindow};
use tmux_control::{PaneId, WindowId};

use crate::mcp::server::TmuxMcp;
use crate::terminal::attention::{Detail, Kind};
use crate::terminal::backend::Conn;
use crate::terminal::record::Hold;

use super::session::Session;

/// The windows a holder fitted to their browser, with the size each had
/// before, by terminal id (`HOST:%PANE`): undone on hand-back.
#[derive(Debug, Default)]
pub(super) struct Fits(Mutex<HashMap<String, (WindowId, u32, u32)>>);

impl Fits {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, (WindowId, u32, u32)>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A terminal of the view (`HOST:%PANE`): its host's server and the pane.
#[derive(Clone)]
pub(super) struct Target {
    pub(super) server: TmuxMcp,
    pub(super) pane: PaneId,
}

impl Target {
    /// The terminal `id` names (`local:%3`), or why not.
    pub(super) fn parse(server: &TmuxMcp, id: &str) -> Result<Self, String> {
        let (host, pane) = id
            .rsplit_once(':')
            .ok_or_else(|| format!("{id:?} is not a terminal id (HOST:%PANE)"))?;
        let pane: PaneId = pane
            .parse()
            .map_err(|_| format!("{id:?} is not a terminal id (HOST:%PANE)"))?;
        let server = server.on_host(Some(host)).map_err(|e| e.to_string())?;
        Ok(Self { server, pane })
    }

    /// Its id in the view.
    pub(super) fn id(&self) -> String {
        format!("{}:{}", self.server.backend.host(), self.pane)
    }

    /// Its host's connection.
    pub(super) async fn conn(&self) -> Result<Arc<Conn>, String> {
        self.server.conn().await.map_err(|e| e.to_string())
    }

    /// Logs an attention event about it.
    fn tell(&self, kind: Kind, who: &str, evidence: &str) {
        let host: Arc<str> = Arc::from(self.server.backend.host());
        self.server.attention_log().push(
            &host,
            Some(self.pane),
            kind,
            Detail {
                client: Some(who.to_owned()),
                evidence: evidence.to_owned(),
                ..Detail::default()
            },
        );
    }
}

/// Gives `session` the terminal's input; the holder's name when another
/// session holds it.
pub(super) async fn take(target: &Target, session: &Session) -> Result<(), String> {
    let conn = target.conn().await?;
    // The pane must exist (and be followed, so the person's command lines
    // become regions).
    conn.follow(target.pane).await.map_err(|e| e.to_string())?;
    let hold = Hold {
        by: Arc::from(session.grant.name.as_str()),
        session: session.id,
        since: crate::text::rfc3339(std::time::SystemTime::now()),
    };
    let already = conn
        .terminals
        .get(target.pane)
        .and_then(|t| t.hold())
        .is_some_and(|h| h.session == session.id);
    match conn.terminals.entry(target.pane).take(hold) {
        Ok(()) => {
            if !already {
                target.tell(
                    Kind::PersonTookOver,
                    &session.grant.name,
                    "a person took the terminal over in the web view",
                );
            }
            Ok(())
        }
        Err(other) => Err(format!(
            "{} holds this terminal's input (since {}); they must hand it back first",
            other.by, other.since
        )),
    }
}

/// Ends `session`'s hold of the terminal, and puts its window back to the
/// size it had if the holder fitted it; whether it held it.
pub(super) async fn release(target: &Target, session: u64, who: &str, fits: &Fits) -> bool {
    let Some(conn) = target.server.backend.current().await else {
        return false;
    };
    let released = conn
        .terminals
        .get(target.pane)
        .is_some_and(|t| t.release(session));
    if released {
        let before = fits.lock().remove(&target.id());
        if let Some((window, width, height)) = before
            && let Err(e) = conn
                .tmux
                .run(ResizeWindow::new(window).size(width, height))
                .await
        {
            tracing::warn!("cannot give window {window} its size back: {e}");
        }
        target.tell(
            Kind::PersonHandedBack,
            who,
            "the person handed the terminal back in the web view",
        );
    }
    released
}

/// Resizes the terminal's window to `cols` × `rows` for `session`, which
/// must hold it (the person's explicit choice; undone on hand-back).
pub(super) async fn fit(
    target: &Target,
    session: &Session,
    (cols, rows): (u32, u32),
    fits: &Fits,
) -> Result<(), String> {
    let conn = target.conn().await?;
    if !holds(&conn, target, session) {
        return Err("take the terminal over first: only its holder resizes it".to_owned());
    }
    if !(2..=1000).contains(&cols) || !(2..=1000).contains(&rows) {
        return Err(format!(
            "{cols}×{rows} is not a size to fit (2 to 1000 each)"
        ));
    }
    let size = conn
        .tmux
        .run(
            DisplayMessage::format("#{window_id} #{window_width} #{window_height}")
                .target(target.pane),
        )
        .await
        .map_err(|e| e.to_string())?;
    let size = String::from_utf8_lossy(&size).into_owned();
    let mut words = size.split_whitespace();
    let (Some(window), Some(width), Some(height)) = (
        words.next().and_then(|w| w.parse::<WindowId>().ok()),
        words.next().and_then(|w| w.parse::<u32>().ok()),
        words.next().and_then(|w| w.parse::<u32>().ok()),
    ) else {
        return Err(format!("tmux did not say the window's size ({size:?})"));
    };
    // The size before the first fit is the one given back.
    fits.lock()
        .entry(target.id())
        .or_insert((window, width, height));
    conn.tmux
        .run(ResizeWindow::new(window).size(cols, rows))
        .await
        .map_err(|e| format!("tmux refused the size: {e}"))
}

/// Whether `session` holds the terminal.
fn holds(conn: &Conn, target: &Target, session: &Session) -> bool {
    conn.terminals
        .get(target.pane)
        .and_then(|t| t.hold())
        .is_some_and(|h| h.session == session.id)
}

/// Types `text` (keys as the page's terminal gives them) into the
/// terminal for `session`, which must hold it; audited.
pub(super) async fn input(target: &Target, session: &Session, text: &str) -> Result<(), String> {
    let conn = target.conn().await?;
    if !holds(&conn, target, session) {
        return Err("take the terminal over first: only its holder types into it".to_owned());
    }
    let outcome = conn
        .tmux
        .type_text(target.pane, text)
        .await
        .map(|_| ())
        .map_err(|e| format!("tmux refused the input: {e}"));
    if let Some(audit) = &target.server.inner.audit {
        audit.record_person_input(
            &session.grant.name,
            target.server.backend.host(),
            &target.pane.to_string(),
            text.as_bytes(),
            outcome.as_ref().err().map(String::as_str),
        );
    }
    outcome
}
