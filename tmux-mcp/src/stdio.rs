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
//! (Over 600 lines with its unit tests, which are the last 365: the byte-level
//! cases of a line transport, and of its shutdown, are many and belong
//! beside it.)

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolResult, ClientRequest, ContentBlock, ErrorCode, ProtocolVersion, RequestId,
    ServerResult,
};
use rmcp::service::{NotificationContext, RequestContext, RxJsonRpcMessage};
use rmcp::transport::async_rw::DEFAULT_MAX_LINE_LENGTH;
use rmcp::{ErrorData as McpError, RoleServer, Service};
use serde_json::json;
use tokio::io::{
    AsyncBufRead, AsyncBufReadExt as _, AsyncRead, AsyncWrite, AsyncWriteExt as _, BufReader,
    DuplexStream,
};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::audit::Outcome;
use crate::server::TmuxMcp;

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

/// The answer to a request whose id is that of a request still in flight.
pub(crate) fn duplicate_id(id: RequestId) -> Vec<u8> {
    let shown = id.clone().into_json_value();
    error_line(
        Some(id),
        ErrorCode::INVALID_REQUEST,
        &format!(
            "Invalid request: the id {shown} is that of a request still in flight; this request was not run (JSON-RPC ids must be unique among requests in flight; the other request is still answered)"
        ),
    )
}

/// The id of a line that is a JSON-RPC request (a `method` and an `id`).
pub(crate) fn request_id(line: &[u8]) -> Option<RequestId> {
    let members = Members::scan(line);
    members.method.then_some(members.id).flatten()
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

/// What to do with one line from the client.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// rmcp can parse it.
    Forward,
    /// A blank line.
    Skip,
    /// Answer it with this JSON-RPC error response (one line).
    Reply(Vec<u8>),
}

const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// The requests a client sends that rmcp knows by name (its
/// `ClientRequest`), so that one read as a custom request had params that
/// did not fit.
const STANDARD_METHODS: &[&str] = &[
    "ping",
    "initialize",
    "server/discover",
    "completion/complete",
    "logging/setLevel",
    "prompts/get",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "subscriptions/listen",
    "resources/subscribe",
    "resources/unsubscribe",
    "tools/call",
    "tools/list",
    "tasks/get",
    "tasks/update",
    "tasks/cancel",
];

/// Decides about one line (without its line feed).
pub(crate) fn check(line: &[u8]) -> Verdict {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    // rmcp ignores a byte order mark (RFC 8259 section 8.1 allows it).
    let body = line.strip_prefix(UTF8_BOM).unwrap_or(line);
    if body.iter().all(u8::is_ascii_whitespace) {
        return Verdict::Skip;
    }
    let e = match serde_json::from_slice::<RxJsonRpcMessage<RoleServer>>(body) {
        // rmcp reads a request of a method it knows whose params do not
        // fit as a custom request, and answers "method not found": the
        // method is there, its params are wrong.
        Ok(rmcp::model::JsonRpcMessage::Request(request)) => {
            return match &request.request {
                rmcp::model::ClientRequest::CustomRequest(custom)
                    if STANDARD_METHODS.contains(&custom.method.as_str()) =>
                {
                    Verdict::Reply(error_line(
                        Some(request.id.clone()),
                        ErrorCode::INVALID_PARAMS,
                        &format!(
                            "Invalid params: the params of {} do not have the form the method takes (see the MCP schema)",
                            custom.method
                        ),
                    ))
                }
                _ => Verdict::Forward,
            };
        }
        Ok(_) => return Verdict::Forward,
        Err(e) => e,
    };
    let members = Members::scan(body);
    match e.classify() {
        serde_json::error::Category::Syntax | serde_json::error::Category::Eof => {
            let why = match (std::str::from_utf8(body), lone_surrogate(body)) {
                (Err(bad), _) => format!(
                    "the line is not UTF-8 (byte {} is not part of a UTF-8 character)",
                    bad.valid_up_to() + 1
                ),
                // serde_json says "unexpected end of hex escape" for these.
                (Ok(_), Some((at, unit))) => format!(
                    "the escape \\u{unit:04x} at byte {} is a lone surrogate (half of a UTF-16 pair), which is not a character; send the whole pair, or U+FFFD in its place",
                    at + 1
                ),
                (Ok(_), None) => e.to_string(),
            };
            tracing::debug!("answering an unparseable line: {why}");
            Verdict::Reply(error_line(
                members.id,
                ErrorCode::PARSE_ERROR,
                &format!(
                    "Parse error: {why}. Each line must be one JSON-RPC message in UTF-8 JSON"
                ),
            ))
        }
        // A notification: rmcp ignores the ones it does not know, as it
        // always did, and answers the others itself.
        _ if members.method && !members.id_key => Verdict::Forward,
        _ => {
            tracing::debug!("answering a line that is not a JSON-RPC message: {e}");
            Verdict::Reply(error_line(
                members.id,
                ErrorCode::INVALID_REQUEST,
                &format!("Invalid request: not a JSON-RPC message this server understands ({e})"),
            ))
        }
    }
}

