//! What `tmux-mcp call` prints and the status it exits with.

use rmcp::ServiceError;
use rmcp::model::{CallToolResponse, CallToolResult, ErrorCode, Tool};
use serde_json::{Value, json};

use crate::reply::{BAD_ARGUMENTS, ERROR_META};

use super::USAGE;

/// How a result is printed.
#[derive(Debug, Clone, Copy, Default)]
#[non_exhaustive]
pub(super) struct Style {
    /// The structured result as JSON, not the text reply.
    pub(super) json: bool,
    /// JSON indented (for a person at a terminal).
    pub(super) pretty: bool,
    /// Exit with `run`'s exit status.
    pub(super) exit_status: bool,
}

/// What the call ends with: what to print where, and the exit status.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub(super) struct Outcome {
    /// For standard output.
    pub(super) stdout: String,
    /// For standard error.
    pub(super) stderr: String,
    /// The exit status.
    pub(super) code: u8,
}

/// The exit status of `--exit-status` while the command still runs (as
/// `timeout` exits when its command outlasts it).
pub(super) const STILL_RUNNING: u8 = 124;

impl From<super::Usage> for Outcome {
    fn from(usage: super::Usage) -> Self {
        Self {
            stdout: String::new(),
            stderr: usage.0,
            code: USAGE,
        }
    }
}

impl Outcome {
    /// Text for standard output (status 0).
    pub(super) fn printed(stdout: String) -> Self {
        Self {
            stdout,
            ..Self::default()
        }
    }

    /// A failure before or around the call (status 1).
    pub(super) fn failed(message: String) -> Self {
        Self {
            stdout: String::new(),
            stderr: message,
            code: 1,
        }
    }

    /// Prints and returns the exit status. Output nobody reads (a closed
    /// pipe) is dropped; the status stays the call's.
    pub(super) fn finish(self) -> u8 {
        use std::io::Write as _;
        if !self.stdout.is_empty() {
            let mut stdout = std::io::stdout().lock();
            let _ = writeln!(stdout, "{}", self.stdout.trim_end_matches('\n'));
            let _ = stdout.flush();
        }
        if !self.stderr.is_empty() {
            let mut stderr = std::io::stderr().lock();
            for line in self.stderr.trim_end_matches('\n').lines() {
                let _ = writeln!(stderr, "tmux-mcp call: {line}");
            }
        }
        self.code
    }
}

/// The outcome of a request the server did not answer with a result: a
/// JSON-RPC error (status 2 for invalid parameters, such as a tool that is
/// not served) or a lost session.
pub(super) fn service_error(error: ServiceError) -> Outcome {
    match error {
        ServiceError::McpError(e) => Outcome {
            code: if e.code == ErrorCode::INVALID_PARAMS {
                USAGE
            } else {
                1
            },
            ..Outcome::failed(format!("the server refused the call: {}", e.message))
        },
        other => Outcome::failed(format!("the call got no answer: {other}")),
    }
}

/// The tools, one a line: the name and the first sentence of its
/// description.
pub(super) fn list(tools: &[Tool]) -> String {
    let width = tools.iter().map(|t| t.name.len()).max().unwrap_or(0);
    let mut out = String::new();
    for tool in tools {
        let description = tool.description.as_deref().unwrap_or_default();
        let summary = description
            .split_once(". ")
            .map_or(description, |(first, _)| first)
            .trim_end_matches('.');
        out.push_str(&format!("{:width$}  {summary}.\n", tool.name));
    }
    out
}

/// The outcome of a tool's result. `shared` says the call went to a
/// shared server (whose runs and cursors outlive the call).
pub(super) fn outcome(response: CallToolResponse, style: &Style, shared: bool) -> Outcome {
    let CallToolResponse::Complete(result) = response else {
        return Outcome::failed("the server answered with a task, which was not asked for".into());
    };
    let text = texts(&result);
    if result.is_error == Some(true) {
        let detail = result
            .meta
            .as_ref()
            .and_then(|m| m.0.get(ERROR_META))
            .cloned();
        let kind = detail
            .as_ref()
            .and_then(|d| d.get("kind"))
            .and_then(Value::as_str);
        let code = if kind == Some(BAD_ARGUMENTS) {
            USAGE
        } else {
            1
        };
        let stdout = if style.json {
            let mut error = json!({"is_error": true, "message": text});
            if let (Some(Value::Object(detail)), Some(error)) = (detail, error.as_object_mut()) {
                error.extend(detail);
            }
            render(&error, style)
        } else {
            String::new()
        };
        return Outcome {
            stdout,
            stderr: text,
            code,
        };
    }
    let structured = result.structured_content.clone();
    let mut outcome = Outcome {
        stdout: if style.json {
            let mut value = structured.clone().unwrap_or_else(|| json!({"text": text}));
            if let (Some(meta), Some(object)) = (&result.meta, value.as_object_mut())
                && !meta.0.is_empty()
            {
                object.insert("_meta".to_owned(), Value::Object(meta.0.clone()));
            }
            render(&value, style)
        } else {
            text
        },
        stderr: String::new(),
        code: 0,
    };
    if let Some(structured) = &structured {
        if let Some(hint) = outlasting(structured, shared) {
            outcome.stderr = hint;
        }
        if style.exit_status {
            outcome.code = exit_status(structured);
        }
    }
    outcome
}

