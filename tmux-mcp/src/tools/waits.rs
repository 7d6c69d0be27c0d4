//! The waits of the `inspect` toolset: for output matching a pattern, for
//! quiet, for a program to exit. Push-based (driven by the pane's output
//! stream and state), bounded, cancellable, with progress notifications,
//! and every reply carries a cursor to resume from.

use std::time::Instant;

use rmcp::handler::server::wrapper::Parameters;
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tmux_control::{Match, PaneOutput, Pattern, PlainText, WaitError, WaitOutcome};

use crate::mcp::server::TmuxMcp;
use crate::mcp::wait::{CallCtx, Waited};
use crate::reply::{Json, Summary, ToolError};
use crate::text::shape::{LossReport, describe_losses};
use crate::text::{json_len, json_prefix, trim_trailing_blank};
use crate::tools::inspect::{cancelled, last_lines, ms, pattern_source};
use crate::tools::{WaitStatus, seconds_arg};

const WAIT_FOR_OUTPUT: &str = "Wait until a pane prints text matching a regex (Rust syntax; ^ and $ match at line ends) or, with literal=true, a plain string (escape codes removed). \
Like every wait: push-based, bounded by timeout_secs, with progress notifications. \
It looks after cursor; without one, from just before tmux-mcp's last input to the pane (a fast reply is not missed), else after the last completed run, else from now. \
Returns status matched (the match with text around it), timeout (the tail seen), exited or gone, and a cursor to continue right after.";

/// Arguments of `wait_for_output`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct WaitForOutputArgs {
    /// The pane: `%3` or an exact name.
    pub target: String,
    /// A regex, or a plain string with literal=true.
    pub pattern: String,
    /// pattern is a plain string.
    #[serde(default)]
    pub literal: bool,
    /// Ignore case.
    #[serde(default)]
    pub ignore_case: bool,
    /// Look at output from this cursor (from a reply) on.
    pub cursor: Option<u64>,
    /// Default 30 s; capped at the server's maximum (60).
    #[schemars(range(min = 0))]
    pub timeout_secs: Option<f64>,
}

/// Result of `wait_for_output`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct WaitForOutputResult {
    /// The pane watched.
    pub pane: String,
    /// How the wait ended.
    pub status: WaitStatus,
    /// The pattern matched.
    pub matched: bool,
    /// The matched text (secrets masked, redacted together with the text around it; at most about 1000 bytes).
    pub text: Option<String>,
    /// Up to about 500 bytes of text before the match.
    pub before: String,
    /// Text after the match that arrived with it (at most about 1000 bytes).
    pub after: String,
    /// On timeout or exit: the last lines seen (at most 10 lines, about 1500 bytes).
    pub tail: String,
    /// The cursor the search started at.
    pub searched_from: u64,
    /// Where the next wait or read should start.
    pub cursor: u64,
    /// Exit status, when status is exited.
    pub exit_status: Option<i32>,
    /// How long the wait took, in milliseconds.
    pub waited_ms: u64,
    /// Output missing between searched_from and cursor, and why (evicted from the log, or discarded by tmux): only when some is.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub losses: Vec<LossReport>,
}

impl Summary for WaitForOutputResult {
    fn summary(&self) -> String {
        let mut s = self.status_text();
        if let Some(lost) = describe_losses(&self.losses) {
            s.push('\n');
            s.push_str(&lost);
        }
        s
    }
}

impl WaitForOutputResult {
    fn status_text(&self) -> String {
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

const WAIT_FOR_IDLE: &str = "Wait until a pane has printed nothing for quiet_secs: to let a program settle (a build, an installer, a TUI redrawing) when you do not know what it will print. Returns status idle, timeout or gone, the screen's last lines, and a cursor.";

/// Arguments of `wait_for_idle`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct WaitForIdleArgs {
    /// The pane: `%3` or an exact name.
    pub target: String,
    /// Seconds of quiet needed (default 1, at most timeout_secs).
    #[schemars(range(min = 0))]
    pub quiet_secs: Option<f64>,
    /// Default 30 s; capped at the server's maximum (60).
    #[schemars(range(min = 0))]
    pub timeout_secs: Option<f64>,
}

/// Result of `wait_for_idle`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct WaitForIdleResult {
    /// The pane watched.
    pub pane: String,
    /// idle, timeout or gone.
    pub status: WaitStatus,
    /// The pane was quiet for the asked time.
    pub idle: bool,
    /// The last non-blank lines of the screen (at most 10 and about 2400 bytes; the whole screen is redacted at once, so a key block is masked whole).
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

const WAIT_FOR_EXIT: &str = "Wait until the program in a pane exits (a terminal created with a command, or a shell told to exit); to wait for one shell command, use run. Panes tmux-mcp creates are kept after their program exits, so the status is known. \
Returns status exited (with exit_status), gone or timeout, and a cursor for read_output.";

/// Arguments of `wait_for_exit`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct WaitForExitArgs {
    /// The pane: `%3` or an exact name.
    pub target: String,
    /// Default 30 s; capped at the server's maximum (60).
    #[schemars(range(min = 0))]
    pub timeout_secs: Option<f64>,
}

