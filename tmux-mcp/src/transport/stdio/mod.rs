//! The stdio transport: every line the client writes gets an answer.
//!
//! rmcp's line transport (`AsyncRwTransport`, which `serve(stdio())` uses)
//! drops a line that is not JSON (invalid UTF-8, a lone surrogate escape
//! such as `\ud800`, which JavaScript clients emit for a broken pair, a
//! number like `1e999` that no float holds, garbage, a truncated line)
//! without a reply, on purpose (rust-sdk issue 938), and drops a line
//! longer than its limit (16 MiB) the same way; a well-formed line that is
//! not a JSON-RPC message gets `-32600` without its id. A client that sent
//! such a request then waits for an answer that never comes.
//!
//! [`guard`] sits between the process's standard streams and rmcp. It
//! frames the client's lines itself, with the same limit, and hands rmcp
//! only the lines rmcp can parse. Every other line is answered here, with
//! the request's id when one can be read from the line (so that the
//! client's pending call ends), `null` otherwise:
//!
//! - not JSON, or JSON that serde_json cannot represent: `-32700` (parse
//!   error), with serde_json's reason and position;
//! - JSON that is not a JSON-RPC message rmcp understands, with an id, or
//!   a line over the limit: `-32600` (invalid request). Notifications
//!   (a `method` and no `id`) still go to rmcp, which ignores the ones it
//!   does not know, as before.
//!
//! Replies are valid JSON-RPC responses, which a peer never answers, so two
//! ends that both answer bad lines cannot feed each other an error storm.
//! Blank lines are skipped, as rmcp skips them.
//!
//! Inside, rmcp runs over an in-memory pipe: the client's good lines go in
//! unchanged, and what rmcp writes is copied to standard output line by
//! line, with the replies made here written only between rmcp's lines.
//!
//! On SIGTERM or SIGINT the server stops ([`Shutdown`]): [`guard_until`]
//! stops reading the client (a request already read but not yet passed on
//! is answered with a shutting-down error), and waits until every request
//! passed on to rmcp has been answered before it ends rmcp's input (which
//! ends the session; rmcp would drop an answer that came later). The
//! requests are answered in time because they run in a [`Draining`]
//! service: [`DRAIN`] after the signal it stops the calls still running
//! (as a client's cancel would: `run` answers with its run_id, and every
//! call writes its audit record), and one that still has not ended
//! [`STOP_GRACE`] later is answered, and audited, as cut off.
//!
//! This file holds the transport: the framing of the client's lines
//! (`read_line`), the pumps, the requests in flight and the stages of the
//! shutdown. The verdict on one line (`check`) and the scanner that finds
//! a line's id are in `check.rs`; [`Draining`], and the answers of the
//! calls it stops, in `draining.rs`. The unit tests sit beside what they
//! test: the byte-level cases of a line transport, and of its shutdown, are
//! many.

mod check;
mod draining;

use check::Members;
pub(crate) use check::{Verdict, check, duplicate_id, error_line, oversized, request_id};
pub use draining::{Draining, SETTLE, settle, sync_audit_log};

use std::collections::BTreeSet;
use std::time::Duration;

use rmcp::model::{ErrorCode, RequestId};
use rmcp::transport::async_rw::DEFAULT_MAX_LINE_LENGTH;
use tokio::io::{
    AsyncBufRead, AsyncBufReadExt as _, AsyncRead, AsyncWrite, AsyncWriteExt as _, BufReader,
    DuplexStream,
};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// The longest line passed on, without its line feed: rmcp's own limit
/// counts the line feed, so no line forwarded from here is ever dropped
/// there.
pub const MAX_LINE: usize = DEFAULT_MAX_LINE_LENGTH - 1;

/// How much of a line over [`MAX_LINE`] is kept to find its id.
const HEAD: usize = 64 * 1024;

/// Bytes buffered in each direction of the pipe to rmcp.
pub(crate) const PIPE: usize = 256 * 1024;

/// Replies made here that may wait for the output side.
const QUEUED_REPLIES: usize = 64;

/// How long the calls in flight may go on after SIGTERM or SIGINT before
/// they are stopped.
pub const DRAIN: Duration = Duration::from_secs(5);

/// How long a call may take to end once it is stopped, before it is
/// answered (and audited) as cut off without its own answer.
pub const STOP_GRACE: Duration = Duration::from_secs(2);

/// How long the last answers may take to be written after [`STOP_GRACE`]
/// (a client that stopped reading holds them up), before the process gives
/// up on them and exits.
pub const WRITE_GRACE: Duration = Duration::from_secs(3);

