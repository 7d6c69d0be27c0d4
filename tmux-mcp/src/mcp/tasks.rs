//! Long calls as MCP tasks: the Tasks extension (`io.modelcontextprotocol/tasks`,
//! SEP-2663).
//!
//! `run` and the waits may run as a task, never must: a client that
//! declares the extension (in its `initialize` capabilities, or per request
//! in `_meta` on the 2026-07-28 protocol) gets a `CreateTaskResult` at once
//! and reads the tool's ordinary result from `tasks/get` once the call has
//! finished; `tasks/cancel` stops the call. A client that does not declare
//! it gets the ordinary bounded call, with its resumable `run_id`, exactly
//! as before. The call in a task is the same call: the same argument
//! checks, bounds, audit record and reply.
//!
//! The store is our own rather than rmcp's `TaskManager` so that every
//! state change a client can see happens before the event that announces
//! it: a cancelled task is `cancelled` before `tasks/cancel` is
//! acknowledged, and a finished task is recorded before its
//! `notifications/tasks` is sent (on a session with an `initialize`
//! handshake, which has a stream to send it on).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolResponse, DetailedTask, JsonObject, MetaObject, Notification, ServerNotification, Task,
    TaskPayload, TaskStatus, TaskStatusNotificationParams,
};
use rmcp::task_manager::current_timestamp;
use rmcp::{ErrorData as McpError, Peer, RoleServer};
use serde_json::json;
use tokio_util::sync::CancellationToken;

/// The tools that may run as a task: the calls that can take long.
pub(crate) const TASK_TOOLS: &[&str] = &[
    "run",
    "wait_for_output",
    "wait_for_idle",
    "wait_for_state",
    "wait_for_exit",
    "wait_for_attention",
];

/// The `pollIntervalMs` suggested to clients.
const POLL_INTERVAL_MS: u64 = 500;

/// The most tasks kept at once; past it, calls are answered the ordinary
/// way (the server decides per request whether to make a task).
const MAX_TASKS: usize = 1024;

/// How long a finished task stays readable beyond the longest call.
const RETENTION: Duration = Duration::from_secs(600);

/// Marks a task tool in `tools/list`: the 2026-07-28 extension has no
/// per-tool field (the server decides per request), so the tools that may
/// become tasks say so in their `_meta`, as `optional`: a client that does
/// not ask for tasks always gets the ordinary call.
pub(crate) fn declare(tool: &mut rmcp::model::Tool) {
    if TASK_TOOLS.contains(&tool.name.as_ref()) {
        let mut meta = tool
            .meta
            .take()
            .unwrap_or_else(|| MetaObject(JsonObject::new()));
        meta.0.insert(
            rmcp::model::TASKS_EXTENSION_ID.to_owned(),
            json!({ "taskSupport": "optional" }),
        );
        tool.meta = Some(meta);
    }
}

/// Marks the request context of a call that runs inside a task, so that
/// it is made as an ordinary call and not turned into a task again.
#[derive(Debug, Clone, Copy)]
pub(crate) struct InTask;

/// One task.
struct Entry {
    task: Task,
    payload: TaskPayload,
    cancel: CancellationToken,
    created: Instant,
}

impl Entry {
    fn detailed(&self) -> DetailedTask {
        DetailedTask::new(self.task.clone(), self.payload.clone())
    }

    fn settle(&mut self, payload: TaskPayload, message: String) {
        self.task.status = payload.status();
        self.task.status_message = Some(message);
        self.task.last_updated_at = current_timestamp();
        self.payload = payload;
    }
}

/// The tasks of one server (every session's), by id.
#[derive(Clone)]
pub(crate) struct Tasks {
    entries: Arc<Mutex<HashMap<String, Entry>>>,
    /// `ttlMs`: the longest call and the retention together.
    ttl: Duration,
}

