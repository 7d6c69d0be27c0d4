//! The cooked log as tools: `read_log` and `search_log` (see
//! [`crate::terminal::journal`]): what a terminal showed, line by line, with line
//! numbers that stay valid across reads, searches and restarts.

use std::fmt::Write as _;

use rmcp::handler::server::wrapper::Parameters;
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::mcp::server::TmuxMcp;
use crate::reply::{Json, Summary, ToolError};
use crate::terminal::journal::{Journal, LogLine};
use crate::text::cooked::LineKind;
use crate::text::json_len;
use crate::text::shape::REPLY_OVERHEAD;
use crate::tools::inspect::{matches_header, search_regex};

/// Most lines one `read_log` returns.
const MAX_LINES: usize = 10_000;

/// One line of the cooked log.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct LogEntry {
    /// Its line number (stable: later reads, searches and regions use it).
    pub n: u64,
    /// The text (secrets masked).
    pub text: String,
    /// text, screen (a full-screen program's whole session, one line) or gap (output not recorded, and why).
    #[serde(skip_serializing_if = "is_text")]
    pub kind: &'static str,
}

fn is_text(kind: &&'static str) -> bool {
    *kind == "text"
}

const READ_LOG: &str = "Read a terminal's cooked log: its output as the lines a human saw (cursor motion and erases applied; a full-screen program like vim is one line), numbered stably across reads, searches, regions and tmux-mcp restarts. Kept on disk (--log-bytes, 8 MiB per terminal), it reaches further back than the scrollback. \
from_line reads forward from a line (a next_line, a match, a region); else the last last_lines lines. The last live_lines lines are still on screen and may change.";

/// Arguments of `read_log`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ReadLogArgs {
    /// The pane: `%3` or an exact name.
    pub target: String,
    /// Read from this line on.
    pub from_line: Option<u64>,
    /// Without from_line: how many last lines (default 100, at most 10000).
    pub last_lines: Option<u64>,
    /// Reply size budget in bytes (default 8192, at least 2048).
    pub max_bytes: Option<usize>,
}

/// Result of `read_log`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct ReadLogResult {
    /// The pane read.
    pub pane: String,
    /// The lines, oldest first.
    pub lines: Vec<LogEntry>,
    /// The oldest line the log still holds.
    pub oldest_line: u64,
    /// Where to continue: the line number after the last one returned.
    pub next_line: u64,
    /// More lines are already there after next_line.
    pub more: bool,
    /// How many of the returned lines are still on the screen (the last ones; they can change).
    pub live_lines: u32,
    /// A full-screen program is running now (its session becomes one line when it ends).
    pub full_screen: bool,
    /// The log is on disk (false: memory only, the state directory could not be written).
    pub durable: bool,
    /// Lines left out because of the size budget (read on with from_line=next_line).
    pub omitted_lines: u32,
}

impl Summary for ReadLogResult {
    fn summary(&self) -> String {
        let mut s = format!(
            "Log of {}: lines {}..{} (oldest held: {}){}{}{}:",
            self.pane,
            self.lines.first().map_or(self.next_line, |l| l.n),
            self.next_line.saturating_sub(1),
            self.oldest_line,
            if self.more {
                "; more after: call again with from_line=next_line"
            } else {
                ""
            },
            if self.live_lines > 0 {
                format!("; the last {} still on screen", self.live_lines)
            } else {
                String::new()
            },
            if self.full_screen {
                "; a full-screen program is running"
            } else {
                ""
            },
        );
        for l in &self.lines {
            let _ = write!(s, "\n{:>6}  {}", l.n, l.text);
        }
        s
    }
}

const SEARCH_LOG: &str = "Search a terminal's cooked log (see read_log: all of it, on disk, also from before a restart) for a regex (Rust syntax) or, with literal=true, a plain string. \
Returns the matching lines with their line numbers, to read around with read_log from_line; total_matches counts all matches.";

/// Arguments of `search_log`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SearchLogArgs {
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
    /// Only lines from this number on.
    pub from_line: Option<u64>,
    /// Most matches returned (default 50, at most 500).
    pub max_matches: Option<u64>,
}

/// Result of `search_log`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct SearchLogResult {
    /// The pane searched.
    pub pane: String,
    /// The matching lines (secrets masked).
    pub matches: Vec<LogEntry>,
    /// How many lines matched in all.
    pub total_matches: u32,
    /// Lines searched.
    pub searched_lines: u32,
    /// Not every match is returned (max_matches or the size budget).
    pub truncated: bool,
}

impl Summary for SearchLogResult {
    fn summary(&self) -> String {
        let mut s = matches_header(
            self.total_matches,
            self.searched_lines,
            &format!("{}'s log", self.pane),
            self.truncated.then_some(self.matches.len()),
        );
        for m in &self.matches {
            let _ = write!(s, "\n{:>6}  {}", m.n, m.text);
        }
        s
    }
}

fn entry(line: LogLine, text: String) -> LogEntry {
    LogEntry {
        n: line.n,
        text,
        kind: line.kind.name(),
    }
}

