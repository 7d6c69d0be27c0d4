//! The writer: its own task, so that a slow `tmux -C` stdin never stops the
//! connection reading stdout (tmux blocks on a full stdout pipe).

use bytes::{Bytes, BytesMut};
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;

/// Writes every chunk it receives, coalescing whatever else is queued into
/// one write; shuts the stream down when the channel closes.
pub(super) async fn write_loop<W>(mut out: W, mut rx: mpsc::UnboundedReceiver<Bytes>)
where
    W: AsyncWrite + Unpin,
{
    while let Some(mut chunk) = rx.recv().await {
        let mut more = Vec::new();
        while let Ok(next) = rx.try_recv() {
            more.push(next);
        }
        if !more.is_empty() {
            let mut joined = BytesMut::from(&chunk[..]);
            for m in more {
                joined.extend_from_slice(&m);
            }
            chunk = joined.freeze();
        }
        if out.write_all(&chunk).await.is_err() || out.flush().await.is_err() {
            return;
        }
    }
    let _ = out.shutdown().await;
}
