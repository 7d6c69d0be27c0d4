//! The durable cooked log of each followed pane: its output cooked into
//! the lines a human saw ([`crate::cooked`]), numbered for good, written to
//! disk as it arrives and read back by a restarted tmux-mcp, with the
//! pane's regions.
//!
//! Each pane's log lives in `STATE_DIR/logs/ID/` (directory 0700, files
//! 0600), where `ID` is kept in the pane's `@tmux-mcp-log` option so a
//! restarted server finds it again. `log.jsonl` holds one JSON record per
//! line: a session start (`"t":"s"`), a final line (`"t":"l"`: number,
//! session, offset in that session's output, text, kind) or a region
//! (`"t":"r"`). When `log.jsonl` passes half the bound it becomes
//! `log.1.jsonl` (replacing the older one) and a new file starts with the
//! regions known so far, so the log on disk never holds more than the bound
//! and the regions survive rotation. A restarted server reads the records
//! back one by one: a line that is not a record (cut short by a crash, even
//! inside a multi-byte character) is skipped and counted in the log's
//! restart line, and the records after it are read. A pane that is gone
//! takes its log with it. The lines the pane still shows (they can change) are not on disk: a
//! restarted server reads them from tmux's screen.
//!
//! A pane can also end unseen: its tmux server was killed, or tmux-mcp was
//! not running. So each log directory of a local pane names its tmux
//! server's process in a file `server`, and each new connection removes
//! ([`Journals::prune`]) the logs whose server process is gone, and the
//! logs of its own server that no pane's `@tmux-mcp-log` names any more.
//! Logs of other live servers, of remote hosts and without a `server` file
//! are left alone.
//!
//! One task per pane feeds its log from the pane's output stream (pushed,
//! never polled) and writes its regions once their output is cooked.
//!
//! In memory the final lines are kept compactly ([`Store`]): blocks of
//! texts one after the other with 16 bytes of bookkeeping a line, counted
//! with their buffers' whole capacity, so the bound holds for a flood of
//! short lines too.
//!
//! (Over 600 lines: the on-disk format, recovery that skips what it cannot
//! read, and the compact in-memory line store; the last 320 are unit tests.
//! The line store is the part to split out with issue 23's one record per
//! terminal.)

use std::collections::{HashMap, VecDeque};
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write as _};
use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};
use tmux_control::command::{OptionScope, Raw, SetOption, ShowOption};
use tmux_control::{PaneChunk, PaneEnd, PaneId, PaneOutput, Tmux};

use crate::cooked::{Cooked, Cooker, LineKind};
use crate::regions::{Region, Regions};
use crate::text::cook;

/// The pane option naming the pane's log directory.
const OPTION: &str = "@tmux-mcp-log";

/// The file in a local pane's log directory that holds the process id of
/// its tmux server.
const SERVER_FILE: &str = "server";

/// One line of a pane's cooked log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LogLine {
    /// Its number in the pane's log, from 1, never reused.
    pub(crate) n: u64,
    /// The tmux-mcp session (process run) that recorded it, from 1.
    pub(crate) session: u32,
    /// Offset in that session's output of the byte that started it.
    pub(crate) at: u64,
    /// The text.
    pub(crate) text: String,
    /// What it is.
    pub(crate) kind: LineKind,
}

/// A record in `log.jsonl`.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "t")]
enum Record {
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
#[derive(Debug, Clone, Serialize, Deserialize)]
struct StoredRegion {
    id: u64,
    s: u32,
    command: Option<String>,
    cwd: Option<String>,
    status: Option<i32>,
    pipestatus: Option<Vec<i32>>,
    duration_ms: Option<u64>,
    integrated: bool,
    /// Its output's first and last log lines (none when it printed nothing).
    lines: Option<(u64, u64)>,
    output_bytes: u64,
    end: u64,
    /// Bytes at the start of its output that the log had already dropped
    /// (to stay within its bound) when the region was written: they are in
    /// no line (`lines` starts after them).
    #[serde(default, skip_serializing_if = "is_zero")]
    dropped: u64,
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's skip_serializing_if passes a reference
fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// What the log holds of a range of its lines ([`Journal::held`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Held {
    /// How many of the lines it holds.
    pub(crate) lines: u64,
    /// The oldest line it holds (the next line's number when it holds none).
    pub(crate) oldest: u64,
}

/// What a read of the log returns.
#[derive(Debug, Clone, Default)]
pub(crate) struct LogRead {
    /// The lines, oldest first: final ones, then the lines still on the
    /// screen, numbered as they will be if they do not change.
    pub(crate) lines: Vec<LogLine>,
    /// Number of the first line the log still holds.
    pub(crate) first: u64,
    /// Number the next final line will get.
    pub(crate) next: u64,
    /// How many of `lines` are still on the screen (the last ones).
    pub(crate) live: usize,
    /// A full-screen program is running now.
    pub(crate) full_screen: bool,
    /// The log is written to disk (else memory only).
    pub(crate) durable: bool,
}

/// A line as the log holds it, borrowed from its [`Store`].
#[derive(Debug, Clone, Copy)]
struct View<'a> {
    n: u64,
    session: u32,
    at: u64,
    text: &'a str,
    kind: LineKind,
}

impl View<'_> {
    fn to_line(self) -> LogLine {
        LogLine {
            n: self.n,
            session: self.session,
            at: self.at,
            text: self.text.to_owned(),
            kind: self.kind,
        }
    }
}

/// One line's bookkeeping in a [`Block`]: its offset, its number after the
/// block's first, and where its text ends in the block's text with its
/// kind in the top two bits.
#[derive(Debug, Clone, Copy)]
struct Meta {
    at: u64,
    n: u32,
    end_kind: u32,
}

