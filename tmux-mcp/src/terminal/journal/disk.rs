//! The log on disk: its records, their writing and rotation, and recovery.

use std::collections::{HashMap, VecDeque};
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write as _};
use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use super::store::Store;
use super::{Inner, Journal};
use crate::terminal::region::Region;
use crate::text::cooked::{Cooked, Cooker, LineKind};

/// A record in `log.jsonl`.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "t")]
pub(super) enum Record {
    #[serde(rename = "s")]
    Session { s: u32, pid: u32, started: u64 },
    #[serde(rename = "l")]
    Line {
        n: u64,
        s: u32,
        at: u64,
        x: String,
        #[serde(default, skip_serializing_if = "is_text")]
        k: String,
    },
    #[serde(rename = "r")]
    Region(StoredRegion),
}

fn is_text(k: &str) -> bool {
    k.is_empty() || k == "text"
}

/// A region as written to the log: what a restarted server shows of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct StoredRegion {
    pub(super) id: u64,
    pub(super) s: u32,
    pub(super) command: Option<String>,
    pub(super) cwd: Option<String>,
    pub(super) status: Option<i32>,
    pub(super) pipestatus: Option<Vec<i32>>,
    pub(super) duration_ms: Option<u64>,
    pub(super) integrated: bool,
    /// Its output's first and last log lines (none when it printed nothing).
    pub(super) lines: Option<(u64, u64)>,
    pub(super) output_bytes: u64,
    pub(super) end: u64,
    /// Bytes at the start of its output that the log had already dropped
    /// (to stay within its bound) when the region was written: they are in
    /// no line (`lines` starts after them).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub(super) dropped: u64,
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's skip_serializing_if passes a reference
fn is_zero(n: &u64) -> bool {
    *n == 0
}

fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn open_append(path: &Path) -> std::io::Result<File> {
    OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(path)
}

impl Inner {
    pub(super) fn write(&mut self, record: &Record) {
        let Some(file) = self.file.as_mut() else {
            return;
        };
        let Ok(mut line) = serde_json::to_vec(record) else {
            return;
        };
        line.push(b'\n');
        if let Err(e) = file.write_all(&line) {
            tracing::warn!(error = %e, "cannot write the pane's log; it continues in memory only");
            self.file = None;
            return;
        }
        self.file_bytes += line.len() as u64;
        if self.file_bytes > self.max_bytes / 2 {
            self.rotate();
        }
    }

    fn rotate(&mut self) {
        let Some(dir) = self.dir.clone() else {
            return;
        };
        self.file = None;
        let opened = std::fs::rename(dir.join("log.jsonl"), dir.join("log.1.jsonl"))
            .and_then(|()| open_append(&dir.join("log.jsonl")));
        match opened {
            Ok(file) => {
                self.file = Some(file);
                self.file_bytes = 0;
                let session = self.session;
                self.write(&Record::Session {
                    s: session,
                    pid: std::process::id(),
                    started: now_secs(),
                });
                for region in self.written.clone() {
                    self.write(&Record::Region(region));
                }
            }
            Err(e) => {
                tracing::warn!(error = %e, "cannot rotate the pane's log; it continues in memory only");
            }
        }
    }
}

