//! The bridge's pumps: reading the client's lines, writing lines to the
//! client, reading and writing the shared server's socket, and labelling a
//! request with the bridge's actor. The routing between them is in
//! `mod.rs`.

use super::*;

/// Writes `actor` into `message`'s `params._meta` (made if missing), next
/// to whatever else `_meta` holds.
pub(super) fn label(actor: &str, message: &mut Value) {
    let Some(object) = message.as_object_mut() else {
        return;
    };
    let params = object
        .entry("params")
        .or_insert_with(|| Value::Object(Default::default()));
    if let Some(params) = params.as_object_mut() {
        let meta = params
            .entry("_meta")
            .or_insert_with(|| Value::Object(Default::default()));
        if let Some(meta) = meta.as_object_mut() {
            meta.insert(ACTOR_META_KEY.to_owned(), Value::String(actor.to_owned()));
        }
    }
}

/// Reads the client's lines: good ones to the loop, answers for the others
/// (as the stdio server gives them).
pub(super) async fn read_client<R>(
    input: R,
    events: mpsc::Sender<Event>,
    to_client: mpsc::Sender<Vec<u8>>,
) where
    R: tokio::io::AsyncRead + Unpin,
{
    let mut reader = BufReader::with_capacity(stdio::PIPE, input);
    let mut buffer = Vec::new();
    loop {
        let verdict = match stdio::read_line(&mut reader, &mut buffer).await {
            Ok(Frame::Line) => stdio::check(&buffer),
            Ok(Frame::Oversized { len }) => stdio::oversized(&buffer, len),
            Ok(Frame::Eof) => break,
            Err(e) => {
                tracing::error!("cannot read standard input: {e}");
                break;
            }
        };
        match verdict {
            Verdict::Forward => {
                let body = buffer.strip_suffix(b"\r").unwrap_or(&buffer);
                let body = body.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(body);
                match serde_json::from_slice::<Value>(body) {
                    Ok(message) => {
                        if events.send(Event::Client(message)).await.is_err() {
                            return;
                        }
                    }
                    Err(e) => tracing::debug!("skipping a line: {e}"),
                }
            }
            Verdict::Skip => {}
            Verdict::Reply(reply) => {
                if to_client.send(reply).await.is_err() {
                    return;
                }
            }
        }
        buffer.clear();
    }
    let _ = events.send(Event::ClientClosed).await;
}

/// Copies the loop's lines to the client.
pub(super) async fn write_lines<W: AsyncWrite + Unpin>(
    mut lines: mpsc::Receiver<Vec<u8>>,
    mut output: W,
) {
    while let Some(line) = lines.recv().await {
        let written = match output.write_all(&line).await {
            Ok(()) => output.flush().await,
            Err(e) => Err(e),
        };
        if let Err(e) = written {
            tracing::debug!("cannot write standard output: {e}");
            return;
        }
    }
}

/// Reads the server's lines for connection `generation`, then says it ended.
pub(super) async fn read_server(
    read: tokio::net::unix::OwnedReadHalf,
    generation: u64,
    events: mpsc::Sender<Event>,
) {
    let mut lines = BufReader::with_capacity(stdio::PIPE, read).split(b'\n');
    loop {
        match lines.next_segment().await {
            Ok(Some(bytes)) => {
                if bytes.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                match serde_json::from_slice::<Value>(&bytes) {
                    Ok(message) => {
                        if events
                            .send(Event::Server(generation, message))
                            .await
                            .is_err()
                        {
                            return;
                        }
                    }
                    Err(e) => tracing::warn!("skipping a line from the server: {e}"),
                }
            }
            Ok(None) => break,
            Err(e) => {
                tracing::debug!("the connection to the server broke: {e}");
                break;
            }
        }
    }
    let _ = events.send(Event::ServerClosed(generation)).await;
}

/// Writes the loop's lines to the server; ends (closing the connection)
/// when the loop drops the link.
pub(super) async fn write_server(
    mut lines: mpsc::UnboundedReceiver<Vec<u8>>,
    mut write: tokio::net::unix::OwnedWriteHalf,
) {
    while let Some(line) = lines.recv().await {
        if let Err(e) = write.write_all(&line).await {
            tracing::debug!("cannot write to the server: {e}");
            return;
        }
    }
    let _ = write.shutdown().await;
}
