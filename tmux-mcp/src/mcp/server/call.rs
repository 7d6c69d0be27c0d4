//! What every tool call goes through: made a task when the client asked
//! for one, refused unless its tool is enabled, its arguments read as the
//! tool's schema says and its `host` taken out, run under its caller's name
//! (`crate::mcp::actors`) on that host's value and bounded in time, its
//! argument errors explained, and recorded in the audit log.

use std::time::Instant;

use rmcp::handler::server::tool::IntoCallToolResult as _;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::model::{CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer};

use crate::mcp::audit::Outcome;
use crate::mcp::schema;
use crate::reply::{BAD_ARGUMENTS, ERROR_META, ToolError};
use crate::terminal::record::noting_touched;

use super::{CALL_GRACE, TmuxMcp};

impl TmuxMcp {
    /// One tool call, as [`ServerHandler::call_tool`](rmcp::ServerHandler::call_tool)
    /// answers it: see the module docs.
    pub(super) async fn audited_call(
        &self,
        mut request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        // `run` and the waits become a task when the client asked for tasks
        // (the task then makes this same call again, as an ordinary one).
        if let Some(answer) = self.call_as_task(&request, &context) {
            return answer.await;
        }
        let started = Instant::now();
        let actor = crate::mcp::actors::of_request(
            &context,
            self.session_actor.get().map(String::as_str),
            self.inner.config.actor.as_deref(),
        );
        let tool = request.name.to_string();
        tracing::debug!(tool = %tool, actor = %actor, "tool call");
        let arguments = request.arguments.clone();
        // Fail closed: the router only holds enabled, classified tools, and
        // this re-check refuses anything else that might reach dispatch.
        let result = if self.inner.config.tools.is_enabled(&tool) {
            // Arguments are read as the tool's schema says (strings that
            // spell numbers or booleans, whole numbers in range) for every
            // tool here, before rmcp deserialises them.
            let prepared = match (
                self.tool_router.map.get(tool.as_str()),
                request.arguments.as_mut(),
            ) {
                (Some(route), Some(args)) => schema::prepare(&route.attr.input_schema, args),
                _ => Ok(()),
            };
            // The `host` argument is read here for every tool: the tool
            // runs on a clone of this server acting on that host.
            let on_host = prepared.and_then(|()| take_host(request.arguments.as_mut()));
            match on_host {
                Err(detail) => Ok(bad_arguments(&tool, &detail)),
                Ok(host) => match self.on_host(host.as_deref()) {
                    Err(e) => e.into_call_tool_result(),
                    Ok(server) => {
                        // The tools read the caller's name with `actors::current`.
                        let who: std::sync::Arc<str> = actor.as_str().into();
                        let (result, panes) = noting_touched(crate::mcp::actors::scope(
                            who.clone(),
                            server.call_on_host(&tool, request, context),
                        ))
                        .await;
                        let result = server.tell_people_news(result, &panes, &who).await;
                        // wait_for_attention's own result is its events.
                        if tool == "wait_for_attention" {
                            result
                        } else {
                            server.tell_attention(result)
                        }
                    }
                },
            }
        } else {
            Err(McpError::invalid_params("tool not found", None))
        };

        let result = result.map(|response| explain_bad_arguments(&tool, response));
        self.resources_after_tool(&tool);
        if let Some(audit) = &self.inner.audit {
            let outcome = match &result {
                Ok(CallToolResponse::Complete(r)) if r.is_error == Some(true) => {
                    Outcome::Error(first_text(r))
                }
                Ok(_) => Outcome::Ok,
                Err(e) => Outcome::Error(e.message.to_string()),
            };
            audit.record(
                &actor,
                &tool,
                arguments.as_ref(),
                self.inner.argument_names.get(&tool),
                &outcome,
                started.elapsed(),
            );
        }
        result
    }

    /// Runs one tool call on this value's host, bounded in time; a call on
    /// a remote host that failed because its connection was lost is
    /// answered with the host's `host_unreachable` error.
    async fn call_on_host(
        &self,
        tool: &str,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        // Every wait bounds itself; this outer bound keeps a call from
        // hanging even if tmux stops answering.
        let limit = self.inner.config.max_wait + CALL_GRACE;
        let tcc = ToolCallContext::new(self, request, context);
        let result = match tokio::time::timeout(limit, self.tool_router.call(tcc)).await {
            Ok(result) => result,
            Err(_) => ToolError::new(
                tool,
                format!("it did not finish within {} s; tmux may be unresponsive", limit.as_secs()),
                "Check the server with list_terminals; if tmux is stuck, restart it (kill_server) or the MCP server",
            )
            .into_call_tool_result(),
        };
        // A failure that does not already say the host is unreachable
        // (from a command that met the dropped connection).
        let failed = match &result {
            Ok(CallToolResponse::Complete(r)) => {
                r.is_error == Some(true)
                    && !r
                        .meta
                        .as_ref()
                        .is_some_and(|m| m.0.contains_key(ERROR_META))
            }
            Ok(_) => false,
            Err(_) => true,
        };
        if failed && let Some(lost) = self.backend.lost().await {
            return lost.into_call_tool_result();
        }
        result
    }
}

