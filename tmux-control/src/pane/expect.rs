//! Waiting for a pattern in a pane's output, pushed: a wait wakes when the
//! bytes arrive, never on a timer of its own.

use std::collections::VecDeque;
use std::time::Duration;

use tokio::time::Instant;

use super::log::{PaneChunk, PaneEnd};
use super::state::PaneExit;
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

/// A match found by [`Expect::wait`] or [`PaneOutput::wait_for`](crate::PaneOutput::wait_for).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Match {
    /// The matched text (plain text unless the pattern is raw).
    pub text: String,
    /// Up to 512 bytes of text before the match.
    pub before: String,
    /// Text after the match that had arrived with it.
    pub after: String,
    /// Raw stream offset of the match's first byte.
    pub start: u64,
    /// Raw stream offset just after the match's last byte: a wait from here
    /// sees everything after the match (a second match in the same chunk
    /// too), so a series of waits misses nothing.
    pub end: u64,
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

/// How [`PaneOutput::wait_for`](crate::PaneOutput::wait_for) ended: the
/// one outcome a client of a pane wants from "wait until it prints this",
/// each with the raw offset to resume from.
///
/// ```
/// use tmux_control::WaitOutcome;
/// fn cursor(outcome: &WaitOutcome) -> u64 {
///     // Wherever it ended, the next wait starts here and misses nothing.
///     outcome.resume_offset()
/// }
/// # let _ = cursor;
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum WaitOutcome {
    /// The pattern matched; resume at [`Match::end`].
    Matched(Match),
    /// The pane's program exited (the pane is kept with `remain-on-exit`)
    /// before a match.
    Exited {
        /// How it exited.
        exit: PaneExit,
        /// The end of the output when it was seen to exit.
        resume_offset: u64,
    },
    /// The pane's output ended before a match: the pane is gone, or the
    /// connection closed.
    Ended {
        /// Why it ended.
        end: PaneEnd,
        /// The end of the output.
        resume_offset: u64,
    },
    /// No match within the time.
    Timeout {
        /// How long the wait lasted.
        waited: Duration,
        /// The last few hundred bytes of text seen.
        tail: String,
        /// The start of the last unfinished line seen (or of the search,
        /// if it saw no line end), so that a wait resumed here still finds
        /// a match that straddles the time limit.
        resume_offset: u64,
    },
}

impl WaitOutcome {
    /// Where the next wait or read should start.
    pub fn resume_offset(&self) -> u64 {
        match self {
            WaitOutcome::Matched(m) => m.end,
            WaitOutcome::Exited { resume_offset, .. }
            | WaitOutcome::Ended { resume_offset, .. }
            | WaitOutcome::Timeout { resume_offset, .. } => *resume_offset,
        }
    }
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
        let mut search = Search::new(self.stream.offset());
        loop {
            let chunk = tokio::select! {
                c = self.stream.next() => c,
                // A true timer: the caller's deadline.
                () = tokio::time::sleep_until(deadline) => {
                    return Err(WaitError::Timeout { waited: timeout, tail: search.tail() });
                }
            };
            match search.chunk(&self.pattern, chunk, &self.stream) {
                Step::More => {}
                Step::Found(m) => return Ok(*m),
                Step::Ended(end) => return Err(WaitError::Ended(end)),
            }
        }
    }

    /// The stream and pattern, for [`PaneOutput::wait_for`](crate::PaneOutput::wait_for).
    pub(super) fn into_parts(self) -> (PaneStream, Pattern) {
        (self.stream, self.pattern)
    }
}

/// What one chunk did to a [`Search`].
pub(super) enum Step {
    /// No match yet.
    More,
    /// The pattern matched.
    Found(Box<Match>),
    /// The output ended.
    Ended(PaneEnd),
}

/// A search of a pane's output for a pattern, fed chunk by chunk: the text
/// searched (a bounded window), and where each piece of it lies in the raw
/// stream, so a match is reported with its raw offsets.
pub(super) struct Search {
    filter: PlainText,
    text: Vec<u8>,
    /// Text offset of `text[0]` since the search began.
    dropped: u64,
    searched_to: usize,
    /// Where the search began, in the raw stream.
    from: u64,
    /// `(text offset, raw offset)` where each contiguous piece of the text
    /// begins; a piece runs on one for one until the next.
    pieces: VecDeque<(u64, u64)>,
}