/// The most text one block holds (the kind takes the top two bits).
const MAX_BLOCK_TEXT: usize = (1 << 30) - 1;

fn kind_bits(kind: LineKind) -> u32 {
    match kind {
        LineKind::Screen => 1,
        LineKind::Gap => 2,
        _ => 0,
    }
}

fn kind_of(bits: u32) -> LineKind {
    match bits {
        1 => LineKind::Screen,
        2 => LineKind::Gap,
        _ => LineKind::Text,
    }
}

/// Consecutive lines of one session, stored compactly: their texts one
/// after the other in one buffer, and a small [`Meta`] per line.
#[derive(Debug)]
struct Block {
    session: u32,
    /// The number of its first line.
    n0: u64,
    text: String,
    metas: Vec<Meta>,
}

impl Block {
    /// The memory it takes: what its buffers hold room for, and itself.
    fn footprint(&self) -> u64 {
        (self.text.capacity()
            + self.metas.capacity() * std::mem::size_of::<Meta>()
            + std::mem::size_of::<Self>()) as u64
    }

    fn view(&self, i: usize) -> Option<View<'_>> {
        let meta = self.metas.get(i)?;
        let start = match i.checked_sub(1) {
            Some(p) => self.metas.get(p).map_or(0, |m| (m.end_kind >> 2) as usize),
            None => 0,
        };
        let end = (meta.end_kind >> 2) as usize;
        Some(View {
            n: self.n0 + u64::from(meta.n),
            session: self.session,
            at: meta.at,
            text: self.text.get(start..end).unwrap_or_default(),
            kind: kind_of(meta.end_kind & 3),
        })
    }

    fn last(&self) -> Option<View<'_>> {
        self.view(self.metas.len().checked_sub(1)?)
    }
}

/// The final lines a log keeps in memory, oldest first, bounded by the
/// memory they take (their text, their bookkeeping and the room their
/// buffers hold), not by a count: a flood of short lines costs what it
/// says. Lines go in blocks of about `block_bytes`; the oldest block is
/// dropped whole when the lines pass the bound.
#[derive(Debug)]
struct Store {
    blocks: VecDeque<Block>,
    /// Lines held.
    len: usize,
    /// Memory the blocks take ([`Block::footprint`]).
    bytes: u64,
    /// The most memory the blocks may take.
    max_bytes: u64,
    block_bytes: usize,
    /// Bytes of text a line took in the last block filled: how the next
    /// block's room is split between text and bookkeeping.
    text_per_line: usize,
}

/// The guess of [`Store::text_per_line`] before a block has filled.
const FIRST_TEXT_PER_LINE: usize = 32;

impl Store {
    fn new(max_bytes: u64) -> Self {
        // About 32 blocks to the bound, each between 4 KiB and 256 KiB.
        let block_bytes = usize::try_from(max_bytes / 32)
            .unwrap_or(usize::MAX)
            .clamp(4 * 1024, 256 * 1024);
        Self {
            blocks: VecDeque::new(),
            len: 0,
            bytes: 0,
            max_bytes,
            block_bytes,
            text_per_line: FIRST_TEXT_PER_LINE,
        }
    }

    fn len(&self) -> usize {
        self.len
    }

    /// The room of a new block, text and lines, for lines of the length
    /// the last full block had.
    fn split(&self) -> (usize, usize) {
        let per_line = self.text_per_line.max(1);
        let lines = (self.block_bytes / (std::mem::size_of::<Meta>() + per_line)).max(1);
        (lines * per_line, lines)
    }

    /// A block for lines from `n` of `session`: the oldest one, emptied,
    /// when the new one would pass the bound and the oldest has room of
    /// about the same split (so that, once the log is full, its memory is
    /// reused, never freed and allocated again: freed blocks are what the
    /// allocator does not give back), else a new one. Also returns the
    /// session and offset of the last line dropped to make room.
    fn next_block(&mut self, session: u32, n: u64) -> (Block, Option<(u32, u64)>) {
        let (text, lines) = self.split();
        let wanted =
            (text + lines * std::mem::size_of::<Meta>() + std::mem::size_of::<Block>()) as u64;
        let near = |have: usize, want: usize| have >= want / 2 && have <= want.saturating_mul(2);
        let mut last = None;
        if self.bytes + wanted > self.max_bytes
            && self.blocks.len() > 1
            && let Some(mut old) = self.pop_block_whole()
        {
            last = old.last().map(|l| (l.session, l.at));
            if near(old.text.capacity(), text) && near(old.metas.capacity(), lines) {
                old.text.clear();
                old.metas.clear();
                old.session = session;
                old.n0 = n;
                return (old, last);
            }
        }
        let block = Block {
            session,
            n0: n,
            text: String::with_capacity(text),
            metas: Vec::with_capacity(lines),
        };
        (block, last)
    }

