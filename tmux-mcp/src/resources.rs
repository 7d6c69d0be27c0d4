//! Live MCP resources: the terminal tree, each pane's screen and each
//! pane's output log, with subscriptions on both protocol generations.
//!
//! - `tmux://terminals`: the tree `list_terminals` returns, as JSON.
//! - `tmux://events`: the last attention events (what
//!   `wait_for_attention` returns) and the cursor after them, as JSON;
//!   updated as events are logged.
//! - `tmux://pane/{pane}/screen`: what `capture_screen` returns for the
//!   pane's visible screen (the same text, secrets masked).
//! - `tmux://pane/{pane}/log`: the cooked, redacted, bounded tail of the
//!   pane's followed output (what `read_output` reads by cursor), saying
//!   what was left out.
//!
//! `{pane}` is the pane's number (`3` for `%3`); `%3` and `%253` (`%3`
//! percent-encoded) are read the same. Updates go to the URI exactly as the
//! client subscribed to it.
//!
//! Updates are pushed, never polled for: one task per subscribed pane waits
//! on the pane's output stream and state changes ([`PaneOutput::stream`],
//! [`PaneOutput::state_changes`]); one task for the tree waits on the
//! connection's notifications ([`tmux_control::Tmux::subscribe`]), on the
//! ends of the followed panes and on tool calls that change tmux. Each
//! debounces with a true timer: at most one `notifications/resources/updated`
//! per resource per [`DEBOUNCE`]. A change after a quiet [`DEBOUNCE`] is
//! sent at once; changes during one are folded into a single update sent
//! when it ends.
//!
//! Legacy clients (the `initialize` handshake) subscribe with
//! `resources/subscribe`; `notifications/resources/list_changed` goes to
//! every such session. Clients of the 2026-07-28 protocol open a
//! `subscriptions/listen` stream whose filter names the URIs and whether
//! they want `list_changed`. Each session has its own set of legacy
//! subscriptions, kept by the session's number: a server shared by several
//! sessions (`serve --unix`) gives each its own number
//! ([`TmuxMcp::for_session`]).
//!
//! (Over 600 lines: the three resources, both subscription generations and
//! the two update tasks share one subscriber table, and are kept in one
//! place; the unit tests are the last 50.)

use std::collections::{BTreeSet, HashSet};
use std::fmt::Write as _;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    ListResourceTemplatesResult, ListResourcesResult, ReadResourceResult, Resource,
    ResourceContents, ResourceTemplate, SubscriptionFilter,
};
use rmcp::service::SubscriptionContext;
use rmcp::{ErrorData as McpError, Peer, RoleServer};
use tmux_control::command::ListPanes;
use tmux_control::proto::Notification;
use tmux_control::{Event, PaneId, PaneOutput};
use tokio::task::JoinSet;
use tokio::time::Instant;

use crate::mcp::subscriptions::*;

use crate::mcp::server::{Inner, TmuxMcp};
use crate::reply::{Summary as _, ToolError};
use crate::terminal::backend::Conn;
use crate::text::shape::describe_losses;
use crate::tools::inspect::{CaptureScreenArgs, ListTerminalsArgs};

impl TmuxMcp {
    fn hub(&self) -> &Arc<Shared> {
        &self.inner.resources.shared
    }

    /// Whether the resources of `target`'s kind are served.
    fn serves(&self, target: Target) -> bool {
        self.inner.config.tools.is_enabled(target.tool())
    }

    /// What `uri` names, if this server serves it.
    fn served(&self, uri: &str) -> Result<Target, McpError> {
        let target = Target::parse(uri).ok_or_else(|| not_ours(uri))?;
        if self.serves(target) {
            Ok(target)
        } else {
            Err(not_served(uri, target.tool()))
        }
    }

