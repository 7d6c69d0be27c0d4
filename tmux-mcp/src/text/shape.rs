//! Shaping pane output for a reply: one size budget for the whole reply
//! (text content and structured content together, as sent), failure-like
//! lines first when the output is too long to show whole, then its head
//! and tail, then how to read the rest; and the report of lost output.
//!
//! The rules, from small to large output (docs/tools.md, "Replies"):
//!
//! 1. Output that fits the budget twice is shown whole, in the text content
//!    and in the structured field.
//! 2. Output that fits once is shown whole in the text content only; the
//!    structured field is null and `highlights` lists the failure-like
//!    lines (a client reading only structured content pages through it
//!    with read_output, whose pages always fit twice).
//! 3. Larger output: the text shows the failure-like lines, then the first
//!    and the last lines, then the cursors of what was left out.

use std::fmt::Write as _;

use schemars::JsonSchema;
use serde::Serialize;
use tmux_control::{Loss, LossReason};

use crate::text::redact::Redactor;
use crate::text::{cook_lines, failure_lines, json_len, json_prefix, json_suffix};

/// What a reply takes besides pane text: the JSON-RPC envelope, the status
/// sentence of the text content, the structured fields that are not pane
/// text and a loss report.
pub(crate) const REPLY_OVERHEAD: usize = 1536;

/// The most failure-like lines a reply lists.
const MAX_HIGHLIGHTS: usize = 12;

/// The most JSON bytes of one listed failure-like line.
const HIGHLIGHT_LINE: usize = 240;

/// Room for the notes of a shaped text (its first line, the gap marker and
/// how to read the rest).
const NOTES: usize = 480;

/// A line of output that looks like a failure or a test summary.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub(crate) struct Highlight {
    /// Line number in the output (1 is the first line).
    pub line: u64,
    /// Cursor of the line's first byte: read_output from here reads it and what follows.
    pub cursor: u64,
    /// The line (secrets masked; a long line is cut, ending with `…`).
    pub text: String,
}

/// Pane output shaped for a reply.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Shaped {
    /// The text for the text content: the whole output, or the shaped form.
    pub(crate) text: String,
    /// Small enough to be sent in the structured content too (rule 1).
    pub(crate) small: bool,
    /// `text` holds the whole output (rules 1 and 2).
    pub(crate) complete: bool,
    /// The failure-like lines (unless small).
    pub(crate) highlights: Vec<Highlight>,
    /// The cursors of the part left out (rule 3).
    pub(crate) omitted: Option<(u64, u64)>,
    /// Lines in the output.
    pub(crate) lines: u64,
}

struct Visible<'a> {
    /// Index among all cooked lines (line number - 1).
    index: usize,
    /// Raw range, relative to the start of the output.
    start: usize,
    end: usize,
    text: &'a str,
}