    /// Adds a line (numbers only grow). Returns the session and offset of
    /// the last line dropped to make room, if any were.
    fn push(
        &mut self,
        n: u64,
        session: u32,
        at: u64,
        text: &str,
        kind: LineKind,
    ) -> Option<(u32, u64)> {
        let fits = self.blocks.back().is_some_and(|b| {
            b.session == session
                && n >= b.n0
                && n - b.n0 <= u64::from(u32::MAX)
                && b.text.len() + text.len() <= MAX_BLOCK_TEXT
                && (b.text.is_empty() || b.text.len() + text.len() <= b.text.capacity())
                && b.metas.len() < b.metas.capacity()
        });
        let mut evicted = None;
        if !fits {
            if let Some(full) = self.blocks.back()
                && let Some(lines) = std::num::NonZeroUsize::new(full.metas.len())
            {
                self.text_per_line = full.text.len().div_ceil(lines.get());
            }
            // A block's buffers are made once and never grow (but for one
            // line longer than its room), so they leave no freed copies.
            let (block, last) = self.next_block(session, n);
            evicted = last;
            self.bytes += block.footprint();
            self.blocks.push_back(block);
        }
        let block = self.blocks.back_mut()?;
        let before = block.footprint();
        block.text.push_str(text);
        let end = u32::try_from(block.text.len()).unwrap_or(u32::MAX >> 2);
        block.metas.push(Meta {
            at,
            n: u32::try_from(n - block.n0).unwrap_or(u32::MAX),
            end_kind: (end << 2) | kind_bits(kind),
        });
        self.bytes = self.bytes - before + block.footprint();
        self.len += 1;
        evicted
    }

    /// Takes the oldest block out.
    fn pop_block_whole(&mut self) -> Option<Block> {
        let block = self.blocks.pop_front()?;
        self.bytes -= block.footprint();
        self.len -= block.metas.len();
        Some(block)
    }

    /// Drops the oldest block; the session and offset of its last line.
    fn pop_block(&mut self) -> Option<(u32, u64)> {
        let block = self.pop_block_whole()?;
        block.last().map(|l| (l.session, l.at))
    }

    fn front(&self) -> Option<View<'_>> {
        self.blocks.front()?.view(0)
    }

    /// The block holding line index `i`, and the index in it.
    fn locate(&self, mut i: usize) -> Option<(usize, usize)> {
        for (b, block) in self.blocks.iter().enumerate() {
            if i < block.metas.len() {
                return Some((b, i));
            }
            i -= block.metas.len();
        }
        None
    }

    fn get(&self, i: usize) -> Option<View<'_>> {
        let (b, i) = self.locate(i)?;
        self.blocks.get(b)?.view(i)
    }

    /// The index of the first line for which `pred` is false, the lines
    /// being those it holds first (as [`slice::partition_point`]).
    fn partition_point(&self, pred: impl Fn(&View<'_>) -> bool) -> usize {
        let b = self
            .blocks
            .partition_point(|block| block.last().is_some_and(|l| pred(&l)));
        let before: usize = self.blocks.iter().take(b).map(|bl| bl.metas.len()).sum();
        let Some(block) = self.blocks.get(b) else {
            return before;
        };
        let (mut lo, mut hi) = (0, block.metas.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if block.view(mid).is_some_and(|l| pred(&l)) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        before + lo
    }

    /// The lines from index `i` on.
    fn iter_from(&self, i: usize) -> impl Iterator<Item = View<'_>> {
        let (b, first) = self.locate(i).unwrap_or((self.blocks.len(), 0));
        self.blocks
            .iter()
            .skip(b)
            .enumerate()
            .flat_map(move |(k, block)| {
                let from = if k == 0 { first } else { 0 };
                (from..block.metas.len()).filter_map(move |j| block.view(j))
            })
    }
}

struct Inner {
    dir: Option<PathBuf>,
    file: Option<File>,
    file_bytes: u64,
    max_bytes: u64,
    /// The final lines kept in memory, within `max_bytes`.
    lines: Store,
    next: u64,
    session: u32,
    cooker: Cooker,
    /// Offset of the output fed so far (this session).
    fed: u64,
    /// The regions written (the last [`crate::regions::KEEP`]), rewritten
    /// into a new file on rotation.
    written: VecDeque<StoredRegion>,
    /// The id of the last region written (the regions' ids only grow).
    last_id: u64,
    /// The pane's layout generation when the cooker was last sized.
    layout: Option<u64>,
    /// The session and offset of the last line dropped from memory.
    evicted: Option<(u32, u64)>,
    /// The recovered regions whose output began with bytes the log had
    /// dropped when they were written: id and how many bytes.
    dropped: HashMap<u64, u64>,
}

/// The cooked log of one pane (see the module docs).
pub(crate) struct Journal {
    inner: Mutex<Inner>,
}

impl std::fmt::Debug for Journal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Journal").finish_non_exhaustive()
    }
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
    fn write(&mut self, record: &Record) {
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

    fn push(&mut self, line: Cooked) {
        let n = self.next;
        self.next += 1;
        let record = Record::Line {
            n,
            s: self.session,
            at: line.at,
            x: line.text,
            k: line.kind.name().to_owned(),
        };
        self.write(&record);
        if let Record::Line { x, .. } = &record {
            self.keep(n, self.session, line.at, x, line.kind);
        }
    }

    /// Keeps a final line in memory, dropping the oldest lines to stay
    /// within the bound.
    fn keep(&mut self, n: u64, session: u32, at: u64, text: &str, kind: LineKind) {
        if let Some(last) = self.lines.push(n, session, at, text, kind) {
            self.evicted = Some(last);
        }
        while self.lines.bytes > self.max_bytes {
            match self.lines.pop_block() {
                Some(last) => self.evicted = Some(last),
                None => break,
            }
        }
    }

    /// The log line holding offset `at` of this session's output.
    fn line_at(&self, at: u64) -> Option<u64> {
        let session = self.session;
        // This session's final lines are the last ones, in offset order.
        let i = self
            .lines
            .partition_point(|l| l.session < session || (l.session == session && l.at <= at));
        let last_final = i
            .checked_sub(1)
            .and_then(|i| self.lines.get(i))
            .filter(|l| l.session == session)
            .map(|l| l.n);
        let on_screen = self
            .cooker
            .tail_offsets()
            .iter()
            .take_while(|row_at| **row_at <= at)
            .count();
        match on_screen.checked_sub(1) {
            Some(row) => Some(self.next + row as u64),
            None => last_final,
        }
    }
}

