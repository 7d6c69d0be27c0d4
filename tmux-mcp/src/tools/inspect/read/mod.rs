//! `capture_screen`, `read_output` and `search_output`: what a pane shows
//! and has printed.
//!
//! This file holds the tools' descriptions and their router; `screen` the
//! arguments and result of `capture_screen` and the line numbers a pane
//! has, `output` those of `read_output` and the page of the output log it
//! reads, `search` those of `search_output`.

mod output;
mod screen;
mod search;

use rmcp::handler::server::wrapper::Parameters;
use rmcp::{tool, tool_router};
use tmux_control::PaneId;
use tmux_control::command::CapturePane;

use crate::mcp::server::TmuxMcp;
use crate::reply::{Json, ToolError};
use crate::text::{keep_last_lines, trim_trailing_blank};
use crate::tools::inspect::search_regex;

pub(crate) use output::{OutputSource, ReadOutputArgs, ReadOutputResult};
pub(crate) use screen::{CaptureScreenArgs, CaptureScreenResult, ScreenSource};
pub(crate) use search::{SearchMatch, SearchOutputArgs, SearchOutputResult};

use output::page_bytes;
use screen::LineRange;

/// Lines on either side of a `capture_screen` range (and before the last
/// lines `read_output` reads from the scrollback) that are captured and
/// redacted with it but not shown: a window into a private key block of
/// up to this many lines holds neither BEGIN nor END but is masked whole.
const WINDOW_CONTEXT: i64 = 1024;
// ---------------------------------------------------------------- capture_screen

const CAPTURE_SCREEN: &str = "What a pane shows now, as plain text: by default the visible screen, as a human sees it. For full-screen programs (editors, TUIs, prompts) and any terminal's current state. \
start/end read history (0 is the top visible line, negative is scrollback: start=-100); whole_history=true reads all; escapes=true keeps colours as ANSI codes. \
Returns the lines with their numbers (first_line..last_line), size, cursor position, copy mode, alternate screen, and an output cursor.";
// ---------------------------------------------------------------- read_output

const READ_OUTPUT: &str = "Read a pane's output as plain text (escape codes removed, overwrites applied). \
With cursor (from any reply: create_terminal, send_text, run, the waits…): everything written since, exactly once and in order, from tmux-mcp's log of the pane (which starts when tmux-mcp first touched it); while more is true, call again with next_cursor. \
Without cursor: the last last_lines lines of the scrollback, also from before tmux-mcp followed the pane. \
missed_bytes and losses say what output is missing and why.";
// ---------------------------------------------------------------- search_output

