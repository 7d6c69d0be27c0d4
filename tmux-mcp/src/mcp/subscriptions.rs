//! The live resources' state: the URIs, the subscribers and what each has
//! subscribed to. Below [`crate::mcp::server`], which holds it; the logic that
//! serves the resources (and calls the tools) is in `crate::resources`,
//! above the server.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::ResourceUpdatedNotificationParam;
use rmcp::service::SubscriptionSink;
use rmcp::{ErrorData as McpError, Peer, RoleServer};
use tmux_control::PaneId;
use tokio::task::AbortHandle;

/// The terminal tree's URI.
pub(crate) const TREE_URI: &str = "tmux://terminals";

/// The attention events' URI.
pub(crate) const EVENTS_URI: &str = "tmux://events";

/// The template of a pane's screen.
pub(crate) const SCREEN_TEMPLATE: &str = "tmux://pane/{pane}/screen";

/// The template of a pane's output log.
pub(crate) const LOG_TEMPLATE: &str = "tmux://pane/{pane}/log";

/// The shortest time between two updates of one resource (a true timer:
/// the debounce period, not a polling interval).
pub(crate) const DEBOUNCE: Duration = Duration::from_millis(100);

/// Raw bytes of output the log resource covers at most: the tail of the
/// pane's log.
pub(crate) const LOG_TAIL: u64 = 32 * 1024;

/// What a URI names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Target {
    /// `tmux://terminals`.
    Tree,
    /// `tmux://events`.
    Events,
    /// `tmux://pane/N/screen`.
    Screen(PaneId),
    /// `tmux://pane/N/log`.
    Log(PaneId),
}

impl Target {
    /// Reads one of this server's resource URIs.
    pub(crate) fn parse(uri: &str) -> Option<Self> {
        if uri == TREE_URI {
            return Some(Self::Tree);
        }
        if uri == EVENTS_URI {
            return Some(Self::Events);
        }
        let rest = uri.strip_prefix("tmux://pane/")?;
        let (pane, kind) = rest.split_once('/')?;
        let number = pane
            .strip_prefix("%25")
            .or_else(|| pane.strip_prefix('%'))
            .unwrap_or(pane);
        if number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let pane = PaneId(number.parse().ok()?);
        match kind {
            "screen" => Some(Self::Screen(pane)),
            "log" => Some(Self::Log(pane)),
            _ => None,
        }
    }

    pub(crate) fn pane(self) -> Option<PaneId> {
        match self {
            Self::Tree | Self::Events => None,
            Self::Screen(p) | Self::Log(p) => Some(p),
        }
    }

    /// The tool that reads the same thing: the resource is served only
    /// when that tool is enabled, so a toolset that is off stays off.
    pub(crate) fn tool(self) -> &'static str {
        match self {
            Self::Tree => "list_terminals",
            Self::Events => "wait_for_attention",
            Self::Screen(_) => "capture_screen",
            Self::Log(_) => "read_output",
        }
    }
}

/// The canonical URI of a pane's screen.
pub(crate) fn screen_uri(pane: PaneId) -> String {
    format!("tmux://pane/{}/screen", pane.0)
}

/// The canonical URI of a pane's log.
pub(crate) fn log_uri(pane: PaneId) -> String {
    format!("tmux://pane/{}/log", pane.0)
}

/// A URI as an error names it: whole when short, else its first 200
/// characters and how long it was (a client's megabyte URI is not echoed
/// back).
pub(crate) fn shown_uri(uri: &str) -> String {
    const SHOWN: usize = 200;
    match uri.char_indices().nth(SHOWN) {
        None => format!("{uri:?}"),
        Some((cut, _)) => format!("{:?}… ({} bytes)", &uri[..cut], uri.len()),
    }
}

pub(crate) fn not_served(uri: &str, tool: &str) -> McpError {
    let uri = shown_uri(uri);
    McpError::resource_not_found(
        format!(
            "{uri} is not served: it shows what the tool {tool} shows, and {tool} is not enabled on this server"
        ),
        None,
    )
}

pub(crate) fn not_ours(uri: &str) -> McpError {
    let uri = shown_uri(uri);
    McpError::resource_not_found(
        format!(
            "{uri} is not a resource of this server; its resources are {TREE_URI}, {EVENTS_URI}, {SCREEN_TEMPLATE} and {LOG_TEMPLATE} ({{pane}} is the pane's number: 3 for %3)"
        ),
        None,
    )
}

/// Where notifications for one subscriber go.
#[derive(Clone)]
pub(crate) enum Sink {
    /// A session of the `initialize` generation.
    Session(Peer<RoleServer>),
    /// One `subscriptions/listen` stream (2026-07-28).
    Listen(SubscriptionSink),
}

impl Sink {
    pub(crate) async fn updated(&self, uri: &str) {
        let sent = match self {
            Self::Session(peer) => peer
                .notify_resource_updated(ResourceUpdatedNotificationParam::new(uri))
                .await
                .map_err(|e| e.to_string()),
            Self::Listen(sink) => sink
                .notify_resource_updated(uri)
                .await
                .map_err(|e| e.to_string()),
        };
        if let Err(e) = sent {
            tracing::debug!(%uri, "resource update not delivered: {e}");
        }
    }

    pub(crate) async fn list_changed(&self) {
        let sent = match self {
            Self::Session(peer) => peer
                .notify_resource_list_changed()
                .await
                .map_err(|e| e.to_string()),
            Self::Listen(sink) => sink
                .notify_resource_list_changed()
                .await
                .map_err(|e| e.to_string()),
        };
        if let Err(e) = sent {
            tracing::debug!("resource list change not delivered: {e}");
        }
    }
}

