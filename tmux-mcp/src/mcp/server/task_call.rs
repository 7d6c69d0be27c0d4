//! A tool call made an MCP task: `run` and the waits, called by a client
//! that declared the Tasks extension, are answered as ordinary calls when
//! they end within [`TASK_AFTER`] and become tasks (`crate::mcp::tasks`)
//! when they take longer.

use rmcp::RoleServer;
use rmcp::model::{CallToolRequestParams, CallToolResponse};
use rmcp::service::RequestContext;

use super::{TASK_AFTER, TaskCall, TmuxMcp};

impl TmuxMcp {
    /// Makes the call as a task when it may be one (a task tool that is
    /// served) and the request declared the Tasks extension in its own
    /// `_meta` client capabilities: a call
    /// that ends within [`TASK_AFTER`] is answered as an ordinary call, a
    /// longer one becomes a task. `None` means: make the ordinary call.
    pub(crate) fn call_as_task(
        &self,
        request: &CallToolRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Option<TaskCall> {
        let tool = request.name.as_ref();
        if !crate::mcp::tasks::TASK_TOOLS.contains(&tool)
            || !self.inner.config.tools.is_enabled(tool)
            || context
                .extensions
                .get::<crate::mcp::tasks::InTask>()
                .is_some()
        {
            return None;
        }
        // The request's own capabilities (its `_meta`): the 2026-07-28
        // revision declares the extension per request, and a client on a
        // session with an `initialize` handshake that lists it there only
        // among its capabilities (the MCP Inspector 2.12 on 2025-11-25)
        // does not poll tasks, so it gets the ordinary call.
        let declared = context
            .meta
            .client_capabilities()
            .is_some_and(|caps| caps.supports_tasks());
        if !declared || !self.inner.tasks.has_room() {
            return None;
        }
        // The call goes on after this request is answered: it gets a
        // cancellation of its own (tasks/cancel) and sends no progress
        // (the extension has none for tasks).
        let cancel = tokio_util::sync::CancellationToken::new();
        let mut detached = context.clone();
        detached.ct = cancel.clone();
        detached.meta.0.0.remove("progressToken");
        detached.extensions.insert(crate::mcp::tasks::InTask);
        // Only a session with an initialize handshake has a stream to send
        // notifications/tasks on.
        let peer = context
            .peer
            .peer_info()
            .is_some()
            .then(|| context.peer.clone());
        let server = self.clone();
        let request = request.clone();
        let mut call: TaskCall =
            Box::pin(
                async move { rmcp::ServerHandler::call_tool(&server, request, detached).await },
            );
        let client_cancel = context.ct.clone();
        let tasks = self.inner.tasks.clone();
        let tool = tool.to_owned();
        Some(Box::pin(async move {
            // A true timer: how long a call may take and still be answered
            // as an ordinary one. A task is worth it only for a long call
            // (and some clients that declare the extension read only
            // ordinary results of short ones).
            tokio::select! {
                outcome = &mut call => return outcome,
                // A true timer (see above): the call became long; it goes
                // on as a task.
                () = tokio::time::sleep(TASK_AFTER) => {}
                () = client_cancel.cancelled() => {
                    // The client cancelled the call before it became a task.
                    cancel.cancel();
                    return call.await;
                }
            }
            let task = tasks.start(&tool, call, cancel, peer);
            Ok(CallToolResponse::Task(rmcp::model::CreateTaskResult::new(
                task,
            )))
        }))
    }
}