/// Result of `wait_for_exit`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct WaitForExitResult {
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
        let outcome = match cc
            .wait(&what, limit, po.wait_for(pattern, from, limit))
            .await
        {
            Waited::Cancelled => return Err(cancelled(&what)),
            Waited::Done(o) => o,
        };
        let mut result = WaitForOutputResult {
            pane: r.pane.to_string(),
            status: WaitStatus::Timeout,
            matched: false,
            text: None,
            before: String::new(),
            after: String::new(),
            tail: String::new(),
            searched_from: from,
            cursor: outcome.resume_offset(),
            exit_status: None,
            waited_ms: ms(started.elapsed()),
            losses: Vec::new(),
        };
        match outcome {
            WaitOutcome::Matched(m) => {
                result.status = WaitStatus::Matched;
                result.matched = true;
                let [before, text, after] = self.match_fields(&po, from, &m);
                result.text = Some(text);
                result.before = before;
                result.after = after;
            }
            WaitOutcome::Exited { exit, .. } => {
                result.status = WaitStatus::Exited;
                result.exit_status = exit.status;
                result.tail = self.tail_text(&po, from, po.end_offset(), 10, TAIL_BYTES);
            }
            WaitOutcome::Timeout { .. } => {
                result.tail = self.tail_text(&po, from, po.end_offset(), 10, TAIL_BYTES);
            }
            _ => result.status = WaitStatus::Gone,
        }
        result.losses = self.losses(&po, from, result.cursor);
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
            // The whole screen at once: a block that started above the
            // tail (a private key) is still masked whole.
            let mut lines = self.redact_lines(&screen.lines);
            trim_trailing_blank(&mut lines);
            screen_tail = last_screen_lines(&lines, 10, SCREEN_TAIL_BYTES);
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

/// The most bytes (as JSON) of a wait's tail of output.
const TAIL_BYTES: usize = 1500;

/// The most bytes (as JSON) of `wait_for_idle`'s screen tail.
const SCREEN_TAIL_BYTES: usize = 2400;

/// The most bytes (as JSON) of the text before a match.
const BEFORE_BYTES: usize = 512;

/// The most bytes (as JSON) of a match, and of the text after it.
const MATCH_BYTES: usize = 1024;

/// Text before the match redacted with it but not shown (a secret that
/// began earlier, a key block's BEGIN line).
const CONTEXT_BYTES: usize = 4096;

/// Output after the match, read from the log when the reply is made,
/// redacted with it but not shown (the rest of a secret printed in two
/// writes).
const LOOKAHEAD_BYTES: usize = 2048;

/// The last `n` lines of `lines`, at most `max` bytes as JSON in all; a
/// line too long for the rest is cut (ending with `…`).
fn last_screen_lines(lines: &[String], n: usize, max: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut used = 0;
    for line in lines.iter().rev().take(n) {
        let left = max.saturating_sub(used);
        if left < 16 {
            break;
        }
        let cost = json_len(line);
        if cost <= left {
            out.push(line.clone());
            used += cost;
        } else {
            out.push(format!("{}…", json_prefix(line, left - 4)));
            break;
        }
    }
    out.reverse();
    out
}

/// The first UTF-8 character boundary at or after `i`.
fn char_start(bytes: &[u8], mut i: usize) -> usize {
    while i < bytes.len() && bytes[i] & 0xc0 == 0x80 {
        i += 1;
    }
    i.min(bytes.len())
}