/// Cooks, redacts (the whole output at once) and shapes `raw`, the output
/// from cursor `at`, to fit a reply of `budget` bytes. `open_end`: more
/// output may follow (a secret cut off at the end is masked). `pane` names
/// the pane in the directions to read the rest; `size` is its width and
/// height, for the line model ([`crate::text::cooked::cook_all`]).
pub(crate) fn shape(
    redactor: &Redactor,
    raw: &[u8],
    at: u64,
    budget: usize,
    open_end: bool,
    pane: &str,
    size: Option<(u16, u16)>,
) -> Shaped {
    let cooked = cook_lines(raw, size);
    let texts: Vec<&str> = cooked.iter().map(|l| l.text.as_str()).collect();
    let redacted = redactor.redact_lines_marked(&texts, open_end);
    let visible: Vec<Visible<'_>> = cooked
        .iter()
        .zip(&redacted)
        .enumerate()
        .filter(|(_, (_, (_, swallowed)))| !swallowed)
        .map(|(index, (line, (text, _)))| Visible {
            index,
            start: line.start,
            end: line.end,
            text: text.as_str(),
        })
        .collect();
    // The empty rest after a final LF is not a line of output.
    let lines = cooked.len() - usize::from(cooked.last().is_some_and(|l| l.text.is_empty()));
    let lines = lines as u64;
    let full = visible
        .iter()
        .map(|v| v.text)
        .collect::<Vec<_>>()
        .join("\n");
    let full_len = json_len(&full);
    if 2 * full_len + REPLY_OVERHEAD <= budget {
        return Shaped {
            text: full,
            small: true,
            complete: true,
            highlights: Vec::new(),
            omitted: None,
            lines,
        };
    }

    // Failure-like lines, for both forms of the reply.
    // They are in both forms: together at most a third of the room.
    let room = (budget.saturating_sub(REPLY_OVERHEAD) / 3).max(400);
    let mut spent = 0;
    let mut highlights = Vec::new();
    let mut failures = 0usize;
    for v in failure_lines(&full)
        .into_iter()
        .filter_map(|i| visible.get(i))
    {
        failures += 1;
        // Cut to fit the room when it is small: the first one is always listed.
        let max = HIGHLIGHT_LINE.min(room.saturating_sub(96) / 2 - 4);
        let mut text = json_prefix(v.text, max).to_owned();
        if text.len() < v.text.len() {
            text.push('…');
        }
        // The line in the text and in the structured entry, with their
        // numbers and names.
        let cost = 2 * json_len(&text) + 96;
        if highlights.is_empty() || highlights.len() < MAX_HIGHLIGHTS && spent + cost <= room {
            spent += cost;
            highlights.push(Highlight {
                line: v.index as u64 + 1,
                cursor: at + v.start as u64,
                text,
            });
        }
    }
    let in_structured: usize = highlights.iter().map(|h| json_len(&h.text) + 48).sum();
    let mut section = String::new();
    if !highlights.is_empty() {
        section.push_str("Lines that look like failures (line number, cursor):\n");
        for h in &highlights {
            let _ = writeln!(section, "{} (cursor {}): {}", h.line, h.cursor, h.text);
        }
        if failures > highlights.len() {
            let _ = writeln!(
                section,
                "(and {} more such lines)",
                failures - highlights.len()
            );
        }
    }
    let avail = budget
        .saturating_sub(REPLY_OVERHEAD + in_structured)
        .max(512);
    if json_len(&section) + full_len + 32 <= avail {
        let text = if section.is_empty() {
            full
        } else {
            format!("{section}--- the whole output:\n{full}")
        };
        return Shaped {
            text,
            small: false,
            complete: true,
            highlights,
            omitted: None,
            lines,
        };
    }

    // Head and tail.
    let rest = avail.saturating_sub(json_len(&section) + NOTES).max(256);
    let head_budget = rest * 2 / 5;
    let tail_budget = rest - head_budget;
    // The empty rest after a final LF is not shown as a line of the tail.
    let mut last = visible.len();
    if last > 1 && visible[last - 1].text.is_empty() && visible[last - 1].start == raw.len() {
        last -= 1;
    }
    let mut head_n = 0;
    let mut used = 0;
    while head_n < last {
        let cost = json_len(visible[head_n].text) + 2;
        if used + cost > head_budget {
            break;
        }
        used += cost;
        head_n += 1;
    }
    let mut tail_from = last;
    used = 0;
    while tail_from > head_n {
        let cost = json_len(visible[tail_from - 1].text) + 2;
        if used + cost > tail_budget {
            break;
        }
        used += cost;
        tail_from -= 1;
    }
    // A line too long for its part is shown cut, and counted as left out.
    let head_cut = (head_n == 0 && last > 0).then(|| {
        let t = visible[0].text;
        format!("{}…", json_prefix(t, head_budget.saturating_sub(8)))
    });
    let tail_cut = (tail_from == last && last > head_n).then(|| {
        let t = visible[last - 1].text;
        format!("…{}", json_suffix(t, tail_budget.saturating_sub(8)))
    });
    let gap_from = visible.get(head_n).map_or(raw.len(), |v| v.start);
    let gap_to = if tail_cut.is_some() {
        visible[last - 1].end
    } else {
        visible.get(tail_from).map_or(raw.len(), |v| v.start)
    };
    let first_left = visible.get(head_n).map_or(lines, |v| v.index as u64 + 1);
    let last_left = if tail_cut.is_some() {
        visible[last - 1].index as u64 + 1
    } else {
        visible
            .get(tail_from)
            .map_or(lines, |v| (v.index as u64).max(1))
    };
    let from_cursor = at + gap_from as u64;
    let to_cursor = at + gap_to as u64;

    let tail_first = if tail_cut.is_some() {
        visible[last - 1].index + 1
    } else {
        visible.get(tail_from).map_or(0, |v| v.index + 1)
    };
    let tail_last = visible.get(last.wrapping_sub(1)).map_or(0, |v| v.index + 1);
    let mut shown = Vec::new();
    match highlights.len() {
        0 => {}
        1 => shown.push("the line that looks like a failure".to_owned()),
        n => shown.push(format!("the {n} lines that look like failures")),
    }
    if head_n > 0 {
        shown.push(format!("lines 1-{}", visible[head_n - 1].index + 1));
    } else if head_cut.is_some() {
        shown.push("the start of line 1".to_owned());
    }
    if tail_first > 0 && tail_first <= tail_last {
        if shown.iter().any(|s| s.starts_with("lines")) {
            shown.push(format!("{tail_first}-{tail_last}"));
        } else {
            shown.push(format!("lines {tail_first}-{tail_last}"));
        }
    }
    let mut text = format!(
        "[{lines} lines, {} bytes, too long to show whole: below are {}; lines {first_left}-{last_left} are left out (how to read them is at the end).]\n",
        raw.len(),
        match shown.len() {
            0 => "none".to_owned(),
            1 => shown.join(""),
            n => format!("{} and {}", shown[..n - 1].join(", "), shown[n - 1]),
        },
    );
    text.push_str(&section);
    let _ = writeln!(
        text,
        "--- first lines{}:",
        if head_n > 0 {
            format!(" (1-{})", visible[head_n - 1].index + 1)
        } else {
            String::new()
        }
    );
    if let Some(cut) = &head_cut {
        text.push_str(cut);
        text.push('\n');
    }
    for v in &visible[..head_n] {
        text.push_str(v.text);
        text.push('\n');
    }
    let _ = writeln!(
        text,
        "--- [lines {first_left}-{last_left} left out: cursors {from_cursor} to {to_cursor}] ---"
    );
    if let Some(cut) = &tail_cut {
        text.push_str(cut);
        text.push('\n');
    }
    for v in &visible[tail_from..last] {
        text.push_str(v.text);
        text.push('\n');
    }
    let _ = write!(
        text,
        "--- To read what was left out: read_output target={pane} cursor={from_cursor} (it pages: call again with next_cursor, up to cursor {to_cursor}); any cursor above starts a read there."
    );
    Shaped {
        text,
        small: false,
        complete: false,
        highlights,
        omitted: Some((from_cursor, to_cursor)),
        lines,
    }
}

