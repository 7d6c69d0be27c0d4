//! Attention events pushed into an MCP client's channel (`--channel
//! claude`): Claude Code's `notifications/claude/channel`, which can start
//! a turn where an ordinary notification never reaches the model. The
//! server declares `capabilities.experimental["claude/channel"]`; after
//! the session's `initialized` (never before), one task per session reads
//! the attention log as it grows (pushed: a `watch` wakes it), folds what
//! came within [`COALESCE`] into one notification per terminal, and sends
//! it: `content` is the events' sentences (secrets masked), `meta` holds
//! strings only (`pane`, `host`, `events`, `kinds`, `cursor`). Delivery is
//! at most once, as the channel's own; every tool result and
//! `wait_for_attention` still carry each event.
//!
//! And to a webhook (`--notify-webhook URL`): one task per process posts
//! each event, as `wait_for_attention` shows it, through
//! [`crate::notify::webhook::Webhook`] (signed, retried, in order), its
//! `webhook-id` the event's cursor, so a receiver drops a retried copy.

use std::collections::BTreeMap;
use std::time::Duration;

use rmcp::model::{CustomNotification, ServerNotification};
use rmcp::{Peer, RoleServer};

use crate::mcp::server::TmuxMcp;

/// The method Claude Code reads a channel's messages from.
pub(crate) const METHOD: &str = "notifications/claude/channel";

/// The experimental capability that marks a channel server.
pub(crate) const CAPABILITY: &str = "claude/channel";

/// Events that come this close together go out as one notification per
/// terminal (a true timer: the coalescing window after an event).
const COALESCE: Duration = Duration::from_millis(200);

impl TmuxMcp {
    /// The experimental capabilities a channel server declares.
    pub(crate) fn channel_capabilities() -> rmcp::model::ExperimentalCapabilities {
        BTreeMap::from([(CAPABILITY.to_owned(), Default::default())])
    }

    /// Starts posting every attention event to the configured webhook
    /// (once per process, when the first session is initialized: in the
    /// runtime; nothing without one). Events logged before it are posted
    /// too, as far as the log holds them.
    pub(crate) fn start_webhook(&self) {
        let Some((url, key)) = self.inner.config.notify_webhook.clone() else {
            return;
        };
        if self
            .inner
            .webhook_started
            .swap(true, std::sync::atomic::Ordering::AcqRel)
        {
            return;
        }
        let hook = match crate::notify::webhook::Webhook::start(&url, key) {
            Ok(hook) => hook,
            Err(e) => {
                tracing::warn!(error = %e, kind = ?e.kind(), "attention events are not posted to the webhook");
                return;
            }
        };
        let server = self.clone();
        tokio::spawn(async move {
            let log = server.attention_log().clone();
            let mut changed = log.subscribe();
            let mut after = 0;
            loop {
                let read = log.read(after, usize::MAX, |_| true);
                after = read.next;
                for event in &read.events {
                    let shown = server.shown_event(event);
                    let id = format!("evt_{}", shown.cursor);
                    match serde_json::to_value(&shown) {
                        Ok(body) => hook.send(id, body),
                        Err(e) => tracing::warn!(error = %e, "cannot serialise an attention event"),
                    }
                }
                if changed.changed().await.is_err() {
                    return;
                }
            }
        });
    }

    /// Starts pushing this session's attention events into its client's
    /// channel (called once the session is initialized).
    pub(crate) fn start_channel(&self, peer: Peer<RoleServer>) {
        let server = self.clone();
        tokio::spawn(async move { server.channel(peer).await });
    }

    async fn channel(self, peer: Peer<RoleServer>) {
        let log = self.attention_log().clone();
        let mut changed = log.subscribe();
        let mut after = log.last();
        while changed.changed().await.is_ok() {
            // A true timer: the coalescing window (see COALESCE).
            tokio::time::sleep(COALESCE).await;
            changed.borrow_and_update();
            let read = log.read(after, usize::MAX, |_| true);
            after = read.next;
            // One message per terminal, in the order they first spoke.
            let mut order: Vec<(String, Option<String>)> = Vec::new();
            let mut by_terminal: BTreeMap<(String, Option<String>), Vec<_>> = BTreeMap::new();
            for event in &read.events {
                let shown = self.shown_event(event);
                let key = (shown.host.clone(), shown.pane.clone());
                if !by_terminal.contains_key(&key) {
                    order.push(key.clone());
                }
                by_terminal.entry(key).or_default().push(shown);
            }
            for key in order {
                let Some(events) = by_terminal.remove(&key) else {
                    continue;
                };
                let content: Vec<&str> = events.iter().map(|e| e.summary.as_str()).collect();
                let mut kinds: Vec<&str> = events.iter().map(|e| e.kind.name()).collect();
                kinds.dedup();
                let mut meta = serde_json::Map::new();
                meta.insert("host".into(), key.0.clone().into());
                if let Some(pane) = &key.1 {
                    meta.insert("pane".into(), pane.clone().into());
                }
                meta.insert("events".into(), events.len().to_string().into());
                meta.insert("kinds".into(), kinds.join(",").into());
                if let Some(last) = events.last() {
                    meta.insert("cursor".into(), last.cursor.clone().into());
                }
                let params = serde_json::json!({
                    "content": content.join("\n"),
                    "meta": meta,
                });
                let note = CustomNotification::new(METHOD, Some(params));
                if peer
                    .send_notification(ServerNotification::CustomNotification(note))
                    .await
                    .is_err()
                {
                    // The session is gone.
                    return;
                }
            }
        }
    }
}
