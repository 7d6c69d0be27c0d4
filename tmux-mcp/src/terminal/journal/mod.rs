//! The durable cooked log of each followed pane: its output cooked into
//! the lines a human saw ([`crate::text::cooked`]), numbered for good, written to
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
//! One pane's log ([`Journal`]) is here; the logs of one connection
//! ([`Journals`]: opening each pane's log, kept in the pane's record
//! ([`crate::terminal::record::Terminal`]), the task that feeds it, and
//! pruning) are in `journals`, the line store in `store`, the log on disk
//! (its records, writing and rotating them, and reading them back when a
//! log is opened) in `disk`, the log directories (their names, `server`
//! files and pruning) in `dirs`.

use std::collections::{HashMap, VecDeque};
use std::fs::File;
use std::path::PathBuf;
use std::sync::Mutex;

use tmux_control::PaneOutput;

use crate::terminal::region::Region;
use crate::text::cooked::{Cooked, Cooker, LineKind};
use crate::text::pane_size;

mod dirs;
mod disk;
pub(crate) mod journals;
mod store;

use disk::{Record, StoredRegion};
use store::{Store, View};

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
    /// The regions written (the last [`crate::terminal::region::KEEP`]), rewritten
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
    /// What the log holds on disk: the output fed and the regions'
    /// version written, once no region waits for its output (see
    /// [`Journal::settled`]).
    synced: tokio::sync::watch::Sender<(u64, u64)>,
}

impl std::fmt::Debug for Journal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Journal").finish_non_exhaustive()
    }
}

impl Inner {
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
    /// Says the log holds the output up to where it was fed and every
    /// region of `version` (the regions' version) whose output it holds.
    fn mark_synced(&self, version: u64) {
        let fed = self.lock().fed;
        self.synced.send_replace((fed, version));
    }

    /// Completes once the log holds the output up to `offset` and the
    /// regions of `version`: for a process about to end (`tmux-mcp call`),
    /// so that what it saw is on disk for the next.
    pub(crate) async fn settled(&self, offset: u64, version: u64) {
        let mut synced = self.synced.subscribe();
        let _ = synced
            .wait_for(|&(fed, seen)| fed >= offset && seen >= version)
            .await;
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
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
        // The size alone: no snapshot of the whole screen to read it.
        if let Some((w, h)) = pane_size(po) {
            let mut inner = self.lock();
            inner.cooker.resize(w, h);
            inner.layout = Some(generation);
        }
    }

    /// Writes the regions whose output is cooked and not yet written.
    fn write_regions(&self, regions: Vec<Region>, po: &PaneOutput) -> bool {
        let mut inner = self.lock();
        for r in regions {
            if r.recovered || r.id <= inner.last_id {
                continue;
            }
            if r.end > inner.fed {
                // Its output is not cooked yet: written after a later feed.
                return true;
            }
            let stored = stored_region(&inner, &r, po);
            inner.write(&Record::Region(stored.clone()));
            inner.last_id = r.id;
            inner.written.push_back(stored);
            if inner.written.len() > crate::terminal::region::KEEP {
                inner.written.pop_front();
            }
        }
        false
    }

    /// Writes region `r` again when it was written before `run` added what
    /// it knows (its command as given, its duration): the later record of
    /// an id is the one read back.
    pub(crate) fn rewrite_region(&self, r: &Region, po: &PaneOutput) {
        let mut inner = self.lock();
        if r.recovered || r.id > inner.last_id {
            return;
        }
        let stored = stored_region(&inner, r, po);
        let Some(at) = inner.written.iter().position(|w| w.id == r.id) else {
            return;
        };
        if inner.written[at] == stored {
            return;
        }
        inner.write(&Record::Region(stored.clone()));
        inner.written[at] = stored;
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
/// What the log stores of region `r` (its command line as `run` gave it,
/// else as the shell echoed it).
fn stored_region(inner: &Inner, r: &Region, po: &PaneOutput) -> StoredRegion {
    let command = r.command.clone().or_else(|| {
        let (from, to) = r.input?;
        crate::text::echoed(po, from, to)
    });
    let (lines, dropped) = region_span(inner, r);
    StoredRegion {
        dropped,
        id: r.id,
        s: inner.session,
        command,
        cwd: r.cwd.clone(),
        status: r.status,
        pipestatus: r.pipestatus.clone(),
        duration_ms: r.duration_ms,
        integrated: r.integrated,
        lines,
        output_bytes: r.output_end - r.output_start,
        end: r.end,
    }
}

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

    pub(super) fn stored(id: u64, lines: Option<(u64, u64)>, dropped: u64) -> StoredRegion {
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
            typed_by: None,
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
