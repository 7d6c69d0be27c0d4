//! The waits of the `inspect` toolset: for output matching a pattern, for
//! quiet, for a program to exit. Push-based (driven by the pane's output
//! stream and state), bounded, cancellable, with progress notifications,
//! and every reply carries a cursor to resume from.

use std::time::Instant;

use rmcp::handler::server::wrapper::Parameters;
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tmux_control::{Pattern, WaitError};

use crate::reply::{Json, Summary, ToolError};
use crate::server::TmuxMcp;
use crate::text::trim_trailing_blank;
use crate::tools::inspect::{cancelled, last_lines, ms, pattern_source};
use crate::tools::{WaitStatus, seconds_arg};
use crate::wait::{CallCtx, Waited};

const WAIT_FOR_OUTPUT: &str = "Wait until a pane prints text matching a pattern (a regular expression, Rust syntax, ^ and $ match at line ends; or a plain string with literal=true). Push-based: it returns within milliseconds of the output arriving, with no polling. \
It looks at output after cursor; without cursor it starts just before the last input tmux-mcp sent to the pane (so a reply that arrived before this call is not missed) or after the last completed run, or at the current end if tmux-mcp never typed there. Matching is on plain text (escape codes removed). \
Bounded by timeout_secs (default 30, capped by the server, at most 60 unless configured); sends progress notifications while waiting and can be cancelled. \
Returns status matched (with the matched text and some text before and after it), timeout (with the tail of what was seen), exited (the pane's program ended) or gone, and always a cursor: pass it to the next wait or read_output to continue exactly after this point. \
Fails if the pattern is invalid or the target does not exist.";

/// Arguments of `wait_for_output`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WaitForOutputArgs {
    /// The pane: an id like `%3` or an exact name.
    pub target: String,
    /// What to wait for: a regular expression, or a plain string with literal=true.
    pub pattern: String,
    /// Treat pattern as a plain string (default false).
    #[serde(default)]
    pub literal: bool,
    /// Ignore case (default false).
    #[serde(default)]
    pub ignore_case: bool,
    /// Look at output from this cursor on (from an earlier reply).
    pub cursor: Option<u64>,
    /// Give up after this many seconds (default 30; a larger number than the server's maximum, 60 unless configured, counts as that maximum).
    #[schemars(range(min = 0))]
    pub timeout_secs: Option<f64>,
}

/// Result of `wait_for_output`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct WaitForOutputResult {
    /// The pane watched.
    pub pane: String,
    /// How the wait ended.
    pub status: WaitStatus,
    /// The pattern matched.
    pub matched: bool,
    /// The matched text (secrets masked).
    pub text: Option<String>,
    /// Up to about 500 bytes of text before the match.
    pub before: String,
    /// Text after the match that arrived with it.
    pub after: String,
    /// On timeout: the last text seen.
    pub tail: String,
    /// The cursor the search started at.
    pub searched_from: u64,
    /// Where the next wait or read should start.
    pub cursor: u64,
    /// Exit status, when status is exited.
    pub exit_status: Option<i32>,
    /// How long the wait took, in milliseconds.
    pub waited_ms: u64,
}

impl Summary for WaitForOutputResult {
    fn summary(&self) -> String {
        match self.status {
            WaitStatus::Matched => format!(
                "Matched in pane {} after {} ms: {:?}. cursor={} (resume here).\nBefore: {}\nAfter: {}",
                self.pane,
                self.waited_ms,
                self.text.as_deref().unwrap_or_default(),
                self.cursor,
                last_lines(&self.before, 5),
                self.after
            ),
            WaitStatus::Timeout => format!(
                "No match in pane {} within {} ms. Call again with cursor={} to keep waiting without missing output. Last text seen:\n{}",
                self.pane, self.waited_ms, self.cursor, self.tail
            ),
            WaitStatus::Exited => format!(
                "The program in pane {} exited (status {}) before a match; cursor={}. Last text seen:\n{}",
                self.pane,
                self.exit_status
                    .map_or_else(|| "unknown".to_owned(), |s| s.to_string()),
                self.cursor,
                self.tail
            ),
            other => format!(
                "Pane {} is {}; no match. cursor={}",
                self.pane,
                other.as_str(),
                self.cursor
            ),
        }
    }
}

