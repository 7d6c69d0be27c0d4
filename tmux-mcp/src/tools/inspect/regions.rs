//! Regions as tools: `list_regions`, `read_region` and `search_regions`
//! (see [`crate::terminal::regions`]): what each command in a terminal printed and
//! how it ended.
//!
//! (Over 600 lines with its unit tests: three tools and what each says of
//! output that was lost.)

use rmcp::handler::server::wrapper::Parameters;
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tmux_control::PaneOutput;

use std::sync::Arc;

use crate::mcp::server::TmuxMcp;
use crate::reply::{Json, Summary, ToolError};
use crate::terminal::journal::{Held, Journal};
use crate::terminal::regions::Region;
use crate::text::shape::{Highlight, LossReport, describe_losses};
use crate::text::{cook, pane_size};
use crate::text::{json_len, json_prefix};
use crate::tools::inspect::search_regex;
use crate::tools::{Excerpt, Omitted};

/// Most regions `list_regions` returns.
const MAX_LIST: usize = 200;

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
    /// Recovered from the log of an earlier run of tmux-mcp (its output is read from the cooked log; its cursors are 0).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub recovered: bool,
    /// For a recovered region: the lines of its output (first_line..last_line) that the cooked log no longer holds, and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub output_lost: Vec<OutputLost>,
}

/// Output of a recovered region that the cooked log no longer holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub(crate) struct OutputLost {
    /// rotated_out: dropped from the log to keep it within --log-bytes (older than the oldest line it holds); not_in_log: the log holds no line with these numbers (a record on disk that could not be read: see the restart line in read_log).
    pub why: &'static str,
    /// The first log line lost; null when the loss starts in lines dropped before the region was written (their numbers are not known).
    pub from_line: Option<u64>,
    /// The last log line lost; null when no line of its output is left to count from.
    pub to_line: Option<u64>,
    /// How many log lines of its output are lost; null when not known.
    pub lines: Option<u64>,
    /// Bytes of raw output lost; null when not known (the log keeps lines, not their raw bytes). Equal to output_bytes when the whole output is lost.
    pub bytes: Option<u64>,
}

impl OutputLost {
    /// A sentence saying what is lost and why.
    fn describe(&self, output_bytes: u64) -> String {
        let mut detail: Vec<String> = Vec::new();
        if let Some(n) = self.lines {
            detail.push(format!("{n} line(s)"));
        }
        if let Some(b) = self.bytes {
            detail.push(format!("{b} bytes"));
        }
        match (self.from_line, self.to_line) {
            (Some(a), Some(b)) => detail.push(format!("log lines {a} to {b}")),
            (None, Some(b)) => detail.push(format!("up to log line {b}")),
            _ => {}
        }
        let what = if self.bytes == Some(output_bytes) {
            "its whole output"
        } else {
            "part of its output"
        };
        let what = if detail.is_empty() {
            what.to_owned()
        } else {
            format!("{what} ({})", detail.join(", "))
        };
        match self.why {
            "rotated_out" => {
                format!("{what} was rotated out of the log, which keeps the newest --log-bytes")
            }
            _ => format!(
                "{what} is not in the log (a record of the log on disk could not be read: see read_log)"
            ),
        }
    }

    /// A few words for list_regions.
    fn brief(&self, output_bytes: u64) -> String {
        let what = if self.bytes == Some(output_bytes) {
            "output".to_owned()
        } else {
            match self.lines {
                Some(n) => format!("{n} output line(s)"),
                None => "part of the output".to_owned(),
            }
        };
        match self.why {
            "rotated_out" => format!("{what} rotated out of the log"),
            _ => format!("{what} not in the log"),
        }
    }
}

