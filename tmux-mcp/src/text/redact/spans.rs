//! Finding and masking: the parts of a text every rule matches, sorted
//! and merged into [`Span`]s, and a text (or a part of it) written with
//! those spans masked as `[REDACTED:name]`.

use super::Redactor;

/// A part of a text to mask: a byte range and the rule that found it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Span {
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) rule: usize,
}

impl Redactor {
    /// The parts of `text` to mask, sorted and merged (overlapping matches
    /// of several rules become one mask, named by the earliest rule). With
    /// `open_end`, a secret cut off at the end of `text` (it may continue
    /// in output not read yet) is masked too.
    pub(super) fn spans(&self, text: &str, open_end: bool) -> Vec<Span> {
        // No text, no secret (and no patterns compiled for nothing).
        if text.is_empty() {
            return Vec::new();
        }
        let mut found = Vec::new();
        let may_match = self.set().map(|set| set.matches(text));
        for (rule, r) in self.rules.iter().enumerate() {
            let whole = may_match.as_ref().is_none_or(|m| m.matched(rule));
            let res = std::iter::once(&r.re)
                .filter(|_| whole)
                .chain(r.open_end.as_ref().filter(|_| open_end))
                .filter_map(super::rules::Lazy::get);
            for re in res {
                for caps in re.captures_iter(text) {
                    let Some(m) = caps.name("secret").or_else(|| caps.get(0)) else {
                        continue;
                    };
                    if m.start() < m.end() {
                        found.push(Span {
                            start: m.start(),
                            end: m.end(),
                            rule,
                        });
                    }
                }
            }
        }
        found.sort_by_key(|s| (s.start, s.rule));
        let mut merged: Vec<Span> = Vec::with_capacity(found.len());
        for s in found {
            match merged.last_mut() {
                Some(last) if s.start < last.end => {
                    last.end = last.end.max(s.end);
                    last.rule = last.rule.min(s.rule);
                }
                _ => merged.push(s),
            }
        }
        merged
    }

    pub(super) fn mask(&self, span: &Span) -> String {
        format!("[REDACTED:{}]", self.rules[span.rule].name)
    }

    /// The part `range` of `text` with `spans` (sorted, merged) masked; a
    /// span that only partly lies in `range` is masked in it too. With
    /// `keep_lines`, each mask is followed by the line breaks it covers.
    pub(super) fn render(
        &self,
        text: &str,
        range: std::ops::Range<usize>,
        spans: &[Span],
        keep_lines: bool,
    ) -> String {
        let mut out = String::with_capacity(range.len());
        let mut at = range.start;
        for span in spans {
            if span.end <= range.start {
                continue;
            }
            if span.start >= range.end {
                break;
            }
            // Spans are sorted and disjoint, so `at <= start`.
            let start = span.start.max(range.start);
            let end = span.end.min(range.end);
            out.push_str(&text[at..start]);
            out.push_str(&self.mask(span));
            if keep_lines {
                out.push_str(&"\n".repeat(text[start..end].matches('\n').count()));
            }
            at = end;
        }
        if at < range.end {
            out.push_str(&text[at..range.end]);
        }
        out
    }
}
