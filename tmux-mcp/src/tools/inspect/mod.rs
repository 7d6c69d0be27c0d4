//! The `inspect` toolset: read tmux state and pane output (the waits are in
//! [`crate::tools::waits`]). Nothing here sends input or changes tmux.
//!
//! `list` holds `list_terminals` and `pane_info`, `read` the tools that read
//! a pane's screen and output, `log` those of its cooked log, `regions`
//! those of its commands, `status` what a terminal is doing and
//! `wait_for_state`; `inspect_router` joins their routers.

pub(crate) mod list;
pub(crate) mod log;
pub(crate) mod read;
pub(crate) mod regions;
pub(crate) mod status;

use std::time::Duration;

use rmcp::handler::server::router::tool::ToolRouter;

use crate::mcp::server::TmuxMcp;
use crate::reply::ToolError;

pub(crate) use list::ListTerminalsArgs;
pub(crate) use read::CaptureScreenArgs;
pub(crate) use status::StateFacts;
pub(crate) use status::facts;

impl TmuxMcp {
    /// The tools of this module (the waits have their own router).
    pub(crate) fn inspect_router() -> ToolRouter<TmuxMcp> {
        Self::list_router()
            + Self::read_router()
            + Self::log_router()
            + Self::regions_router()
            + Self::status_router()
    }
}

/// The last `n` lines of `text`.
pub(crate) fn last_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// A duration in whole milliseconds, for replies.
pub(crate) fn ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// The error of a wait the client cancelled.
pub(crate) fn cancelled(what: &str) -> ToolError {
    ToolError::new(what, "the client cancelled the request", "Nothing to do")
}

/// The compiled regex of a search, or the tool error that names the bad
/// pattern.
pub(crate) fn search_regex(
    what: &str,
    pattern: &str,
    literal: bool,
    ignore_case: bool,
) -> Result<regex::Regex, ToolError> {
    regex::RegexBuilder::new(&pattern_source(pattern, literal, ignore_case))
        .size_limit(1 << 22)
        .build()
        .map_err(|e| {
            ToolError::new(
                what,
                format!("the pattern is not a valid regular expression: {e}"),
                "Fix the pattern (Rust regex syntax), or pass literal=true to search for the text as is",
            )
        })
}

/// The first line of a search's summary: `N matching line(s) in M lines
/// of WHERE`, and how many are shown when not all are.
pub(crate) fn matches_header(
    total: u32,
    searched: u32,
    place: &str,
    shown: Option<usize>,
) -> String {
    match shown {
        Some(shown) => {
            format!("{total} matching line(s) in {searched} lines of {place} (showing {shown})")
        }
        None => format!("{total} matching line(s) in {searched} lines of {place}"),
    }
}

/// Builds the regex for a wait or search.
pub(crate) fn pattern_source(pattern: &str, literal: bool, ignore_case: bool) -> String {
    let body = if literal {
        regex::escape(pattern)
    } else {
        pattern.to_owned()
    };
    format!("(?m{}){body}", if ignore_case { "i" } else { "" })
}