/// The stages of a server's shutdown, shared by its sessions: `stop` (the
/// signal came: read no more requests), `abort` (the drain time is over:
/// stop the calls still running) and `give_up` (the last bound: exit even
/// if answers are still unwritten). Whoever follows the signals moves it
/// on (`tmux-mcp`'s `main`); a value made by `default` never moves by
/// itself.
#[derive(Debug, Clone, Default)]
pub struct Shutdown {
    stop: CancellationToken,
    abort: CancellationToken,
    give_up: CancellationToken,
}

impl Shutdown {
    /// A shutdown that has not begun.
    pub fn new() -> Self {
        Self::default()
    }

    /// Begins the shutdown: no more requests are read.
    pub fn stop(&self) {
        self.stop.cancel();
    }

    /// Stops the calls still running (and [`stop`](Self::stop)s).
    pub fn abort(&self) {
        self.stop.cancel();
        self.abort.cancel();
    }

    /// The last stage: the server exits without waiting any more.
    pub fn give_up(&self) {
        self.abort();
        self.give_up.cancel();
    }

    /// Whether the shutdown has begun.
    pub fn is_stopping(&self) -> bool {
        self.stop.is_cancelled()
    }

    /// Completes when the shutdown begins.
    pub async fn stopped(&self) {
        self.stop.cancelled().await;
    }

    /// Completes when the calls still running are to be stopped.
    pub async fn aborted(&self) {
        self.abort.cancelled().await;
    }

    /// Completes when the server is to exit without waiting any more.
    pub async fn given_up(&self) {
        self.give_up.cancelled().await;
    }
}

/// The requests passed on to rmcp and not answered yet, by id (as JSON
/// text, so that `1` and `"1"` differ).
#[derive(Debug, Clone)]
struct Pending(std::sync::Arc<watch::Sender<BTreeSet<String>>>);

impl Pending {
    fn new() -> Self {
        Self(std::sync::Arc::new(watch::Sender::new(BTreeSet::new())))
    }

    fn key(id: RequestId) -> String {
        id.into_json_value().to_string()
    }

    /// Notes a request passed on; false (and nothing noted) when a request
    /// with the same id is still in flight.
    fn add(&self, id: RequestId) -> bool {
        self.0.send_if_modified(|ids| ids.insert(Self::key(id)))
    }

    /// Notes that one of rmcp's lines went out, if it answers a request.
    fn answered(&self, line: &[u8]) {
        if self.0.borrow().is_empty() {
            return;
        }
        let members = Members::scan(line);
        if let (false, Some(id)) = (members.method, members.id) {
            let key = Self::key(id);
            self.0.send_if_modified(|ids| ids.remove(&key));
        }
    }

    /// Completes when every request passed on has been answered.
    async fn idle(&self) {
        let mut watch = self.0.subscribe();
        // Only fails when the sender is gone, and `self` holds it.
        let _ = watch.wait_for(BTreeSet::is_empty).await;
    }
}

/// The two copying tasks of a [`guard`]ed transport.
#[derive(Debug)]
pub struct Pumps {
    input: JoinHandle<()>,
    output: JoinHandle<()>,
}

impl Pumps {
    /// Ends the transport after rmcp's session ended: writes what was still
    /// to be written, then stops reading the client.
    pub async fn finish(self) {
        if let Err(e) = self.output.await {
            tracing::error!("the stdio output task failed: {e}");
        }
        self.input.abort();
    }
}

/// Wraps the client's byte streams (`input` from it, `output` to it) for
/// rmcp: returns the stream to `serve` rmcp on, and the tasks to
/// [`Pumps::finish`] when the session ends. Must be called inside a Tokio
/// runtime.
pub fn guard<R, W>(input: R, output: W) -> (DuplexStream, Pumps)
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    guard_until(input, output, Shutdown::new())
}

/// [`guard`], ending the session when `shutdown` stops: no more of the
/// client's lines are read, and rmcp's input ends once every request it
/// was given has been answered (serve a [`Draining`] service with the same
/// `shutdown`, so that they all are, in bounded time).
pub fn guard_until<R, W>(input: R, output: W, shutdown: Shutdown) -> (DuplexStream, Pumps)
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (ours, theirs) = tokio::io::duplex(PIPE);
    let (from_rmcp, to_rmcp) = tokio::io::split(ours);
    let (replies, queued) = mpsc::channel(QUEUED_REPLIES);
    let pending = Pending::new();
    let input = tokio::spawn(pump_input(
        input,
        to_rmcp,
        replies,
        pending.clone(),
        shutdown,
    ));
    let output = tokio::spawn(pump_output(from_rmcp, queued, output, pending));
    (theirs, Pumps { input, output })
}