    /// `resources/list`: the tree, and each pane's screen and log when
    /// tmux-mcp is connected (listing never starts a tmux server).
    pub(crate) async fn list_resources_now(&self) -> Result<ListResourcesResult, McpError> {
        let mut resources = Vec::new();
        if self.serves(Target::Tree) {
            resources.push(
                Resource::new(TREE_URI, "terminals")
                    .with_title("Terminals")
                    .with_description(
                        "Every session, window and pane (what list_terminals returns), as JSON",
                    )
                    .with_mime_type("application/json"),
            );
        }
        if self.serves(Target::Events) {
            resources.push(
                Resource::new(EVENTS_URI, "events")
                    .with_title("Attention events")
                    .with_description(
                        "The last attention events (a command left running finished, a program waits for input, a bell, a pane exited, a person attached, …) and the cursor after them, as JSON; wait_for_attention reads on from the cursor",
                    )
                    .with_mime_type("application/json"),
            );
        }
        let screens = self.serves(Target::Screen(PaneId(0)));
        let logs = self.serves(Target::Log(PaneId(0)));
        if (screens || logs)
            && let Some(conn) = self.inner.local.current().await
        {
            let rows = conn.tmux.run(ListPanes::all()).await.map_err(|e| {
                McpError::internal_error(ToolError::tmux("Listing panes", &e).to_string(), None)
            })?;
            for row in rows.iter().filter(|r| r.session != conn.home.0) {
                let place = format!(
                    "pane {} (window {} {}, running {})",
                    row.id, row.window, row.window_index, row.current_command
                );
                if screens {
                    resources.push(
                        Resource::new(screen_uri(row.id), format!("{} screen", row.id))
                            .with_title(format!("Screen of {}", row.id))
                            .with_description(format!(
                                "What {place} shows now, as capture_screen returns it"
                            ))
                            .with_mime_type("text/plain"),
                    );
                }
                if logs {
                    resources.push(
                    Resource::new(log_uri(row.id), format!("{} log", row.id))
                        .with_title(format!("Output of {}", row.id))
                        .with_description(format!(
                            "The last output of {place}, cooked (escape codes removed, overwrites applied)"
                        ))
                        .with_mime_type("text/plain"),
                );
                }
            }
        }
        Ok(ListResourcesResult::with_all_items(resources))
    }

    /// `resources/templates/list`.
    pub(crate) fn resource_templates(&self) -> ListResourceTemplatesResult {
        let pane = "{pane} is the pane's number: 3 for pane %3";
        let templates = vec![
            ResourceTemplate::new(SCREEN_TEMPLATE, "pane screen")
                .with_title("Screen of a pane")
                .with_description(format!(
                    "What the pane shows now, as capture_screen returns it (secrets masked); {pane}"
                ))
                .with_mime_type("text/plain"),
            ResourceTemplate::new(LOG_TEMPLATE, "pane log")
                .with_title("Output of a pane")
                .with_description(format!(
                    "The last {} KiB of the pane's output, cooked and with secrets masked, saying what was left out (read_output reads the rest by cursor); {pane}",
                    LOG_TAIL / 1024
                ))
                .with_mime_type("text/plain"),
        ];
        let kinds = [Target::Screen(PaneId(0)), Target::Log(PaneId(0))];
        ListResourceTemplatesResult::with_all_items(
            templates
                .into_iter()
                .zip(kinds)
                .filter(|(_, kind)| self.serves(*kind))
                .map(|(template, _)| template)
                .collect(),
        )
    }

    /// `resources/read`.
    pub(crate) async fn read_resource_now(
        &self,
        uri: &str,
    ) -> Result<ReadResourceResult, McpError> {
        let target = self.served(uri)?;
        let failed = |e: ToolError| McpError::internal_error(e.to_string(), None);
        let (text, mime) = match target {
            Target::Tree => {
                let tree = self
                    .list_terminals(Parameters(ListTerminalsArgs::default()))
                    .await
                    .map_err(failed)?;
                let json = serde_json::to_string_pretty(&tree.0).map_err(|e| {
                    McpError::internal_error(format!("cannot serialise the tree: {e}"), None)
                })?;
                (json, "application/json")
            }
            Target::Events => {
                let log = self.attention_log();
                let read = log.read(
                    log.last().saturating_sub(EVENTS_SHOWN as u64),
                    EVENTS_SHOWN,
                    |_| true,
                );
                let events: Vec<_> = read.events.iter().map(|e| self.shown_event(e)).collect();
                let json = serde_json::json!({
                    "cursor": log.cursor(read.next),
                    "events": events,
                });
                (json.to_string(), "application/json")
            }
            Target::Screen(pane) => {
                self.existing_pane(uri, pane).await?;
                let screen = self
                    .capture_screen(Parameters(CaptureScreenArgs {
                        target: pane.to_string(),
                        start: None,
                        end: None,
                        whole_history: false,
                        escapes: false,
                        max_bytes: None,
                    }))
                    .await
                    .map_err(failed)?;
                (screen.0.summary(), "text/plain")
            }
            Target::Log(pane) => {
                let conn = self.existing_pane(uri, pane).await?;
                let po = conn.follow(pane).await.map_err(failed)?;
                (self.log_text(&po), "text/plain")
            }
        };
        Ok(ReadResourceResult::new(vec![
            ResourceContents::text(text, uri).with_mime_type(mime),
        ]))
    }