impl Journal {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Opens (or recovers) the log in `dir` for output starting at
    /// `offset`; memory only when `dir` is `None` or cannot be used.
    fn open(dir: Option<PathBuf>, max_bytes: u64, offset: u64) -> (Self, Vec<StoredRegion>) {
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
            },
            recovered,
        )
    }

    /// Cooks output at `offset` into the log.
    fn feed(&self, offset: u64, data: &[u8]) {
        let mut inner = self.lock();
        for line in inner.cooker.feed(offset, data) {
            inner.push(line);
        }
        inner.fed = offset + data.len() as u64;
    }

    /// Ends what is on the screen and records a gap.
    fn gap(&self, at: u64, text: String) {
        let mut inner = self.lock();
        for line in inner.cooker.finish() {
            inner.push(line);
        }
        inner.push(Cooked {
            at,
            text,
            kind: LineKind::Gap,
        });
        inner.cooker = Cooker::new(at);
        inner.layout = None;
        inner.fed = inner.fed.max(at);
    }

    /// Sizes the cooker from the pane's screen after a layout change.
    fn resize_from(&self, po: &PaneOutput) {
        let generation = po.state().layout_generation;
        if self.lock().layout == Some(generation) {
            return;
        }
        if let Some(screen) = po.emulated_screen() {
            let mut inner = self.lock();
            let w = u16::try_from(screen.width).unwrap_or(u16::MAX);
            let h = u16::try_from(screen.height).unwrap_or(u16::MAX);
            inner.cooker.resize(w, h);
            inner.layout = Some(generation);
        }
    }

    /// Writes the regions whose output is cooked and not yet written.
    fn write_regions(&self, regions: Vec<Region>, po: &PaneOutput) -> bool {
        let mut inner = self.lock();
        let session = inner.session;
        for r in regions {
            if r.recovered || r.id <= inner.last_id {
                continue;
            }
            if r.end > inner.fed {
                // Its output is not cooked yet: written after a later feed.
                return true;
            }
            let command = r.command.clone().or_else(|| {
                let (from, to) = r.input?;
                let (at, raw) = po.read_from(from, usize::try_from(to - from).ok()?);
                (at == from).then(|| cook(&raw).trim().to_owned())
            });
            let (lines, dropped) = region_span(&inner, &r);
            let stored = StoredRegion {
                dropped,
                id: r.id,
                s: session,
                command,
                cwd: r.cwd.clone(),
                status: r.status,
                pipestatus: r.pipestatus.clone(),
                duration_ms: r.duration_ms,
                integrated: r.integrated,
                lines,
                output_bytes: r.output_end - r.output_start,
                end: r.end,
            };
            inner.write(&Record::Region(stored.clone()));
            inner.last_id = r.id;
            inner.written.push_back(stored);
            if inner.written.len() > crate::regions::KEEP {
                inner.written.pop_front();
            }
        }
        false
    }

    /// The id of the last region written.
    fn last_id(&self) -> u64 {
        self.lock().last_id
    }

    /// The log's lines from number `from` (or the last `last` lines), at
    /// most `max` of them: the final lines, then those still on the screen,
    /// numbered as they will be if they do not change.
    pub(crate) fn read(&self, from: Option<u64>, last: usize, max: usize) -> LogRead {
        let inner = self.lock();
        let (tail, full_screen) = inner.cooker.tail();
        let live: Vec<LogLine> = tail
            .into_iter()
            .enumerate()
            .map(|(i, l)| LogLine {
                n: inner.next + i as u64,
                session: inner.session,
                at: l.at,
                text: l.text,
                kind: l.kind,
            })
            .collect();
        let first = inner.lines.front().map_or(inner.next, |l| l.n);
        // Lines are in number order: find where to start, then copy only
        // the lines returned.
        let total = inner.lines.len() + live.len();
        let skip = match from {
            Some(from) => {
                inner.lines.partition_point(|l| l.n < from)
                    + live.iter().take_while(|l| l.n < from).count()
            }
            None => total.saturating_sub(last.min(max)),
        };
        let finals = inner.lines.len();
        let mut lines: Vec<LogLine> = inner
            .lines
            .iter_from(skip)
            .take(max)
            .map(View::to_line)
            .collect();
        let room = max - lines.len();
        lines.extend(
            live.into_iter()
                .skip(skip.saturating_sub(finals))
                .take(room),
        );
        let live_count = lines.iter().filter(|l| l.n >= inner.next).count();
        LogRead {
            lines,
            first,
            next: inner.next,
            live: live_count,
            full_screen,
            durable: inner.file.is_some(),
        }
    }

    /// Lines `from..=to` (final or on the screen), for a recovered region.
    pub(crate) fn lines(&self, from: u64, to: u64) -> Vec<LogLine> {
        let read = self.read(
            Some(from),
            0,
            usize::try_from(to.saturating_sub(from) + 1).unwrap_or(usize::MAX),
        );
        read.lines.into_iter().filter(|l| l.n <= to).collect()
    }

    /// Of log lines `from..=to`, how many the log holds (final or still on
    /// the screen), and the oldest line it holds: the lines before that
    /// one were rotated out.
    pub(crate) fn held(&self, from: u64, to: u64) -> Held {
        let inner = self.lock();
        let oldest = inner.lines.front().map_or(inner.next, |l| l.n);
        let finals = inner.lines.partition_point(|l| l.n <= to)
            - inner.lines.partition_point(|l| l.n < from);
        let live_end = inner.next + inner.cooker.tail().0.len() as u64;
        let live = to
            .saturating_add(1)
            .min(live_end)
            .saturating_sub(from.max(inner.next));
        Held {
            lines: finals as u64 + live,
            oldest,
        }
    }

    /// Bytes at the start of recovered region `id`'s output that the log
    /// had dropped when the region was written (0 when none).
    pub(crate) fn dropped_before(&self, id: u64) -> u64 {
        self.lock().dropped.get(&id).copied().unwrap_or(0)
    }

    /// The first and last log lines of a region's output (this session's).
    pub(crate) fn region_lines(&self, r: &Region) -> Option<(u64, u64)> {
        region_lines(&self.lock(), r)
    }

    fn remove_files(&self) {
        let mut inner = self.lock();
        inner.file = None;
        if let Some(dir) = inner.dir.take() {
            let _ = std::fs::remove_dir_all(dir);
        }
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

fn region_lines(inner: &Inner, r: &Region) -> Option<(u64, u64)> {
    if let Some(lines) = r.lines {
        return Some(lines);
    }
    if r.output_end <= r.output_start {
        return None;
    }
    let first = inner.line_at(r.output_start)?;
    let last = inner.line_at(r.output_end - 1)?;
    (first <= last).then_some((first, last))
}

/// The first and last log lines of a region's output, for writing it,
/// and how many bytes at its start the log had already dropped (in no line
/// it holds): then the first line is the first one after them.
fn region_span(inner: &Inner, r: &Region) -> (Option<(u64, u64)>, u64) {
    let total = r.output_end.saturating_sub(r.output_start);
    if total == 0 {
        return (None, 0);
    }
    if inner.line_at(r.output_start).is_some() {
        return (region_lines(inner, r), 0);
    }
    // Its start is in no line held: dropped, if this session's lines were.
    let session = inner.session;
    if inner.evicted.is_none_or(|(s, _)| s != session) {
        return (region_lines(inner, r), 0);
    }
    // The oldest line held after it: this session's first final line,
    // else the first row on the screen.
    let i = inner.lines.partition_point(|l| l.session < session);
    let first = match inner.lines.get(i) {
        Some(l) => Some((l.n, l.at)),
        None => inner
            .cooker
            .tail_offsets()
            .first()
            .map(|at| (inner.next, *at)),
    };
    match first {
        Some((n, at)) if at < r.output_end => {
            let last = inner.line_at(r.output_end - 1).filter(|last| *last >= n);
            (
                last.map(|last| (n, last)),
                at.saturating_sub(r.output_start).min(total),
            )
        }
        _ => (None, total),
    }
}

impl StoredRegion {
    fn into_region(self) -> Region {
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
        }
    }
}

