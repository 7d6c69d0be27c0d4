//! The people at a terminal: which human tmux clients (terminals attached
//! to the server, not control-mode clients like tmux-mcp's own) show a
//! pane, which of them sends its keys there and typed a moment ago, and
//! whether the pane's shell holds a command line that tmux-mcp did not
//! type (a person's half-typed line).
//!
//! Read at the last moment before typing (one `list-clients` round trip,
//! and the pane's log and emulated screen, which are already here), so
//! that the input tools and `run` never type over a person
//! ([`crate::tools`] refuses with `human_typing`). The round trip is made
//! only while the server has a person's client at all: [`Humans`] counts
//! them from what tmux pushes when a client attaches or detaches.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use tmux_control::Event;
use tmux_control::proto::Notification;

use schemars::JsonSchema;
use serde::Serialize;
use tmux_control::command::{ClientInfo, ListClients};
use tmux_control::shell::ShellPhase;
use tmux_control::{PaneId, PaneOutput, SessionId, Tmux, WindowId};
use unicode_width::UnicodeWidthChar;

use crate::terminal::attention::{Attention, Detail, Kind as AttentionKind};
use crate::terminal::shell::slot::ShellSlot;

/// A person who sent a key to a pane within this many seconds is typing
/// there (tmux keeps a client's last input time in whole seconds).
pub(crate) const TYPING_SECS: u64 = 3;

/// The people at one terminal now.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, JsonSchema)]
pub(crate) struct People {
    /// The people's tmux clients that show this terminal now (by client name, their terminal), attached to its session with its window current (and, when the window is zoomed, the pane active).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub watching: Vec<String>,
    /// The client among them whose keys go to this terminal and that sent a key within the last 3 seconds: a person is typing here.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub typing: Option<String>,
    /// Each watching client: since when it is attached, and when it last sent a key (tmux keeps both in whole seconds).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub clients: Vec<Watcher>,
    /// The people who view this terminal in the web view (by the name of their key).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub web_viewers: Vec<String>,
    /// For how many more seconds the typing client counts as typing.
    #[serde(skip)]
    #[schemars(skip)]
    pub typing_for: Option<u64>,
}

impl People {
    /// With the web view's viewers of the terminal whose record is
    /// `terminal`.
    pub(crate) fn and_on_the_web(
        mut self,
        terminal: Option<&crate::terminal::record::Terminal>,
    ) -> Self {
        self.web_viewers = terminal.map(|t| t.web_viewers()).unwrap_or_default();
        self
    }
}

/// One person's client that shows a terminal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub(crate) struct Watcher {
    /// The client's name (its terminal).
    pub client: String,
    /// When it attached (RFC 3339, UTC).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attached_at: Option<String>,
    /// When it last sent a key (RFC 3339, UTC); absent when it sent none since it attached.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_key_at: Option<String>,
}

/// A time tmux gives in seconds since the epoch, as RFC 3339.
fn at(seconds: u64) -> String {
    crate::text::rfc3339(UNIX_EPOCH + std::time::Duration::from_secs(seconds))
}

/// Who is at `pane` (in `window`) now, from `clients` (a `list-clients`
/// answer) at `now` (seconds since the epoch).
fn people_of(clients: &[ClientInfo], pane: PaneId, window: WindowId, now: u64) -> People {
    let mut people = People::default();
    for c in clients.iter().filter(|c| !c.control_mode) {
        let sees = c.window == Some(window) && (!c.zoomed || c.pane == Some(pane));
        if !sees {
            continue;
        }
        people.watching.push(c.name.clone());
        people.clients.push(Watcher {
            client: c.name.clone(),
            attached_at: c.created.map(at),
            last_key_at: c.activity.filter(|a| c.created != Some(*a)).map(at),
        });
        let keys_here = c.pane == Some(pane);
        let recent = c
            .activity
            .is_some_and(|at| at + TYPING_SECS > now && c.created != Some(at));
        if keys_here && recent && people.typing.is_none() {
            people.typing = Some(c.name.clone());
            people.typing_for = c.activity.map(|at| (at + TYPING_SECS).saturating_sub(now));
        }
    }
    people
}

/// How many people's clients (not control-mode ones) the server has,
/// counted again each time tmux reports that a client attached, changed
/// session or detached (`%client-session-changed`, `%client-detached`), by
/// a task that lives as long as the connection. Until the first count is
/// in, and after events were missed, it says "some", so that nobody is
/// ever taken for absent while the count is unsure.
#[derive(Debug, Clone)]
pub(crate) struct Humans(Arc<AtomicUsize>);