impl Search {
    pub(super) fn new(from: u64) -> Self {
        Self {
            filter: PlainText::new(),
            text: Vec::new(),
            dropped: 0,
            searched_to: 0,
            from,
            pieces: VecDeque::new(),
        }
    }

    /// Takes the next chunk of the stream (`None`: it ended).
    pub(super) fn chunk(
        &mut self,
        pattern: &Pattern,
        chunk: Option<PaneChunk>,
        stream: &PaneStream,
    ) -> Step {
        let Some(chunk) = chunk else {
            return Step::Ended(stream.ended().unwrap_or(PaneEnd::Gone));
        };
        let PaneChunk::Output { offset, data } = chunk else {
            return Step::More;
        };
        let before_len = self.text.len();
        {
            let Self {
                filter,
                text,
                dropped,
                pieces,
                ..
            } = self;
            let mut piece = |at: usize, from: usize| {
                let at = *dropped + at as u64;
                let raw = offset + from as u64;
                let continues = pieces.back().is_some_and(|&(t, r)| r + (at - t) == raw);
                if !continues {
                    pieces.push_back((at, raw));
                }
            };
            if pattern.raw {
                if !data.is_empty() {
                    piece(text.len(), 0);
                }
                text.extend_from_slice(&data);
            } else {
                filter.feed_mapped(&data, text, piece);
            }
        }
        let text = &self.text;
        // Search from a little before the new text (or the start of its line).
        let line_start = text[..before_len]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |p| p + 1);
        let from = line_start
            .max(before_len.saturating_sub(LOOKBACK))
            .min(self.searched_to.max(before_len.saturating_sub(LOOKBACK)));
        if let Some((start, end)) = pattern.matcher.find_at(text, from) {
            let ctx_start = start.saturating_sub(512);
            let raw_start = self.raw_at(start, stream);
            let raw_end = if end > start {
                self.raw_at(end - 1, stream) + 1
            } else {
                raw_start
            };
            return Step::Found(Box::new(Match {
                text: String::from_utf8_lossy(&text[start..end]).into_owned(),
                before: String::from_utf8_lossy(&text[ctx_start..start]).into_owned(),
                after: String::from_utf8_lossy(&text[end..]).into_owned(),
                start: raw_start,
                end: raw_end,
            }));
        }
        self.searched_to = self.text.len();
        if self.text.len() > WINDOW {
            let cut = self.text.len() - WINDOW / 2;
            self.text.drain(..cut);
            self.dropped += cut as u64;
            self.searched_to -= cut;
            // Keep the piece that holds the new first byte.
            while self.pieces.get(1).is_some_and(|&(t, _)| t <= self.dropped) {
                self.pieces.pop_front();
            }
        }
        Step::More
    }

    /// The raw offset of `text[at]` (the stream's next offset past the end).
    fn raw_at(&self, at: usize, stream: &PaneStream) -> u64 {
        let at = self.dropped + at as u64;
        let k = self.pieces.partition_point(|&(t, _)| t <= at);
        match k.checked_sub(1).and_then(|k| self.pieces.get(k)) {
            Some(&(t, r)) if at < self.dropped + self.text.len() as u64 => r + (at - t),
            _ => stream.offset(),
        }
    }

    /// Where a search resumed after a timeout should start: the start of
    /// the last unfinished line seen, or where this one started.
    pub(super) fn resume_offset(&self, stream: &PaneStream) -> u64 {
        match self.text.iter().rposition(|&b| b == b'\n') {
            Some(p) => self.raw_at(p, stream) + 1,
            None if self.dropped == 0 => self.from,
            None => self.raw_at(0, stream),
        }
    }

    /// The last few hundred bytes of text seen.
    pub(super) fn tail(&self) -> String {
        let text = &self.text;
        String::from_utf8_lossy(&text[text.len().saturating_sub(400)..]).into_owned()
    }
}
