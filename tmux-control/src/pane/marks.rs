//! Shell integration marks in a pane's output: OSC 133 (prompt, input,
//! command start and end with its exit status) and OSC 7 (the working
//! directory), found in the raw bytes as they arrive, as typed events with
//! their offsets.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures_core::Stream;

use super::log::PaneChunk;
use super::stream::PaneStream;

/// One shell integration mark.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ShellMark {
    /// `OSC 133 ; A`: a prompt starts. `params` are the fields after `A`.
    PromptStart {
        /// Fields after `A`.
        params: Vec<String>,
    },
    /// `OSC 133 ; B`: the prompt ends; what the user types follows.
    /// `params` are the fields after `B`.
    InputStart {
        /// Fields after `B`.
        params: Vec<String>,
    },
    /// `OSC 133 ; C`: the command starts; its output follows. `params` are
    /// the fields after `C` (a caller's own tag, say).
    CommandStart {
        /// Fields after `C`.
        params: Vec<String>,
    },
    /// `OSC 133 ; D [; status]`: the command finished.
    CommandEnd {
        /// Its exit status, when the shell gave one.
        status: Option<i32>,
        /// Fields after the status.
        params: Vec<String>,
    },
    /// `OSC 7 ; file://HOST/PATH`: the shell's working directory.
    WorkingDirectory {
        /// The host the path is on (empty for the local host).
        host: String,
        /// The directory, percent-decoded.
        path: PathBuf,
    },
}

impl ShellMark {
    /// The value of a `KEY=VALUE` field of an OSC 133 mark, such as the
    /// `nonce=…` and `pipestatus=…` fields that the hooks of
    /// [`ShellIntegration`] put in.
    ///
    /// ```
    /// use tmux_control::shell::MarkScanner;
    /// let marks = MarkScanner::new(0).feed(0, b"\x1b]133;D;1;nonce=ab;pipestatus=1,0\x07");
    /// assert_eq!(marks[0].mark.param("nonce"), Some("ab"));
    /// assert_eq!(marks[0].mark.param("pipestatus"), Some("1,0"));
    /// assert_eq!(marks[0].mark.param("other"), None);
    /// ```
    ///
    /// [`ShellIntegration`]: crate::shell::ShellIntegration
    pub fn param(&self, key: &str) -> Option<&str> {
        let params = match self {
            ShellMark::PromptStart { params }
            | ShellMark::InputStart { params }
            | ShellMark::CommandStart { params }
            | ShellMark::CommandEnd { params, .. } => params,
            ShellMark::WorkingDirectory { .. } => return None,
        };
        params
            .iter()
            .find_map(|p| p.strip_prefix(key)?.strip_prefix('='))
    }
}

/// A [`ShellMark`] and where it stands in the pane's output.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Mark {
    /// The mark.
    pub mark: ShellMark,
    /// Offset of its first byte (the ESC).
    pub start: u64,
    /// Offset just after its terminator.
    pub end: u64,
}

/// The longest sequence kept while waiting for its terminator; a longer
/// one is not a mark (and is skipped, not buffered without bound).
const MAX_SEQUENCE: usize = 4096;

/// Finds [`Mark`]s in raw output fed in order, across chunk boundaries,
/// keeping only an unfinished sequence between chunks.
///
/// ```
/// use tmux_control::shell::{MarkScanner, ShellMark};
/// let mut scanner = MarkScanner::new(0);
/// // A mark, then the start of another one that the next chunk completes.
/// let first = scanner.feed(0, b"$ ls\r\n\x1b]133;C\x07a b\r\n\x1b]13");
/// assert_eq!(first[0].mark, ShellMark::CommandStart { params: vec![] });
/// assert_eq!((first[0].start, first[0].end), (6, 14));
/// let marks = scanner.feed(23, b"3;D;0\x07\x1b]7;file://vm/tmp/my%20dir\x1b\\");
/// assert_eq!(marks[0].mark, ShellMark::CommandEnd { status: Some(0), params: vec![] });
/// assert_eq!((marks[0].start, marks[0].end), (19, 29));
/// assert_eq!(
///     marks[1].mark,
///     ShellMark::WorkingDirectory { host: "vm".into(), path: "/tmp/my dir".into() }
/// );
/// ```
#[derive(Debug, Clone)]
pub struct MarkScanner {
    pending: Vec<u8>,
    pending_at: u64,
}