    /// The connection, once `pane` is known to exist.
    async fn existing_pane(&self, uri: &str, pane: PaneId) -> Result<Arc<Conn>, McpError> {
        let conn = self
            .conn()
            .await
            .map_err(|e| McpError::internal_error(e.to_string(), None))?;
        conn.resolve(&pane.to_string()).await.map_err(|e| {
            McpError::resource_not_found(
                format!("{}: {e}", crate::mcp::subscriptions::shown_uri(uri)),
                None,
            )
        })?;
        Ok(conn)
    }

    /// The log resource's text: a status line saying which range it shows
    /// and what it leaves out, then the cooked, redacted output.
    fn log_text(&self, po: &PaneOutput) -> String {
        let end = po.end_offset();
        let start = po.start_offset();
        let from = end.saturating_sub(LOG_TAIL).max(start);
        let excerpt = self.excerpt(po, from, end, self.screen_budget(None));
        let pane = po.pane();
        let shown = from + excerpt.missed_bytes;
        let mut s = format!(
            "Output of pane {pane} from cursor {shown} to {end} (escape codes removed, carriage returns and backspaces applied, secrets masked)"
        );
        if shown > start {
            let _ = write!(
                s,
                "; the {} bytes before cursor {shown} are left out (read_output target={pane} cursor={start} reads them)",
                shown - start
            );
        }
        if start > 0 {
            let _ = write!(s, "; the first {start} bytes are no longer held");
        }
        if let Some(o) = excerpt.omitted {
            let _ = write!(
                s,
                "; bytes {}..{} are left out in the middle (read_output target={pane} cursor={} reads them)",
                o.from_cursor, o.to_cursor, o.from_cursor
            );
        }
        if let Some(lost) = describe_losses(&excerpt.losses) {
            s.push_str(". ");
            s.push_str(&lost);
        }
        let _ = writeln!(s, ". New output will start at cursor {end}:");
        s.push_str(&excerpt.text);
        s
    }

    /// A client of the `initialize` generation finished its handshake: it
    /// gets `list_changed` from now on.
    pub(crate) fn resources_session(&self, peer: Peer<RoleServer>) {
        self.legacy_sub(peer);
        self.start_tree();
    }

    /// The legacy session's subscriber, made on first use.
    fn legacy_sub(&self, peer: Peer<RoleServer>) -> u64 {
        let mut state = self.hub().lock();
        if let Some(id) = state.legacy.get(&self.session) {
            return *id;
        }
        let id = state.next_id;
        state.next_id += 1;
        state.legacy.insert(self.session, id);
        state.subs.insert(
            id,
            Sub {
                sink: Sink::Session(peer),
                uris: Vec::new(),
                list_changed: true,
            },
        );
        id
    }

    /// `resources/subscribe` (legacy generation).
    pub(crate) async fn subscribe_resource(
        &self,
        uri: &str,
        peer: Peer<RoleServer>,
    ) -> Result<(), McpError> {
        let target = self.served(uri)?;
        if let Some(pane) = target.pane() {
            self.existing_pane(uri, pane).await?;
        }
        let id = self.legacy_sub(peer);
        if let Some(sub) = self.hub().lock().subs.get_mut(&id)
            && !sub.uris.iter().any(|(u, _)| u == uri)
        {
            sub.uris.push((uri.to_owned(), target));
        }
        self.start_tree();
        self.start_events();
        self.start_panes().await;
        Ok(())
    }

    /// `resources/unsubscribe` (legacy generation).
    pub(crate) fn unsubscribe_resource(&self, uri: &str) -> Result<(), McpError> {
        Target::parse(uri).ok_or_else(|| not_ours(uri))?;
        {
            let mut state = self.hub().lock();
            if let Some(id) = state.legacy.get(&self.session).copied()
                && let Some(sub) = state.subs.get_mut(&id)
            {
                sub.uris.retain(|(u, _)| u != uri);
            }
        }
        self.hub().reconcile();
        Ok(())
    }

