//! The compact in-memory store of a log's final lines ([`Store`]).

use std::collections::VecDeque;

use super::LogLine;
use crate::text::cooked::LineKind;

/// A line as the log holds it, borrowed from its [`Store`].
#[derive(Debug, Clone, Copy)]
pub(super) struct View<'a> {
    pub(super) n: u64,
    pub(super) session: u32,
    pub(super) at: u64,
    text: &'a str,
    kind: LineKind,
}

impl View<'_> {
    pub(super) fn to_line(self) -> LogLine {
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
pub(super) struct Store {
    blocks: VecDeque<Block>,
    /// Lines held.
    len: usize,
    /// Memory the blocks take ([`Block::footprint`]).
    pub(super) bytes: u64,
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
    pub(super) fn new(max_bytes: u64) -> Self {
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

    pub(super) fn len(&self) -> usize {
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
    pub(super) fn push(
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
    pub(super) fn pop_block(&mut self) -> Option<(u32, u64)> {
        let block = self.pop_block_whole()?;
        block.last().map(|l| (l.session, l.at))
    }

    pub(super) fn front(&self) -> Option<View<'_>> {
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

    pub(super) fn get(&self, i: usize) -> Option<View<'_>> {
        let (b, i) = self.locate(i)?;
        self.blocks.get(b)?.view(i)
    }

    /// The index of the first line for which `pred` is false, the lines
    /// being those it holds first (as [`slice::partition_point`]).
    pub(super) fn partition_point(&self, pred: impl Fn(&View<'_>) -> bool) -> usize {
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
    pub(super) fn iter_from(&self, i: usize) -> impl Iterator<Item = View<'_>> {
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

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::terminal::journal::Journal;

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
}
