//! [`Draining`], which ends a session's calls in bounded time at shutdown.

use std::collections::BTreeSet;
use std::time::Instant;

use rmcp::model::{CallToolResult, ClientRequest, ContentBlock, ProtocolVersion, ServerResult};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ErrorData as McpError, RoleServer, Service};

use super::{STOP_GRACE, Shutdown};
use crate::mcp::audit::Outcome;
use crate::mcp::server::TmuxMcp;

/// A [`TmuxMcp`] session that ends its calls in bounded time when its
/// [`Shutdown`] stops: once it aborts ([`DRAIN`](super::DRAIN) after the
/// signal), every request still running is cancelled (the tools end as on a
/// client's cancel, and write their audit records); the answer of a tool
/// call ended so says that the server is shutting down (a `run` keeps its
/// run_id to resume with). A request that still runs [`STOP_GRACE`] later
/// is answered here, and a tool call is audited here, as cut off.
#[derive(Debug, Clone)]
pub struct Draining {
    server: TmuxMcp,
    shutdown: Shutdown,
}

impl Draining {
    /// `server`, stopping with `shutdown`.
    pub fn new(server: TmuxMcp, shutdown: Shutdown) -> Self {
        Self { server, shutdown }
    }

    /// Writes the audit record of a tool call that did not end.
    fn audit_cut_off(&self, call: &CutOff, message: &str) {
        let Some(audit) = &self.server.inner.audit else {
            return;
        };
        let known: Option<BTreeSet<String>> = self
            .server
            .tool_router
            .map
            .get(call.tool.as_str())
            .and_then(|route| route.attr.input_schema.get("properties"))
            .and_then(serde_json::Value::as_object)
            .map(|p| p.keys().cloned().collect());
        audit.record(
            &call.actor,
            &call.tool,
            call.arguments.as_ref(),
            known.as_ref(),
            &Outcome::Error(message.to_owned()),
            call.started.elapsed(),
        );
    }
}

/// What the audit log needs of a tool call that may be cut off.
struct CutOff {
    actor: String,
    tool: String,
    arguments: Option<serde_json::Map<String, serde_json::Value>>,
    started: Instant,
}

/// What replaces "the client cancelled the request" in the answer of a
/// call stopped by the shutdown.
const STOPPED_WHY: &str =
    "the server is shutting down, and stopped the call when its drain time ended";

/// The answer of a call stopped by the shutdown: says so.
fn stopped_answer(answer: Result<ServerResult, McpError>) -> Result<ServerResult, McpError> {
    match answer {
        Ok(ServerResult::CallToolResult(mut result)) if result.is_error == Some(true) => {
            if let Some(block) = result.content.iter_mut().find(|c| c.as_text().is_some()) {
                let text = block.as_text().map(|t| t.text.clone()).unwrap_or_default();
                let said = if text.contains("the client cancelled the request") {
                    text.replace("the client cancelled the request", STOPPED_WHY)
                } else {
                    format!("The server is shutting down: {text}")
                };
                *block = ContentBlock::text(said);
            }
            Ok(ServerResult::CallToolResult(result))
        }
        other => other,
    }
}

impl Service<RoleServer> for Draining {
    async fn handle_request(
        &self,
        request: ClientRequest,
        mut context: RequestContext<RoleServer>,
    ) -> Result<ServerResult, McpError> {
        let call = match &request {
            ClientRequest::CallToolRequest(call) => Some(CutOff {
                actor: crate::mcp::actors::of_request(
                    &context,
                    self.server.session_actor.get().map(String::as_str),
                    self.server.inner.config.actor.as_deref(),
                ),
                tool: call.params.name.to_string(),
                arguments: call.params.arguments.clone(),
                started: Instant::now(),
            }),
            _ => None,
        };
        // The call sees a cancel from the client or from the shutdown.
        let cancel = context.ct.child_token();
        context.ct = cancel.clone();
        let handler = Service::<RoleServer>::handle_request(&self.server, request, context);
        let mut handler = std::pin::pin!(handler);
        tokio::select! {
            answer = &mut handler => return answer,
            () = self.shutdown.aborted() => {}
        }
        cancel.cancel();
        // A true timer: how long a stopped call may take to end.
        if let Ok(answer) = tokio::time::timeout(STOP_GRACE, handler).await {
            return stopped_answer(answer);
        }
        let why = format!(
            "the server is shutting down, and the call did not end within {} s of being stopped; \
             it may or may not have done its work",
            STOP_GRACE.as_secs()
        );
        tracing::warn!("a call did not end when stopped: {why}");
        match call {
            Some(call) => {
                self.audit_cut_off(&call, &why);
                let text = format!(
                    "{} failed: {why}. Check its effect (with list_terminals or capture_screen) once a server runs again, before repeating it",
                    call.tool
                );
                Ok(ServerResult::CallToolResult(CallToolResult::error(vec![
                    ContentBlock::text(text),
                ])))
            }
            None => Err(McpError::internal_error(why, None)),
        }
    }

    async fn handle_notification(
        &self,
        notification: rmcp::model::ClientNotification,
        context: NotificationContext<RoleServer>,
    ) -> Result<(), McpError> {
        Service::<RoleServer>::handle_notification(&self.server, notification, context).await
    }

    fn get_info(&self) -> <RoleServer as rmcp::service::ServiceRole>::Info {
        Service::<RoleServer>::get_info(&self.server)
    }

    fn supported_protocol_versions(&self) -> std::borrow::Cow<'static, [ProtocolVersion]> {
        Service::<RoleServer>::supported_protocol_versions(&self.server)
    }
}

/// How long the end of a server waits for its durable logs to hold what it
/// saw (a true timer: a bound on a feed that cannot catch up).
pub const SETTLE: std::time::Duration = std::time::Duration::from_secs(2);

/// The end of a server's work, once its sessions are over: waits (within
/// [`SETTLE`]) until the durable logs of the terminals it followed hold the
/// output it saw and the regions of the runs in it, so that the next
/// tmux-mcp reads every one back, then syncs the audit log.
pub async fn settle(server: &TmuxMcp) {
    if tokio::time::timeout(SETTLE, server.backend.settle_logs())
        .await
        .is_err()
    {
        tracing::warn!("the durable logs did not catch up within {SETTLE:?}");
    }
    sync_audit_log(server);
}

/// Writes what the audit log of `server` holds to its disk (at the end of
/// a shutdown: its lines are written as they come, unbuffered).
pub fn sync_audit_log(server: &TmuxMcp) {
    if let Some(audit) = &server.inner.audit
        && let Err(e) = audit.sync()
    {
        tracing::error!("cannot sync the audit log: {e}");
    }
}
