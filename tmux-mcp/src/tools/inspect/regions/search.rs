//! The arguments and result of `search_regions`, and one of its matches,
//! with the summary its reply's text carries.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::reply::Summary;

/// Arguments of `search_regions`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SearchRegionsArgs {
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
    /// Search only this region (default: all).
    pub id: Option<u64>,
    /// Most matches returned (default 50, at most 500).
    pub max_matches: Option<u32>,
}

/// A match in a region.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct RegionMatch {
    /// The region's id.
    pub id: u64,
    /// Where the match is: output (what the command printed) or command (its command line, which is not output).
    #[serde(rename = "in")]
    pub found_in: String,
    /// The line that matched (secrets masked).
    pub line: String,
    /// Its line number in the region's output, from 1 (0 for the command line).
    pub line_number: u32,
}

/// Result of `search_regions`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct SearchRegionsResult {
    /// The pane.
    pub pane: String,
    /// The matches, oldest region first.
    pub matches: Vec<RegionMatch>,
    /// Matches in the output (not counting command lines).
    pub output_matches: u32,
    /// Matches in command lines.
    pub command_matches: u32,
    /// More matches than max_matches (or than the size budget) were found.
    pub truncated: bool,
    /// Regions searched.
    pub regions_searched: u32,
    /// Recovered regions searched whose output the cooked log no longer wholly holds (list_regions says what is lost): the lost part was not searched.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub output_lost: Vec<u64>,
}

impl Summary for SearchRegionsResult {
    fn summary(&self) -> String {
        let mut s = format!(
            "{} match(es) in the output and {} in command lines of {} region(s) of pane {}{}",
            self.output_matches,
            self.command_matches,
            self.regions_searched,
            self.pane,
            if self.truncated {
                " (more left out)"
            } else {
                ""
            }
        );
        if !self.output_lost.is_empty() {
            let ids: Vec<String> = self.output_lost.iter().map(|id| format!("#{id}")).collect();
            s.push_str(&format!(
                "; the log no longer holds all of the output of {} (see list_regions), so that part was not searched",
                ids.join(", ")
            ));
        }
        for m in &self.matches {
            s.push_str(&format!(
                "\n#{} {} {}: {}",
                m.id,
                m.found_in,
                if m.found_in == "command" {
                    String::new()
                } else {
                    format!("line {}", m.line_number)
                },
                m.line
            ));
        }
        s
    }
}