    /// What of a `subscriptions/listen` filter this server serves: list
    /// changes, and the URIs that name its resources.
    pub(crate) fn accepted_filter(&self, requested: &SubscriptionFilter) -> SubscriptionFilter {
        let mut accepted = SubscriptionFilter::new();
        accepted.resources_list_changed = requested.resources_list_changed.filter(|w| *w);
        accepted.resource_subscriptions = requested.resource_subscriptions.as_ref().map(|uris| {
            uris.iter()
                .filter(|uri| self.served(uri).is_ok())
                .cloned()
                .collect()
        });
        accepted
    }

    /// One `subscriptions/listen` stream (2026-07-28), until the client
    /// cancels it.
    pub(crate) async fn listen_resources(
        &self,
        context: SubscriptionContext,
    ) -> Result<(), McpError> {
        let accepted = context.accepted();
        let uris: Vec<(String, Target)> = accepted
            .resource_subscriptions
            .iter()
            .flatten()
            .filter_map(|uri| Target::parse(uri).map(|t| (uri.clone(), t)))
            .collect();
        let list_changed = accepted.resources_list_changed == Some(true);
        let guard = {
            let mut state = self.hub().lock();
            let id = state.next_id;
            state.next_id += 1;
            state.subs.insert(
                id,
                Sub {
                    sink: Sink::Listen(context.sink().clone()),
                    uris,
                    list_changed,
                },
            );
            Unlisten {
                shared: self.hub().clone(),
                id,
            }
        };
        self.start_tree();
        self.start_events();
        self.start_panes().await;
        context.cancelled().await;
        drop(guard);
        Ok(())
    }

    /// A tool call ended: one that may have changed tmux makes the tree be
    /// looked at again.
    pub(crate) fn resources_after_tool(&self, tool: &str) {
        let reads_only = crate::config::toolsets::toolset_of(tool)
            == Some(crate::config::toolsets::Toolset::Inspect);
        if !reads_only && self.hub().tree_started.load(Ordering::Acquire) {
            self.hub().kick.notify_one();
        }
    }

    /// Starts the task that follows each subscribed pane that has none.
    async fn start_panes(&self) {
        let missing = self.hub().reconcile();
        if missing.is_empty() {
            return;
        }
        let conn = match self.conn().await {
            Ok(conn) => conn,
            Err(e) => {
                tracing::debug!("cannot follow subscribed panes: {e}");
                return;
            }
        };
        for pane in missing {
            let po = match conn.follow(pane).await {
                Ok(po) => po,
                Err(e) => {
                    tracing::debug!(%pane, "cannot follow a subscribed pane: {e}");
                    continue;
                }
            };
            let mut state = self.hub().lock();
            if state.panes.contains_key(&pane) {
                continue;
            }
            let task = tokio::spawn(follow_pane(Arc::downgrade(self.hub()), po));
            state.panes.insert(pane, task.abort_handle());
        }
    }

    /// Starts the events task, once.
    fn start_events(&self) {
        if self.hub().events_started.swap(true, Ordering::AcqRel) {
            return;
        }
        let task = tokio::spawn(follow_events(
            Arc::downgrade(self.hub()),
            self.attention_log().clone(),
        ));
        self.hub().lock().events = Some(task.abort_handle());
    }

    /// Starts the tree task, once.
    fn start_tree(&self) {
        if self.hub().tree_started.swap(true, Ordering::AcqRel) {
            return;
        }
        let task = tokio::spawn(follow_tree(
            Arc::downgrade(self.hub()),
            self.hub().kick.clone(),
            Arc::downgrade(&self.inner),
        ));
        self.hub().lock().tree = Some(task.abort_handle());
    }
}

/// Waits until a debounce period after `last` has passed (a true timer:
/// the debounce, see [`DEBOUNCE`]).
async fn debounce(last: Option<Instant>) {
    if let Some(last) = last {
        tokio::time::sleep_until(last + DEBOUNCE).await;
    }
}