const SEARCH_OUTPUT: &str = "Search a pane's scrollback and screen for a regex (Rust syntax) or, with literal=true, a plain string: find an error, a URL or a value without reading everything. \
Returns the matching lines with context_lines around them and their line numbers (negative: scrollback), to read around with capture_screen start/end; total_matches counts all matches.";
#[tool_router(router = read_router, vis = "pub(super)")]
impl TmuxMcp {
    #[tool(description = CAPTURE_SCREEN, annotations(title = "Capture screen", read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false))]
    pub(crate) async fn capture_screen(
        &self,
        Parameters(args): Parameters<CaptureScreenArgs>,
    ) -> Result<Json<CaptureScreenResult>, ToolError> {
        let start = args.start.unwrap_or(0);
        if let (false, Some(end)) = (args.whole_history, args.end)
            && start > end
        {
            return Err(ToolError::new(
                "capture_screen",
                format!(
                    "start ({start}{}) is after end ({end})",
                    if args.start.is_none() {
                        ", the default"
                    } else {
                        ""
                    }
                ),
                "Give start at or before end (0 is the top of the screen, negative numbers are scrollback)",
            ));
        }
        let conn = self.conn().await?;
        // A pane id whose output is followed and has not ended names a pane
        // that exists: no round trip to tmux to resolve it.
        let known = args
            .target
            .parse::<PaneId>()
            .ok()
            .and_then(|pane| conn.journals.live_output(pane));
        let (pane, po) = match known {
            Some(po) => {
                // Named as resolving would: the call is about this pane.
                crate::terminal::record::touched(po.pane());
                (po.pane(), po)
            }
            None => {
                let r = conn.resolve(&args.target).await?;
                (r.pane, conn.follow(r.pane).await?)
            }
        };
        let what = format!("Capturing pane {pane}");
        let plain =
            !args.whole_history && !args.escapes && args.start.is_none() && args.end.is_none();
        let state = po.state();
        // The visible screen as plain text comes from the emulator when it
        // is in sync (no tmux round trip); copy mode shows tmux's own view.
        if plain
            && !state.in_mode
            && let Some(screen) = po.emulated_screen()
        {
            let mut lines = screen.lines;
            let height = i64::from(screen.height);
            trim_trailing_blank(&mut lines);
            let last_line = i64::try_from(lines.len()).unwrap_or(height) - 1;
            let redacted = self.redact_lines(&lines);
            let (dropped, text) = keep_last_lines(&redacted, self.screen_budget(args.max_bytes));
            let line = |n: i64| i32::try_from(n).unwrap_or(i32::MAX);
            return Ok(Json(CaptureScreenResult {
                pane: pane.to_string(),
                text,
                first_line: line(i64::try_from(dropped).unwrap_or(0)),
                last_line: line(last_line.max(0)),
                omitted_lines: u32::try_from(dropped).unwrap_or(u32::MAX),
                width: screen.width,
                height: screen.height,
                cursor_x: screen.cursor_x,
                cursor_y: screen.cursor_y,
                history_lines: None,
                in_mode: false,
                alternate_screen: screen.alternate_screen,
                dead: state.dead,
                cursor: screen.offset,
                source: ScreenSource::Emulator,
            }));
        }
        if plain && !state.in_mode {
            // Out of sync: tmux answers this time, and the emulator is
            // seeded again for the next read, in the background.
            let again = po.clone();
            tokio::spawn(async move {
                let _ = again.resync_screen().await;
            });
        }
        let row = conn.pane_row(pane).await?;
        // Line numbers beyond the scrollback or the screen count as its
        // first or last line, as tmux itself takes them; clamping them here
        // keeps the reply's line numbers right and every sum in range.
        let lines_on = LineRange::of(&row);
        // The lines asked for (tmux's default start is the top of the
        // screen, its default end the bottom), and around them up to
        // WINDOW_CONTEXT lines more: redacted with them, not shown.
        let (first, last) = if args.whole_history {
            (lines_on.top, lines_on.bottom)
        } else {
            (
                lines_on.clamp(args.start.unwrap_or(0)),
                args.end.map_or(lines_on.bottom, |end| lines_on.clamp(end)),
            )
        };
        let mut cmd = CapturePane::new(pane);
        let context_after = if args.whole_history {
            cmd = cmd.whole_history();
            0
        } else {
            let after = lines_on.clamp(i64::from(last) + WINDOW_CONTEXT);
            cmd = cmd
                .start(lines_on.clamp(i64::from(first) - WINDOW_CONTEXT))
                .end(after);
            usize::try_from(i64::from(after) - i64::from(last)).unwrap_or(0)
        };
        if args.escapes {
            cmd = cmd.escapes();
        }
        let raw = conn
            .tmux
            .run(cmd)
            .await
            .map_err(|e| ToolError::tmux(what, &e))?;
        let lines: Vec<String> = raw
            .iter()
            .map(|l| String::from_utf8_lossy(l).into_owned())
            .collect();
        // The capture's last line is `after`: the window is counted from
        // the end (tmux gives fewer lines when the history is shorter).
        let asked = if args.whole_history {
            lines.len()
        } else {
            usize::try_from(i64::from(last) - i64::from(first) + 1).unwrap_or(0)
        };
        let window_end = lines.len().saturating_sub(context_after);
        let window_start = window_end.saturating_sub(asked);
        let mut last_line = i64::from(last);
        let count = i64::try_from(window_end - window_start).unwrap_or(i64::MAX);
        let first_line = last_line - count + 1;
        // Trailing blank lines of the screen are dropped (not the lines a
        // mask empties).
        let shown_end = window_start
            + lines[window_start..window_end]
                .iter()
                .rposition(|l| !l.trim().is_empty())
                .map_or(0, |i| i + 1);
        last_line -= i64::try_from(window_end - shown_end).unwrap_or(0);
        let redacted = self
            .inner
            .redactor
            .redact_window(&lines, window_start..shown_end);
        let (dropped, text) = keep_last_lines(&redacted, self.screen_budget(args.max_bytes));
        let line = |n: i64| i32::try_from(n).unwrap_or(if n < 0 { i32::MIN } else { i32::MAX });
        Ok(Json(CaptureScreenResult {
            pane: pane.to_string(),
            text,
            first_line: line(first_line + i64::try_from(dropped).unwrap_or(0)),
            last_line: line(last_line.max(first_line)),
            omitted_lines: u32::try_from(dropped).unwrap_or(u32::MAX),
            width: row.width,
            height: row.height,
            cursor_x: row.cursor_x,
            cursor_y: row.cursor_y,
            history_lines: Some(row.history_size),
            in_mode: row.in_mode,
            alternate_screen: row.alternate_on,
            dead: row.dead,
            cursor: po.end_offset(),
            source: ScreenSource::Tmux,
        }))
    }

