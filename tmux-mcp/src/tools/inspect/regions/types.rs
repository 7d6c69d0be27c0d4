//! The arguments and results of `list_regions` and `read_region`, and a
//! region as the tools show it ([`RegionEntry`]), with the summaries their
//! replies' text carries.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::reply::Summary;
use crate::text::shape::{Highlight, LossReport, describe_losses};
use crate::tools::Omitted;

use super::lost::OutputLost;

/// One command in a terminal.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct RegionEntry {
    /// Its number in the pane (from 1, in order).
    pub id: u64,
    /// The command line: as run typed it, else as the shell echoed it (secrets masked; null when the log no longer holds it).
    pub command: Option<String>,
    /// The working directory it ran in, when the shell reported it.
    pub cwd: Option<String>,
    /// Its exit status.
    pub exit_status: Option<i32>,
    /// The status of each command of its pipeline (shell integration only).
    pub pipestatus: Option<Vec<i32>>,
    /// How long it took, in milliseconds, when run timed it.
    pub duration_ms: Option<u64>,
    /// Cursor of the first byte of its output (for read_output).
    pub output_cursor: u64,
    /// Cursor just after its output.
    pub end_cursor: u64,
    /// Bytes of raw output.
    pub output_bytes: u64,
    /// integrated (marked by the shell) or wrapped (a run in a shell without integration).
    pub mode: String,
    /// The first line of its output in the cooked log (read_log from_line), when it printed any.
    pub first_line: Option<u64>,
    /// The last line of its output in the cooked log.
    pub last_line: Option<u64>,
    /// The actor (MCP client) that typed its command line through this server, when one did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub typed_by: Option<String>,
    /// A person typed its command line (its echo holds no input this server sent): someone at a tmux client.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub by_person: bool,
    /// Recovered from the log of an earlier run of tmux-mcp (its output is read from the cooked log; its cursors are 0).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub recovered: bool,
    /// For a recovered region: the lines of its output (first_line..last_line) that the cooked log no longer holds, and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub output_lost: Vec<OutputLost>,
}
/// Arguments of `list_regions`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ListRegionsArgs {
    /// The pane: `%3` or an exact name.
    pub target: String,
    /// Only the last this many (default 50, at most 200).
    pub last: Option<u32>,
}

/// Result of `list_regions`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct ListRegionsResult {
    /// The pane.
    pub pane: String,
    /// The regions, oldest first.
    pub regions: Vec<RegionEntry>,
    /// How many regions the pane has in all (older ones beyond `last` are left out).
    pub total: u32,
}

impl Summary for ListRegionsResult {
    fn summary(&self) -> String {
        let mut s = format!(
            "Pane {}: {} command(s){}",
            self.pane,
            self.total,
            if self.regions.len() < self.total as usize {
                format!(", the last {} listed", self.regions.len())
            } else {
                String::new()
            }
        );
        for r in &self.regions {
            s.push_str(&format!(
                "\n#{} exit {}{} {}{}",
                r.id,
                r.exit_status
                    .map_or_else(|| "?".to_owned(), |c| c.to_string()),
                match &r.pipestatus {
                    Some(p) if p.len() > 1 => format!(
                        " (pipeline {})",
                        p.iter().map(i32::to_string).collect::<Vec<_>>().join(" ")
                    ),
                    _ => String::new(),
                },
                r.command.as_deref().unwrap_or("(command line not held)"),
                r.duration_ms
                    .map_or_else(String::new, |d| format!(" [{d} ms]"))
            ));
            for lost in &r.output_lost {
                s.push_str(&format!(" [{}]", lost.brief(r.output_bytes)));
            }
        }
        if self.total == 0 {
            s.push_str(". Commands show up here once they finish (all commands in a shell with shell integration, else each completed run).");
        }
        s
    }
}

/// Arguments of `read_region`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ReadRegionArgs {
    /// The pane: `%3` or an exact name.
    pub target: String,
    /// The region's id (from list_regions); default the last.
    pub id: Option<u64>,
    /// Reply size budget in bytes (default 8192, at least 2048).
    pub max_bytes: Option<usize>,
}

/// Result of `read_region`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct ReadRegionResult {
    /// The pane.
    pub pane: String,
    /// The region.
    pub region: RegionEntry,
    /// Its output as plain text when small enough to be sent in both forms of the reply; null when larger (the text content carries it, failure-like lines first).
    pub output: Option<String>,
    /// Failure-like lines of a large output, with their cursors (only when output is null).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub highlights: Vec<Highlight>,
    /// The part left out, to read with read_output.
    pub omitted: Option<Omitted>,
    /// Output missing from the region, and why (for a recovered region: region.output_lost).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub losses: Vec<LossReport>,
    /// A recovered region whose output is longer than the budget: the cooked log's line to read the rest from (read_log from_line).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub more_from_line: Option<u64>,
    /// The output as the text content shows it.
    #[serde(skip)]
    pub output_text: String,
}

impl Summary for ReadRegionResult {
    fn summary(&self) -> String {
        let r = &self.region;
        let mut s = format!(
            "Command #{} in pane {}: {} — exit status {}{}.",
            r.id,
            self.pane,
            r.command.as_deref().unwrap_or("(command line not held)"),
            r.exit_status
                .map_or_else(|| "?".to_owned(), |c| c.to_string()),
            r.cwd
                .as_deref()
                .map_or_else(String::new, |d| format!(", in {d}"))
        );
        if let Some(o) = &self.omitted {
            s.push_str(&format!(
                " Output is {} bytes; part is left out: read it with read_output cursor={}.",
                r.output_bytes, o.from_cursor
            ));
        }
        if let Some(n) = self.more_from_line {
            s.push_str(&format!(
                " Output is {} bytes; only its first lines are shown: read the rest with read_log from_line={n}.",
                r.output_bytes
            ));
        }
        if let Some(lost) = describe_losses(&self.losses) {
            s.push(' ');
            s.push_str(&lost);
        }
        if !r.output_lost.is_empty() {
            let parts: Vec<String> = r
                .output_lost
                .iter()
                .map(|l| l.describe(r.output_bytes))
                .collect();
            s.push_str(&format!(" Output is missing: {}.", parts.join("; ")));
        }
        if self.output_text.is_empty() && !r.output_lost.is_empty() {
            s.push_str("\n(none of its output is left in the log)");
        } else if self.output_text.is_empty() {
            s.push_str("\n(no output)");
        } else {
            s.push_str("\nOutput:\n");
            s.push_str(&self.output_text);
        }
        s
    }
}