/// Sends updates of one pane's resources as its output and state change,
/// debounced, until the pane's output ends.
async fn follow_pane(shared: Weak<Shared>, po: PaneOutput) {
    let pane = po.pane();
    let mut output = po.stream();
    let mut states = po.state_changes();
    let mut last: Option<Instant> = None;
    loop {
        // Pushed: the stream wakes when bytes arrive, the state stream
        // when tmux reports a change. One byte is enough to know.
        let ended = tokio::select! {
            chunk = output.next_max(1) => chunk.is_none(),
            state = states.next() => state.is_none(),
        };
        if !ended {
            debounce(last).await;
            // What arrived meanwhile is covered by this update.
            output.skip_to_end();
        }
        let Some(hub) = shared.upgrade() else { return };
        let sinks = hub.pane_sinks(pane);
        if ended {
            hub.kick.notify_one();
        }
        drop(hub);
        for (sink, uri) in &sinks {
            sink.updated(uri).await;
        }
        last = Some(Instant::now());
        if ended {
            return;
        }
    }
}

/// The parts of the tree whose change makes `tmux://terminals` change, and
/// the panes, whose coming and going changes the resource list.
#[derive(Debug, Default, PartialEq, Eq)]
struct Tree {
    panes: BTreeSet<PaneId>,
    layout: Vec<(u32, u32, u32, u32, u32, u32, bool)>,
}

async fn tree_of(conn: &Conn) -> Option<Tree> {
    let rows = conn.tmux.run(ListPanes::all()).await.ok()?;
    let mut tree = Tree::default();
    for r in rows.iter().filter(|r| r.session != conn.home.0) {
        tree.panes.insert(r.id);
        tree.layout.push((
            r.session.0,
            r.window.0,
            r.window_index,
            r.id.0,
            r.width,
            r.height,
            r.dead,
        ));
    }
    tree.layout.sort_unstable();
    Some(tree)
}

/// What a notification does to `tmux://terminals`, least first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Change {
    /// Nothing.
    None,
    /// A window or session got a new name: the resource changed, and
    /// nothing else needs reading (tmux renames windows by itself as
    /// their programs change).
    Renamed,
    /// Panes or windows may have come, gone or changed size: read the
    /// tree again.
    Look,
}

/// What notification `n` does to the tree.
fn change_of(n: &Notification) -> Change {
    match n {
        Notification::WindowRenamed { .. }
        | Notification::UnlinkedWindowRenamed { .. }
        | Notification::SessionRenamed { .. } => Change::Renamed,
        Notification::WindowAdd { .. }
        | Notification::UnlinkedWindowAdd { .. }
        | Notification::WindowClose { .. }
        | Notification::UnlinkedWindowClose { .. }
        | Notification::LayoutChange { .. }
        | Notification::SessionsChanged => Change::Look,
        _ => Change::None,
    }
}

/// Sends `list_changed` when panes come and go, and updates of
/// `tmux://terminals` when the tree changes, for every connection the
/// server makes, until the server is dropped.
async fn follow_tree(shared: Weak<Shared>, kick: Arc<tokio::sync::Notify>, inner: Weak<Inner>) {
    // Before a connection, resources/list shows no pane: the panes of the
    // first connection are a change of the list.
    let mut known = Tree::default();
    loop {
        let Some(server) = inner.upgrade() else {
            return;
        };
        let mut connections = server.local.connections();
        let conn = server.local.current().await;
        drop(server);
        let Some(conn) = conn else {
            // Pushed: wakes when the next connection is made.
            if connections.changed().await.is_err() {
                return;
            }
            continue;
        };
        let mut events = conn.tmux.subscribe();
        let mut ends: JoinSet<PaneId> = JoinSet::new();
        let mut watched: HashSet<PaneId> = HashSet::new();
        let mut last: Option<Instant> = None;
        let mut first = true;
        loop {
            if !first {
                let mut change = tokio::select! {
                    event = events.recv() => match event {
                        None | Some(Event::Closed(_)) => break,
                        Some(Event::Notification(n)) => change_of(&n),
                        Some(Event::Gap { .. }) => Change::Look,
                        Some(_) => Change::None,
                    },
                    () = kick.notified() => Change::Look,
                    Some(ended) = ends.join_next(), if !ends.is_empty() => {
                        if let Ok(pane) = ended {
                            watched.remove(&pane);
                        }
                        Change::Look
                    }
                };
                if change == Change::None {
                    continue;
                }
                debounce(last).await;
                // What piled up meanwhile is covered by this one update (a
                // burst of notifications costs one list-panes, not one
                // each).
                let mut closed = false;
                while let Some(event) = events.try_recv() {
                    match event {
                        Event::Closed(_) => closed = true,
                        Event::Notification(n) => change = change.max(change_of(&n)),
                        Event::Gap { .. } => change = Change::Look,
                        _ => {}
                    }
                }
                if closed {
                    break;
                }
                if change == Change::Renamed {
                    // The tree's shape is the same: only its names changed.
                    last = Some(Instant::now());
                    tree_updated(&shared).await;
                    continue;
                }
            }
            first = false;
            let Some(tree) = tree_of(&conn).await else {
                continue;
            };
            last = Some(Instant::now());
            // The end of each followed pane is pushed too.
            for po in conn.tmux.followed().await {
                if watched.insert(po.pane()) {
                    ends.spawn(async move {
                        let mut states = po.state_changes();
                        while states.next().await.is_some() {}
                        po.pane()
                    });
                }
            }
            notify_tree(&shared, &known, &tree).await;
            known = tree;
        }
        // The connection ended: its terminals are gone with it.
        let empty = Tree::default();
        notify_tree(&shared, &known, &empty).await;
        known = empty;
    }
}