impl MarkScanner {
    /// A scanner whose first byte will be at offset `from`.
    pub fn new(from: u64) -> Self {
        Self {
            pending: Vec::new(),
            pending_at: from,
        }
    }

    /// Where a scan should resume to see everything not yet reported: the
    /// start of an unfinished sequence, or the end of what was fed.
    pub fn resume_offset(&self) -> u64 {
        self.pending_at
    }

    /// Feeds bytes that start at `offset` and returns the marks they
    /// complete. Bytes that do not follow on from the last feed (a gap)
    /// drop the unfinished sequence and start afresh at `offset`.
    pub fn feed(&mut self, offset: u64, data: &[u8]) -> Vec<Mark> {
        if offset != self.pending_at + self.pending.len() as u64 {
            self.pending.clear();
            self.pending_at = offset;
        }
        self.pending.extend_from_slice(data);
        let mut marks = Vec::new();
        let mut at = 0;
        let keep_from = loop {
            let Some(found) = memchr::memmem::find(&self.pending[at..], b"\x1b]") else {
                // A final ESC may start the next sequence.
                let end = self.pending.len();
                break if self.pending.last() == Some(&0x1b) {
                    end - 1
                } else {
                    end
                };
            };
            let start = at + found;
            let body_at = start + 2;
            match terminator(&self.pending[body_at..]) {
                Some((body_len, term_len)) => {
                    let end = body_at + body_len + term_len;
                    let body = &self.pending[body_at..body_at + body_len];
                    if let Some(mark) = (term_len > 0).then(|| parse(body)).flatten() {
                        marks.push(Mark {
                            mark,
                            start: self.pending_at + start as u64,
                            end: self.pending_at + end as u64,
                        });
                    }
                    at = end;
                }
                None if self.pending.len() - start > MAX_SEQUENCE => at = body_at,
                None => break start,
            }
        };
        self.pending.drain(..keep_from);
        self.pending_at += keep_from as u64;
        marks
    }
}

/// The length of an OSC body and of its terminator (BEL or ESC `\`).
fn terminator(rest: &[u8]) -> Option<(usize, usize)> {
    let i = memchr::memchr2(0x07, 0x1b, rest)?;
    match rest[i] {
        0x07 => Some((i, 1)),
        _ => match rest.get(i + 1) {
            Some(b'\\') => Some((i, 2)),
            // Another escape sequence cut this one short: not a mark.
            Some(_) => Some((i, 0)),
            None => None,
        },
    }
}