impl TmuxMcp {
    /// A match's `before`, `text` and `after`, redacted as one text
    /// together with what surrounds them: the plain text around the match
    /// is read again from the log by the match's raw offsets (the searched
    /// part through a filter that starts where the wait's did), so the
    /// text well before the match (also before the wait's cursor) and the
    /// output that arrived after it are redacted with it, then each field
    /// is cut out. When the log no longer holds what the wait searched,
    /// the wait's own fields are redacted together instead.
    fn match_fields(&self, po: &PaneOutput, from: u64, m: &Match) -> [String; 3] {
        let Some(Around {
            plain,
            searched,
            ts,
            te,
            open_end,
        }) = around(po, from, m)
        else {
            let parts = [m.before.as_str(), m.text.as_str(), m.after.as_str()];
            let open_end = m.end >= po.end_offset();
            let [before, text, after]: [String; 3] = self
                .redact_parts(&parts, open_end)
                .try_into()
                .unwrap_or_default();
            return [
                before,
                bound(&text, MATCH_BYTES),
                bound(&after, MATCH_BYTES),
            ];
        };
        let cut = |i: usize| char_start(&plain, i);
        // Shown: at most BEFORE_BYTES before the match, and only what the
        // wait searched (like the wait's own `before`).
        let shown = cut(ts.saturating_sub(BEFORE_BYTES)).max(searched);
        let after_end = cut(te + MATCH_BYTES).min(plain.len()).max(te);
        let piece = |a: usize, b: usize| String::from_utf8_lossy(&plain[a..b]).into_owned();
        let parts = [
            piece(0, shown),
            piece(shown, ts),
            piece(ts, te),
            piece(te, after_end),
            piece(after_end, plain.len()),
        ];
        let refs: Vec<&str> = parts.iter().map(String::as_str).collect();
        let mut red = self.redact_parts(&refs, open_end).into_iter().skip(1);
        let before = red.next().unwrap_or_default();
        let text = red.next().unwrap_or_default();
        let after = red.next().unwrap_or_default();
        [before, bound(&text, MATCH_BYTES), after]
    }
}

/// `text` cut to at most `max` JSON bytes, ending with `…` when cut.
fn bound(text: &str, max: usize) -> String {
    let cut = json_prefix(text, max);
    if cut.len() == text.len() {
        text.to_owned()
    } else {
        format!("{cut}…")
    }
}

/// The plain text around match `m` of a wait from `from`, read from the
/// log by the match's raw offsets: up to [`CONTEXT_BYTES`] of the output
/// before `from` (from a line start, through a filter of its own), what
/// the wait searched (through a filter started at `from`, as the wait's
/// was), the match, and at most [`LOOKAHEAD_BYTES`] raw bytes after it.
/// `None` when the log no longer holds what the wait searched (evicted,
/// or a gap) or it does not agree with the match.
fn around(po: &PaneOutput, from: u64, m: &Match) -> Option<Around> {
    if from < po.start_offset() || m.start < from || m.end < m.start {
        return None;
    }
    let read = |at: u64, to: u64| {
        let len = usize::try_from(to - at).ok()?;
        let (got, raw) = po.read_from(at, len);
        (got == at && raw.len() == len).then_some(raw)
    };
    let searched_raw = read(from, m.start)?;
    let matched_raw = read(m.start, m.end)?;
    let mut plain = Vec::new();
    let look = from
        .saturating_sub(CONTEXT_BYTES as u64)
        .max(po.start_offset());
    if let Some(before) = read(look, from) {
        let line = before.iter().position(|&b| b == b'\n').map_or(0, |p| p + 1);
        PlainText::new().feed(&before[line..], &mut plain);
    }
    let searched = plain.len();
    let mut filter = PlainText::new();
    filter.feed(&searched_raw, &mut plain);
    let ts = plain.len();
    filter.feed(&matched_raw, &mut plain);
    let te = plain.len();
    if plain[ts..te] != *m.text.as_bytes() {
        return None;
    }
    let (ahead_at, ahead) = po.read_from(m.end, LOOKAHEAD_BYTES);
    if ahead_at == m.end {
        filter.feed(&ahead, &mut plain);
    }
    let open_end = ahead_at + ahead.len() as u64 >= po.end_offset();
    Some(Around {
        plain,
        searched,
        ts,
        te,
        open_end,
    })
}

/// What [`around`] returns.
struct Around {
    /// Context before the wait's start, what it searched, what came after.
    plain: Vec<u8>,
    /// Where the searched text starts in `plain`.
    searched: usize,
    /// The match's range in `plain`.
    ts: usize,
    te: usize,
    /// `plain` ends at the end of the output so far.
    open_end: bool,
}