/// What the log no longer holds of a recovered region's output: its lines
/// `lines` (none when no line of it was logged), after `dropped` bytes the
/// log had dropped already when the region was written.
fn output_lost(
    journal: Option<&Journal>,
    lines: Option<(u64, u64)>,
    dropped: u64,
    output_bytes: u64,
) -> Vec<OutputLost> {
    let Some((from, to)) = lines else {
        return if dropped > 0 {
            vec![OutputLost {
                why: "rotated_out",
                from_line: None,
                to_line: None,
                lines: None,
                bytes: Some(dropped),
            }]
        } else {
            Vec::new()
        };
    };
    let total = (to + 1).saturating_sub(from);
    let held = journal.map_or(
        Held {
            lines: 0,
            oldest: to.saturating_add(1),
        },
        |j| j.held(from, to),
    );
    let rotated = held.oldest.min(to.saturating_add(1)).saturating_sub(from);
    let missing = total.saturating_sub(rotated + held.lines);
    let mut lost = Vec::new();
    if rotated > 0 || dropped > 0 {
        lost.push(OutputLost {
            why: "rotated_out",
            from_line: (dropped == 0).then_some(from),
            to_line: if rotated > 0 {
                Some(from + rotated - 1)
            } else {
                from.checked_sub(1)
            },
            lines: (dropped == 0).then_some(rotated),
            bytes: if rotated == total {
                Some(output_bytes)
            } else if rotated == 0 {
                Some(dropped)
            } else {
                None
            },
        });
    }
    if missing > 0 {
        lost.push(OutputLost {
            why: "not_in_log",
            from_line: Some(from + rotated),
            to_line: Some(to),
            lines: Some(missing),
            bytes: (missing == total && dropped == 0).then_some(output_bytes),
        });
    }
    lost
}

/// Arguments of `list_regions`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ListRegionsArgs {
    /// The pane: an id like `%3` or an exact name.
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
    /// The pane: an id like `%3` or an exact name.
    pub target: String,
    /// The region's id (from list_regions); default the last one.
    pub id: Option<u64>,
    /// Size budget of the whole reply in bytes (default: the server's --max-reply-bytes, 8192; at least 2048).
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

/// Arguments of `search_regions`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SearchRegionsArgs {
    /// The pane: an id like `%3` or an exact name.
    pub target: String,
    /// What to find: a regular expression (Rust syntax), or a plain string with literal=true.
    pub pattern: String,
    /// Treat pattern as a plain string (default false).
    #[serde(default)]
    pub literal: bool,
    /// Ignore case (default false).
    #[serde(default)]
    pub ignore_case: bool,
    /// Search only this region (default: every region the pane has).
    pub id: Option<u64>,
    /// Most matches to return (default 50, at most 500).
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

/// A pane's output, its cooked log and its regions.
type Pane = (PaneOutput, Option<Arc<Journal>>, Vec<Region>);

impl TmuxMcp {
    /// A region as the tools show it (its command line read back from
    /// the log when `run` did not type it).
    fn entry(&self, po: &PaneOutput, journal: Option<&Journal>, r: &Region) -> RegionEntry {
        // A recovered region's offsets are not this run's: its lines are
        // the ones it was written with.
        let lines = if r.recovered {
            r.lines
        } else {
            r.lines.or_else(|| journal?.region_lines(r))
        };
        let command = r.command.clone().or_else(|| {
            let (from, to) = r.input?;
            let (at, raw) = po.read_from(from, usize::try_from(to - from).ok()?);
            (at == from)
                .then(|| self.redact(cook(&raw, pane_size(po)).trim()))
                .filter(|c| !c.is_empty())
        });
        let output_lost = if r.recovered {
            let dropped = journal.map_or(0, |j| j.dropped_before(r.id));
            output_lost(journal, lines, dropped, r.output_end - r.output_start)
        } else {
            Vec::new()
        };
        RegionEntry {
            output_lost,
            id: r.id,
            command: command.map(|c| self.redact(&c)),
            cwd: r.cwd.clone(),
            exit_status: r.status,
            pipestatus: r.pipestatus.clone(),
            duration_ms: r.duration_ms,
            output_cursor: if r.recovered { 0 } else { r.output_start },
            end_cursor: if r.recovered { 0 } else { r.output_end },
            output_bytes: r.output_end - r.output_start,
            first_line: lines.map(|l| l.0),
            last_line: lines.map(|l| l.1),
            recovered: r.recovered,
            mode: if r.integrated {
                "integrated"
            } else {
                "wrapped"
            }
            .to_owned(),
        }
    }

    /// The pane's regions, brought up to date with its shell's marks.
    async fn regions_of(&self, target: &str) -> Result<Pane, ToolError> {
        let conn = self.conn().await?;
        let r = conn.resolve(target).await?;
        let po = conn.follow(r.pane).await?;
        let _ = conn.shells.get(&conn.tmux, &po).await;
        let journal = conn.journals.get(r.pane);
        Ok((po, journal, conn.shells.regions.list(r.pane)))
    }