/// The first `\\uXXXX` escape in `text` that is half of a UTF-16 surrogate
/// pair without its other half: its offset and code unit.
fn lone_surrogate(text: &[u8]) -> Option<(usize, u16)> {
    let unit = |at: usize| {
        let hex = text.get(at..at + 6)?.strip_prefix(b"\\u")?;
        u16::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok()
    };
    let mut at = 0;
    while let Some(offset) = text.get(at..)?.iter().position(|&b| b == b'\\') {
        at += offset;
        match unit(at) {
            Some(high @ 0xD800..=0xDBFF) => match unit(at + 6) {
                Some(0xDC00..=0xDFFF) => at += 12,
                _ => return Some((at, high)),
            },
            Some(low @ 0xDC00..=0xDFFF) => return Some((at, low)),
            Some(_) => at += 6,
            // Any other escape: the backslash and the byte after it.
            None => at += 2,
        }
    }
    None
}

/// The answer to a line over [`MAX_LINE`], of which `head` is the start.
pub(crate) fn oversized(head: &[u8], len: usize) -> Verdict {
    tracing::warn!(len, "answering a line over the length limit");
    Verdict::Reply(error_line(
        Members::scan(head).id,
        ErrorCode::INVALID_REQUEST,
        &format!(
            "Invalid request: the line is {len} bytes long; this server reads at most {MAX_LINE} bytes per message"
        ),
    ))
}

/// A JSON-RPC error response as one line. The id is `null` when it cannot
/// be read (JSON-RPC 2.0 section 5): present, as the MCP Python SDK requires.
pub(crate) fn error_line(id: Option<RequestId>, code: ErrorCode, message: &str) -> Vec<u8> {
    let id = id.map_or(serde_json::Value::Null, RequestId::into_json_value);
    let reply = json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": code.0, "message": message},
    });
    let mut line = reply.to_string().into_bytes();
    line.push(b'\n');
    line
}

/// A [`TmuxMcp`] session that ends its calls in bounded time when its
/// [`Shutdown`] stops: once it aborts ([`DRAIN`] after the signal), every
/// request still running is cancelled (the tools end as on a client's
/// cancel, and write their audit records); the answer of a tool call ended
/// so says that the server is shutting down (a `run` keeps its run_id to
/// resume with). A request that still runs [`STOP_GRACE`] later is answered
/// here, and a tool call is audited here, as cut off.
#[derive(Debug, Clone)]
pub struct Draining {
    server: TmuxMcp,
    shutdown: Shutdown,
}

impl Draining {
    /// `server`, stopping with `shutdown`.
    pub fn new(server: TmuxMcp, shutdown: Shutdown) -> Self {
        Self { server, shutdown }
    }