/// How many events `tmux://events` shows.
const EVENTS_SHOWN: usize = 50;

/// Tells the subscribers of `tmux://events` each time events are logged,
/// debounced.
async fn follow_events(shared: Weak<Shared>, log: Arc<crate::terminal::attention::Attention>) {
    let mut changed = log.subscribe();
    let mut last = None;
    while changed.changed().await.is_ok() {
        debounce(last).await;
        last = Some(Instant::now());
        changed.borrow_and_update();
        let Some(hub) = shared.upgrade() else { return };
        let sinks = hub.sinks(|t| t == Target::Events);
        drop(hub);
        for (sink, uri) in &sinks {
            sink.updated(uri).await;
        }
    }
}

/// Tells the tree's subscribers that it changed.
async fn tree_updated(shared: &Weak<Shared>) {
    let Some(hub) = shared.upgrade() else { return };
    let trees = hub.sinks(|t| t == Target::Tree);
    drop(hub);
    for (sink, uri) in &trees {
        sink.updated(uri).await;
    }
}

/// Tells the subscribers what changed between `before` and `now`.
async fn notify_tree(shared: &Weak<Shared>, before: &Tree, now: &Tree) {
    if before == now {
        return;
    }
    let Some(hub) = shared.upgrade() else { return };
    let lists = if before.panes == now.panes {
        Vec::new()
    } else {
        hub.list_sinks()
    };
    drop(hub);
    for sink in &lists {
        sink.list_changed().await;
    }
    tree_updated(shared).await;
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn uris_are_read_in_every_spelling() {
        assert_eq!(Target::parse(TREE_URI), Some(Target::Tree));
        for uri in [
            "tmux://pane/3/screen",
            "tmux://pane/%3/screen",
            "tmux://pane/%253/screen",
        ] {
            assert_eq!(Target::parse(uri), Some(Target::Screen(PaneId(3))), "{uri}");
        }
        assert_eq!(
            Target::parse("tmux://pane/12/log"),
            Some(Target::Log(PaneId(12)))
        );
        for bad in [
            "tmux://pane//screen",
            "tmux://pane/x/screen",
            "tmux://pane/3/other",
            "tmux://pane/3",
            "tmux://pane/-1/log",
            "tmux://pane/99999999999/log",
            "file:///etc/passwd",
            "tmux://terminals/",
        ] {
            assert_eq!(Target::parse(bad), None, "{bad}");
        }
        assert_eq!(screen_uri(PaneId(3)), "tmux://pane/3/screen");
        assert_eq!(log_uri(PaneId(3)), "tmux://pane/3/log");
    }

    #[test]
    fn a_listen_filter_keeps_only_this_servers_resources() {
        let requested = SubscriptionFilter::builder()
            .resources_list_changed()
            .tools_list_changed()
            .resource_subscriptions(["tmux://pane/1/screen", "file:///x", TREE_URI])
            .build();
        let server = TmuxMcp::new(crate::Config::default()).unwrap();
        let accepted = server.accepted_filter(&requested);
        assert_eq!(accepted.resources_list_changed, Some(true));
        assert_eq!(accepted.tools_list_changed, None);
        assert_eq!(
            accepted.resource_subscriptions,
            Some(vec!["tmux://pane/1/screen".to_owned(), TREE_URI.to_owned()])
        );
    }
}