/// Reads the client's lines: good ones to rmcp, answers for the others.
/// When `shutdown` stops, reads no more, and ends rmcp's input once the
/// requests passed on are answered.
async fn pump_input<R, W>(
    input: R,
    mut to_rmcp: W,
    replies: mpsc::Sender<Vec<u8>>,
    pending: Pending,
    shutdown: Shutdown,
) where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut reader = BufReader::with_capacity(PIPE, input);
    let mut line = Vec::new();
    let mut stopped = false;
    loop {
        let frame = tokio::select! {
            biased;
            () = shutdown.stopped() => {
                stopped = true;
                break;
            }
            // A line cut here by the stop was not sent whole: nothing to answer.
            frame = read_line(&mut reader, &mut line) => frame,
        };
        let verdict = match frame {
            Ok(Frame::Line) => check(&line),
            Ok(Frame::Oversized { len }) => oversized(&line, len),
            Ok(Frame::Eof) => break,
            Err(e) => {
                tracing::error!("cannot read the client's input: {e}");
                break;
            }
        };
        match verdict {
            Verdict::Forward => {
                if let Some(id) = request_id(&line)
                    && !pending.add(id.clone())
                {
                    // rmcp keys the requests in flight by id: a second one
                    // would take the first one's place, and the first one's
                    // answer would be dropped.
                    let reply = duplicate_id(id);
                    if replies.send(reply).await.is_err() {
                        break;
                    }
                    line.clear();
                    continue;
                }
                line.push(b'\n');
                if let Err(e) = to_rmcp.write_all(&line).await {
                    tracing::debug!("the MCP session stopped reading: {e}");
                    break;
                }
            }
            Verdict::Skip => {}
            Verdict::Reply(reply) => {
                if replies.send(reply).await.is_err() {
                    break;
                }
            }
        }
        line.clear();
    }
    if stopped {
        // Whole requests that were read but not passed on get an answer.
        for request in reader.buffer().split(|&b| b == b'\n') {
            if let Some(id) = request_id(request) {
                let reply = error_line(
                    Some(id),
                    ErrorCode::INTERNAL_ERROR,
                    "The server is shutting down: this request came after it stopped taking new ones, and was not run",
                );
                if replies.send(reply).await.is_err() {
                    break;
                }
            }
        }
        // The requests in flight are answered (a `Draining` service bounds
        // them) before rmcp's input ends: rmcp drops answers after that.
        pending.idle().await;
    }
    // End of input: rmcp sees it and ends the session.
    if let Err(e) = to_rmcp.shutdown().await {
        tracing::debug!("closing the MCP session's input: {e}");
    }
}

/// Copies rmcp's lines to the client, and the replies made here between
/// them (never inside one of rmcp's lines), noting the requests answered.
/// Once the output ends, nothing more can be answered: nothing is pending.
async fn pump_output<R, W>(
    from_rmcp: R,
    queued: mpsc::Receiver<Vec<u8>>,
    output: W,
    pending: Pending,
) where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    copy_output(from_rmcp, queued, output, &pending).await;
    pending.0.send_modify(BTreeSet::clear);
}

async fn copy_output<R, W>(
    from_rmcp: R,
    mut queued: mpsc::Receiver<Vec<u8>>,
    mut output: W,
    pending: &Pending,
) where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut reader = BufReader::with_capacity(PIPE, from_rmcp);
    let mut line = Vec::new();
    let mut more_replies = true;
    loop {
        tokio::select! {
            // `read_until` is cancel safe: bytes read so far stay in `line`,
            // and replies wait while `line` holds part of one of rmcp's lines.
            read = reader.read_until(b'\n', &mut line) => match read {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    if !write(&mut output, &line).await {
                        return;
                    }
                    pending.answered(&line);
                    line.clear();
                }
            },
            reply = queued.recv(), if more_replies && line.is_empty() => match reply {
                Some(reply) => {
                    if !write(&mut output, &reply).await {
                        return;
                    }
                }
                None => more_replies = false,
            },
        }
    }
    // rmcp is done; answers to the client's last lines may still be queued.
    if !line.is_empty() && !write(&mut output, &line).await {
        return;
    }
    while let Ok(reply) = queued.try_recv() {
        if !write(&mut output, &reply).await {
            return;
        }
    }
}

/// Writes and flushes one line; false when the client stopped reading.
async fn write<W: AsyncWrite + Unpin>(output: &mut W, line: &[u8]) -> bool {
    match output.write_all(line).await {
        Ok(()) => output.flush().await.is_ok(),
        Err(e) => {
            tracing::debug!("cannot write to the client: {e}");
            false
        }
    }
}