    /// Writes the audit record of a tool call that did not end.
    fn audit_cut_off(&self, call: &CutOff, message: &str) {
        let Some(audit) = &self.server.inner.audit else {
            return;
        };
        let known: Option<BTreeSet<String>> = self
            .server
            .tool_router
            .map
            .get(call.tool.as_str())
            .and_then(|route| route.attr.input_schema.get("properties"))
            .and_then(serde_json::Value::as_object)
            .map(|p| p.keys().cloned().collect());
        audit.record(
            &call.actor,
            &call.tool,
            call.arguments.as_ref(),
            known.as_ref(),
            &Outcome::Error(message.to_owned()),
            call.started.elapsed(),
        );
    }
}

/// What the audit log needs of a tool call that may be cut off.
struct CutOff {
    actor: String,
    tool: String,
    arguments: Option<serde_json::Map<String, serde_json::Value>>,
    started: Instant,
}

/// What replaces "the client cancelled the request" in the answer of a
/// call stopped by the shutdown.
const STOPPED_WHY: &str =
    "the server is shutting down, and stopped the call when its drain time ended";

/// The answer of a call stopped by the shutdown: says so.
fn stopped_answer(answer: Result<ServerResult, McpError>) -> Result<ServerResult, McpError> {
    match answer {
        Ok(ServerResult::CallToolResult(mut result)) if result.is_error == Some(true) => {
            if let Some(block) = result.content.iter_mut().find(|c| c.as_text().is_some()) {
                let text = block.as_text().map(|t| t.text.clone()).unwrap_or_default();
                let said = if text.contains("the client cancelled the request") {
                    text.replace("the client cancelled the request", STOPPED_WHY)
                } else {
                    format!("The server is shutting down: {text}")
                };
                *block = ContentBlock::text(said);
            }
            Ok(ServerResult::CallToolResult(result))
        }
        other => other,
    }
}

impl Service<RoleServer> for Draining {
    async fn handle_request(
        &self,
        request: ClientRequest,
        mut context: RequestContext<RoleServer>,
    ) -> Result<ServerResult, McpError> {
        let call = match &request {
            ClientRequest::CallToolRequest(call) => Some(CutOff {
                actor: crate::actors::of_request(
                    &context,
                    self.server.session_actor.get().map(String::as_str),
                    self.server.inner.config.actor.as_deref(),
                ),
                tool: call.params.name.to_string(),
                arguments: call.params.arguments.clone(),
                started: Instant::now(),
            }),
            _ => None,
        };
        // The call sees a cancel from the client or from the shutdown.
        let cancel = context.ct.child_token();
        context.ct = cancel.clone();
        let handler = Service::<RoleServer>::handle_request(&self.server, request, context);
        let mut handler = std::pin::pin!(handler);
        tokio::select! {
            answer = &mut handler => return answer,
            () = self.shutdown.aborted() => {}
        }
        cancel.cancel();
        // A true timer: how long a stopped call may take to end.
        if let Ok(answer) = tokio::time::timeout(STOP_GRACE, handler).await {
            return stopped_answer(answer);
        }
        let why = format!(
            "the server is shutting down, and the call did not end within {} s of being stopped; \
             it may or may not have done its work",
            STOP_GRACE.as_secs()
        );
        tracing::warn!("a call did not end when stopped: {why}");
        match call {
            Some(call) => {
                self.audit_cut_off(&call, &why);
                let text = format!(
                    "{} failed: {why}. Check its effect (with list_terminals or capture_screen) once a server runs again, before repeating it",
                    call.tool
                );
                Ok(ServerResult::CallToolResult(CallToolResult::error(vec![
                    ContentBlock::text(text),
                ])))
            }
            None => Err(McpError::internal_error(why, None)),
        }
    }

    async fn handle_notification(
        &self,
        notification: rmcp::model::ClientNotification,
        context: NotificationContext<RoleServer>,
    ) -> Result<(), McpError> {
        Service::<RoleServer>::handle_notification(&self.server, notification, context).await
    }

    fn get_info(&self) -> <RoleServer as rmcp::service::ServiceRole>::Info {
        Service::<RoleServer>::get_info(&self.server)
    }

    fn supported_protocol_versions(&self) -> std::borrow::Cow<'static, [ProtocolVersion]> {
        Service::<RoleServer>::supported_protocol_versions(&self.server)
    }
}