impl Tasks {
    /// A store whose tasks live `longest_call` plus [`RETENTION`].
    pub(crate) fn new(longest_call: Duration) -> Self {
        Self {
            entries: Arc::default(),
            ttl: longest_call + RETENTION,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Entry>> {
        // A panic while holding the lock leaves plain data behind: keep using it.
        self.entries
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Forgets tasks older than their `ttlMs` (a call never outlives it:
    /// every call is bounded well below), cancelling any still running.
    fn sweep(&self, entries: &mut HashMap<String, Entry>) {
        entries.retain(|_, e| {
            let keep = e.created.elapsed() < self.ttl;
            if !keep {
                e.cancel.cancel();
            }
            keep
        });
    }

    /// Whether another task fits (after forgetting expired ones).
    pub(crate) fn has_room(&self) -> bool {
        let mut entries = self.lock();
        self.sweep(&mut entries);
        entries.len() < MAX_TASKS
    }

    /// Starts `call` as a task and returns its first state. `peer`, when
    /// given, is told with `notifications/tasks` once the task finished.
    pub(crate) fn start(
        &self,
        tool: &str,
        call: std::pin::Pin<Box<dyn Future<Output = Result<CallToolResponse, McpError>> + Send>>,
        cancel: CancellationToken,
        peer: Option<Peer<RoleServer>>,
    ) -> Task {
        let id = format!(
            "{}{}",
            tmux_control::shell::shell_nonce(),
            tmux_control::shell::shell_nonce()
        );
        let now = current_timestamp();
        let ttl_ms = u64::try_from(self.ttl.as_millis()).unwrap_or(u64::MAX);
        let task = Task::new(id.clone(), TaskStatus::Working, now.clone(), now)
            .with_ttl_ms(ttl_ms)
            .with_poll_interval_ms(POLL_INTERVAL_MS)
            .with_status_message(format!("{tool} is running"));
        {
            let mut entries = self.lock();
            self.sweep(&mut entries);
            entries.insert(
                id.clone(),
                Entry {
                    task: task.clone(),
                    payload: TaskPayload::Working,
                    cancel: cancel.clone(),
                    created: Instant::now(),
                },
            );
        }
        let store = self.clone();
        let tool = tool.to_owned();
        tokio::spawn(async move {
            // A cancelled task's call sees its cancellation (the waits end
            // at once) and finishes like a cancelled ordinary call, audit
            // record included; the task stays `cancelled`.
            let outcome = call.await;
            let settled = {
                let mut entries = store.lock();
                match entries.get_mut(&id) {
                    Some(entry) if entry.payload == TaskPayload::Working => {
                        let (payload, message) = payload_of(&tool, outcome);
                        entry.settle(payload, message);
                        Some(entry.detailed())
                    }
                    // Cancelled (already recorded) or forgotten.
                    _ => None,
                }
            };
            if let (Some(peer), Some(detailed)) = (peer, settled) {
                let notification = ServerNotification::TaskStatusNotification(Notification::new(
                    TaskStatusNotificationParams::new(detailed),
                ));
                if let Err(e) = peer.send_notification(notification).await {
                    tracing::debug!(error = %e, "could not send notifications/tasks");
                }
            }
        });
        task
    }

    /// `tasks/get`.
    pub(crate) fn get(&self, id: &str) -> Result<DetailedTask, McpError> {
        let mut entries = self.lock();
        self.sweep(&mut entries);
        entries
            .get(id)
            .map(Entry::detailed)
            .ok_or_else(|| unknown(id))
    }

    /// `tasks/cancel`: a running task is `cancelled` from now on and its
    /// call is cancelled (a wait ends; a command `run` typed keeps running
    /// in its pane). A finished task stays as it finished.
    pub(crate) fn cancel(&self, id: &str) -> Result<(), McpError> {
        let mut entries = self.lock();
        self.sweep(&mut entries);
        let entry = entries.get_mut(id).ok_or_else(|| unknown(id))?;
        if entry.payload == TaskPayload::Working {
            entry.settle(
                TaskPayload::Cancelled,
                "cancelled by tasks/cancel".to_owned(),
            );
            entry.cancel.cancel();
        }
        Ok(())
    }

    /// `tasks/update`: these tasks never ask for input, so there is nothing
    /// to deliver; a known id is acknowledged (responses to keys that were
    /// never issued are ignored, as the extension says).
    pub(crate) fn update(&self, id: &str) -> Result<(), McpError> {
        let mut entries = self.lock();
        self.sweep(&mut entries);
        entries.get(id).map(drop).ok_or_else(|| unknown(id))
    }
}

impl std::fmt::Debug for Tasks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tasks").field("ttl", &self.ttl).finish()
    }
}

fn unknown(id: &str) -> McpError {
    McpError::invalid_params(
        format!("unknown task {id:?}: it never existed here or has expired"),
        None,
    )
}

/// What a finished call becomes: `completed` with the tool's result (a tool
/// error included), or `failed` with a JSON-RPC error.
fn payload_of(tool: &str, outcome: Result<CallToolResponse, McpError>) -> (TaskPayload, String) {
    let object = |value: Result<serde_json::Value, serde_json::Error>| match value {
        Ok(serde_json::Value::Object(map)) => map,
        _ => JsonObject::new(),
    };
    match outcome {
        Ok(CallToolResponse::Complete(result)) => {
            let message = if result.is_error == Some(true) {
                format!("{tool} finished with a tool error")
            } else {
                format!("{tool} finished")
            };
            (
                TaskPayload::Completed {
                    result: object(serde_json::to_value(&result)),
                },
                message,
            )
        }
        Ok(_) => {
            let error = McpError::internal_error(
                format!("{tool} asked for input, which a task cannot give it"),
                None,
            );
            (
                TaskPayload::Failed {
                    error: object(serde_json::to_value(&error)),
                },
                error.message.to_string(),
            )
        }
        Err(error) => (
            TaskPayload::Failed {
                error: object(serde_json::to_value(&error)),
            },
            format!("{tool} failed: {}", error.message),
        ),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use rmcp::model::{CallToolResult, ContentBlock};

    #[test]
    fn results_and_errors_map_to_the_statuses_the_extension_names() {
        let ok = CallToolResult::success(vec![ContentBlock::text("hi")]);
        let (p, _) = payload_of("run", Ok(ok.into()));
        assert_eq!(p.status(), TaskStatus::Completed);
        let tool_error = CallToolResult::error(vec![ContentBlock::text("no")]);
        let (p, m) = payload_of("run", Ok(tool_error.into()));
        assert_eq!(p.status(), TaskStatus::Completed, "a tool error completes");
        assert!(m.contains("tool error"));
        let (p, _) = payload_of("run", Err(McpError::internal_error("x", None)));
        assert_eq!(p.status(), TaskStatus::Failed);
    }

    #[tokio::test]
    async fn cancel_is_recorded_before_it_is_acknowledged() {
        let tasks = Tasks::new(Duration::from_secs(60));
        let cancel = CancellationToken::new();
        let task = tasks.start(
            "wait_for_idle",
            Box::pin(std::future::pending()),
            cancel.clone(),
            None,
        );
        assert_eq!(
            tasks.get(&task.task_id).unwrap().status(),
            TaskStatus::Working
        );
        tasks.cancel(&task.task_id).unwrap();
        assert!(cancel.is_cancelled());
        assert_eq!(
            tasks.get(&task.task_id).unwrap().status(),
            TaskStatus::Cancelled
        );
        let err = tasks.get("nope").unwrap_err();
        assert_eq!(err.code, rmcp::model::ErrorCode::INVALID_PARAMS);
        assert!(tasks.update(&task.task_id).is_ok());
    }
}
