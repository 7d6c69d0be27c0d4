//! The helpers of the region tools: a pane's regions brought up to date,
//! a region as the tools show it, and a recovered region's output read
//! from the cooked log.

use std::sync::Arc;

use tmux_control::PaneOutput;

use crate::mcp::server::TmuxMcp;
use crate::reply::ToolError;
use crate::terminal::journal::Journal;
use crate::terminal::region::TypedBy;
use crate::terminal::regions::Region;

use super::lost::output_lost;
use super::types::RegionEntry;

/// A pane's output, its cooked log and its regions.
type Pane = (PaneOutput, Option<Arc<Journal>>, Vec<Region>);

impl TmuxMcp {
    /// A region as the tools show it (its command line read back from
    /// the log when `run` did not type it).
    pub(crate) fn entry(
        &self,
        po: &PaneOutput,
        journal: Option<&Journal>,
        r: &Region,
    ) -> RegionEntry {
        // A recovered region's offsets are not this run's: its lines are
        // the ones it was written with.
        let lines = if r.recovered {
            r.lines
        } else {
            r.lines.or_else(|| journal?.region_lines(r))
        };
        let command = r.command.clone().or_else(|| {
            let (from, to) = r.input?;
            crate::text::echoed(po, from, to).map(|c| self.redact(&c))
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
            typed_by: match &r.typed_by {
                Some(TypedBy::Actor(actor)) => Some(actor.to_string()),
                _ => None,
            },
            by_person: r.typed_by == Some(TypedBy::Person),
            mode: if r.integrated {
                "integrated"
            } else {
                "wrapped"
            }
            .to_owned(),
        }
    }

    /// The pane's regions, brought up to date with its shell's marks.
    pub(super) async fn regions_of(&self, target: &str) -> Result<Pane, ToolError> {
        let conn = self.conn().await?;
        let r = conn.resolve(target).await?;
        let po = conn.follow(r.pane).await?;
        let _ = conn.shells.get(&conn.tmux, &po).await;
        let journal = conn.journals.get(r.pane);
        Ok((po, journal, conn.shells.regions.list(r.pane)))
    }

    /// A recovered region's output lines, from the cooked log (secrets
    /// masked), with their numbers.
    pub(super) fn recovered_lines(
        &self,
        journal: Option<&Journal>,
        r: &Region,
    ) -> Vec<(u64, String)> {
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
    pub(super) fn recovered_output(&self, journal: Option<&Journal>, r: &Region) -> String {
        let lines: Vec<String> = self
            .recovered_lines(journal, r)
            .into_iter()
            .map(|(_, t)| t)
            .collect();
        lines.join("\n")
    }
}