/// Writes what the audit log of `server` holds to its disk (at the end of
/// a shutdown: its lines are written as they come, unbuffered).
pub fn sync_audit_log(server: &TmuxMcp) {
    if let Some(audit) = &server.inner.audit
        && let Err(e) = audit.sync()
    {
        tracing::error!("cannot sync the audit log: {e}");
    }
}

/// What a line that may not parse says about itself: its top-level `id`
/// (when it is a valid JSON-RPC id) and whether it has `id` and `method`
/// members. Found by a scanner that only follows the structure (strings,
/// brackets, commas), so that a bad byte, a lone surrogate or a huge number
/// elsewhere in the line does not hide the id; it stops at the first
/// structural error, keeping what it found before.
#[derive(Debug, Default, PartialEq)]
struct Members {
    id: Option<RequestId>,
    id_key: bool,
    method: bool,
}

impl Members {
    fn scan(text: &[u8]) -> Self {
        let mut found = Self::default();
        let mut s = Scanner { text, at: 0 };
        s.space();
        if !s.eat(b'{') {
            return found;
        }
        loop {
            s.space();
            let Some(key) = s.string() else {
                return found;
            };
            s.space();
            if !s.eat(b':') {
                return found;
            }
            s.space();
            let start = s.at;
            let complete = s.value();
            let raw = &text[start..s.at];
            match key {
                b"id" if !found.id_key => {
                    found.id_key = true;
                    if complete {
                        found.id = serde_json::from_slice::<RequestId>(raw).ok();
                    }
                }
                b"method" => found.method = true,
                _ => {}
            }
            if !complete {
                return found;
            }
            s.space();
            if !s.eat(b',') {
                return found;
            }
        }
    }
}

/// A cursor over bytes that may not be JSON.
struct Scanner<'a> {
    text: &'a [u8],
    at: usize,
}

impl<'a> Scanner<'a> {
    fn peek(&self) -> Option<u8> {
        self.text.get(self.at).copied()
    }

    fn eat(&mut self, b: u8) -> bool {
        let hit = self.peek() == Some(b);
        if hit {
            self.at += 1;
        }
        hit
    }

    fn space(&mut self) {
        while self.peek().is_some_and(|b| b" \t\r\n".contains(&b)) {
            self.at += 1;
        }
    }