impl Journal {
    /// Opens (or recovers) the log in `dir` for output starting at
    /// `offset`; memory only when `dir` is `None` or cannot be used.
    pub(super) fn open(
        dir: Option<PathBuf>,
        max_bytes: u64,
        offset: u64,
    ) -> (Self, Vec<StoredRegion>) {
        let mut inner = Inner {
            dir: None,
            file: None,
            file_bytes: 0,
            max_bytes: max_bytes.max(64 * 1024),
            lines: Store::new(max_bytes.max(64 * 1024)),
            next: 1,
            session: 1,
            cooker: Cooker::new(offset),
            fed: offset,
            written: VecDeque::new(),
            last_id: 0,
            layout: None,
            evicted: None,
            dropped: HashMap::new(),
        };
        let mut recovered = Vec::new();
        if let Some(dir) = dir {
            let made = std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(&dir);
            let mut last_session = 0;
            let mut skipped = 0;
            let mut cut = false;
            // The files whose reading an error stopped, with the error.
            let mut unread: Vec<String> = Vec::new();
            for name in ["log.1.jsonl", "log.jsonl"] {
                let Ok(file) = File::open(dir.join(name)) else {
                    continue;
                };
                let read = read_records(BufReader::new(file), |record| match record {
                    Record::Session { s, .. } => last_session = last_session.max(s),
                    Record::Line { n, s, at, x, k } if n >= inner.next => {
                        inner.next = n + 1;
                        inner.keep(n, s, at, &x, LineKind::from_name(&k));
                    }
                    Record::Line { .. } => {}
                    Record::Region(r) => {
                        recovered.retain(|o: &StoredRegion| o.id != r.id);
                        recovered.push(r);
                    }
                });
                if let Some(e) = &read.error {
                    tracing::warn!(file = %dir.join(name).display(), error = %e, "cannot read the rest of the pane's log");
                    unread.push(format!("{name} ({e})"));
                }
                skipped += read.skipped;
                cut = name == "log.jsonl" && read.cut;
            }
            if skipped > 0 {
                tracing::warn!(dir = %dir.display(), skipped, "records of the pane's log on disk could not be read (cut short by a crash?) and were skipped");
            }
            inner.session = last_session + 1;
            match made.and_then(|()| open_append(&dir.join("log.jsonl"))) {
                Ok(mut file) => {
                    inner.file_bytes = file.metadata().map_or(0, |m| m.len());
                    // A record cut short at the end: end its line, so that
                    // the next record is a line of its own.
                    let ended = if cut { file.write_all(b"\n") } else { Ok(()) };
                    match ended {
                        Ok(()) => {
                            inner.file_bytes += u64::from(cut);
                            inner.file = Some(file);
                            inner.dir = Some(dir);
                        }
                        Err(e) => {
                            tracing::warn!(dir = %dir.display(), error = %e, "cannot write the pane's log; it is kept in memory only");
                        }
                    }
                }
                Err(e) => {
                    tracing::warn!(dir = %dir.display(), error = %e, "cannot write the pane's log; it is kept in memory only");
                }
            }
            let session = inner.session;
            if inner.next > 1 || skipped > 0 || !unread.is_empty() || !recovered.is_empty() {
                let mut restarted = "[tmux-mcp restarted here: what the terminal printed while tmux-mcp was not running is not in this log".to_owned();
                match skipped {
                    0 => {}
                    1 => restarted.push_str("; 1 record of this log on disk could not be read (cut short, as by a crash) and was skipped: what it held is missing, the records after it were read"),
                    n => restarted.push_str(&format!("; {n} records of this log on disk could not be read (cut short, as by a crash) and were skipped: what they held is missing, the records after them were read")),
                }
                if !unread.is_empty() {
                    restarted.push_str(&format!(
                        "; the rest of {} could not be read, so lines and regions after that point are missing",
                        unread.join(" and ")
                    ));
                }
                restarted.push(']');
                inner.push(Cooked {
                    at: offset,
                    text: restarted,
                    kind: LineKind::Gap,
                });
            }
            inner.write(&Record::Session {
                s: session,
                pid: std::process::id(),
                started: now_secs(),
            });
            inner.last_id = recovered.iter().map(|r| r.id).max().unwrap_or(0);
            inner.written = recovered.iter().cloned().collect();
            inner.dropped = recovered
                .iter()
                .filter(|r| r.dropped > 0)
                .map(|r| (r.id, r.dropped))
                .collect();
        }
        (
            Self {
                inner: Mutex::new(inner),
                synced: tokio::sync::watch::Sender::new((0, 0)),
            },
            recovered,
        )
    }
}

/// What [`read_records`] found in one file of a log.
#[derive(Debug, Default)]
struct ReadRecords {
    /// Lines that are not a record tmux-mcp can read (cut short by a
    /// crash, not UTF-8, not JSON): skipped, with what comes after them read.
    skipped: u64,
    /// The file's last line has no newline (a record cut short at its end).
    cut: bool,
    /// The error that stopped the reading before the end of the file.
    error: Option<std::io::Error>,
}

/// Reads a log file's records in order, handing each to `each`. A line
/// that is not a record is skipped and counted: what follows it is read.
fn read_records(mut reader: impl BufRead, mut each: impl FnMut(Record)) -> ReadRecords {
    let mut read = ReadRecords::default();
    let mut line = Vec::new();
    loop {
        line.clear();
        match reader.read_until(b'\n', &mut line) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                read.error = Some(e);
                break;
            }
        }
        read.cut = line.last() != Some(&b'\n');
        let record = line.strip_suffix(b"\n").unwrap_or(&line);
        if record.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice::<Record>(record) {
            Ok(record) => each(record),
            Err(_) => read.skipped += 1,
        }
    }
    read
}

