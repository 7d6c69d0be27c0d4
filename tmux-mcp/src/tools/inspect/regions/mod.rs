//! Regions as tools: `list_regions`, `read_region` and `search_regions`
//! (see [`crate::terminal::regions`]): what each command in a terminal printed and
//! how it ended.
//!
//! This file holds the tools' descriptions and their router; `types` the
//! arguments and results of `list_regions` and `read_region` (a region as
//! the tools show it), `search` those of `search_regions`, `lost` what a
//! recovered region's output the cooked log no longer holds, and `entry`
//! the helpers that read a pane's regions and their output.

mod entry;
mod lost;
mod search;
mod types;

use rmcp::handler::server::wrapper::Parameters;
use rmcp::{tool, tool_router};

use crate::mcp::server::TmuxMcp;
use crate::reply::{Json, ToolError};
use crate::text::{cook, pane_size};
use crate::text::{json_len, json_prefix};
use crate::tools::Excerpt;
use crate::tools::inspect::search_regex;

pub(crate) use search::{RegionMatch, SearchRegionsArgs, SearchRegionsResult};
pub(crate) use types::{ListRegionsArgs, ListRegionsResult, ReadRegionArgs, ReadRegionResult};

/// Most regions `list_regions` returns.
const MAX_LIST: usize = 200;
const LIST_REGIONS: &str = "List the commands a terminal ran, as regions: id, command line, cwd, exit status and pipestatus, duration, and output cursors. With shell integration every command line counts, whoever typed it; elsewhere each completed run. The last 1000 are kept.";

const READ_REGION: &str = "Read what one command printed (a region from list_regions; default the last) and how it ended. A long output is cut to fit max_bytes: failure-like lines first, then its first and last lines, and a cursor to read the rest with read_output.";

const SEARCH_REGIONS: &str = "Search the output of one region (id) or of all of a terminal's regions for a regex (Rust syntax) or, with literal=true, a plain string. Each match names its region and whether it is in the output or in the command line (a grep for an error is not the error).";

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