/// Why output is missing from a reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum LossWhy {
    /// tmux-mcp's log of the pane no longer holds these bytes: newer output
    /// pushed them out (the log keeps `--pane-log-bytes` per pane).
    Evicted,
    /// tmux discarded the pane's output here: tmux-mcp fell behind and tmux
    /// paused the pane (flow control). tmux does not say how much.
    Paused,
}

/// Output missing from the range a reply covers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub(crate) struct LossReport {
    /// Why the output is missing.
    pub why: LossWhy,
    /// Cursor where the loss starts.
    pub from_cursor: u64,
    /// Cursor after the loss (for paused: the cursor of the last such point this entry stands for).
    pub to_cursor: u64,
    /// Bytes lost: known when evicted, null when tmux discarded them.
    pub bytes: Option<u64>,
    /// How many losses this entry stands for (several pauses are counted in one entry).
    pub times: u32,
}

/// The most pause entries a reply lists; the rest are counted in the last.
const MAX_PAUSE_ENTRIES: usize = 6;

/// Reports of the library's losses, bounded: the evicted range, then the
/// pauses, the last entry counting any beyond [`MAX_PAUSE_ENTRIES`].
pub(crate) fn loss_reports(losses: &[Loss]) -> Vec<LossReport> {
    reports(losses.iter().map(|l| (l.from, l.to, l.reason)))
}

fn reports(losses: impl IntoIterator<Item = (u64, u64, LossReason)>) -> Vec<LossReport> {
    let mut out: Vec<LossReport> = Vec::new();
    let mut pauses = 0usize;
    for (from, to, reason) in losses {
        match reason {
            LossReason::Evicted => out.push(LossReport {
                why: LossWhy::Evicted,
                from_cursor: from,
                to_cursor: to,
                bytes: Some(to - from),
                times: 1,
            }),
            // LossReason is non-exhaustive: any other reason is a pause-like
            // loss of unknown size.
            _ => {
                pauses += 1;
                if pauses > MAX_PAUSE_ENTRIES
                    && let Some(last) = out.last_mut()
                    && last.why == LossWhy::Paused
                {
                    last.to_cursor = to;
                    last.times += 1;
                    continue;
                }
                out.push(LossReport {
                    why: LossWhy::Paused,
                    from_cursor: from,
                    to_cursor: to,
                    bytes: None,
                    times: 1,
                });
            }
        }
    }
    out
}