/// The cooked logs of one connection's panes.
pub(crate) struct Journals {
    root: Option<PathBuf>,
    max_bytes: u64,
    /// The process id of the local tmux server whose panes these are
    /// (`None` on a remote host, or when tmux did not say).
    server: Option<u32>,
    panes: Mutex<HashMap<PaneId, (Arc<Journal>, PaneOutput)>>,
    /// Called with a pane once it is gone and its log removed: everything
    /// else known about it is forgotten there ([`Journals::when_gone`]).
    gone: std::sync::OnceLock<GoneHook>,
    /// How many gone panes were forgotten so far.
    forgotten: tokio::sync::watch::Sender<u64>,
}

/// What [`Journals::when_gone`] sets.
type GoneHook = Box<dyn Fn(PaneId) + Send + Sync>;

impl Journals {
    /// Logs under `root` (`STATE_DIR/logs`), each bounded to `max_bytes` on
    /// disk and in memory; memory only when `root` is `None`. `server` is
    /// the local tmux server's process id, written into each log directory
    /// (see [`Journals::prune`]).
    pub(crate) fn new(root: Option<PathBuf>, max_bytes: u64, server: Option<u32>) -> Self {
        Self {
            root,
            max_bytes,
            server,
            panes: Mutex::new(HashMap::new()),
            gone: std::sync::OnceLock::new(),
            forgotten: tokio::sync::watch::Sender::new(0),
        }
    }

    /// Has `hook` called with each pane once it is gone and its log is
    /// removed (the connection forgets the pane there). Set once.
    pub(crate) fn when_gone(&self, hook: GoneHook) {
        let _ = self.gone.set(hook);
    }

    /// Completes once `count` gone panes have been forgotten in all.
    #[cfg(test)]
    pub(crate) async fn forgotten(&self, count: u64) {
        let _ = self.forgotten.subscribe().wait_for(|n| *n >= count).await;
    }

