//! The arguments and result of `search_output`, and one of its matches,
//! with the summary its reply's text carries.

use std::fmt::Write as _;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::reply::Summary;
use crate::tools::inspect::matches_header;

/// Arguments of `search_output`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SearchOutputArgs {
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
    /// Lines of context before and after each match (default 2, at most 20).
    pub context_lines: Option<u64>,
    /// Most matches returned (default 50, at most 500; 0 only counts them).
    pub max_matches: Option<u64>,
}

/// One match of `search_output`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct SearchMatch {
    /// Line number (0 = top of the visible screen, negative = scrollback).
    pub line: i32,
    /// The matching line.
    pub text: String,
    /// Lines just before it.
    pub before: Vec<String>,
    /// Lines just after it.
    pub after: Vec<String>,
}

/// Result of `search_output`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct SearchOutputResult {
    /// The pane searched.
    pub pane: String,
    /// The matches returned.
    pub matches: Vec<SearchMatch>,
    /// How many lines matched in all.
    pub total_matches: u32,
    /// Matches were left out (max_matches or the size limit).
    pub truncated: bool,
    /// Lines searched.
    pub searched_lines: u32,
}

impl Summary for SearchOutputResult {
    fn summary(&self) -> String {
        let mut s = matches_header(
            self.total_matches,
            self.searched_lines,
            &format!("pane {}", self.pane),
            self.truncated.then_some(self.matches.len()),
        );
        for m in &self.matches {
            s.push_str("\n--");
            let first = m.line - i32::try_from(m.before.len()).unwrap_or(0);
            for (i, l) in m.before.iter().enumerate() {
                let _ = write!(s, "\n{:>6}  {l}", first + i32::try_from(i).unwrap_or(0));
            }
            let _ = write!(s, "\n{:>6}> {}", m.line, m.text);
            for (i, l) in m.after.iter().enumerate() {
                let _ = write!(
                    s,
                    "\n{:>6}  {l}",
                    m.line + 1 + i32::try_from(i).unwrap_or(0)
                );
            }
        }
        s
    }
}