/// A sentence for the text content saying what is missing, where and why;
/// `None` when nothing is.
pub(crate) fn describe_losses(losses: &[LossReport]) -> Option<String> {
    if losses.is_empty() {
        return None;
    }
    let mut parts = Vec::new();
    for l in losses.iter().filter(|l| l.why == LossWhy::Evicted) {
        parts.push(format!(
            "{} bytes (cursors {} to {}) are no longer in tmux-mcp's log of the pane (evicted by newer output; the log keeps the newest --pane-log-bytes)",
            l.bytes.unwrap_or(l.to_cursor - l.from_cursor),
            l.from_cursor,
            l.to_cursor
        ));
    }
    let paused: Vec<&LossReport> = losses.iter().filter(|l| l.why == LossWhy::Paused).collect();
    if !paused.is_empty() {
        let times: u32 = paused.iter().map(|l| l.times).sum();
        let mut at: Vec<String> = paused.iter().map(|l| l.from_cursor.to_string()).collect();
        if let Some(last) = paused.last()
            && last.times > 1
        {
            at.push(format!(
                "{} more up to cursor {}",
                last.times - 1,
                last.to_cursor
            ));
        }
        parts.push(format!(
            "tmux discarded output {} at cursor{} {} (tmux paused the pane because tmux-mcp fell behind; how much is unknown)",
            if times == 1 {
                "once".to_owned()
            } else {
                format!("{times} times")
            },
            if times == 1 { "" } else { "s" },
            at.join(", ")
        ));
    }
    Some(format!("Output is missing: {}.", parts.join("; ")))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn red() -> Redactor {
        Redactor::new(true, &[]).unwrap()
    }

    fn lines_output(n: usize, fail_at: usize) -> Vec<u8> {
        let mut raw = Vec::new();
        for i in 1..=n {
            if i == fail_at {
                raw.extend_from_slice(b"FAIL: test_17 expected 3 got 4\r\n");
            } else {
                raw.extend_from_slice(format!("ok {i}: test_{i} passed\r\n").as_bytes());
            }
        }
        raw
    }

    #[test]
    fn small_output_is_whole_and_goes_in_both_forms() {
        let s = shape(&red(), b"a\r\nb\r\n", 100, 8192, false, "%1", None);
        assert_eq!(s.text, "a\nb\n");
        assert!(s.small && s.complete);
        assert_eq!(s.lines, 2);
        assert!(s.highlights.is_empty() && s.omitted.is_none());
    }

    #[test]
    fn medium_output_is_whole_in_the_text_with_failures_first() {
        let raw = lines_output(150, 70);
        let s = shape(&red(), &raw, 0, 8192, false, "%1", None);
        assert!(!s.small && s.complete, "{}", s.text);
        assert!(s.text.starts_with("Lines that look like failures"));
        assert_eq!(s.highlights.len(), 1);
        assert_eq!(s.highlights[0].line, 70);
        assert!(s.text.contains("\nok 150: test_150 passed\n"));
    }

    #[test]
    fn large_output_leads_with_failures_then_head_and_tail_then_how_to_read_the_rest() {
        let raw = lines_output(2000, 1017);
        let at = 5000;
        let s = shape(&red(), &raw, at, 8192, false, "%4", None);
        assert!(!s.small && !s.complete);
        let structured = serde_json::to_string(&s.highlights).unwrap().len();
        assert!(json_len(&s.text) + REPLY_OVERHEAD + structured <= 8192);
        let fail = s.text.find("FAIL: test_17").unwrap();
        assert!(fail < s.text.find("ok 1: test_1 passed").unwrap());
        assert!(s.text.contains("ok 2000: test_2000 passed\n"));
        let h = &s.highlights[0];
        assert_eq!(
            (h.line, h.text.as_str()),
            (1017, "FAIL: test_17 expected 3 got 4")
        );
        // The highlight's cursor is the start of its raw line.
        let offset = usize::try_from(h.cursor - at).unwrap();
        assert!(raw[offset..].starts_with(b"FAIL: test_17"));
        // The left-out range is whole lines, between the head and the tail.
        let (from, to) = s.omitted.unwrap();
        let (f, t) = (
            usize::try_from(from - at).unwrap(),
            usize::try_from(to - at).unwrap(),
        );
        assert_eq!(raw[f - 1], b'\n');
        assert_eq!(raw[t - 1], b'\n');
        let first_left = String::from_utf8_lossy(&raw[f..t])
            .lines()
            .next()
            .unwrap()
            .to_owned();
        assert!(
            !s.text.contains(&format!("\n{first_left}\n")),
            "{first_left}"
        );
        assert!(s.text.ends_with(&format!(
            "read_output target=%4 cursor={from} (it pages: call again with next_cursor, up to cursor {to}); any cursor above starts a read there."
        )));
        // Every line is either shown or in the left-out range.
        let shown_last_head = String::from_utf8_lossy(&raw[..f])
            .lines()
            .last()
            .unwrap()
            .to_owned();
        assert!(s.text.contains(&format!("{shown_last_head}\n--- [lines")));
    }

    #[test]
    fn many_long_failure_lines_stay_within_the_budget() {
        let mut raw = Vec::new();
        for i in 0..500 {
            raw.extend_from_slice(format!("error: case {i} {}\r\n", "x".repeat(300)).as_bytes());
        }
        for budget in [2048, 8192, 40_000] {
            let s = shape(&red(), &raw, 0, budget, false, "%1", None);
            let structured = serde_json::to_string(&s.highlights).unwrap().len();
            assert!(
                json_len(&s.text) + structured + REPLY_OVERHEAD <= budget.max(2 * REPLY_OVERHEAD),
                "{budget}: {} + {structured}",
                json_len(&s.text)
            );
            assert!(!s.highlights.is_empty(), "{budget}");
            assert!(s.text.contains("more such lines"), "{budget}");
        }
    }

    #[test]
    fn one_huge_line_is_cut_at_both_ends() {
        let raw = vec![b'x'; 200_000];
        let s = shape(&red(), &raw, 0, 8192, true, "%1", None);
        assert!(!s.complete);
        assert!(json_len(&s.text) <= 8192 - REPLY_OVERHEAD);
        assert!(s.text.contains("xxx…\n"), "{}", &s.text[..200]);
        assert!(s.text.contains("\n…xxx"));
        assert_eq!(s.omitted, Some((0, 200_000)));
    }

    #[test]
    fn secrets_are_masked_before_shaping() {
        let mut raw = b"-----BEGIN RSA PRIVATE KEY-----\r\n".to_vec();
        for _ in 0..400 {
            raw.extend_from_slice(
                b"MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\r\n",
            );
        }
        raw.extend_from_slice(b"-----END RSA PRIVATE KEY-----\r\nerror: key leaked\r\n");
        let s = shape(&red(), &raw, 0, 8192, false, "%1", None);
        assert!(!s.text.contains("MIIE"), "{}", s.text);
        assert!(s.small, "the masked block's lines are left out: {}", s.text);
        assert_eq!(s.text, "[REDACTED:private-key]\nerror: key leaked\n");
        // A token at the open end of output so far.
        let s = shape(&red(), b"token: ghp_0123", 0, 8192, true, "%1", None);
        assert_eq!(s.text, "token: [REDACTED:github-token]");
    }

    #[test]
    fn losses_are_bounded_and_described() {
        let mut losses = vec![(0, 1000, LossReason::Evicted)];
        for at in [1500, 1600, 1700, 1800, 1900, 2000, 2100, 2200, 2300] {
            losses.push((at, at, LossReason::Paused));
        }
        let reports = reports(losses);
        assert_eq!(reports.len(), 1 + MAX_PAUSE_ENTRIES);
        assert_eq!(reports[0].bytes, Some(1000));
        let last = reports.last().unwrap();
        assert_eq!(
            (last.from_cursor, last.to_cursor, last.times),
            (2000, 2300, 4)
        );
        let said = describe_losses(&reports).unwrap();
        assert!(said.contains("1000 bytes (cursors 0 to 1000)"), "{said}");
        assert!(
            said.contains(
                "9 times at cursors 1500, 1600, 1700, 1800, 1900, 2000, 3 more up to cursor 2300"
            ),
            "{said}"
        );
        assert!(said.contains("how much is unknown"));
        assert_eq!(describe_losses(&[]), None);
    }
}