const WAIT_FOR_IDLE: &str = "Wait until a pane has printed nothing for quiet_secs (default 1 second): a simple way to wait for a program to settle (a build, an installer, a TUI redrawing) when you do not know what it will print. Push-based, no polling. \
Bounded by timeout_secs (default 30, capped by the server); sends progress notifications and can be cancelled. \
Returns status idle or timeout (or gone), the last lines of the screen, and a cursor for the next wait or read_output. \
Fails if the target does not exist.";

/// Arguments of `wait_for_idle`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WaitForIdleArgs {
    /// The pane: an id like `%3` or an exact name.
    pub target: String,
    /// How long the pane must stay quiet, in seconds (default 1; at most timeout_secs).
    #[schemars(range(min = 0))]
    pub quiet_secs: Option<f64>,
    /// Give up after this many seconds (default 30; a larger number than the server's maximum, 60 unless configured, counts as that maximum).
    #[schemars(range(min = 0))]
    pub timeout_secs: Option<f64>,
}

/// Result of `wait_for_idle`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct WaitForIdleResult {
    /// The pane watched.
    pub pane: String,
    /// idle, timeout or gone.
    pub status: WaitStatus,
    /// The pane was quiet for the asked time.
    pub idle: bool,
    /// The last non-blank lines of the screen (secrets masked).
    pub screen_tail: Vec<String>,
    /// Output cursor now.
    pub cursor: u64,
    /// How long the wait took, in milliseconds.
    pub waited_ms: u64,
}

impl Summary for WaitForIdleResult {
    fn summary(&self) -> String {
        let head = match self.status {
            WaitStatus::Idle => format!("Pane {} is idle (after {} ms)", self.pane, self.waited_ms),
            WaitStatus::Timeout => format!(
                "Pane {} kept printing for {} ms (timeout); call again to keep waiting",
                self.pane, self.waited_ms
            ),
            other => format!("Pane {} is {}", self.pane, other.as_str()),
        };
        format!(
            "{head}; cursor={}. Screen ends with:\n{}",
            self.cursor,
            self.screen_tail.join("\n")
        )
    }
}

const WAIT_FOR_EXIT: &str = "Wait until the program in a pane exits (for a terminal created with a command, or a shell that was told to exit). Panes tmux-mcp creates are kept after their program exits, so the exit status is known. Push-based, no polling. \
Bounded by timeout_secs (default 30, capped by the server); sends progress notifications and can be cancelled. \
Returns status exited (with exit_status), gone (the pane was closed), or timeout, plus a cursor for read_output. To wait for one shell command instead, use run. \
Fails if the target does not exist.";

/// Arguments of `wait_for_exit`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WaitForExitArgs {
    /// The pane: an id like `%3` or an exact name.
    pub target: String,
    /// Give up after this many seconds (default 30; a larger number than the server's maximum, 60 unless configured, counts as that maximum).
    #[schemars(range(min = 0))]
    pub timeout_secs: Option<f64>,
}

/// Result of `wait_for_exit`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct WaitForExitResult {
    /// The pane watched.
    pub pane: String,
    /// exited, gone or timeout.
    pub status: WaitStatus,
    /// The program has exited.
    pub exited: bool,
    /// Its exit status, when tmux knows it.
    pub exit_status: Option<i32>,
    /// Output cursor now.
    pub cursor: u64,
    /// How long the wait took, in milliseconds.
    pub waited_ms: u64,
}

