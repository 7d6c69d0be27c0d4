//! Waiting for a pattern in a pane's output, pushed: a wait wakes when the
//! bytes arrive, never on a timer of its own.

use std::time::Duration;

use tokio::time::Instant;

use super::log::{PaneChunk, PaneEnd};
use super::stream::PaneStream;
use crate::text::PlainText;

/// What to wait for in a pane's output.
///
/// ```
/// use tmux_control::Pattern;
/// let dots = Pattern::literal("a.b"); // matches "a.b" only, never "axb"
/// assert!(Pattern::regex("(unclosed").is_err());
/// # let _ = dots;
/// ```
#[derive(Debug, Clone)]
pub struct Pattern {
    matcher: Matcher,
    raw: bool,
}

#[derive(Debug, Clone)]
enum Matcher {
    Regex(regex::bytes::Regex),
    Literal(Vec<u8>),
}

impl Matcher {
    /// The first match at or after `from`, as a byte range.
    fn find_at(&self, text: &[u8], from: usize) -> Option<(usize, usize)> {
        match self {
            Matcher::Regex(regex) => regex.find_at(text, from).map(|m| (m.start(), m.end())),
            Matcher::Literal(needle) => memchr::memmem::find(text.get(from..)?, needle)
                .map(|at| (from + at, from + at + needle.len())),
        }
    }
}

impl Pattern {
    /// Matches `text` literally (it cannot fail: any text is a literal).
    pub fn literal(text: &str) -> Self {
        Self {
            matcher: Matcher::Literal(text.as_bytes().to_vec()),
            raw: false,
        }
    }

    /// Matches a regular expression (Rust `regex` syntax; `(?m)` for `^`/`$` per line).
    pub fn regex(pattern: &str) -> Result<Self, crate::error::Error> {
        let regex = regex::bytes::Regex::new(pattern)
            .map_err(|e| crate::error::Error::InvalidArgument(format!("bad pattern: {e}")))?;
        Ok(Self {
            matcher: Matcher::Regex(regex),
            raw: false,
        })
    }

    /// Match against the raw bytes, escape sequences included (default:
    /// plain text with escape sequences and carriage returns removed).
    pub fn raw(mut self) -> Self {
        self.raw = true;
        self
    }
}

/// A match found by [`Expect::wait`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Match {
    /// The matched text (plain text unless the pattern is raw).
    pub text: String,
    /// Up to 512 bytes of text before the match.
    pub before: String,
    /// Text after the match that had arrived with it.
    pub after: String,
    /// Offset of the match's start in the text searched since the wait began.
    pub text_offset: u64,
    /// Raw stream offset just after the output chunk that completed the
    /// match: everything from here on was not yet looked at.
    pub resume_offset: u64,
}

/// Why a wait ended without a match.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum WaitError {
    /// The deadline passed.
    #[error("no match within {waited:?}; last output: {tail:?}")]
    Timeout {
        /// How long the wait lasted.
        waited: Duration,
        /// The last few hundred bytes of text seen.
        tail: String,
    },
    /// The pane's output ended first.
    #[error("the pane's output ended: {0:?}")]
    Ended(PaneEnd),
}

/// A wait registered with [`PaneOutput::expect`](crate::PaneOutput::expect).
#[derive(Debug)]
pub struct Expect {
    pub(super) stream: PaneStream,
    pub(super) pattern: Pattern,
}

/// How far back (in text bytes) a new chunk's search starts, so that a
/// match split across chunks is found.
const LOOKBACK: usize = 4096;
/// The most text a wait keeps for searching and context.
const WINDOW: usize = 256 * 1024;

impl Expect {
    /// The raw offset from which this wait looks.
    pub fn offset(&self) -> u64 {
        self.stream.offset()
    }

    /// Waits for the pattern, at most `timeout`. Cancel-safe: dropping the
    /// future abandons the wait and nothing else.
    pub async fn wait(mut self, timeout: Duration) -> Result<Match, WaitError> {
        let deadline = Instant::now() + timeout;
        let mut plain = PlainText::new();
        let mut text: Vec<u8> = Vec::new();
        // Text offset of text[0] since the wait began.
        let mut dropped: u64 = 0;
        let mut searched_to = 0usize;
        loop {
            let chunk = tokio::select! {
                c = self.stream.next() => c,
                () = tokio::time::sleep_until(deadline) => {
                    return Err(WaitError::Timeout { waited: timeout, tail: tail(&text) });
                }
            };
            let Some(chunk) = chunk else {
                let end = self.stream.ended().unwrap_or(PaneEnd::Gone);
                return Err(WaitError::Ended(end));
            };
            let PaneChunk::Output { data, .. } = chunk else {
                continue;
            };
            let before_len = text.len();
            if self.pattern.raw {
                text.extend_from_slice(&data);
            } else {
                plain.feed(&data, &mut text);
            }
            // Search from a little before the new text (or the start of its line).
            let line_start = text[..before_len]
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |p| p + 1);
            let from = line_start
                .max(before_len.saturating_sub(LOOKBACK))
                .min(searched_to.max(before_len.saturating_sub(LOOKBACK)));
            if let Some((start, end)) = self.pattern.matcher.find_at(&text, from) {
                let ctx_start = start.saturating_sub(512);
                return Ok(Match {
                    text: String::from_utf8_lossy(&text[start..end]).into_owned(),
                    before: String::from_utf8_lossy(&text[ctx_start..start]).into_owned(),
                    after: String::from_utf8_lossy(&text[end..]).into_owned(),
                    text_offset: dropped + start as u64,
                    resume_offset: self.stream.offset(),
                });
            }
            searched_to = text.len();
            if text.len() > WINDOW {
                let cut = text.len() - WINDOW / 2;
                text.drain(..cut);
                dropped += cut as u64;
                searched_to -= cut;
            }
        }
    }
}

fn tail(text: &[u8]) -> String {
    String::from_utf8_lossy(&text[text.len().saturating_sub(400)..]).into_owned()
}
