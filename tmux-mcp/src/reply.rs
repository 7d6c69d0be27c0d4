//! Tool replies: structured content with a concise text form, and errors a
//! model can act on.
//!
//! Large pane text is not sent twice: the tools that return it
//! ([`crate::text::shape`]) put it in the text form ([`Summary::summary`]) and
//! leave the structured field null unless the reply fits its size budget
//! with it twice (docs/tools.md, "One size budget per reply").

use rmcp::handler::server::tool::IntoCallToolResult;
use rmcp::model::{CallToolResponse, CallToolResult, ContentBlock};
use schemars::JsonSchema;
use serde::Serialize;

/// A reply's concise text form (the `content` text block). The structured
/// content carries every field; the text is what a model reads first.
pub(crate) trait Summary {
    /// The text form.
    fn summary(&self) -> String;
}

/// A structured reply. Like `rmcp::Json`, it puts `T` in
/// `structuredContent` and the tool macro derives the output schema from
/// `T` (the macro recognises the name `Json`); unlike it, the text content
/// is [`Summary::summary`] instead of a copy of the JSON.
#[derive(Debug, Clone)]
pub(crate) struct Json<T>(pub T);

impl<T: Serialize + JsonSchema + Summary + 'static> IntoCallToolResult for Json<T> {
    fn into_call_tool_result(self) -> Result<CallToolResponse, rmcp::ErrorData> {
        let text = self.0.summary();
        let value = serde_json::to_value(&self.0).map_err(|e| {
            rmcp::ErrorData::internal_error(format!("cannot serialise the reply: {e}"), None)
        })?;
        let mut result = CallToolResult::structured(value);
        result.content = vec![ContentBlock::text(text)];
        Ok(result.into())
    }
}

/// The error kind of a call on a remote host that tmux-mcp cannot reach
/// (or whose connection was lost): in the text and in the result's
/// `_meta` (see [`ERROR_META`]).
pub(crate) const HOST_UNREACHABLE: &str = "host_unreachable";

/// The error kind of an input that would have collided with a person at
/// the terminal (see [`ToolError::human_typing`]).
pub(crate) const HUMAN_TYPING: &str = "human_typing";

/// The error kind of an input into a terminal whose input a person took
/// over in the web view (see [`ToolError::human_holds`]).
pub(crate) const HUMAN_HOLDS: &str = "human_holds";

/// The error kind of arguments that do not fit the tool's input schema
/// (`tmux-mcp call` exits 2 for it, as for bad usage).
pub(crate) const BAD_ARGUMENTS: &str = "bad_arguments";

/// The `_meta` key of a tool error that has a kind a client can match:
/// `{"kind": "host_unreachable", "host": "box"}`, `{"kind":
/// "human_typing", "client": "/dev/pts/3", "retryable": true}`.
pub(crate) const ERROR_META: &str = "tmux-mcp/error";

/// A failed tool call, as the model sees it: what failed, why, and what to
/// do next. Returned as a tool result with `isError: true`, never as a
/// protocol error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{what} failed: {why}. {next}")]
pub(crate) struct ToolError {
    /// What was attempted.
    pub what: String,
    /// Why it failed.
    pub why: String,
    /// What to do next.
    pub next: String,
    /// A kind a client can match ([`HOST_UNREACHABLE`], [`HUMAN_TYPING`]),
    /// with what it is about; sent in the result's `_meta` under
    /// [`ERROR_META`].
    pub kind: Option<(&'static str, serde_json::Value)>,
}

impl ToolError {
    /// A new error.
    pub(crate) fn new(
        what: impl Into<String>,
        why: impl Into<String>,
        next: impl Into<String>,
    ) -> Self {
        Self {
            what: what.into(),
            why: why.into(),
            next: next.into(),
            kind: None,
        }
    }

    /// Remote host `host`, reached `how` (`over ssh`, `through docker
    /// exec`), cannot be reached, or its connection was lost: `why` says
    /// what ssh, the engine or the command said.
    pub(crate) fn host_unreachable(
        host: &str,
        how: &str,
        why: &str,
        next: impl Into<String>,
    ) -> Self {
        Self {
            what: format!("Reaching host {host}"),
            why: format!("{HOST_UNREACHABLE}: host {host} cannot be reached {how}: {why}"),
            next: next.into(),
            kind: Some((HOST_UNREACHABLE, serde_json::json!({ "host": host }))),
        }
    }