impl TmuxMcp {
    /// The pane's cooked log (opened, or recovered, when first followed).
    pub(crate) async fn journal_of(
        &self,
        what: &str,
        target: &str,
    ) -> Result<(String, std::sync::Arc<Journal>), ToolError> {
        let conn = self.conn().await?;
        let r = conn.resolve(target).await?;
        conn.follow(r.pane).await?;
        let journal = conn.journals.get(r.pane).ok_or_else(|| {
            ToolError::new(
                what,
                format!(
                    "pane {} has no log (it is tmux-mcp's own control pane)",
                    r.pane
                ),
                "Name one of the terminals list_terminals shows",
            )
        })?;
        Ok((r.pane.to_string(), journal))
    }

    /// Masks secrets in log lines taken together (a secret can span lines).
    fn redact_log(&self, lines: &[LogLine]) -> Vec<String> {
        let texts: Vec<String> = lines.iter().map(|l| l.text.clone()).collect();
        self.redact_lines(&texts)
    }
}

#[tool_router(router = log_router, vis = "pub(super)")]
impl TmuxMcp {
    #[tool(description = READ_LOG, annotations(title = "Read log", read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false))]
    pub(crate) async fn read_log(
        &self,
        Parameters(args): Parameters<ReadLogArgs>,
    ) -> Result<Json<ReadLogResult>, ToolError> {
        let (pane, journal) = self.journal_of("read_log", &args.target).await?;
        let last = usize::try_from(args.last_lines.unwrap_or(100))
            .unwrap_or(MAX_LINES)
            .min(MAX_LINES);
        let read = journal.read(args.from_line, last, MAX_LINES);
        let texts = self.redact_log(&read.lines);
        // Text and structured content both carry the lines: each gets half.
        let page = (self.budget(args.max_bytes).saturating_sub(REPLY_OVERHEAD) / 2).max(256);
        let total = read.lines.len();
        let live_from = total - read.live;
        let mut lines: Vec<(usize, LogEntry)> = read
            .lines
            .into_iter()
            .zip(texts)
            .enumerate()
            .map(|(i, (l, t))| (i, entry(l, t)))
            .collect();
        // Forward reads keep the first lines that fit; reads of the last
        // lines keep the last ones.
        let mut used = 0;
        let mut keep = 0;
        let order: Vec<usize> = if args.from_line.is_some() {
            (0..lines.len()).collect()
        } else {
            (0..lines.len()).rev().collect()
        };
        for &i in &order {
            let size = json_len(&lines[i].1.text) + 24;
            if used + size > page && keep > 0 {
                break;
            }
            used += size;
            keep += 1;
        }
        let omitted = total - keep;
        if args.from_line.is_some() {
            lines.truncate(keep);
        } else {
            lines.drain(..omitted);
        }
        let live = lines.iter().filter(|(i, _)| *i >= live_from).count();
        let next_line = lines.last().map_or(
            args.from_line.unwrap_or(read.next).max(read.first),
            |(_, l)| l.n + 1,
        );
        let end = read.next + u64::try_from(read.live).unwrap_or(0);
        Ok(Json(ReadLogResult {
            pane,
            more: next_line < end,
            lines: lines.into_iter().map(|(_, l)| l).collect(),
            oldest_line: read.first,
            next_line,
            live_lines: u32::try_from(live).unwrap_or(u32::MAX),
            full_screen: read.full_screen,
            durable: read.durable,
            omitted_lines: u32::try_from(omitted).unwrap_or(u32::MAX),
        }))
    }

    #[tool(description = SEARCH_LOG, annotations(title = "Search log", read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false))]
    pub(crate) async fn search_log(
        &self,
        Parameters(args): Parameters<SearchLogArgs>,
    ) -> Result<Json<SearchLogResult>, ToolError> {
        let re = search_regex("search_log", &args.pattern, args.literal, args.ignore_case)?;
        let (pane, journal) = self.journal_of("search_log", &args.target).await?;
        let read = journal.read(Some(args.from_line.unwrap_or(0)), 0, usize::MAX);
        let texts = self.redact_log(&read.lines);
        let max = usize::try_from(args.max_matches.unwrap_or(50).clamp(1, 500)).unwrap_or(50);
        let budget = self.screen_budget(None);
        let mut out = SearchLogResult {
            pane,
            matches: Vec::new(),
            total_matches: 0,
            searched_lines: u32::try_from(read.lines.len()).unwrap_or(u32::MAX),
            truncated: false,
        };
        let mut used = 0;
        for (line, text) in read.lines.into_iter().zip(texts) {
            // A full-screen program's entry and a gap say what happened,
            // they are not output to search.
            if line.kind != LineKind::Text || !re.is_match(&text) {
                continue;
            }
            out.total_matches += 1;
            let size = json_len(&text) + 24;
            if out.matches.len() < max && used + size <= budget {
                used += size;
                out.matches.push(entry(line, text));
            } else {
                out.truncated = true;
            }
        }
        Ok(Json(out))
    }
}
