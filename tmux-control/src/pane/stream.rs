//! Reading a followed pane's output as a stream of chunks from any offset.

use std::sync::Arc;

use tokio::sync::watch;

use super::log::{PaneChunk, PaneEnd, PaneLog, ReadAt};

/// A pane's output as a stream of [`PaneChunk`]s from an offset.
#[derive(Debug)]
pub struct PaneStream {
    log: Arc<PaneLog>,
    rx: watch::Receiver<u64>,
    cursor: u64,
    lost_seen: Option<u64>,
}

impl PaneStream {
    pub(super) fn new(log: Arc<PaneLog>, from: u64) -> Self {
        Self {
            rx: log.changed.subscribe(),
            log,
            cursor: from,
            lost_seen: None,
        }
    }

    /// Why the pane's output ended, once it has.
    pub(super) fn ended(&self) -> Option<PaneEnd> {
        self.log.lock().ended.clone()
    }
}

impl PaneStream {
    /// The offset of the next byte this stream will return.
    pub fn offset(&self) -> u64 {
        self.cursor
    }

    /// Moves the stream to the newest output, skipping everything not yet
    /// read (for a reader that fell behind and wants the live end). Returns
    /// the skipped range as a [`PaneChunk::Missed`], or `None` if nothing
    /// was skipped.
    pub fn skip_to_end(&mut self) -> Option<PaneChunk> {
        let end = self.log.lock().end;
        if end <= self.cursor {
            return None;
        }
        let skipped = PaneChunk::Missed {
            from: self.cursor,
            to: end,
        };
        self.cursor = end;
        Some(skipped)
    }

    /// The next chunk (at most 64 KiB); `None` once the pane's output has
    /// ended and everything was read.
    pub async fn next(&mut self) -> Option<PaneChunk> {
        self.next_max(64 * 1024).await
    }

    /// Like [`PaneStream::next`] with a size cap per chunk.
    pub async fn next_max(&mut self, max: usize) -> Option<PaneChunk> {
        loop {
            // Mark the current version seen before reading, so a change
            // that lands after the read wakes us.
            self.rx.borrow_and_update();
            match self.log.read(self.cursor, max.max(1), self.lost_seen) {
                ReadAt::Lost(at) => {
                    self.lost_seen = Some(at);
                    return Some(PaneChunk::Lost { at });
                }
                ReadAt::Chunk(chunk) => {
                    self.cursor = match &chunk {
                        PaneChunk::Output { offset, data } => offset + data.len() as u64,
                        PaneChunk::Missed { to, .. } => *to,
                        PaneChunk::Lost { at } => *at,
                    };
                    return Some(chunk);
                }
                ReadAt::Ended => return None,
                ReadAt::Nothing => {}
            }
            if self.rx.changed().await.is_err() {
                return None;
            }
        }
    }
}