    /// A recovered region's output lines, from the cooked log (secrets
    /// masked), with their numbers.
    fn recovered_lines(&self, journal: Option<&Journal>, r: &Region) -> Vec<(u64, String)> {
        let (Some(journal), Some((from, to))) = (journal, r.lines) else {
            return Vec::new();
        };
        let lines = journal.lines(from, to);
        let texts: Vec<String> = lines.iter().map(|l| l.text.clone()).collect();
        lines
            .iter()
            .map(|l| l.n)
            .zip(self.redact_lines(&texts))
            .collect()
    }

    /// A recovered region's output, from the cooked log (secrets masked).
    fn recovered_output(&self, journal: Option<&Journal>, r: &Region) -> String {
        let lines: Vec<String> = self
            .recovered_lines(journal, r)
            .into_iter()
            .map(|(_, t)| t)
            .collect();
        lines.join("\n")
    }
}

const LIST_REGIONS: &str = "List the commands a terminal ran, each as a region: its id, command line, working directory, exit status and pipeline statuses, duration (for run), and the cursors of its output. \
In a shell with shell integration every command line counts, whoever typed it (run, send_text or a human); elsewhere each completed run. The oldest are forgotten after 1000. Fails if the target does not exist.";

const READ_REGION: &str = "Read what one command printed (a region from list_regions; default the last one) and how it ended. The whole reply stays within max_bytes (8 KB by default): a long output comes in the text only, lines that look like failures first, then its first and last lines, then the cursor to read the rest with read_output. Secrets are masked. Fails if the target or the region does not exist.";

const SEARCH_REGIONS: &str = "Search the output of one region or of every region of a terminal for a regular expression (or a plain string with literal=true). Each match names its region and whether it is in the command's output or in its command line (a command line is not output, so a search for an error string does not count the command that grepped for it). Secrets are masked before searching. Fails if the pattern is invalid or the target does not exist.";

#[tool_router(router = regions_router, vis = "pub(super)")]
impl TmuxMcp {
    #[tool(description = LIST_REGIONS, annotations(title = "List regions", read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false))]
    pub(crate) async fn list_regions(
        &self,
        Parameters(args): Parameters<ListRegionsArgs>,
    ) -> Result<Json<ListRegionsResult>, ToolError> {
        let (po, journal, regions) = self.regions_of(&args.target).await?;
        let last = usize::try_from(args.last.unwrap_or(50))
            .unwrap_or(MAX_LIST)
            .min(MAX_LIST);
        let skip = regions.len().saturating_sub(last);
        Ok(Json(ListRegionsResult {
            pane: po.pane().to_string(),
            total: u32::try_from(regions.len()).unwrap_or(u32::MAX),
            regions: regions[skip..]
                .iter()
                .map(|r| self.entry(&po, journal.as_deref(), r))
                .collect(),
        }))
    }

    #[tool(description = READ_REGION, annotations(title = "Read region", read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false))]
    pub(crate) async fn read_region(
        &self,
        Parameters(args): Parameters<ReadRegionArgs>,
    ) -> Result<Json<ReadRegionResult>, ToolError> {
        let (po, journal, regions) = self.regions_of(&args.target).await?;
        let what = format!("Reading a region of pane {}", po.pane());
        let found = match args.id {
            Some(id) => regions.iter().find(|r| r.id == id),
            None => regions.last(),
        };
        let Some(region) = found else {
            return Err(ToolError::new(
                what,
                match args.id {
                    Some(id) => format!("the pane has no region {id} (it has {})", regions.len()),
                    None => "the pane has no region yet".to_owned(),
                },
                "Call list_regions to see the pane's regions",
            ));
        };
        let budget = self.budget(args.max_bytes);
        let mut more_from_line = None;
        let e = if region.recovered {
            let lines = self.recovered_lines(journal.as_deref(), region);
            let text = lines
                .iter()
                .map(|(_, t)| t.as_str())
                .collect::<Vec<_>>()
                .join("\n");
            let half = budget.saturating_sub(crate::text::shape::REPLY_OVERHEAD) / 2;
            let small = json_len(&text) <= half;
            let text = if small {
                text
            } else {
                // The whole lines that fit (else part of the first), and
                // the line to read on from.
                let prefix = json_prefix(&text, half);
                let shown = prefix.matches('\n').count();
                more_from_line = lines.get(shown).map(|(n, _)| *n);
                match prefix.rfind('\n') {
                    Some(end) => prefix[..end].to_owned(),
                    None => prefix.to_owned(),
                }
            };
            Excerpt {
                text,
                small,
                ..Excerpt::default()
            }
        } else {
            self.excerpt(&po, region.output_start, region.output_end, budget)
        };
        Ok(Json(ReadRegionResult {
            pane: po.pane().to_string(),
            region: self.entry(&po, journal.as_deref(), region),
            output: e.structured(),
            highlights: e.highlights,
            omitted: e.omitted,
            losses: e.losses,
            more_from_line,
            output_text: e.text,
        }))
    }