    #[tool(description = READ_OUTPUT, annotations(title = "Read output", read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false))]
    pub(crate) async fn read_output(
        &self,
        Parameters(args): Parameters<ReadOutputArgs>,
    ) -> Result<Json<ReadOutputResult>, ToolError> {
        let conn = self.conn().await?;
        let r = conn.resolve(&args.target).await?;
        let po = conn.follow(r.pane).await?;
        let budget = self.budget(args.max_bytes);
        if let Some(cursor) = args.cursor {
            let end = po.end_offset();
            let start = po.start_offset();
            if cursor > end {
                return Err(ToolError::new(
                    format!("Reading pane {} from cursor {cursor}", r.pane),
                    format!("the pane's output only reaches cursor {end}"),
                    "Use a cursor from a reply about this pane, or omit cursor to read the last lines",
                ));
            }
            let from = cursor.max(start);
            let page = self.output_page(&po, from, budget, args.raw);
            let next = page.at + page.len;
            return Ok(Json(ReadOutputResult {
                pane: r.pane.to_string(),
                source: OutputSource::Log,
                text: page.text,
                from_cursor: Some(page.at),
                next_cursor: next,
                more: next < po.end_offset(),
                missed_bytes: page.at.saturating_sub(cursor),
                omitted_lines: 0,
                losses: self.losses(&po, cursor, next),
            }));
        }
        let n = args.last_lines.unwrap_or(100).min(10_000);
        // WINDOW_CONTEXT lines more, redacted with the last lines, not shown.
        let reach = i64::try_from(n).unwrap_or(10_000) + WINDOW_CONTEXT;
        let mut cmd = CapturePane::new(r.pane)
            .start(-i32::try_from(reach).unwrap_or(i32::MAX))
            .to_visible_end();
        if args.raw {
            cmd = cmd.escapes();
        }
        let next_cursor = po.end_offset();
        let raw = conn
            .tmux
            .run(cmd)
            .await
            .map_err(|e| ToolError::tmux(format!("Reading pane {}", r.pane), &e))?;
        let mut lines: Vec<String> = raw
            .iter()
            .map(|l| String::from_utf8_lossy(l).into_owned())
            .collect();
        trim_trailing_blank(&mut lines);
        let n = usize::try_from(n).unwrap_or(usize::MAX);
        let lines = self
            .inner
            .redactor
            .redact_window(&lines, lines.len().saturating_sub(n)..lines.len());
        let (dropped, text) = keep_last_lines(&lines, page_bytes(budget));
        Ok(Json(ReadOutputResult {
            pane: r.pane.to_string(),
            source: OutputSource::Scrollback,
            text,
            from_cursor: None,
            next_cursor,
            more: false,
            missed_bytes: 0,
            omitted_lines: u32::try_from(dropped).unwrap_or(u32::MAX),
            losses: Vec::new(),
        }))
    }

    #[tool(description = SEARCH_OUTPUT, annotations(title = "Search output", read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false))]
    pub(crate) async fn search_output(
        &self,
        Parameters(args): Parameters<SearchOutputArgs>,
    ) -> Result<Json<SearchOutputResult>, ToolError> {
        let conn = self.conn().await?;
        let r = conn.resolve(&args.target).await?;
        let what = format!("Searching pane {}", r.pane);
        let re = search_regex(&what, &args.pattern, args.literal, args.ignore_case)?;
        conn.follow(r.pane).await?;
        let row = conn.pane_row(r.pane).await?;
        let raw = conn
            .tmux
            .run(CapturePane::new(r.pane).whole_history())
            .await
            .map_err(|e| ToolError::tmux(what, &e))?;
        let lines: Vec<String> = raw
            .iter()
            .map(|l| String::from_utf8_lossy(l).into_owned())
            .collect();
        // Search the redacted text: a search must not reveal a masked secret.
        let lines = self.redact_lines(&lines);
        let hist = i64::try_from(lines.len()).unwrap_or(0) - i64::from(row.height);
        let ctx = usize::try_from(args.context_lines.unwrap_or(2).min(20)).unwrap_or(20);
        let max = usize::try_from(args.max_matches.unwrap_or(50).min(500)).unwrap_or(500);
        let budget = self.screen_budget(None);
        let mut used = 0usize;
        let mut matches = Vec::new();
        let mut total = 0u32;
        let mut truncated = false;
        for (i, line) in lines.iter().enumerate() {
            if !re.is_match(line) {
                continue;
            }
            total += 1;
            if matches.len() >= max || used > budget {
                truncated = true;
                continue;
            }
            let before: Vec<String> = lines[i.saturating_sub(ctx)..i].to_vec();
            let after: Vec<String> = lines[i + 1..(i + 1 + ctx).min(lines.len())].to_vec();
            let text = line.clone();
            used += text.len()
                + before
                    .iter()
                    .chain(&after)
                    .map(|l| l.len() + 1)
                    .sum::<usize>();
            matches.push(SearchMatch {
                line: i32::try_from(i64::try_from(i).unwrap_or(0) - hist).unwrap_or(0),
                text,
                before,
                after,
            });
        }
        Ok(Json(SearchOutputResult {
            pane: r.pane.to_string(),
            matches,
            total_matches: total,
            truncated,
            searched_lines: u32::try_from(lines.len()).unwrap_or(u32::MAX),
        }))
    }
}