fn parse(body: &[u8]) -> Option<ShellMark> {
    let text = std::str::from_utf8(body).ok()?;
    if let Some(url) = text.strip_prefix("7;") {
        let rest = url.strip_prefix("file://")?;
        let slash = rest.find('/')?;
        return Some(ShellMark::WorkingDirectory {
            host: rest[..slash].to_owned(),
            path: PathBuf::from(percent_decode(&rest[slash..])),
        });
    }
    let mut fields = text.strip_prefix("133;")?.split(';');
    let kind = fields.next()?;
    let mut params: Vec<String> = fields.map(str::to_owned).collect();
    Some(match kind {
        "A" => ShellMark::PromptStart { params },
        "B" => ShellMark::InputStart { params },
        "C" => ShellMark::CommandStart { params },
        "D" => {
            let status = params.first().and_then(|s| s.parse().ok());
            if status.is_some() || params.first().is_some_and(String::is_empty) {
                params.remove(0);
            }
            ShellMark::CommandEnd { status, params }
        }
        _ => return None,
    })
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (
            bytes[i],
            bytes.get(i + 1).copied().and_then(hex),
            bytes.get(i + 2).copied().and_then(hex),
        ) {
            (b'%', Some(hi), Some(lo)) => {
                out.push((hi * 16 + lo) as u8);
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The [`Mark`]s of a pane's output from an offset, as they arrive: a
/// [`Stream`], from [`PaneOutput::marks_from`](crate::PaneOutput::marks_from).
#[derive(Debug)]
pub struct Marks {
    stream: PaneStream,
    scanner: MarkScanner,
    ready: VecDeque<Mark>,
}

impl Marks {
    pub(super) fn new(stream: PaneStream) -> Self {
        let from = stream.offset();
        Self {
            stream,
            scanner: MarkScanner::new(from),
            ready: VecDeque::new(),
        }
    }

    /// The next mark; `None` once the pane's output has ended.
    pub async fn next(&mut self) -> Option<Mark> {
        std::future::poll_fn(|cx| self.poll_mark(cx)).await
    }

    fn poll_mark(&mut self, cx: &mut Context<'_>) -> Poll<Option<Mark>> {
        loop {
            if let Some(mark) = self.ready.pop_front() {
                return Poll::Ready(Some(mark));
            }
            match Pin::new(&mut self.stream).poll_next(cx) {
                Poll::Ready(Some(PaneChunk::Output { offset, data })) => {
                    self.ready.extend(self.scanner.feed(offset, &data));
                }
                // Bytes that are gone: whatever sequence they cut is lost.
                Poll::Ready(Some(PaneChunk::Missed { to, .. })) => {
                    self.scanner = MarkScanner::new(to);
                }
                Poll::Ready(Some(PaneChunk::Lost { at })) => {
                    self.scanner = MarkScanner::new(at);
                }
                Poll::Ready(None) => return Poll::Ready(None),
                Poll::Pending => return Poll::Pending,
            }
        }
    }
}

impl Stream for Marks {
    type Item = Mark;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Mark>> {
        self.get_mut().poll_mark(cx)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn all(chunks: &[&[u8]]) -> Vec<Mark> {
        let mut scanner = MarkScanner::new(0);
        let mut at = 0;
        let mut out = Vec::new();
        for c in chunks {
            out.extend(scanner.feed(at, c));
            at += c.len() as u64;
        }
        out
    }

    #[test]
    fn marks_are_found_whatever_the_chunking() {
        let stream: &[u8] = b"\x1b]133;A\x07$ \x1b]133;B\x07make\r\n\x1b]133;C;tag\x1b\\out\r\n\x1b]133;D;2;tag\x07\x1b]7;file:///home/a%2Fb\x07";
        let whole = all(&[stream]);
        let kinds: Vec<&ShellMark> = whole.iter().map(|m| &m.mark).collect();
        assert_eq!(
            kinds,
            [
                &ShellMark::PromptStart { params: vec![] },
                &ShellMark::InputStart { params: vec![] },
                &ShellMark::CommandStart {
                    params: vec!["tag".into()]
                },
                &ShellMark::CommandEnd {
                    status: Some(2),
                    params: vec!["tag".into()]
                },
                &ShellMark::WorkingDirectory {
                    host: String::new(),
                    path: "/home/a/b".into()
                },
            ]
        );
        for m in &whole {
            assert_eq!(stream[m.start as usize], 0x1b);
        }
        for cut in 1..stream.len() {
            assert_eq!(
                all(&[&stream[..cut], &stream[cut..]]),
                whole,
                "cut at {cut}"
            );
        }
        let bytes: Vec<&[u8]> = stream.chunks(1).collect();
        assert_eq!(all(&bytes), whole);
    }

    #[test]
    fn other_sequences_and_gaps_are_not_marks() {
        assert!(all(&[b"\x1b]0;title\x07\x1b]133;Z\x07\x1b]133;C\x1b[0m"]).is_empty());
        assert_eq!(
            all(&[b"\x1b]133;D\x07"])[0].mark,
            ShellMark::CommandEnd {
                status: None,
                params: vec![]
            }
        );
        // A gap drops the unfinished sequence.
        let mut scanner = MarkScanner::new(0);
        assert!(scanner.feed(0, b"\x1b]133;").is_empty());
        assert!(scanner.feed(100, b"C\x07").is_empty());
        assert_eq!(scanner.resume_offset(), 102);
        // An unterminated sequence is not buffered without bound.
        let mut scanner = MarkScanner::new(0);
        let mut long = b"\x1b]133;C;".to_vec();
        long.resize(MAX_SEQUENCE * 2, b'x');
        assert!(scanner.feed(0, &long).is_empty());
        assert!(scanner.pending.len() <= MAX_SEQUENCE + 2);
    }
}
