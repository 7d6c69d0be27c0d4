//! The arguments and result of `read_output`, with the summary its
//! reply's text carries, and the page of a pane's output log it reads.

use std::fmt::Write as _;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tmux_control::PaneOutput;

use crate::mcp::server::TmuxMcp;
use crate::reply::Summary;
use crate::text::shape::{LossReport, REPLY_OVERHEAD, describe_losses};
use crate::text::{cook, json_len, json_prefix, pane_size};

/// Arguments of `read_output`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ReadOutputArgs {
    /// The pane: `%3` or an exact name.
    pub target: String,
    /// Read the output log from this cursor (from a reply). Without it: the last lines of the scrollback.
    pub cursor: Option<u64>,
    /// Without cursor: how many lines (default 100, at most 10000).
    pub last_lines: Option<u64>,
    /// Keep escape sequences.
    #[serde(default)]
    pub raw: bool,
    /// Reply size budget in bytes (default 8192, at least 2048).
    pub max_bytes: Option<usize>,
}

/// Where `read_output` read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum OutputSource {
    /// tmux-mcp's log of the pane's output, by cursor.
    Log,
    /// tmux's rendered scrollback.
    Scrollback,
}

/// Result of `read_output`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct ReadOutputResult {
    /// The pane read.
    pub pane: String,
    /// Where the text came from.
    pub source: OutputSource,
    /// The text (secrets masked).
    pub text: String,
    /// Log only: the cursor the text starts at (later than asked if bytes were missed).
    pub from_cursor: Option<u64>,
    /// Where to continue reading (or waiting) from.
    pub next_cursor: u64,
    /// More output is already available after next_cursor.
    pub more: bool,
    /// Bytes between the asked cursor and from_cursor that the log no longer holds.
    pub missed_bytes: u64,
    /// Scrollback only: lines left out at the start because of the size limit.
    pub omitted_lines: u32,
    /// Log only: output missing between the asked cursor and next_cursor, and why (evicted from the log, or discarded by tmux); only when some is.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub losses: Vec<LossReport>,
}

impl Summary for ReadOutputResult {
    fn summary(&self) -> String {
        let mut s = match self.source {
            OutputSource::Log => format!(
                "Output of {} from cursor {} to {}{}",
                self.pane,
                self.from_cursor.unwrap_or(0),
                self.next_cursor,
                if self.more {
                    " (more available: call again with cursor=next_cursor)"
                } else {
                    ""
                }
            ),
            OutputSource::Scrollback => format!(
                "Last lines of {}'s scrollback; new output will start at cursor={}",
                self.pane, self.next_cursor
            ),
        };
        if self.omitted_lines > 0 {
            let _ = write!(
                s,
                "; {} older lines left out (size limit)",
                self.omitted_lines
            );
        }
        if let Some(lost) = describe_losses(&self.losses) {
            s.push_str(". ");
            s.push_str(&lost);
        }
        s.push_str(":\n");
        s.push_str(&self.text);
        s
    }
}

/// A page of `read_output`: where it starts, how many raw bytes it covers
/// and its text.
pub(super) struct Page {
    pub(super) at: u64,
    pub(super) len: u64,
    pub(super) text: String,
}

/// The most bytes (as JSON) of a `read_output` page in a reply of
/// `budget` bytes: small enough to be sent in the text and the structured
/// content both (docs/tools.md, "Replies").
pub(super) fn page_bytes(budget: usize) -> usize {
    (budget.saturating_sub(REPLY_OVERHEAD) / 2).max(256)
}

/// Raw bytes on either side of a page that are redacted with it but not
/// shown, so a secret the page boundary cuts is still masked, and a page
/// into a private key block of up to this size is masked whole.
const PAGE_CONTEXT: usize = 64 * 1024;
impl TmuxMcp {
    /// The page of output from `from` that fits a reply of `budget` bytes,
    /// ending at a line end when it can, redacted together with the bytes
    /// around it.
    pub(super) fn output_page(
        &self,
        po: &PaneOutput,
        from: u64,
        budget: usize,
        raw_mode: bool,
    ) -> Page {
        let max = page_bytes(budget);
        let (at, raw) = po.read_from(from, max);
        let end = po.end_offset();
        let size = pane_size(po);
        let render = |bytes: &[u8]| {
            if raw_mode {
                String::from_utf8_lossy(bytes).into_owned()
            } else {
                cook(bytes, size)
            }
        };
        // Shrink until the text fits: escapes can make text longer than its
        // raw bytes (each try takes at most a fixed share less).
        let mut take = raw.len();
        let mut text;
        loop {
            if at + take as u64 != end {
                if let Some(p) = raw[..take].iter().rposition(|&b| b == b'\n') {
                    take = p + 1;
                } else if let Err(e) = std::str::from_utf8(&raw[..take])
                    && e.error_len().is_none()
                    && e.valid_up_to() > 0
                {
                    // No line end: at least do not cut a character in two.
                    take = e.valid_up_to();
                }
            }
            text = render(&raw[..take]);
            let size = json_len(&text);
            if size <= max || take <= 1 {
                break;
            }
            take = (take * max / size).min(take - 1).max(1);
        }
        if json_len(&text) > max {
            text = json_prefix(&text, max).to_owned();
        }
        let next = at + take as u64;
        let before = {
            // From the oldest byte the log holds, if that is closer.
            let look = at
                .saturating_sub(PAGE_CONTEXT as u64)
                .max(po.start_offset())
                .min(at);
            let (b_at, b) = po.read_from(look, usize::try_from(at - look).unwrap_or(0));
            if b_at + b.len() as u64 == at {
                render(&b)
            } else {
                String::new()
            }
        };
        let (a_at, after) = po.read_from(next, PAGE_CONTEXT);
        let after_text = if a_at == next {
            render(&after)
        } else {
            String::new()
        };
        let open_end = a_at + after.len() as u64 >= po.end_offset();
        let mut red = self
            .redact_parts(&[&before, &text, &after_text], open_end)
            .into_iter()
            .skip(1);
        Page {
            at,
            len: take as u64,
            text: red.next().unwrap_or_default(),
        }
    }
}