/// What [`read_line`] found.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Frame {
    /// A line (without its line feed) is in the buffer; at the end of the
    /// input, the last bytes even without a line feed.
    Line,
    /// A line over [`MAX_LINE`], `len` bytes long (without its line feed):
    /// only its first [`HEAD`] bytes are in the buffer.
    Oversized {
        /// The line's length.
        len: usize,
    },
    /// The end of the input.
    Eof,
}

/// Reads one line into `line` (cleared by the caller), keeping at most
/// [`MAX_LINE`] bytes of it in memory.
pub(crate) async fn read_line<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    line: &mut Vec<u8>,
) -> std::io::Result<Frame> {
    let mut len = 0usize;
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok(match len {
                0 => Frame::Eof,
                _ if len > MAX_LINE => Frame::Oversized { len },
                _ => Frame::Line,
            });
        }
        let newline = available.iter().position(|&b| b == b'\n');
        let take = newline.unwrap_or(available.len());
        if len.saturating_add(take) <= MAX_LINE {
            line.extend_from_slice(&available[..take]);
        } else if line.len() > HEAD {
            line.truncate(HEAD);
        } else {
            let keep = HEAD.saturating_sub(line.len()).min(take);
            line.extend_from_slice(&available[..keep]);
        }
        len = len.saturating_add(take);
        reader.consume(take + usize::from(newline.is_some()));
        if newline.is_some() {
            return Ok(if len > MAX_LINE {
                Frame::Oversized { len }
            } else {
                Frame::Line
            });
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    /// A client that writes raw bytes and reads reply lines.
    struct Raw {
        to_server: tokio::io::WriteHalf<DuplexStream>,
        lines: tokio::io::Lines<BufReader<tokio::io::ReadHalf<DuplexStream>>>,
    }

    impl Raw {
        async fn send(&mut self, bytes: &[u8]) {
            self.to_server.write_all(bytes).await.unwrap();
        }

        async fn read(&mut self) -> Option<Value> {
            let line = self.lines.next_line().await.unwrap()?;
            Some(serde_json::from_str(&line).unwrap())
        }

        async fn ask(&mut self, line: &[u8]) -> Value {
            self.send(line).await;
            self.send(b"\n").await;
            self.read().await.unwrap()
        }
    }

    /// The server behind [`guard`], driven with raw lines.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn every_line_is_answered_and_the_session_goes_on() {
        use rmcp::ServiceExt as _;
        use tokio::io::AsyncBufReadExt as _;

        let (client, server_end) = tokio::io::duplex(1 << 16);
        let (server_read, server_write) = tokio::io::split(server_end);
        let (transport, pumps) = guard(server_read, server_write);
        // Never started: initialize, tools/list and ping do not touch tmux.
        let config = crate::Config::for_socket_path("/nonexistent/tmux-mcp-stdio-test.sock");
        let mcp =
            crate::TmuxMcp::with_caller(config, crate::terminal::guard::Caller::default()).unwrap();
        let session = tokio::spawn(async move {
            let running = mcp.serve(transport).await.unwrap();
            let _ = running.waiting().await;
            pumps.finish().await;
        });
        let (from_server, to_server) = tokio::io::split(client);
        let mut raw = Raw {
            to_server,
            lines: BufReader::new(from_server).lines(),
        };
        let conversation = async {
            let init = raw.ask(br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#).await;
            assert_eq!(init["id"], 1, "{init}");
            raw.send(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n\n   \n")
                .await;
            for (line, id, code) in [
                (&b"not json"[..], Value::Null, -32700),
                (b"\xff\xfe", Value::Null, -32700),
                (b"1e999", Value::Null, -32700),
                (br#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"send_text","arguments":{"target":"%1","text":"\ud800"}}}"#, json!(5), -32700),
                (br#"{"jsonrpc":"2.0","id":"six","method":"tools/call","params":7}"#, json!("six"), -32600),
            ] {
                let r = raw.ask(line).await;
                assert_eq!((r["id"].clone(), r["error"]["code"].clone()), (id, json!(code)), "{r}");
            }
            // A long reply and an answer made here never share a line.
            raw.send(
                b"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/list\"}\nnot json either\n",
            )
            .await;
            let mut ids = vec![raw.read().await.unwrap()["id"].clone()];
            ids.push(raw.read().await.unwrap()["id"].clone());
            ids.sort_by_key(Value::is_null);
            assert_eq!(ids, [json!(7), Value::Null]);
            let pong = raw
                .ask(br#"{"jsonrpc":"2.0","id":99,"method":"ping"}"#)
                .await;
            assert_eq!(
                (pong["id"].clone(), pong["result"].clone()),
                (json!(99), json!({}))
            );
            // The end of the input ends the session, and the output with it.
            raw.to_server.shutdown().await.unwrap();
            assert!(raw.read().await.is_none());
        };
        // A true timer: the bound on the whole test.
        tokio::time::timeout(std::time::Duration::from_secs(20), conversation)
            .await
            .unwrap();
        session.await.unwrap();
    }

    /// The end of rmcp's input (a blocked read: it ends at once or never).
    async fn input_ended(rmcp: &mut BufReader<tokio::io::ReadHalf<DuplexStream>>) -> bool {
        let mut rest = Vec::new();
        rmcp.read_until(b'\n', &mut rest).await.unwrap() == 0
    }

    /// rmcp's side of a [`guard_until`]: its input ends only once every
    /// request passed on has been answered; requests read but not passed on
    /// when the shutdown came are answered here.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_stop_ends_rmcps_input_once_the_requests_in_flight_are_answered() {
        let (client, server_end) = tokio::io::duplex(1 << 16);
        let (server_read, server_write) = tokio::io::split(server_end);
        let shutdown = Shutdown::new();
        let (transport, pumps) = guard_until(server_read, server_write, shutdown.clone());
        let (rmcp_read, mut rmcp_write) = tokio::io::split(transport);
        let mut rmcp = BufReader::new(rmcp_read);
        let (from_server, to_server) = tokio::io::split(client);
        let mut raw = Raw {
            to_server,
            lines: BufReader::new(from_server).lines(),
        };
        let conversation = async {
            raw.send(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n{\"jsonrpc\":\"2.0\",\"id\":\"two\",\"method\":\"ping\"}\n")
                .await;
            let mut forwarded = Vec::new();
            for _ in 0..2 {
                rmcp.read_until(b'\n', &mut forwarded).await.unwrap();
            }
            assert_eq!(forwarded.iter().filter(|&&b| b == b'\n').count(), 2);
            shutdown.stop();
            // One answer, and a request the server never reads: the input
            // stays open for the other request in flight.
            rmcp_write
                .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n")
                .await
                .unwrap();
            assert_eq!(raw.read().await.unwrap()["id"], 1);
            {
                let ended = input_ended(&mut rmcp);
                tokio::pin!(ended);
                // A true timer: the input must not end while "two" is in flight.
                let early = tokio::time::timeout(Duration::from_millis(300), &mut ended).await;
                assert!(
                    early.is_err(),
                    "rmcp's input ended with a request in flight"
                );
                // A server request with the same id is not an answer.
                rmcp_write
                .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":\"two\",\"method\":\"ping\"}\n{\"jsonrpc\":\"2.0\",\"id\":\"two\",\"result\":{}}\n")
                .await
                .unwrap();
                assert!(ended.await);
            }
            assert_eq!(raw.read().await.unwrap()["method"], "ping");
            assert_eq!(raw.read().await.unwrap()["id"], "two");
            drop(rmcp_write);
            drop(rmcp);
            pumps.finish().await;
            assert!(raw.read().await.is_none());
        };
        // A true timer: the bound on the whole test.
        tokio::time::timeout(Duration::from_secs(20), conversation)
            .await
            .unwrap();
    }

    #[tokio::test]
    async fn lines_are_framed_within_the_limit() {
        let mut long = vec![b'x'; MAX_LINE + 10];
        long.extend_from_slice(b"\nshort\nlast");
        let mut reader = BufReader::with_capacity(4096, &long[..]);
        let mut line = Vec::new();
        let first = read_line(&mut reader, &mut line).await.unwrap();
        assert_eq!(first, Frame::Oversized { len: MAX_LINE + 10 });
        assert_eq!(line.len(), HEAD);
        line.clear();
        assert_eq!(
            read_line(&mut reader, &mut line).await.unwrap(),
            Frame::Line
        );
        assert_eq!(line, b"short");
        line.clear();
        // The last bytes count as a line even without a line feed.
        assert_eq!(
            read_line(&mut reader, &mut line).await.unwrap(),
            Frame::Line
        );
        assert_eq!(line, b"last");
        line.clear();
        assert_eq!(read_line(&mut reader, &mut line).await.unwrap(), Frame::Eof);
        let exact = vec![b'y'; MAX_LINE];
        let mut reader = BufReader::with_capacity(4096, &exact[..]);
        assert_eq!(
            read_line(&mut reader, &mut line).await.unwrap(),
            Frame::Line
        );
        assert_eq!(line.len(), MAX_LINE);
    }
}