impl StoredRegion {
    pub(super) fn into_region(self) -> Region {
        Region {
            id: self.id,
            command: self.command,
            input: None,
            cwd: self.cwd,
            output_start: 0,
            output_end: self.output_bytes,
            end: self.end,
            status: self.status,
            pipestatus: self.pipestatus,
            duration_ms: self.duration_ms,
            integrated: self.integrated,
            lines: self.lines,
            recovered: true,
            typed_by: None,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::terminal::journal::tests::stored;

    #[test]
    fn the_log_on_disk_is_bounded_by_rotation() {
        let dir = std::env::temp_dir().join(format!("tmux-mcp-journal-rot-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let (journal, _) = Journal::open(Some(dir.clone()), 64 * 1024, 0);
        let mut offset = 0;
        for i in 0..5000 {
            let line = format!("line {i} with some text to fill the log\r\n");
            journal.feed(offset, line.as_bytes());
            offset += line.len() as u64;
        }
        let size = |name: &str| std::fs::metadata(dir.join(name)).map_or(0, |m| m.len());
        assert!(size("log.1.jsonl") > 0);
        assert!(size("log.jsonl") + size("log.1.jsonl") <= 64 * 1024 + 200);
        let read = journal.read(None, 1, 10);
        assert!(read.first > 1, "old lines were dropped from memory too");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A record cut short by a crash: its first bytes, ending inside the
    /// multi-byte character `é`.
    fn cut_record() -> Vec<u8> {
        let record = r#"{"t":"l","n":90,"s":1,"at":0,"x":"café"}"#.as_bytes();
        let cut = record.iter().position(|b| *b == 0xc3).unwrap() + 1;
        record[..cut].to_vec()
    }

    #[test]
    fn the_reader_skips_and_counts_bad_records_and_reads_on() {
        let mut log = Vec::new();
        log.extend_from_slice(b"{\"t\":\"s\",\"s\":1,\"pid\":1,\"started\":0}\n");
        log.extend_from_slice(b"{\"t\":\"l\",\"n\":1,\"s\":1,\"at\":0,\"x\":\"one\"}\n");
        log.extend_from_slice(&cut_record());
        log.push(b'\n');
        log.extend_from_slice(b"not json at all\n\n");
        log.extend_from_slice(b"{\"t\":\"l\",\"n\":2,\"s\":1,\"at\":5,\"x\":\"two \xc3\xa9\"}\n");
        let mut lines = Vec::new();
        let read = read_records(&log[..], |r| {
            if let Record::Line { n, x, .. } = r {
                lines.push((n, x));
            }
        });
        assert_eq!(lines, [(1, "one".to_owned()), (2, "two é".to_owned())]);
        assert_eq!((read.skipped, read.cut), (2, false));
        assert!(read.error.is_none());

        // Cut short at the end: skipped, and said to be cut.
        let mut log = b"{\"t\":\"l\",\"n\":1,\"s\":1,\"at\":0,\"x\":\"one\"}\n".to_vec();
        log.extend_from_slice(&cut_record());
        let read = read_records(&log[..], |_| {});
        assert_eq!((read.skipped, read.cut), (1, true));
    }

    fn texts(journal: &Journal) -> Vec<String> {
        journal
            .read(Some(1), 0, 1000)
            .lines
            .into_iter()
            .map(|l| l.text)
            .collect()
    }

    #[test]
    fn a_record_cut_short_loses_nothing_written_after_it() {
        let dir = std::env::temp_dir().join(format!("tmux-mcp-journal-cut-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let (journal, _) = Journal::open(Some(dir.clone()), 1 << 20, 0);
        journal.feed(0, b"first\r\n\x1b]133;A\x07");
        journal
            .lock()
            .write(&Record::Region(stored(1, Some((1, 1)), 0)));
        drop(journal);
        // A crash in the middle of a write.
        let mut file = open_append(&dir.join("log.jsonl")).unwrap();
        file.write_all(&cut_record()).unwrap();
        drop(file);

        // A later run writes lines and regions after it.
        let (journal, recovered) = Journal::open(Some(dir.clone()), 1 << 20, 0);
        assert_eq!(recovered.len(), 1);
        journal.feed(0, b"second-a\r\nsecond-b\r\n\x1b]133;A\x07");
        for id in 2..=4 {
            journal
                .lock()
                .write(&Record::Region(stored(id, Some((3, 4)), 0)));
        }
        drop(journal);

        // The next run reads all of it back and says what it skipped.
        let (journal, recovered) = Journal::open(Some(dir.clone()), 1 << 20, 0);
        let ids: Vec<u64> = recovered.iter().map(|r| r.id).collect();
        assert_eq!(ids, [1, 2, 3, 4]);
        let texts = texts(&journal);
        assert_eq!(texts[0], "first");
        assert_eq!(&texts[2..4], ["second-a", "second-b"]);
        for restart in [&texts[1], &texts[4]] {
            assert!(
                restart.starts_with("[tmux-mcp restarted here")
                    && restart.contains("1 record of this log on disk could not be read"),
                "{restart}"
            );
        }
        // The cut record's line was ended: every later record is whole.
        let on_disk = std::fs::read(dir.join("log.jsonl")).unwrap();
        let mut cut_line = cut_record();
        cut_line.push(b'\n');
        assert!(on_disk.windows(cut_line.len()).any(|w| w == cut_line));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