    #[tool(description = SEARCH_REGIONS, annotations(title = "Search regions", read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false))]
    pub(crate) async fn search_regions(
        &self,
        Parameters(args): Parameters<SearchRegionsArgs>,
    ) -> Result<Json<SearchRegionsResult>, ToolError> {
        let (po, journal, regions) = self.regions_of(&args.target).await?;
        let what = format!("Searching the regions of pane {}", po.pane());
        let re = search_regex(&what, &args.pattern, args.literal, args.ignore_case)?;
        let max = usize::try_from(args.max_matches.unwrap_or(50).min(500)).unwrap_or(500);
        let budget = self.budget(None) / 2;
        let mut out = SearchRegionsResult {
            pane: po.pane().to_string(),
            matches: Vec::new(),
            output_matches: 0,
            command_matches: 0,
            truncated: false,
            regions_searched: 0,
            output_lost: Vec::new(),
        };
        let mut used = 0usize;
        let mut push = |out: &mut SearchRegionsResult, m: RegionMatch| {
            used += m.line.len() + 32;
            if out.matches.len() < max && used <= budget {
                out.matches.push(m);
            } else {
                out.truncated = true;
            }
        };
        for region in regions
            .iter()
            .filter(|r| args.id.is_none_or(|id| r.id == id))
        {
            out.regions_searched += 1;
            let entry = self.entry(&po, journal.as_deref(), region);
            if !entry.output_lost.is_empty() {
                out.output_lost.push(region.id);
            }
            if let Some(command) = entry.command.as_deref().filter(|c| re.is_match(c)) {
                out.command_matches += 1;
                let line = command.to_owned();
                push(
                    &mut out,
                    RegionMatch {
                        id: region.id,
                        found_in: "command".into(),
                        line,
                        line_number: 0,
                    },
                );
            }
            // Search the redacted text: a search must not reveal a secret.
            let text = if region.recovered {
                self.recovered_output(journal.as_deref(), region)
            } else {
                let len = usize::try_from(region.output_end - region.output_start).unwrap_or(0);
                let (_, raw) = po.read_from(region.output_start, len);
                self.redact(&cook(&raw, pane_size(&po)))
            };
            for (n, line) in text.lines().enumerate() {
                if re.is_match(line) {
                    out.output_matches += 1;
                    push(
                        &mut out,
                        RegionMatch {
                            id: region.id,
                            found_in: "output".into(),
                            line: line.to_owned(),
                            line_number: u32::try_from(n + 1).unwrap_or(u32::MAX),
                        },
                    );
                }
            }
        }
        if let Some(id) = args.id.filter(|_| out.regions_searched == 0) {
            return Err(ToolError::new(
                what,
                format!("the pane has no region {id}"),
                "Call list_regions to see the pane's regions",
            ));
        }
        Ok(Json(out))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn output_no_longer_held_is_reported_never_silent() {
        // Its lines are gone: the whole output, with its size.
        let lost = output_lost(None, Some((2, 4)), 0, 30);
        assert_eq!(
            lost,
            [OutputLost {
                why: "rotated_out",
                from_line: Some(2),
                to_line: Some(4),
                lines: Some(3),
                bytes: Some(30),
            }]
        );
        let said = lost[0].describe(30);
        assert!(
            said.contains(
                "its whole output (3 line(s), 30 bytes, log lines 2 to 4) was rotated out"
            ),
            "{said}"
        );
        assert_eq!(lost[0].brief(30), "output rotated out of the log");
        // Its start was dropped before it was written, the rest is gone now.
        let lost = output_lost(None, Some((7, 9)), 12, 40);
        assert_eq!(
            (
                lost[0].from_line,
                lost[0].to_line,
                lost[0].lines,
                lost[0].bytes
            ),
            (None, Some(9), None, Some(40))
        );
        // No line of it was logged: what was dropped is still reported.
        let lost = output_lost(None, None, 40, 40);
        assert_eq!(lost[0].bytes, Some(40));
        assert!(
            lost[0]
                .describe(40)
                .starts_with("its whole output (40 bytes)")
        );
        // Nothing printed, nothing dropped: nothing lost.
        assert!(output_lost(None, None, 0, 0).is_empty());
    }
}