/// What [`Humans`] holds while it does not know.
const UNSURE: usize = usize::MAX;

impl Humans {
    /// Counts the people's clients of `tmux`'s server from now on, and
    /// logs in `log` (as `host`'s) each person's client that attaches to a
    /// session or switches to another (`person_attached`) and each that
    /// detaches (`person_detached`).
    pub(crate) fn watch(tmux: &Tmux, log: Arc<Attention>, host: Arc<str>) -> Self {
        let count = Arc::new(AtomicUsize::new(UNSURE));
        let humans = Self(count.clone());
        let mut events = tmux.subscribe();
        let tmux = tmux.clone();
        tokio::spawn(async move {
            // Each person's client and the session it shows, as last counted.
            let mut known: Option<HashMap<String, Option<SessionId>>> = None;
            let mut recount = async |tmux: &Tmux| {
                let Ok(clients) = tmux.run(ListClients::all()).await else {
                    count.store(UNSURE, Ordering::Release);
                    return;
                };
                let now: HashMap<String, Option<SessionId>> = clients
                    .iter()
                    .filter(|c| !c.control_mode)
                    .map(|c| (c.name.clone(), c.session))
                    .collect();
                count.store(now.len(), Ordering::Release);
                if let Some(before) = &known {
                    tell_changes(&log, &host, &clients, before, &now);
                }
                known = Some(now);
            };
            recount(&tmux).await;
            // Pushed: each event is one tmux sent; nothing is looked at
            // between them.
            while let Some(event) = events.recv().await {
                let again = match event {
                    Event::Notification(
                        Notification::ClientSessionChanged { .. }
                        | Notification::ClientDetached { .. },
                    ) => true,
                    Event::Gap { .. } => {
                        count.store(UNSURE, Ordering::Release);
                        true
                    }
                    Event::Closed(_) => return,
                    _ => false,
                };
                if again {
                    recount(&tmux).await;
                }
            }
        });
        humans
    }

    /// Whether the server may have a person's client now.
    pub(crate) fn any(&self) -> bool {
        self.0.load(Ordering::Acquire) > 0
    }
}

/// Logs the people's clients that attached (or switched session) and
/// detached between two counts.
fn tell_changes(
    log: &Attention,
    host: &Arc<str>,
    clients: &[ClientInfo],
    before: &HashMap<String, Option<SessionId>>,
    now: &HashMap<String, Option<SessionId>>,
) {
    for (name, session) in now {
        if before.get(name) == Some(session) {
            continue;
        }
        let pane = clients
            .iter()
            .find(|c| &c.name == name)
            .and_then(|c| c.pane);
        log.push(
            host,
            pane,
            AttentionKind::PersonAttached,
            Detail {
                client: Some(name.clone()),
                session: session.map(|s| s.to_string()),
                evidence:
                    "tmux reported a client attached or switched session (%client-session-changed)"
                        .to_owned(),
                ..Detail::default()
            },
        );
    }
    for name in before.keys().filter(|n| !now.contains_key(*n)) {
        log.push(
            host,
            None,
            AttentionKind::PersonDetached,
            Detail {
                client: Some(name.clone()),
                evidence: "tmux reported the client detached (%client-detached)".to_owned(),
                ..Detail::default()
            },
        );
    }
}

/// Who is at `pane` (in `window`) now: one `list-clients` round trip.
/// Nobody when tmux cannot say (the check never blocks typing on its own
/// failure; the typing that follows reports any real error).
pub(crate) async fn people(tmux: &Tmux, humans: &Humans, pane: PaneId, window: WindowId) -> People {
    if !humans.any() {
        return People::default();
    }
    let Ok(clients) = tmux.run(ListClients::all()).await else {
        return People::default();
    };
    people_among(&clients, pane, window)
}

/// The person's client whose keys go to `pane` (in `window`) and that
/// sent one within the last [`TYPING_SECS`], for output at the pane's
/// prompt that no agent caused: one `list-clients` round trip. Unlike
/// [`people`], a client that attached this second counts (the output is
/// the evidence that it typed, not its attaching).
pub(crate) async fn typing_at(
    tmux: &Tmux,
    humans: &Humans,
    pane: PaneId,
    window: WindowId,
) -> Option<String> {
    if !humans.any() {
        return None;
    }
    let clients = tmux.run(ListClients::all()).await.ok()?;
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    clients
        .iter()
        .filter(|c| !c.control_mode && c.window == Some(window) && c.pane == Some(pane))
        .find(|c| c.activity.is_some_and(|at| at + TYPING_SECS > now))
        .map(|c| c.name.clone())
}