    /// How many panes have a log.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.panes().len()
    }

    /// Removes the logs of panes that ended while no tmux-mcp watched them:
    /// those whose tmux server process is gone (it was killed, or the
    /// machine restarted), and those of this connection's own server that
    /// no pane names in its `@tmux-mcp-log` option any more. Returns how
    /// many it removed.
    ///
    /// The directories are listed before the panes: a pane names its log
    /// in its option before the directory is made, so a directory listed
    /// first belongs to a pane that the listing shows while it lives (also
    /// one another tmux-mcp process on the same server has just made).
    pub(crate) async fn prune(&self, tmux: &Tmux) -> usize {
        let (Some(root), Some(server)) = (&self.root, self.server) else {
            return 0;
        };
        let (mut removed, ours) = prune_dead(root, server);
        if ours.is_empty() {
            return removed;
        }
        let listed = tmux
            .run(Raw::new("list-panes").args(["-a", "-F", &format!("#{{{OPTION}}}")]))
            .await;
        let Ok(lines) = listed else {
            return removed;
        };
        let named: std::collections::HashSet<String> = lines
            .iter()
            .map(|l| String::from_utf8_lossy(l).trim().to_owned())
            .collect();
        for dir in ours {
            let named_by_a_pane = dir
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| named.contains(n));
            if !named_by_a_pane && remove_log_dir(&dir) {
                removed += 1;
            }
        }
        removed
    }

    fn panes(&self) -> std::sync::MutexGuard<'_, HashMap<PaneId, (Arc<Journal>, PaneOutput)>> {
        self.panes.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The pane's log, if it has one yet.
    pub(crate) fn get(&self, pane: PaneId) -> Option<Arc<Journal>> {
        self.panes().get(&pane).map(|(j, _)| j.clone())
    }

    /// The output of a pane whose log is open and whose output has not
    /// ended: a pane that exists, known without asking tmux.
    pub(crate) fn live_output(&self, pane: PaneId) -> Option<PaneOutput> {
        self.panes()
            .get(&pane)
            .map(|(_, po)| po.clone())
            .filter(|po| po.ended().is_none())
    }

    /// The pane's log, opened (or recovered from disk, with its regions)
    /// the first time, and fed from then on by a task of its own.
    pub(crate) async fn ensure(
        self: &Arc<Self>,
        tmux: &Tmux,
        po: &PaneOutput,
        regions: &Arc<Regions>,
    ) -> Arc<Journal> {
        let pane = po.pane();
        if let Some(journal) = self.get(pane) {
            return journal;
        }
        let dir = match &self.root {
            Some(root) => Some(root.join(log_id(tmux, pane).await)),
            None => None,
        };
        let (journal, recovered) = Journal::open(dir, self.max_bytes, po.start_offset());
        if let (Some(server), Some(dir)) = (self.server, journal.lock().dir.clone()) {
            write_server_file(&dir, server);
        }
        let journal = Arc::new(journal);
        {
            let mut panes = self.panes();
            if let Some((other, _)) = panes.get(&pane) {
                return other.clone();
            }
            panes.insert(pane, (journal.clone(), po.clone()));
        }
        regions.recover(pane, recovered.into_iter().map(StoredRegion::into_region));
        tokio::spawn(feed(
            self.clone(),
            journal.clone(),
            po.clone(),
            regions.clone(),
        ));
        journal
    }
}

/// Writes the tmux server's process id into a log directory.
fn write_server_file(dir: &Path, server: u32) {
    let written = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(dir.join(SERVER_FILE))
        .and_then(|mut f| writeln!(f, "{server}"));
    if let Err(e) = written {
        tracing::debug!(dir = %dir.display(), error = %e, "cannot note the log's tmux server");
    }
}

/// The log directories under `root` that name their tmux server, with its
/// process id.
fn owned_dirs(root: &Path) -> Vec<(PathBuf, u32)> {
    let Ok(entries) = std::fs::read_dir(root) else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter_map(|e| {
            let dir = e.path();
            let owner = std::fs::read_to_string(dir.join(SERVER_FILE)).ok()?;
            Some((dir, owner.trim().parse().ok()?))
        })
        .collect()
}

/// Removes the log directories under `root` whose tmux server process is
/// gone; returns how many, and the directories of `server`'s panes.
fn prune_dead(root: &Path, server: u32) -> (usize, Vec<PathBuf>) {
    let mut ours = Vec::new();
    let mut removed = 0;
    for (dir, owner) in owned_dirs(root) {
        if owner == server {
            ours.push(dir);
        } else if !process_exists(owner) && remove_log_dir(&dir) {
            removed += 1;
        }
    }
    (removed, ours)
}

/// Whether a process with this id exists and has not ended (a zombie that
/// nobody has reaped yet has ended). From `/proc` where it is mounted,
/// else by signal 0 (one of another user's counts).
fn process_exists(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state is the first field after the command name's `)`.
        Ok(stat) => stat
            .rsplit_once(')')
            .is_none_or(|(_, rest)| !rest.trim_start().starts_with(['Z', 'X'])),
        Err(_) if Path::new("/proc/self/stat").exists() => false,
        Err(_) => {
            let Some(pid) = i32::try_from(pid)
                .ok()
                .and_then(rustix::process::Pid::from_raw)
            else {
                return false;
            };
            !matches!(
                rustix::process::test_kill_process(pid),
                Err(rustix::io::Errno::SRCH)
            )
        }
    }
}

/// Removes a log directory; whether it did.
fn remove_log_dir(dir: &Path) -> bool {
    match std::fs::remove_dir_all(dir) {
        Ok(()) => {
            tracing::debug!(dir = %dir.display(), "removed the log of a pane that is gone");
            true
        }
        Err(e) => {
            tracing::debug!(dir = %dir.display(), error = %e, "cannot remove the log of a pane that is gone");
            false
        }
    }
}

/// The pane's log id from its option, set the first time.
async fn log_id(tmux: &Tmux, pane: PaneId) -> String {
    if let Ok(Some(value)) = tmux
        .run(ShowOption::new(OptionScope::Pane, OPTION).target(pane))
        .await
        && let Some(id) = value.as_str().map(str::trim)
        && !id.is_empty()
        && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
    {
        return id.to_owned();
    }
    let id = format!("{}-{}", pane.0, tmux_control::shell_nonce());
    if let Err(e) = tmux
        .run(SetOption::new(OptionScope::Pane, OPTION, id.clone()).target(pane))
        .await
    {
        tracing::debug!(%pane, error = %e, "cannot name the pane's log in its option");
    }
    id
}