impl TmuxMcp {
    /// Adds to `result` what a person ran in the terminals the call was
    /// about (`panes`) that `actor` was not told of yet: a sentence in its
    /// text, and the list in `_meta` under [`PEOPLE_META`].
    async fn tell_people_news(
        &self,
        result: Result<CallToolResponse, McpError>,
        panes: &[tmux_control::PaneId],
        actor: &std::sync::Arc<str>,
    ) -> Result<CallToolResponse, McpError> {
        let Ok(CallToolResponse::Complete(mut done)) = result else {
            return result;
        };
        let mut ran = Vec::new();
        for &pane in panes {
            let news = self.people_news(pane, actor).await;
            if news.ran.is_empty() {
                continue;
            }
            done.content.push(ContentBlock::text(news.sentence(pane)));
            ran.push(news);
        }
        if !ran.is_empty() {
            let meta = done.meta.get_or_insert_with(Default::default);
            meta.0
                .insert(PEOPLE_META.to_owned(), serde_json::json!({ "news": ran }));
        }
        Ok(done.into())
    }
}

impl TmuxMcp {
    /// Adds to `result` the attention events this session was not told of
    /// yet: a paragraph in its text, and the list as `attention` in its
    /// structured content (or, for a result without one, in `_meta` under
    /// [`ATTENTION_META`]). The end of a person's command line the result
    /// already tells of (what a person did) is not told twice.
    fn tell_attention(
        &self,
        result: Result<CallToolResponse, McpError>,
    ) -> Result<CallToolResponse, McpError> {
        let Ok(CallToolResponse::Complete(mut done)) = result else {
            return result;
        };
        // Nothing new (most calls): no reply is measured, nothing is read.
        if !self.has_untold_events() {
            return Ok(done.into());
        }
        let told: Vec<(String, u64)> = done
            .meta
            .as_ref()
            .and_then(|m| m.0.get(PEOPLE_META))
            .and_then(|p| p.get("news"))
            .and_then(|n| n.as_array())
            .into_iter()
            .flatten()
            .filter_map(|news| news.get("ran")?.as_array())
            .flatten()
            .filter_map(|r| {
                Some((
                    r.get("pane")?.as_str()?.to_owned(),
                    r.get("region")?.as_u64()?,
                ))
            })
            .collect();
        let host = self.backend.host().to_owned();
        let skip = |e: &crate::terminal::attention::Event| {
            e.kind == crate::terminal::attention::Kind::PromptReturned
                && *e.host == *host
                && e.pane
                    .zip(e.detail.region)
                    .is_some_and(|(p, r)| told.contains(&(p.to_string(), r)))
        };
        // Within the reply's budget: what the tool left of it, the whole
        // result and its JSON-RPC envelope counted.
        const ENVELOPE: usize = 64;
        let used = serde_json::to_string(&done).map_or(usize::MAX, |t| t.len()) + ENVELOPE;
        let room = self.inner.config.max_reply_bytes.saturating_sub(used);
        let Some(attention) = self.untold_events(skip, room) else {
            return Ok(done.into());
        };
        done.content.push(ContentBlock::text(attention.sentence()));
        let value = serde_json::to_value(&attention).unwrap_or_default();
        match done
            .structured_content
            .as_mut()
            .and_then(|s| s.as_object_mut())
        {
            Some(structured) => {
                structured.insert("attention".to_owned(), value);
            }
            None => {
                done.meta
                    .get_or_insert_with(Default::default)
                    .0
                    .insert(ATTENTION_META.to_owned(), value);
            }
        }
        Ok(done.into())
    }
}

/// The `_meta` key of the attention events a result without structured
/// content carries (the same object as a structured result's `attention`).
pub(crate) const ATTENTION_META: &str = "tmux-mcp/attention";

/// The `_meta` key of what a person did in the terminals a call was about,
/// since the caller's last call about them: `{"news": [{"ran": [{"pane":
/// "%3", "region": 4, "command": "make", "exit_status": 2}], "more": 0}]}`.
pub(crate) const PEOPLE_META: &str = "tmux-mcp/people";

/// Removes the `host` argument from a call's arguments: `None` when absent
/// (or null), else the host name.
pub(super) fn take_host(
    arguments: Option<&mut serde_json::Map<String, serde_json::Value>>,
) -> Result<Option<String>, String> {
    let Some(arguments) = arguments else {
        return Ok(None);
    };
    match arguments.remove("host") {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(serde_json::Value::String(host)) => Ok(Some(host)),
        Some(other) => Err(format!("host must be a string (a host name), not {other}")),
    }
}

/// Adds directions to rmcp's "failed to deserialize parameters" results.
fn explain_bad_arguments(tool: &str, response: CallToolResponse) -> CallToolResponse {
    match response {
        CallToolResponse::Complete(result)
            if result.is_error == Some(true)
                && first_text(&result).starts_with("failed to deserialize parameters") =>
        {
            bad_arguments(tool, &first_text(&result))
        }
        other => other,
    }
}

/// The tool error for arguments that do not fit the tool's input schema,
/// of kind [`BAD_ARGUMENTS`].
pub(crate) fn bad_arguments(tool: &str, detail: &str) -> CallToolResponse {
    let text = format!(
        "{tool} failed: the arguments do not match its input schema ({detail}). \
         Check the argument names, types and required fields in the tool's \
         input schema and call it again."
    );
    let mut result = CallToolResult::error(vec![ContentBlock::text(text)]);
    let mut meta = serde_json::Map::new();
    meta.insert(
        ERROR_META.to_owned(),
        serde_json::json!({ "kind": BAD_ARGUMENTS }),
    );
    result.meta = Some(rmcp::model::MetaObject(meta));
    result.into()
}

fn first_text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .find_map(|c| c.as_text().map(|t| t.text.clone()))
        .unwrap_or_default()
}