/// Who is at `pane` (in `window`) now, from `clients` (a `list-clients`
/// answer just read).
pub(crate) fn people_among(clients: &[ClientInfo], pane: PaneId, window: WindowId) -> People {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    people_of(clients, pane, window, now)
}

/// Whether an integrated shell at its prompt holds a command line: the
/// screen's cursor row, up to the cursor, is the prompt's last line and
/// more. Read from the pane's log (the prompt, between its marks) and its
/// emulated screen; `false` when the shell is not reading a line or the
/// screen does not show the prompt where the cursor is (then nothing can
/// be told from it).
pub(crate) fn holds_a_line(po: &PaneOutput, slot: &ShellSlot) -> bool {
    if slot.phase() != ShellPhase::Ready {
        return false;
    }
    let (Some(prompt), Some(input)) = (slot.tracker.prompt_start(), slot.tracker.input_start())
    else {
        return false;
    };
    // Nothing echoed since the prompt: nothing typed (the cheap answer).
    if po.end_offset() <= input {
        return false;
    }
    let Some(screen) = po.emulated_screen() else {
        return false;
    };
    let Ok(len) = usize::try_from(input.saturating_sub(prompt)) else {
        return false;
    };
    let (at, raw) = po.read_from(prompt, len.min(1 << 16));
    if at != prompt {
        return false;
    }
    // Cooked as a terminal draws it: a prompt redrawn over itself (after
    // a resize) is one prompt.
    let text = crate::text::cook(&raw, crate::text::pane_size(po));
    let prompt_tail = text
        .trim_end_matches('\n')
        .rsplit('\n')
        .next()
        .unwrap_or_default();
    let Some(row) = usize::try_from(screen.cursor_y)
        .ok()
        .and_then(|y| screen.lines.get(y))
    else {
        return false;
    };
    let before_cursor = columns_prefix(row, screen.cursor_x);
    match before_cursor.strip_prefix(prompt_tail.trim_end()) {
        Some(typed) => !typed.trim().is_empty(),
        None => false,
    }
}

/// The start of `line` that fills its first `columns` columns.
fn columns_prefix(line: &str, columns: u32) -> &str {
    let mut used = 0u32;
    for (i, c) in line.char_indices() {
        let w = u32::try_from(c.width().unwrap_or(0)).unwrap_or(1);
        if used + w > columns {
            return &line[..i];
        }
        used += w;
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    fn client(
        name: &str,
        control: bool,
        window: u32,
        pane: u32,
        zoomed: bool,
        at: u64,
    ) -> ClientInfo {
        let row = format!(
            "{} 1 80 24 {at} {} @{window} %{pane} {} {name} $0 /dev/pts/9",
            u8::from(control),
            at - 100,
            u8::from(zoomed)
        );
        let reply = tmux_control::proto::Reply {
            time: 0,
            number: 1,
            flags: 1,
            error: false,
            body: vec![row.into()],
        };
        use tmux_control::command::Command as _;
        let mut rows = ListClients::all()
            .parse(reply, &tmux_control::Version::OLDEST_SUPPORTED)
            .unwrap_or_default();
        rows.pop().unwrap_or_else(|| panic!("no client row"))
    }

    #[test]
    fn who_watches_and_who_types() {
        let now = 1_000_000;
        let clients = [
            // Sees %3's window; its keys go to %4.
            client("/dev/pts/1", false, 1, 4, false, now - 1),
            // Its keys go to %3, a moment ago.
            client("/dev/pts/2", false, 1, 3, false, now - 1),
            // A zoomed window shows only %4.
            client("/dev/pts/5", false, 1, 4, true, now),
            // Another window; a control client.
            client("/dev/pts/6", false, 2, 7, false, now),
            client("ctl", true, 1, 3, false, now),
        ];
        let people = people_of(&clients, PaneId(3), WindowId(1), now);
        assert_eq!(people.watching, ["/dev/pts/1", "/dev/pts/2"]);
        assert_eq!(people.typing.as_deref(), Some("/dev/pts/2"));
        // Typed long ago: watching only.
        let idle = [client("/dev/pts/2", false, 1, 3, false, now - 60)];
        let people = people_of(&idle, PaneId(3), WindowId(1), now);
        assert_eq!((people.watching.len(), people.typing), (1, None));
        assert_eq!(
            people_of(&[], PaneId(3), WindowId(1), now),
            People::default()
        );
    }

    #[test]
    fn a_prefix_by_columns() {
        assert_eq!(columns_prefix("$ ls -l", 4), "$ ls");
        assert_eq!(columns_prefix("$ 日本", 4), "$ 日");
        assert_eq!(columns_prefix("$ ", 9), "$ ");
    }
}