    /// A string's raw bytes between its quotes (escapes kept as written).
    fn string(&mut self) -> Option<&'a [u8]> {
        if !self.eat(b'"') {
            return None;
        }
        let start = self.at;
        while let Some(b) = self.peek() {
            match b {
                b'"' => {
                    let raw = &self.text[start..self.at];
                    self.at += 1;
                    return Some(raw);
                }
                b'\\' => self.at += 2,
                _ => self.at += 1,
            }
        }
        self.at = self.text.len();
        None
    }

    /// Skips one value; false when the line ends (or breaks) inside it.
    fn value(&mut self) -> bool {
        match self.peek() {
            Some(b'"') => self.string().is_some(),
            Some(b'{' | b'[') => {
                let mut depth = 0usize;
                while let Some(b) = self.peek() {
                    match b {
                        b'"' => {
                            if self.string().is_none() {
                                return false;
                            }
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => {
                            depth -= 1;
                            if depth == 0 {
                                self.at += 1;
                                return true;
                            }
                        }
                        _ => {}
                    }
                    self.at += 1;
                }
                false
            }
            Some(_) => {
                let start = self.at;
                while self
                    .peek()
                    .is_some_and(|b| !b" \t\r\n,:{}[]\"".contains(&b))
                {
                    self.at += 1;
                }
                // A number cut by the end of the line may be missing digits.
                self.at > start && self.peek().is_some()
            }
            None => false,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn reply(line: &[u8]) -> Value {
        match check(line) {
            Verdict::Reply(bytes) => {
                assert!(bytes.ends_with(b"\n"));
                assert_eq!(bytes.iter().filter(|&&b| b == b'\n').count(), 1);
                serde_json::from_slice(&bytes).unwrap()
            }
            other => panic!("{}: {other:?}", String::from_utf8_lossy(line)),
        }
    }

    fn id_of(line: &[u8]) -> Option<RequestId> {
        Members::scan(line).id
    }

    #[test]
    fn lines_rmcp_parses_go_on_blank_ones_are_skipped() {
        for line in [
            &br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#[..],
            br#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"run","arguments":{"command":"\ud83d\ude80"}}}"#,
            b"\xEF\xBB\xBF{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\r",
            // Unknown notifications: rmcp ignores them.
            br#"{"jsonrpc":"2.0","method":"notifications/whatever","params":5}"#,
            br#"{"jsonrpc":"2.0","method":"$/lsp"}"#,
        ] {
            assert_eq!(check(line), Verdict::Forward, "{}", String::from_utf8_lossy(line));
        }
        for line in [&b""[..], b"   ", b"\r", b"\t \r"] {
            assert_eq!(check(line), Verdict::Skip);
        }
    }

    #[test]
    fn unparseable_lines_get_a_parse_error_with_the_id_when_it_can_be_read() {
        let cases: [(&[u8], Value, &str); 9] = [
            (b"not json", Value::Null, "expected ident"),
            (b"\xff\xfe garbage", Value::Null, "not UTF-8 (byte 1 "),
            (b"1e999", Value::Null, "number out of range"),
            (
                br#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"send_text","arguments":{"text":"\ud800"}}}"#,
                json!(5),
                "the escape \\ud800 at byte 97 is a lone surrogate",
            ),
            (
                br#"{"jsonrpc":"2.0","method":"tools/call","params":{"arguments":{"text":"\udc00x"}},"id":"late"}"#,
                json!("late"),
                "surrogate",
            ),
            (
                b"{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\",\"params\":{\"text\":\"a\xffb\"}}",
                json!(6),
                "not UTF-8 (byte 66 ",
            ),
            (
                br#"{"jsonrpc":"2.0","id":7,"method":"ping","params":{"x":1e999}}"#,
                json!(7),
                "number out of range",
            ),
            (br#"{"jsonrpc":"2.0","id":8,"meth"#, json!(8), "EOF while parsing"),
            // A lone surrogate in the id itself: no id to answer with.
            (br#"{"jsonrpc":"2.0","id":"\ud800","method":"ping"}"#, Value::Null, "surrogate"),
        ];
        for (line, id, why) in cases {
            let r = reply(line);
            let shown = String::from_utf8_lossy(line);
            assert_eq!(r["jsonrpc"], "2.0", "{shown}");
            assert_eq!(r["id"], id, "{shown}: {r}");
            assert!(r.as_object().unwrap().contains_key("id"), "{shown}");
            assert_eq!(r["error"]["code"], -32700, "{shown}: {r}");
            let message = r["error"]["message"].as_str().unwrap();
            assert!(message.starts_with("Parse error: "), "{message}");
            assert!(message.contains(why), "{shown}: {message}");
        }
    }

    #[test]
    fn a_known_method_with_params_that_do_not_fit_gets_invalid_params() {
        for line in [
            &br#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"run","arguments":[]}}"#[..],
            br#"{"jsonrpc":"2.0","id":4,"method":"tasks/get","params":{"taskId":5}}"#,
        ] {
            let Verdict::Reply(bytes) = check(line) else {
                panic!("{}: not answered here", String::from_utf8_lossy(line))
            };
            let r: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
            assert_eq!((r["id"].clone(), r["error"]["code"].clone()), (json!(4), json!(-32602)), "{r}");
        }
        // Well-formed requests, and methods rmcp does not know, still go on.
        let ok = br#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"run","arguments":{}}}"#;
        assert_eq!(check(ok), Verdict::Forward);
        let custom = br#"{"jsonrpc":"2.0","id":4,"method":"x/y","params":{}}"#;
        assert_eq!(check(custom), Verdict::Forward);
    }

    #[test]
    fn json_that_is_not_a_message_gets_invalid_request_with_its_id() {
        for (line, id) in [
            (
                &br#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":5}"#[..],
                json!(9),
            ),
            (br#"{"jsonrpc":"1.0","id":"x","method":"ping"}"#, json!("x")),
            (br#"[]"#, Value::Null),
            (br#"{"id":10}"#, json!(10)),
            (br#"42"#, Value::Null),
        ] {
            let r = reply(line);
            assert_eq!(r["id"], id, "{}", String::from_utf8_lossy(line));
            assert_eq!(r["error"]["code"], -32600);
            let message = r["error"]["message"].as_str().unwrap();
            assert!(message.starts_with("Invalid request: "), "{message}");
        }
    }

    #[test]
    fn the_id_is_found_past_whatever_breaks_the_line() {
        assert_eq!(id_of(br#"{"id":1}"#), Some(RequestId::Number(1)));
        assert_eq!(
            id_of(br#" { "a" : [1, {"b": "}\"]"}], "id" : "sq" } "#),
            Some(RequestId::String("sq".into()))
        );
        assert_eq!(
            id_of(br#"{"id":"s\"q"}"#),
            Some(RequestId::String("s\"q".into()))
        );
        assert_eq!(
            id_of(br#"{"a":[1,{"b":"}\"]"}],"id":"sq"}"#),
            Some(RequestId::String("sq".into()))
        );
        assert_eq!(
            id_of(b"{\"p\":\"\xff\xfe\",\"id\":3}"),
            Some(RequestId::Number(3))
        );
        assert_eq!(
            id_of(br#"{"p":1e999,"id":-4}"#),
            Some(RequestId::Number(-4))
        );
        assert_eq!(id_of(br#"{"id":2.0}"#), Some(RequestId::Number(2)));
        // Not an id: absent, broken before it, or not a string or integer.
        for line in [
            &br#"{"method":"ping"}"#[..],
            br#"{"p":"unterminated,"id":1}"#,
            br#"{"id":1.5}"#,
            br#"{"id":null}"#,
            br#"{"id":[1]}"#,
            br#"{"id":1"#,
            br#"{"id""#,
            br#"["id",1]"#,
            b"",
            b"{",
        ] {
            assert_eq!(id_of(line), None, "{}", String::from_utf8_lossy(line));
        }
        // The first id counts.
        assert_eq!(id_of(br#"{"id":1,"id":2}"#), Some(RequestId::Number(1)));
        let m = Members::scan(br#"{"jsonrpc":"2.0","method":"x","params":{"id":5}}"#);
        assert!(m.method && !m.id_key && m.id.is_none());
    }

    #[test]
    fn lone_surrogates_are_found_and_pairs_are_not() {
        assert_eq!(lone_surrogate(br#""\ud800""#), Some((1, 0xd800)));
        assert_eq!(lone_surrogate(br#""a\\ud800""#), None);
        assert_eq!(
            lone_surrogate(br#""\ud83d\ude80 \uDC00""#),
            Some((14, 0xdc00))
        );
        assert_eq!(lone_surrogate(br#""\ud83d\u0041""#), Some((1, 0xd83d)));
        assert_eq!(lone_surrogate(br#""\ud83d\ude80\n\u00e9\""#), None);
        assert_eq!(lone_surrogate(br#""\ud8"#), None);
        assert_eq!(lone_surrogate(b"\\"), None);
    }

    #[test]
    fn oversized_lines_get_invalid_request_with_their_id() {
        let r = match oversized(
            br#"{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"#,
            MAX_LINE + 5,
        ) {
            Verdict::Reply(bytes) => serde_json::from_slice::<Value>(&bytes).unwrap(),
            other => panic!("{other:?}"),
        };
        assert_eq!(r["id"], 11);
        assert_eq!(r["error"]["code"], -32600);
        assert!(
            r["error"]["message"]
                .as_str()
                .unwrap()
                .contains(&format!("{} bytes long", MAX_LINE + 5))
        );
    }

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
        let mcp = crate::TmuxMcp::with_caller(config, crate::guard::Caller::default()).unwrap();
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