impl Summary for WaitForExitResult {
    fn summary(&self) -> String {
        match self.status {
            WaitStatus::Exited => format!(
                "The program in pane {} exited with status {} (after {} ms); cursor={}",
                self.pane,
                self.exit_status
                    .map_or_else(|| "unknown".to_owned(), |s| s.to_string()),
                self.waited_ms,
                self.cursor
            ),
            WaitStatus::Gone => format!(
                "Pane {} is gone (closed); cursor={}",
                self.pane, self.cursor
            ),
            _ => format!(
                "The program in pane {} is still running after {} ms; call again to keep waiting. cursor={}",
                self.pane, self.waited_ms, self.cursor
            ),
        }
    }
}

#[tool_router(router = wait_router, vis = "pub(crate)")]
impl TmuxMcp {
    #[tool(description = WAIT_FOR_OUTPUT, annotations(title = "Wait for output", read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false))]
    pub(crate) async fn wait_for_output(
        &self,
        Parameters(args): Parameters<WaitForOutputArgs>,
        cc: CallCtx,
    ) -> Result<Json<WaitForOutputResult>, ToolError> {
        let limit = self.wait_limit("wait_for_output", args.timeout_secs)?;
        let conn = self.conn().await?;
        let r = conn.resolve(&args.target).await?;
        let what = format!("Waiting for output in pane {}", r.pane);
        let pattern = Pattern::regex(&pattern_source(&args.pattern, args.literal, args.ignore_case))
            .map_err(|e| ToolError::new(what.clone(), e.to_string(), "Fix the pattern (Rust regex syntax), or pass literal=true to wait for the text as is"))?;
        let po = conn.follow(r.pane).await?;
        let end = po.end_offset();
        let from = args
            .cursor
            .or_else(|| conn.last_input(r.pane))
            .unwrap_or(end)
            .min(end);
        let started = Instant::now();
        let expect = po.expect_from(pattern, from);
        // Right after a respawn the followed state can still say dead.
        let stale = po.state().dead && conn.pane_row(r.pane).await.is_ok_and(|row| !row.dead);
        let exit = async {
            if stale {
                std::future::pending().await
            } else {
                po.wait_exit(limit).await
            }
        };
        let fut = async {
            tokio::select! {
                biased;
                m = expect.wait(limit) => Ok(m),
                x = exit => Err(x),
            }
        };
        let outcome = match cc.wait(&what, limit, fut).await {
            Waited::Cancelled => return Err(cancelled(&what)),
            Waited::Done(o) => o,
        };
        let waited_ms = ms(started.elapsed());
        let mut result = WaitForOutputResult {
            pane: r.pane.to_string(),
            status: WaitStatus::Timeout,
            matched: false,
            text: None,
            before: String::new(),
            after: String::new(),
            tail: String::new(),
            searched_from: from,
            cursor: po.end_offset(),
            exit_status: None,
            waited_ms,
        };
        match outcome {
            Ok(Ok(m)) => {
                result.status = WaitStatus::Matched;
                result.matched = true;
                result.text = Some(self.redact(&m.text));
                result.before = self.redact(&m.before);
                result.after = self.redact(&m.after);
                result.cursor = m.resume_offset;
            }
            Ok(Err(WaitError::Timeout { tail, .. }))
            | Err(Err(WaitError::Timeout { tail, .. })) => {
                result.tail = self.redact(&last_lines(&tail, 10));
                result.cursor = resume_line_start(&po, from);
            }
            Ok(Err(WaitError::Ended(_))) | Err(Err(WaitError::Ended(_))) => {
                result.status = WaitStatus::Gone;
            }
            Err(Ok(exit)) => {
                result.status = if exit.gone {
                    WaitStatus::Gone
                } else {
                    WaitStatus::Exited
                };
                result.exit_status = exit.status;
                let e = self.excerpt(
                    &po,
                    po.end_offset().saturating_sub(2000).max(from),
                    po.end_offset(),
                    2000,
                );
                result.tail = last_lines(&e.text, 10);
            }
            Ok(Err(_)) | Err(Err(_)) => {}
        }
        Ok(Json(result))
    }

