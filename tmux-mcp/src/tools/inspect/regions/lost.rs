//! What the cooked log no longer holds of a recovered region's output
//! ([`OutputLost`]), how `list_regions` and `read_region` say it, and how
//! it is worked out from the log.

use schemars::JsonSchema;
use serde::Serialize;

use crate::terminal::journal::{Held, Journal};

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
    pub(super) fn describe(&self, output_bytes: u64) -> String {
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
    pub(super) fn brief(&self, output_bytes: u64) -> String {
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
pub(super) fn output_lost(
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
