//! The markers of the `run` tool: a shell command with exact output and
//! exit status.
//!
//! The command is typed into the pane's shell wrapped between two OSC 133
//! markers that carry a fresh nonce:
//!
//! ```text
//!  printf '\033]133;C;NONCE\007'; eval 'COMMAND'; printf '\033]133;D;%s;NONCE\007' "$?"
//! ```
//!
//! The markers are found in the raw output stream. The shell echoes the line
//! as typed, with `\033` as four visible characters and `%s` unexpanded, so
//! the echo can never look like a marker: only the bytes `printf` writes
//! (a real ESC, a real number) can. `eval` runs the command in the current
//! shell (so `cd` and variables persist) and keeps a trailing `&`, `;` or
//! `# comment` in the command from breaking the wrapper. The line starts
//! with a space so that shells set to ignore such lines keep it out of
//! their history.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use sha2::{Digest as _, Sha256};
use tmux_control::{MarkScanner, PaneId, ShellMark};

/// The state of one run, kept between calls so that a run that outlives
/// one call can be resumed by the next.
#[derive(Debug, Clone)]
pub struct RunState {
    /// The pane it runs in.
    pub pane: PaneId,
    /// Finds its markers.
    pub scanner: Scanner,
    /// Where the next scan starts in the pane's output.
    pub scan_from: u64,
    /// When it was typed.
    pub started: Instant,
    /// Whether it has finished (its result was returned).
    pub finished: bool,
}

/// How the markers of one run were found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Finished {
    /// Offset of the first byte of the command's output.
    pub output_start: u64,
    /// Offset just after its last byte (the start of the end marker).
    pub output_end: u64,
    /// Offset just after the end marker.
    pub marker_end: u64,
    /// The command's exit status (`$?`).
    pub status: i32,
}

/// Finds the two markers of one run in the output stream, across chunk
/// boundaries: the library's [`MarkScanner`] finds the OSC 133 marks, and
/// this keeps the two that carry the run's nonce.
#[derive(Debug, Clone)]
pub struct Scanner {
    nonce: String,
    marks: MarkScanner,
    /// Offset just after the start marker, once seen.
    output_start: Option<u64>,
}

impl Scanner {
    /// A scanner for `nonce` (hex digits), starting at offset `from`.
    pub fn new(nonce: &str, from: u64) -> Result<Self, String> {
        if nonce.is_empty() || !nonce.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(format!("nonce {nonce:?} is not hex"));
        }
        Ok(Self {
            nonce: nonce.to_owned(),
            marks: MarkScanner::new(from),
            output_start: None,
        })
    }

    /// The nonce.
    pub fn nonce(&self) -> &str {
        &self.nonce
    }

    /// Offset just after the start marker, once seen.
    pub fn output_start(&self) -> Option<u64> {
        self.output_start
    }

    /// Where scanning should resume after this scanner is stored: the
    /// start of an unfinished mark (re-read from the log on resume).
    pub fn resume_offset(&self) -> u64 {
        self.marks.resume_offset()
    }

    /// Forgets any unfinished mark and continues at `offset` (bytes were
    /// missed, or a stored scanner resumes from the log).
    pub fn restart_at(&mut self, offset: u64) {
        self.marks = MarkScanner::new(offset);
    }

    /// Feeds bytes that start at `offset`. Returns the result once the end
    /// marker is seen.
    pub fn feed(&mut self, offset: u64, data: &[u8]) -> Option<Finished> {
        for mark in self.marks.feed(offset, data) {
            let ours = |params: &[String]| params.first().is_some_and(|p| *p == self.nonce);
            match mark.mark {
                ShellMark::CommandStart { params }
                    if ours(&params) && self.output_start.is_none() =>
                {
                    self.output_start = Some(mark.end);
                }
                ShellMark::CommandEnd { status, params } if ours(&params) => {
                    if let Some(output_start) = self.output_start {
                        return Some(Finished {
                            output_start,
                            output_end: mark.start,
                            marker_end: mark.end,
                            status: status.unwrap_or(-1),
                        });
                    }
                }
                _ => {}
            }
        }
        None
    }
}

/// A fresh nonce: 16 hex digits from the time, the process and a counter.
pub fn nonce() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let hash = Sha256::digest(format!("{nanos}:{}:{n}", std::process::id()).as_bytes());
    hash.iter().take(8).map(|b| format!("{b:02x}")).collect()
}

/// The line typed for `command`.
pub fn wrapper_line(command: &str, nonce: &str) -> String {
    let quoted = command.replace('\'', r"'\''");
    format!(
        " printf '\\033]133;C;{nonce}\\007'; eval '{quoted}'; printf '\\033]133;D;%s;{nonce}\\007' \"$?\""
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    const N: &str = "0123456789abcdef";

    fn start() -> Vec<u8> {
        format!("\x1b]133;C;{N}\x07").into_bytes()
    }

    fn end(status: i32) -> Vec<u8> {
        format!("\x1b]133;D;{status};{N}\x07").into_bytes()
    }

    #[test]
    fn finds_markers_in_one_chunk() {
        let mut s = Scanner::new(N, 100).unwrap();
        let mut data = b"echo of the line\r\n".to_vec();
        data.extend(start());
        data.extend(b"out\r\n");
        data.extend(end(3));
        data.extend(b"$ ");
        let f = s.feed(100, &data).unwrap();
        let text_at = |o: u64| (o - 100) as usize;
        assert_eq!(
            &data[text_at(f.output_start)..text_at(f.output_end)],
            b"out\r\n"
        );
        assert_eq!(f.status, 3);
        assert_eq!(&data[text_at(f.marker_end)..], b"$ ");
    }

    #[test]
    fn markers_split_at_every_byte() {
        let mut data = b"prompt$ ".to_vec();
        data.extend(start());
        data.extend(b"hello\r\n");
        data.extend(end(0));
        for split in 0..data.len() {
            for split2 in split..data.len() {
                let mut s = Scanner::new(N, 0).unwrap();
                assert!(s.feed(0, &data[..split]).is_none());
                let r1 = s.feed(split as u64, &data[split..split2]);
                let r = r1.or_else(|| s.feed(split2 as u64, &data[split2..]));
                let f = r.unwrap_or_else(|| panic!("split {split}/{split2}"));
                assert_eq!(
                    &data[f.output_start as usize..f.output_end as usize],
                    b"hello\r\n"
                );
            }
        }
    }

    #[test]
    fn the_echo_never_matches() {
        let line = wrapper_line("echo hi; exit 7 # x", N);
        assert!(line.starts_with(" printf '\\033]133;C;"));
        assert!(line.contains("eval 'echo hi; exit 7 # x'"));
        let mut s = Scanner::new(N, 0).unwrap();
        assert!(s.feed(0, line.as_bytes()).is_none());
        assert!(s.output_start().is_none());
        // Other nonces never match either.
        let mut s = Scanner::new(N, 0).unwrap();
        assert!(s.feed(0, b"\x1b]133;C;ffffffffffffffff\x07").is_none());
        assert!(s.output_start().is_none());
    }

    #[test]
    fn quotes_in_commands() {
        assert!(wrapper_line("echo 'a'", N).contains(r"eval 'echo '\''a'\'''"));
        assert_eq!(nonce().len(), 16);
        assert_ne!(nonce(), nonce());
    }
}