    /// A person is typing into the pane, or its shell holds a command line
    /// this server did not type: nothing was typed (`why` says which, never
    /// what the person typed). Retryable.
    pub(crate) fn human_typing(what: impl Into<String>, why: &str, client: Option<&str>) -> Self {
        Self {
            what: what.into(),
            why: format!("{HUMAN_TYPING}: {why}; nothing was typed, so the person's line is intact"),
            next: "Try again in a few seconds, after the person submitted or cleared the line (wait_for_state or wait_for_idle), ask the person, or create a terminal of your own with create_terminal".to_owned(),
            kind: Some((
                HUMAN_TYPING,
                serde_json::json!({ "client": client, "retryable": true }),
            )),
        }
    }

    /// A person holds the pane's input (they took it over in the web
    /// view): nothing was typed. Retryable once they hand it back; reads
    /// keep working meanwhile.
    pub(crate) fn human_holds(what: impl Into<String>, by: &str, since: &str) -> Self {
        Self {
            what: what.into(),
            why: format!(
                "{HUMAN_HOLDS}: a person ({by}) took over this terminal's input in the web view at {since}; nothing was typed"
            ),
            next: "Read the terminal (read_output, capture_screen) while they work, and try again after they hand it back (wait_for_attention tells you); your next reply on this terminal then reports what they ran".to_owned(),
            kind: Some((
                HUMAN_HOLDS,
                serde_json::json!({ "by": by, "since": since, "retryable": true }),
            )),
        }
    }

    /// An error from tmux or the connection, with advice chosen from the
    /// kind of failure.
    pub(crate) fn tmux(what: impl Into<String>, error: &tmux_control::Error) -> Self {
        use tmux_control::Error as E;
        let what = what.into();
        match error {
            E::Command { message, .. } => {
                let next = if error.kind() == tmux_control::ErrorKind::NotFound {
                    "Call list_terminals to see the current sessions, windows and panes, and use their ids"
                } else {
                    "Check the arguments against the tool's description and try again"
                };
                Self::new(what, format!("tmux said: {message}"), next)
            }
            E::Closed(closed) => Self::new(
                what,
                closed.to_string(),
                "The tmux server went away (killed or crashed). The next call reconnects, starting a fresh server if needed; ids from before are gone, so call list_terminals",
            ),
            E::Spawn { program, source } => Self::new(
                what,
                format!("cannot start {program}: {source}"),
                "Install tmux, or start tmux-mcp with --tmux /path/to/tmux",
            ),
            E::InvalidArgument(why) => Self::new(
                what,
                why.clone(),
                "Change the argument as described and try again",
            ),
            E::Timeout(d) => Self::new(
                what,
                format!("tmux did not answer within {d:?}"),
                "Try again",
            ),
            other => Self::new(
                what,
                other.to_string(),
                "Try again; if it persists, call list_terminals to check the state",
            ),
        }
    }
}

impl IntoCallToolResult for ToolError {
    fn into_call_tool_result(self) -> Result<CallToolResponse, rmcp::ErrorData> {
        let mut result = CallToolResult::error(vec![ContentBlock::text(self.to_string())]);
        if let Some((kind, about)) = &self.kind {
            let mut detail = match about {
                serde_json::Value::Object(fields) => fields.clone(),
                _ => serde_json::Map::new(),
            };
            detail.insert("kind".to_owned(), serde_json::json!(kind));
            let mut meta = serde_json::Map::new();
            meta.insert(ERROR_META.to_owned(), serde_json::Value::Object(detail));
            result.meta = Some(rmcp::model::MetaObject(meta));
        }
        Ok(result.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failed(message: &str) -> tmux_control::Error {
        tmux_control::Error::Command {
            command: "kill-pane".into(),
            message: message.into(),
        }
    }

    #[test]
    fn advice_follows_the_error_kind() {
        let missing = ToolError::tmux("Killing", &failed("can't find pane: %9"));
        assert!(missing.next.contains("list_terminals"), "{missing}");
        assert!(missing.why.contains("can't find pane: %9"), "{missing}");
        // Only a missing target sends the model to list_terminals, even if
        // tmux's words say "not found" about something else.
        for message in ["unknown flag -Q", "user nobody not found"] {
            let refused = ToolError::tmux("Killing", &failed(message));
            assert!(refused.next.contains("arguments"), "{refused}");
        }
    }
}
