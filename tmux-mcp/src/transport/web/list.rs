//! The live list of terminals every tab gets: made again when tmux
//! reports a change of its sessions, windows, panes or clients, when the
//! attention log grows, and when a person takes a terminal over or hands
//! it back or a tab opens or closes one, and published on a `watch` channel (each tab sends the latest,
//! never a backlog).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use rmcp::handler::server::wrapper::Parameters;
use serde_json::{Value, json};
use tmux_control::Event;
use tokio::sync::watch;

use crate::mcp::server::TmuxMcp;
use crate::tools::inspect::list::{ListTerminalsArgs, ListTerminalsResult, SessionEntry};

/// How long a burst of changes is let settle before the list is made
/// again (a true timer: it coalesces, say, the dozen notifications of one
/// new window into one listing).
const SETTLE: Duration = Duration::from_millis(20);

/// One list of the terminals: the `terminals` frame every tab sends, and
/// who holds which terminal (by view id: the holder's name and session),
/// from which each tab tells its own `held` frames.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Listing {
    /// The `terminals` frame (JSON text; empty before the first list).
    pub(super) frame: String,
    /// The holds, by terminal id (`HOST:%PANE`).
    pub(super) held: Holds,
}

/// Who holds which terminal: by terminal id, the holder's name and web
/// session.
pub(super) type Holds = HashMap<String, (String, u64)>;

/// The list, kept up to date while anyone looks.
pub(super) struct Live {
    server: TmuxMcp,
    /// The latest list.
    latest: watch::Sender<Arc<Listing>>,
    /// Bumped when the list must be made again at once (a hold changed).
    poke: watch::Sender<u64>,
    started: std::sync::Once,
}

impl Live {
    pub(super) fn new(server: TmuxMcp) -> Self {
        Self {
            server,
            latest: watch::Sender::new(Arc::default()),
            poke: watch::Sender::new(0),
            started: std::sync::Once::new(),
        }
    }

    /// The latest list and every later one (the task that makes them
    /// starts with the first subscriber).
    pub(super) fn subscribe(&self) -> watch::Receiver<Arc<Listing>> {
        self.started.call_once(|| {
            let server = self.server.clone();
            let latest = self.latest.clone();
            let poke = self.poke.subscribe();
            tokio::spawn(keep_up(server, latest, poke));
        });
        let subscriber = self.latest.subscribe();
        self.changed();
        subscriber
    }

    /// The latest list, as it is (no subscription, no new listing).
    pub(super) fn latest(&self) -> Arc<Listing> {
        self.latest.borrow().clone()
    }

    /// Makes the list again now (a hold changed).
    pub(super) fn changed(&self) {
        self.poke.send_modify(|n| *n += 1);
    }

    /// What makes the list again, for a terminal's stream to use when its
    /// pane's title, program or state changes (tmux tells those to the
    /// connection that follows the pane, which may be an observer's).
    pub(super) fn poker(&self) -> watch::Sender<u64> {
        self.poke.clone()
    }
}

