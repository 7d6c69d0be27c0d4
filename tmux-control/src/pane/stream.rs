//! Reading a followed pane's output as a stream of chunks from any offset.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures_core::Stream;
use tokio_stream::wrappers::WatchStream;

use super::log::{PaneChunk, PaneEnd, PaneLog, ReadAt};

/// The most bytes one chunk holds when the stream is polled as a
/// [`Stream`] or with [`PaneStream::next`].
const CHUNK: usize = 64 * 1024;

/// A pane's output as a stream of [`PaneChunk`]s from an offset. It is a
/// [`Stream`] (chunks of at most 64 KiB), so `StreamExt` adapters and
/// `select!` work with it; [`PaneStream::next`] and
/// [`PaneStream::next_max`] are the same without an extension trait.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use tokio_stream::StreamExt as _;
/// use tmux_control::command::NewWindow;
/// use tmux_control::{IsolatedServer, PaneChunk, Tmux};
/// let server = IsolatedServer::new()?;
/// let tmux = Tmux::connect(server.server()).await?;
/// let started = tmux.spawn(NewWindow::new().command("printf 'a\\nb\\n'; sleep 0.5")).await?;
/// // Every output chunk until the pane is gone, as one byte string.
/// let all: Vec<u8> = started
///     .output
///     .stream_from(started.start)
///     .filter_map(|chunk| match chunk {
///         PaneChunk::Output { data, .. } => Some(data),
///         _ => None,
///     })
///     .fold(Vec::new(), |mut all, data| {
///         all.extend_from_slice(&data);
///         all
///     })
///     .await;
/// assert!(all.starts_with(b"a\r\nb\r\n"));
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct PaneStream {
    log: Arc<PaneLog>,
    /// Yields each time the log changed since it last yielded.
    changes: WatchStream<u64>,
    cursor: u64,
    lost_seen: Option<u64>,
}

impl PaneStream {
    pub(super) fn new(log: Arc<PaneLog>, from: u64) -> Self {
        Self {
            changes: WatchStream::new(log.changed.subscribe()),
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
        self.next_max(CHUNK).await
    }

    /// Like [`PaneStream::next`] with a size cap per chunk.
    pub async fn next_max(&mut self, max: usize) -> Option<PaneChunk> {
        std::future::poll_fn(|cx| self.poll_max(cx, max)).await
    }

    fn poll_max(&mut self, cx: &mut Context<'_>, max: usize) -> Poll<Option<PaneChunk>> {
        loop {
            match self.log.read(self.cursor, max.max(1), self.lost_seen) {
                ReadAt::Lost(at) => {
                    self.lost_seen = Some(at);
                    return Poll::Ready(Some(PaneChunk::Lost { at }));
                }
                ReadAt::Chunk(chunk) => {
                    self.cursor = match &chunk {
                        PaneChunk::Output { offset, data } => offset + data.len() as u64,
                        PaneChunk::Missed { to, .. } => *to,
                        PaneChunk::Lost { at } => *at,
                    };
                    return Poll::Ready(Some(chunk));
                }
                ReadAt::Ended => return Poll::Ready(None),
                ReadAt::Nothing => {}
            }
            // Nothing to read: wait for the next change of the log. A
            // change made after the read above is one the stream has not
            // yielded yet, so it is not missed.
            match Pin::new(&mut self.changes).poll_next(cx) {
                Poll::Ready(Some(_)) => {}
                Poll::Ready(None) => return Poll::Ready(None),
                Poll::Pending => return Poll::Pending,
            }
        }
    }
}

impl Stream for PaneStream {
    type Item = PaneChunk;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<PaneChunk>> {
        self.get_mut().poll_max(cx, CHUNK)
    }
}