fn render(value: &Value, style: &Style) -> String {
    let rendered = if style.pretty {
        serde_json::to_string_pretty(value)
    } else {
        serde_json::to_string(value)
    };
    rendered.unwrap_or_default()
}

fn texts(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.as_str()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// `run`'s exit status as the process's: the command's own (0 to 255),
/// [`STILL_RUNNING`] while it runs or waits at a prompt, 1 when it has none.
fn exit_status(structured: &Value) -> u8 {
    let status = structured.get("status").and_then(Value::as_str);
    match status {
        Some("running" | "waiting_for_input" | "shell_starting") => STILL_RUNNING,
        _ => structured
            .get("exit_status")
            .and_then(Value::as_i64)
            .and_then(|s| u8::try_from(s.rem_euclid(256)).ok())
            .unwrap_or(1),
    }
}

/// For a run or a wait that outlasts the call, how to go on from it.
fn outlasting(structured: &Value, shared: bool) -> Option<String> {
    let status = structured.get("status").and_then(Value::as_str)?;
    let pane = structured
        .get("pane")
        .and_then(Value::as_str)
        .unwrap_or("?");
    if let Some(run_id) = structured.get("run_id").and_then(Value::as_str)
        && matches!(status, "running" | "waiting_for_input")
    {
        return Some(if shared {
            format!(
                "the command still runs in {pane}: resume with tmux-mcp call run '{}'",
                json!({"run_id": run_id})
            )
        } else {
            format!(
                "the command still runs in {pane}; its run_id {run_id} was this process's and ends with it \
                 (to resume runs across calls, call through a shared server: tmux-mcp serve --unix PATH). \
                 To wait for its end now: tmux-mcp call wait_for_state '{}'",
                json!({"target": pane, "states": ["at_prompt"]})
            )
        });
    }
    let cursor = structured.get("cursor").and_then(Value::as_u64)?;
    (status == "timeout").then(|| {
        if shared {
            format!("the wait timed out: continue with \"cursor\": {cursor}")
        } else {
            format!(
                "the wait timed out; its cursor {cursor} was this process's and ends with it \
                 (to continue from a cursor in a later call, call through a shared server: \
                 tmux-mcp serve --unix PATH)"
            )
        }
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use rmcp::model::ContentBlock;

    fn done(structured: Value) -> CallToolResponse {
        let mut result = CallToolResult::structured(structured);
        result.content = vec![ContentBlock::text("the text reply")];
        result.into()
    }

    #[test]
    fn results_print_as_json_or_text_with_their_status() {
        let json = Style {
            json: true,
            ..Style::default()
        };
        let run = json!({"pane": "%1", "run_id": "r1", "status": "completed", "exit_status": 3});
        let out = outcome(done(run.clone()), &json, false);
        assert_eq!(
            (out.stdout.as_str(), out.code),
            (run.to_string().as_str(), 0)
        );
        let text = outcome(done(run.clone()), &Style::default(), false);
        assert_eq!(text.stdout, "the text reply");
        let exit = Style {
            exit_status: true,
            ..Style::default()
        };
        assert_eq!(outcome(done(run), &exit, false).code, 3);
        let running = json!({"pane": "%1", "run_id": "r2", "status": "running", "cursor": 9});
        let out = outcome(done(running.clone()), &exit, true);
        assert_eq!(out.code, STILL_RUNNING);
        assert!(
            out.stderr
                .contains(r#"tmux-mcp call run '{"run_id":"r2"}'"#),
            "{}",
            out.stderr
        );
        let out = outcome(done(running), &exit, false);
        assert!(out.stderr.contains("was this process's"), "{}", out.stderr);
        let timeout = json!({"pane": "%1", "status": "timeout", "cursor": 42});
        let out = outcome(done(timeout), &json, true);
        assert!(out.stderr.contains("\"cursor\": 42"), "{}", out.stderr);
    }

    #[test]
    fn tool_errors_exit_1_and_bad_arguments_2() {
        use rmcp::handler::server::tool::IntoCallToolResult as _;
        let error = crate::reply::ToolError::new("run", "no such pane", "List the terminals")
            .into_call_tool_result();
        let json = Style {
            json: true,
            ..Style::default()
        };
        let out = outcome(error.unwrap(), &json, false);
        assert_eq!(out.code, 1);
        assert!(out.stderr.contains("no such pane"), "{}", out.stderr);
        let printed: Value = serde_json::from_str(&out.stdout).unwrap();
        assert_eq!(printed["is_error"], true);
        let bad = crate::mcp::server::bad_arguments("run", "missing field `target`");
        let out = outcome(bad, &Style::default(), false);
        assert_eq!(out.code, USAGE);
        assert!(out.stderr.contains("target"), "{}", out.stderr);
        assert!(out.stdout.is_empty());
    }
}
