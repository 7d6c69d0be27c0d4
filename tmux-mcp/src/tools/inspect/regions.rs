//! Regions as tools: `list_regions`, `read_region` and `search_regions`
//! (see [`crate::regions`]): what each command in a terminal printed and
//! how it ended.

use rmcp::handler::server::wrapper::Parameters;
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tmux_control::PaneOutput;

use std::sync::Arc;

use crate::journal::Journal;
use crate::regions::Region;
use crate::reply::{Json, Summary, ToolError};
use crate::server::TmuxMcp;
use crate::shape::{Highlight, LossReport, describe_losses};
use crate::text::cook;
use crate::text::{json_len, json_prefix};
use crate::tools::inspect::search_regex;
use crate::tools::{Excerpt, Omitted};

/// Most regions `list_regions` returns.
const MAX_LIST: usize = 200;

/// One command in a terminal.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct RegionEntry {
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
}

/// Arguments of `list_regions`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListRegionsArgs {
    /// The pane: an id like `%3` or an exact name.
    pub target: String,
    /// Only the last this many (default 50, at most 200).
    pub last: Option<u32>,
}

/// Result of `list_regions`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ListRegionsResult {
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
pub struct ReadRegionArgs {
    /// The pane: an id like `%3` or an exact name.
    pub target: String,
    /// The region's id (from list_regions); default the last one.
    pub id: Option<u64>,
    /// Size budget of the whole reply in bytes (default: the server's --max-reply-bytes, 8192; at least 2048).
    pub max_bytes: Option<usize>,
}

/// Result of `read_region`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ReadRegionResult {
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
    /// Output missing from the region, and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub losses: Vec<LossReport>,
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
        if let Some(lost) = describe_losses(&self.losses) {
            s.push(' ');
            s.push_str(&lost);
        }
        if self.output_text.is_empty() {
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
pub struct SearchRegionsArgs {
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
pub struct RegionMatch {
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
pub struct SearchRegionsResult {
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
        let lines = r.lines.or_else(|| journal?.region_lines(r));
        let command = r.command.clone().or_else(|| {
            let (from, to) = r.input?;
            let (at, raw) = po.read_from(from, usize::try_from(to - from).ok()?);
            (at == from)
                .then(|| self.redact(cook(&raw).trim()))
                .filter(|c| !c.is_empty())
        });
        RegionEntry {
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

    /// A recovered region's output, from the cooked log (secrets masked).
    fn recovered_output(&self, journal: Option<&Journal>, r: &Region) -> String {
        let (Some(journal), Some((from, to))) = (journal, r.lines) else {
            return String::new();
        };
        let lines = journal.lines(from, to);
        let texts: Vec<String> = lines.into_iter().map(|l| l.text).collect();
        self.redact_lines(&texts).join("\n")
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
        let e = if region.recovered {
            let text = self.recovered_output(journal.as_deref(), region);
            let half = budget.saturating_sub(crate::shape::REPLY_OVERHEAD) / 2;
            let small = json_len(&text) <= half;
            Excerpt {
                text: if small {
                    text
                } else {
                    json_prefix(&text, half).to_owned()
                },
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
                self.redact(&cook(&raw))
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