/// Makes the list, then again after every change, while anyone
/// subscribes.
async fn keep_up(
    server: TmuxMcp,
    latest: watch::Sender<Arc<Listing>>,
    mut poke: watch::Receiver<u64>,
) {
    let mut attention = server.attention_log().subscribe();
    let mut connections = server.backend.connections();
    loop {
        // Made only while a tab looks (a new tab pokes).
        if latest.receiver_count() > 0 {
            let listing = listing(&server).await;
            latest.send_if_modified(|old| {
                if **old == listing {
                    return false;
                }
                *old = Arc::new(listing);
                true
            });
        }
        // The events of the current connection, if there is one.
        let conn = server.backend.current().await;
        let mut events = conn.as_ref().map(|c| c.tmux.subscribe());
        loop {
            let tmux_event = async {
                match events.as_mut() {
                    Some(events) => events.recv().await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                event = tmux_event => match event {
                    Some(Event::Notification(n)) if changes_the_list(&n) => break,
                    Some(Event::Gap { .. }) => break,
                    Some(Event::Closed(_)) => break,
                    Some(_) => {}
                    // The connection ended: list again (a new one comes
                    // with the next call, and `connections` says so).
                    None => break,
                },
                r = attention.changed() => { if r.is_err() { return; } break; }
                r = poke.changed() => { if r.is_err() { return; } break; }
                r = connections.changed() => { if r.is_err() { return; } break; }
            }
        }
        tokio::time::sleep(SETTLE).await;
    }
}

/// Whether a notification changes what the list shows.
fn changes_the_list(n: &tmux_control::proto::Notification) -> bool {
    use tmux_control::proto::Notification as N;
    !matches!(
        n,
        N::Output { .. } | N::ExtendedOutput { .. } | N::Pause { .. } | N::Continue { .. }
    )
}

/// The list: every terminal of every host, flat, and their holds.
async fn listing(server: &TmuxMcp) -> Listing {
    let tree = server
        .list_terminals(Parameters(ListTerminalsArgs::default()))
        .await
        .map(|json| json.0);
    let mut terminals = Vec::new();
    let mut hosts = Vec::new();
    let mut held = HashMap::new();
    let counts = attention_counts(server);
    match tree {
        Ok(ListTerminalsResult {
            host,
            sessions,
            hosts: remote,
            ..
        }) => {
            holds(&host, &server.backend, &mut held).await;
            flatten(&host, &sessions, (&held, &counts), &mut terminals);
            hosts.push(json!({ "host": host, "reachable": true, "error": null }));
            for h in remote {
                if let Ok(on) = server.on_host(Some(&h.host)) {
                    holds(&h.host, &on.backend, &mut held).await;
                    flatten(&h.host, &h.sessions, (&held, &counts), &mut terminals);
                }
                hosts.push(json!({ "host": h.host, "reachable": h.reachable, "error": h.error }));
            }
        }
        Err(e) => {
            hosts.push(json!({
                "host": server.backend.host(),
                "reachable": false,
                "error": e.to_string(),
            }));
        }
    }
    Listing {
        frame: json!({ "t": "terminals", "terminals": terminals, "hosts": hosts }).to_string(),
        held,
    }
}

/// Who holds each pane of `host`'s server, into `held` by view id.
async fn holds(host: &str, backend: &crate::terminal::backend::Backend, held: &mut Holds) {
    let Some(conn) = backend.current().await else {
        return;
    };
    for (pane, terminal) in conn.terminals.all_with_panes() {
        if let Some(h) = terminal.hold() {
            held.insert(format!("{host}:{pane}"), (h.by.to_string(), h.session));
        }
    }
}

/// How many events that need someone each terminal has in the attention
/// log, by `HOST:%PANE`.
fn attention_counts(server: &TmuxMcp) -> HashMap<String, u64> {
    let read = server
        .attention_log()
        .read(0, usize::MAX, |e| e.pane.is_some() && e.kind.for_people());
    let mut counts = HashMap::new();
    for e in read.events {
        if let Some(pane) = e.pane {
            *counts.entry(format!("{}:{pane}", e.host)).or_default() += 1;
        }
    }
    counts
}

/// Every pane of `sessions` (on `host`) as the page lists it.
fn flatten(
    host: &str,
    sessions: &[SessionEntry],
    (holds, counts): (&Holds, &HashMap<String, u64>),
    out: &mut Vec<Value>,
) {
    for s in sessions {
        for w in &s.windows {
            for p in &w.panes {
                let id = format!("{host}:{}", p.id);
                let people = p
                    .people
                    .as_ref()
                    .map(|p| p.watching.clone())
                    .unwrap_or_default();
                let viewers = p
                    .people
                    .as_ref()
                    .map(|p| p.web_viewers.clone())
                    .unwrap_or_default();
                out.push(json!({
                    "id": id,
                    "host": host,
                    "session": s.name,
                    "window": w.id,
                    "window_name": w.name,
                    "pane": p.id,
                    "title": p.title,
                    "command": p.command,
                    "cwd": p.cwd,
                    "width": p.width,
                    "height": p.height,
                    "dead": p.dead,
                    "alternate_screen": p.alternate_screen,
                    "people": people,
                    "held_by": holds.get(&id).map(|(by, _)| by),
                    "viewers": viewers,
                    "attention": counts.get(&id).copied().unwrap_or(0),
                }));
            }
        }
    }
}