/// One subscriber: a legacy session or a listen stream.
pub(crate) struct Sub {
    pub(crate) sink: Sink,
    /// The URIs as the client spelled them, and what they name.
    pub(crate) uris: Vec<(String, Target)>,
    /// Wants `notifications/resources/list_changed`.
    pub(crate) list_changed: bool,
}

#[derive(Default)]
pub(crate) struct State {
    pub(crate) next_id: u64,
    pub(crate) subs: HashMap<u64, Sub>,
    /// The id of each legacy session's subscriber, once there is one, by
    /// the session's number ([`crate::TmuxMcp::for_session`]).
    pub(crate) legacy: HashMap<u64, u64>,
    /// The task that follows each subscribed pane.
    pub(crate) panes: HashMap<PaneId, AbortHandle>,
    /// The task that follows the tree.
    pub(crate) tree: Option<AbortHandle>,
    /// The task that follows the attention log.
    pub(crate) events: Option<AbortHandle>,
}

pub(crate) struct Shared {
    pub(crate) state: Mutex<State>,
    /// Tells the tree task to look again (a tool changed tmux, a pane
    /// ended). Its own `Arc`, so the tree task never keeps `Shared` alive.
    pub(crate) kick: Arc<tokio::sync::Notify>,
    pub(crate) tree_started: AtomicBool,
    /// The events task was started.
    pub(crate) events_started: AtomicBool,
}

impl Drop for Shared {
    fn drop(&mut self) {
        let state = self.state.get_mut().unwrap_or_else(|e| e.into_inner());
        for task in state.panes.values() {
            task.abort();
        }
        for task in state.tree.iter().chain(&state.events) {
            task.abort();
        }
    }
}

impl Shared {
    pub(crate) fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Every (sink, URI) subscribed to a resource of `pane`.
    pub(crate) fn pane_sinks(&self, pane: PaneId) -> Vec<(Sink, String)> {
        self.sinks(|t| t.pane() == Some(pane))
    }

    pub(crate) fn sinks(&self, wanted: impl Fn(Target) -> bool) -> Vec<(Sink, String)> {
        self.lock()
            .subs
            .values()
            .flat_map(|s| {
                s.uris
                    .iter()
                    .filter(|(_, t)| wanted(*t))
                    .map(|(uri, _)| (s.sink.clone(), uri.clone()))
            })
            .collect()
    }

    pub(crate) fn list_sinks(&self) -> Vec<Sink> {
        self.lock()
            .subs
            .values()
            .filter(|s| s.list_changed)
            .map(|s| s.sink.clone())
            .collect()
    }

    /// The panes some subscriber wants that have no task yet; stops the
    /// tasks of panes nobody wants any more.
    pub(crate) fn reconcile(&self) -> Vec<PaneId> {
        let mut state = self.lock();
        let wanted: HashSet<PaneId> = state
            .subs
            .values()
            .flat_map(|s| s.uris.iter().filter_map(|(_, t)| t.pane()))
            .collect();
        state.panes.retain(|pane, task| {
            let keep = wanted.contains(pane) && !task.is_finished();
            if !keep {
                task.abort();
            }
            keep
        });
        wanted
            .into_iter()
            .filter(|p| !state.panes.contains_key(p))
            .collect()
    }
}

/// The live resources of one server: subscribers and the tasks that
/// follow what they subscribed to.
pub(crate) struct Resources {
    pub(crate) shared: Arc<Shared>,
}

impl Resources {
    pub(crate) fn new() -> Self {
        Self {
            shared: Arc::new(Shared {
                state: Mutex::new(State::default()),
                kick: Arc::new(tokio::sync::Notify::new()),
                tree_started: AtomicBool::new(false),
                events_started: AtomicBool::new(false),
            }),
        }
    }
}

impl Shared {
    /// Session `session` ended: its legacy subscriptions end with it, and
    /// the panes nobody else watches are no longer followed.
    pub(crate) fn session_ended(&self, session: u64) {
        let gone = {
            let mut state = self.lock();
            let id = state.legacy.remove(&session);
            id.and_then(|id| state.subs.remove(&id))
        };
        if let Some(sub) = gone {
            tracing::debug!(
                session,
                uris = sub.uris.len(),
                "a session ended: its resource subscriptions end"
            );
            self.reconcile();
        }
    }
}

impl Resources {
    /// A guard that ends session `session`'s subscriptions when dropped:
    /// held by every clone of the session's server value, so the last one
    /// to go (the HTTP transport dropping an ended session's handler) ends
    /// them, whatever ended the session.
    pub(crate) fn session_guard(&self, session: u64) -> SessionGuard {
        SessionGuard {
            shared: self.shared.clone(),
            session,
        }
    }
}

/// Ends a session's resource subscriptions when dropped
/// ([`Resources::session_guard`]).
pub(crate) struct SessionGuard {
    shared: Arc<Shared>,
    session: u64,
}

impl Drop for SessionGuard {
    fn drop(&mut self) {
        self.shared.session_ended(self.session);
    }
}

/// Removes a listen stream's subscriber when its `listen` call ends, also
/// when the call is dropped.
pub(crate) struct Unlisten {
    pub(crate) shared: Arc<Shared>,
    pub(crate) id: u64,
}

impl Drop for Unlisten {
    fn drop(&mut self) {
        self.shared.lock().subs.remove(&self.id);
        self.shared.reconcile();
    }
}