/// Feeds the pane's log from its output stream until the pane ends.
async fn feed(
    journals: Arc<Journals>,
    journal: Arc<Journal>,
    po: PaneOutput,
    regions: Arc<Regions>,
) {
    let pane = po.pane();
    let mut changed = regions.subscribe();
    let fed = journal.lock().fed;
    let mut stream = po.stream_from(fed);
    // Regions recorded and not yet written (their output may still be
    // coming): looked at again after each feed until none is left.
    let mut pending = true;
    loop {
        tokio::select! {
            chunk = stream.next() => match chunk {
                Some(PaneChunk::Output { offset, data }) => {
                    journal.resize_from(&po);
                    journal.feed(offset, &data);
                }
                Some(PaneChunk::Missed { from, to }) => journal.gap(
                    to,
                    format!("[{} bytes of output not recorded here: the in-memory log evicted them first]", to - from),
                ),
                Some(PaneChunk::Lost { at }) => journal.gap(
                    at,
                    "[output lost here: tmux discarded some while the pane was paused]".to_owned(),
                ),
                Some(_) => {}
                None => break,
            },
            Ok(()) = changed.changed() => pending = true,
        }
        if pending {
            pending = journal.write_regions(regions.since(pane, journal.last_id()), &po);
        }
    }
    journal.write_regions(regions.since(pane, journal.last_id()), &po);
    if matches!(po.ended(), Some(PaneEnd::Gone)) {
        journal.remove_files();
        journals.panes().remove(&pane);
        if let Some(hook) = journals.gone.get() {
            hook(pane);
        }
        journals.forgotten.send_modify(|n| *n += 1);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_numbered_written_and_recovered() {
        let dir = std::env::temp_dir().join(format!("tmux-mcp-journal-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let (journal, recovered) = Journal::open(Some(dir.clone()), 1 << 20, 0);
        assert!(recovered.is_empty());
        journal.feed(0, b"one\r\ntwo\r\n\x1b]133;A\x07$ ");
        let read = journal.read(None, 10, 100);
        let texts: Vec<_> = read.lines.iter().map(|l| (l.n, l.text.as_str())).collect();
        assert_eq!(texts, [(1, "one"), (2, "two"), (3, "$")]);
        assert_eq!(read.live, 1);
        assert!(read.durable);
        let mode = std::fs::metadata(dir.join("log.jsonl"))
            .unwrap()
            .permissions();
        assert_eq!(
            std::os::unix::fs::PermissionsExt::mode(&mode) & 0o777,
            0o600
        );
        drop(journal);
        // A restart: the final lines come back with their numbers, then a
        // gap line, and new output continues the numbering.
        let (journal, _) = Journal::open(Some(dir.clone()), 1 << 20, 0);
        journal.feed(0, b"three\r\n");
        let read = journal.read(Some(1), 0, 100);
        let texts: Vec<_> = read
            .lines
            .iter()
            .map(|l| (l.n, l.kind, l.text.as_str()))
            .collect();
        assert_eq!(texts[0], (1, LineKind::Text, "one"));
        assert_eq!(texts[1], (2, LineKind::Text, "two"));
        assert_eq!(texts[2].0, 3);
        assert_eq!(texts[2].1, LineKind::Gap);
        assert_eq!(texts[3], (4, LineKind::Text, "three"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn short_lines_are_held_within_the_bound_in_memory() {
        let max = 64 * 1024;
        let (journal, _) = Journal::open(None, max, 0);
        let flood = b"y\r\n".repeat(100_000);
        journal.feed(0, &flood);
        let inner = journal.lock();
        // What the lines take, buffers' spare room and bookkeeping counted.
        let taken: u64 = inner.lines.blocks.iter().map(Block::footprint).sum();
        assert_eq!(taken, inner.lines.bytes);
        assert!(taken <= max, "{taken}");
        // Each short line costs its text and a small fixed amount.
        let held = inner.lines.len() as u64;
        assert!(held > max / 24, "{held} lines");
        let first = inner.lines.front().unwrap().n;
        drop(inner);
        // Reads and searches see them in order, across blocks.
        let read = journal.read(Some(first), 0, usize::MAX);
        assert!(read.lines.len() as u64 >= held);
        assert_eq!(read.first, first);
        for (i, line) in read.lines.iter().enumerate() {
            assert_eq!(line.n, first + i as u64);
            assert_eq!(line.at, (line.n - 1) * 3);
        }
        assert!(read.lines.iter().all(|l| l.text == "y"));
        let middle = first + held / 2;
        let inner = journal.lock();
        let i = inner.lines.partition_point(|l| l.n < middle);
        assert_eq!(inner.lines.get(i).unwrap().n, middle);
        assert_eq!(inner.line_at((middle - 1) * 3 + 1), Some(middle));
    }

    #[test]
    fn a_full_log_reuses_its_blocks_and_splits_them_by_line_length() {
        let mut store = Store::new(64 * 1024);
        let mut n = 0;
        let mut fill = |store: &mut Store, lines: usize, text: &str| {
            for _ in 0..lines {
                n += 1;
                store.push(n, 1, n, text, LineKind::Text);
                assert!(store.bytes <= store.max_bytes, "{}", store.bytes);
            }
        };
        fill(&mut store, 20_000, "y");
        let buffers = |store: &Store| -> Vec<*const u8> {
            store.blocks.iter().map(|b| b.text.as_ptr()).collect()
        };
        let first: std::collections::HashSet<_> = buffers(&store).into_iter().collect();
        // One-byte lines: the blocks hold about one line per 17 bytes.
        assert!(store.len() as u64 > store.max_bytes / 20, "{}", store.len());
        fill(&mut store, 20_000, "y");
        // Once full, new lines go into the oldest blocks' memory.
        assert!(buffers(&store).iter().all(|p| first.contains(p)));
        // Longer lines: the next blocks give text more of their room.
        fill(&mut store, 2_000, &"x".repeat(100));
        let newest = store.blocks.back().unwrap();
        assert!(
            newest.text.capacity() > 8 * newest.metas.capacity(),
            "{newest:?}"
        );
    }

    #[test]
    fn kinds_and_sessions_survive_compact_storage() {
        let mut store = Store::new(1 << 20);
        store.push(1, 1, 0, "one", LineKind::Text);
        store.push(2, 1, 4, "[vim]", LineKind::Screen);
        store.push(5, 2, 0, "[gap]", LineKind::Gap);
        store.push(6, 2, 10, "", LineKind::Text);
        store.push(7, 2, 11, "café", LineKind::Text);
        let lines: Vec<_> = store
            .iter_from(0)
            .map(|l| (l.n, l.session, l.at, l.text.to_owned(), l.kind))
            .collect();
        assert_eq!(
            lines,
            [
                (1, 1, 0, "one".to_owned(), LineKind::Text),
                (2, 1, 4, "[vim]".to_owned(), LineKind::Screen),
                (5, 2, 0, "[gap]".to_owned(), LineKind::Gap),
                (6, 2, 10, String::new(), LineKind::Text),
                (7, 2, 11, "café".to_owned(), LineKind::Text),
            ]
        );
        assert_eq!(store.partition_point(|l| l.session < 2), 2);
        assert_eq!(store.iter_from(3).next().unwrap().n, 6);
        assert!(store.iter_from(5).next().is_none());
        assert_eq!(store.pop_block(), Some((1, 4)));
        assert_eq!((store.len(), store.front().unwrap().n), (3, 5));
    }

    #[test]
    fn only_the_logs_of_servers_that_are_gone_are_pruned() {
        let root =
            std::env::temp_dir().join(format!("tmux-mcp-journal-prune-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        // A process that has ended: its id names no process (until reused,
        // which would only keep a log longer).
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        let me = std::process::id();
        let make = |name: &str, owner: Option<u32>| {
            let dir = root.join(name);
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("log.jsonl"), "").unwrap();
            if let Some(owner) = owner {
                write_server_file(&dir, owner);
            }
            dir
        };
        let gone = make("1-gone", Some(dead));
        let other = make("2-other-live-server", Some(me));
        let ours = make("3-ours", Some(4_000_000));
        let unowned = make("4-no-server-file", None);
        let (removed, mine) = prune_dead(&root, 4_000_000);
        assert_eq!(removed, 1);
        assert!(!gone.exists());
        assert!(other.exists() && unowned.exists() && ours.exists());
        assert_eq!(mine, vec![ours]);
        std::fs::remove_dir_all(&root).unwrap();
    }

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

    fn stored(id: u64, lines: Option<(u64, u64)>, dropped: u64) -> StoredRegion {
        StoredRegion {
            id,
            s: 1,
            command: Some(format!("command {id}")),
            cwd: None,
            status: Some(0),
            pipestatus: None,
            duration_ms: None,
            integrated: true,
            lines,
            output_bytes: 10,
            end: 0,
            dropped,
        }
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

    #[test]
    fn a_region_whose_start_was_dropped_says_how_much() {
        let dir =
            std::env::temp_dir().join(format!("tmux-mcp-journal-drop-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let (journal, _) = Journal::open(Some(dir.clone()), 64 * 1024, 0);
        let mut at = 0;
        let mut feed = |data: &[u8]| {
            journal.feed(at, data);
            at += data.len() as u64;
            at
        };
        let start = feed(b"\x1b]133;A\x07$ seq\r\n\x1b]133;C\x07");
        let mut body = Vec::new();
        for i in 1..=20_000 {
            body.extend_from_slice(format!("{i}\r\n").as_bytes());
        }
        let end = feed(&body);
        feed(b"\x1b]133;D;0\x07\x1b]133;A\x07$ ");
        let region = Region {
            id: 1,
            command: None,
            input: None,
            cwd: None,
            output_start: start,
            output_end: end,
            end,
            status: Some(0),
            pipestatus: None,
            duration_ms: None,
            integrated: true,
            lines: None,
            recovered: false,
        };
        let (lines, dropped) = region_span(&journal.lock(), &region);
        let (first, last) = lines.unwrap();
        let oldest = journal.read(None, 1, 1).first;
        assert_eq!(first, oldest);
        let held = journal.lines(first, last);
        assert_eq!(held.last().unwrap().text, "20000");
        assert_eq!(held.first().unwrap().at - start, dropped);
        assert!(dropped > 0 && dropped < end - start);
        assert_eq!(
            journal.held(first - 10, last + 1),
            Held {
                lines: last - first + 2,
                oldest
            }
        );
        let mut r = stored(1, lines, dropped);
        r.output_bytes = end - start;
        journal.lock().write(&Record::Region(r));
        drop(journal);
        let (journal, _) = Journal::open(Some(dir.clone()), 64 * 1024, 0);
        assert_eq!(
            (journal.dropped_before(1), journal.dropped_before(2)),
            (dropped, 0)
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