    #[tool(description = WAIT_FOR_IDLE, annotations(title = "Wait for idle", read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false))]
    pub(crate) async fn wait_for_idle(
        &self,
        Parameters(args): Parameters<WaitForIdleArgs>,
        cc: CallCtx,
    ) -> Result<Json<WaitForIdleResult>, ToolError> {
        let limit = self.wait_limit("wait_for_idle", args.timeout_secs)?;
        // At most the wait itself: a longer quiet time could never be seen.
        let quiet = seconds_arg(
            "wait_for_idle",
            "quiet_secs",
            args.quiet_secs.unwrap_or(1.0),
            limit,
            "Leave quiet_secs out for 1 s, or give at most timeout_secs",
        )?;
        let conn = self.conn().await?;
        let r = conn.resolve(&args.target).await?;
        let what = format!("Waiting for pane {} to go quiet", r.pane);
        let po = conn.follow(r.pane).await?;
        let started = Instant::now();
        let status = match cc.wait(&what, limit, po.wait_idle(quiet, limit)).await {
            Waited::Cancelled => return Err(cancelled(&what)),
            Waited::Done(Ok(())) => WaitStatus::Idle,
            Waited::Done(Err(WaitError::Timeout { .. })) => WaitStatus::Timeout,
            Waited::Done(Err(_)) => WaitStatus::Gone,
        };
        let mut screen_tail = Vec::new();
        if status != WaitStatus::Gone
            && let Ok(screen) = po.screen().await
        {
            let mut lines = screen.lines;
            trim_trailing_blank(&mut lines);
            let from = lines.len().saturating_sub(10);
            screen_tail = lines[from..].iter().map(|l| self.redact(l)).collect();
        }
        Ok(Json(WaitForIdleResult {
            pane: r.pane.to_string(),
            idle: status == WaitStatus::Idle,
            status,
            screen_tail,
            cursor: po.end_offset(),
            waited_ms: ms(started.elapsed()),
        }))
    }

    #[tool(description = WAIT_FOR_EXIT, annotations(title = "Wait for exit", read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false))]
    pub(crate) async fn wait_for_exit(
        &self,
        Parameters(args): Parameters<WaitForExitArgs>,
        cc: CallCtx,
    ) -> Result<Json<WaitForExitResult>, ToolError> {
        let limit = self.wait_limit("wait_for_exit", args.timeout_secs)?;
        let conn = self.conn().await?;
        let r = conn.resolve(&args.target).await?;
        let what = format!("Waiting for the program in pane {} to exit", r.pane);
        let po = conn.follow(r.pane).await?;
        let started = Instant::now();
        let (status, exit_status) = match cc.wait(&what, limit, po.wait_exit(limit)).await {
            Waited::Cancelled => return Err(cancelled(&what)),
            Waited::Done(Ok(exit)) if exit.gone => (WaitStatus::Gone, exit.status),
            Waited::Done(Ok(exit)) => (WaitStatus::Exited, exit.status),
            Waited::Done(Err(WaitError::Timeout { .. })) => (WaitStatus::Timeout, None),
            Waited::Done(Err(_)) => (WaitStatus::Gone, None),
        };
        Ok(Json(WaitForExitResult {
            pane: r.pane.to_string(),
            exited: matches!(status, WaitStatus::Exited | WaitStatus::Gone),
            status,
            exit_status,
            cursor: po.end_offset(),
            waited_ms: ms(started.elapsed()),
        }))
    }
}

/// The start of the last (unfinished) line seen since `from`, so that a
/// resumed wait still sees a match that straddles the time limit.
fn resume_line_start(po: &tmux_control::PaneOutput, from: u64) -> u64 {
    let end = po.end_offset();
    let look = end.saturating_sub(4096).max(from);
    let (at, raw) = po.read_from(look, usize::try_from(end - look).unwrap_or(4096));
    match raw.iter().rposition(|&b| b == b'\n') {
        Some(p) => at + p as u64 + 1,
        None => look,
    }
}
