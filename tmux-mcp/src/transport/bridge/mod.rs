//! `tmux-mcp bridge --unix PATH`: a stdio MCP server that forwards to a
//! shared `serve --unix` server ([`crate::transport::shared`]), so that any stdio
//! client joins it.
//!
//! Lines go both ways unchanged, except:
//!
//! - Lines from the client are framed and checked as the stdio server does
//!   ([`crate::transport::stdio`]): one that is not a JSON-RPC message is answered
//!   here and not forwarded.
//! - With `--actor NAME`, the bridge writes the name into the client's
//!   `initialize` and every `tools/call` as `params._meta["tmux-mcp/actor"]`
//!   (`crate::mcp::actors::ACTOR_META_KEY`); the server labels the session
//!   with it.
//! - It remembers the client's `initialize` request and its
//!   `notifications/initialized`. When the connection is lost it reconnects
//!   with backoff, replays both to the new connection and swallows the
//!   replayed `initialize`'s response, so that the client never notices a
//!   second handshake.
//! - It never re-sends a request that was in flight when the connection was
//!   lost: the server may have run it (a `run` may have typed its command).
//!   Each such request is answered with a JSON-RPC error with its id,
//!   [`SERVER_WENT_AWAY`], saying so.
//! - A request that arrives while there is no connection waits for one, up
//!   to `--wait-secs`; then it is answered with [`SERVER_UNREACHABLE`] (it
//!   was never sent). Notifications that wait that long are dropped.
//!
//! - It remembers the resources the client subscribed to
//!   (`resources/subscribe` answered with a result, less those it
//!   unsubscribed from). After a reconnection it subscribes to each again,
//!   swallows the responses and then tells the client
//!   `notifications/resources/updated` for each, since the resource may
//!   have changed while no server watched it: a subscription outlives a
//!   restart of the server, and nothing changes unannounced.
//!
//! Notifications and requests from the server (progress, resource updates,
//! log messages) pass through. A 2026-07-28 `subscriptions/listen` is a
//! request like any other: in flight when the connection is lost, it is
//! answered with the error above, and the client listens again.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncWrite, AsyncWriteExt as _, BufReader};
use tokio::net::UnixStream;
use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::mcp::actors::ACTOR_META_KEY;
use crate::transport::stdio::{self, Frame, Verdict};

mod pumps;
use pumps::{label, read_client, read_server, write_lines, write_server};

/// The JSON-RPC error code for a request that was in flight when the
/// connection to the server was lost (implementation-defined server error).
pub const SERVER_WENT_AWAY: i64 = -32001;

/// The JSON-RPC error code for a request that could not be sent because the
/// server was not reachable within the wait.
pub const SERVER_UNREACHABLE: i64 = -32002;

/// The first pause before connecting again.
const FIRST_BACKOFF: Duration = Duration::from_millis(50);

/// The longest pause between two connection attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(1);

/// The id the bridge gives a replayed `initialize` (never a client's).
const REPLAY_ID: &str = "tmux-mcp-bridge/replayed-initialize";

/// The start of the ids the bridge gives replayed `resources/subscribe`
/// requests (never a client's).
const RESUBSCRIBE_ID: &str = "tmux-mcp-bridge/resubscribe/";

/// How the bridge runs.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct BridgeOptions {
    /// The shared server's socket.
    pub socket: PathBuf,
    /// The actor name written into the client's requests, if any.
    pub actor: Option<String>,
    /// How long a request waits for a connection before it is answered
    /// with an error.
    pub wait: Duration,
}

impl BridgeOptions {
    /// Options for the server at `socket`, without an actor, waiting 10 s.
    pub fn new(socket: impl Into<PathBuf>) -> Self {
        Self {
            socket: socket.into(),
            actor: None,
            wait: Duration::from_secs(10),
        }
    }
}

/// Forwards this process's standard input and output to the server until
/// the client closes standard input.
pub async fn run(options: BridgeOptions) {
    let (stdin, stdout) = rmcp::transport::stdio_pipes();
    bridge(options, stdin, stdout).await;
}

/// Forwards `input` (from the client) and `output` (to it) to the server
/// until `input` ends.
pub async fn bridge<R, W>(options: BridgeOptions, input: R, output: W)
where
    R: tokio::io::AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (to_client, lines) = mpsc::channel::<Vec<u8>>(256);
    let writer = tokio::spawn(write_lines(lines, output));
    let (events, inbox) = mpsc::channel(256);
    let reader = tokio::spawn(read_client(input, events.clone(), to_client.clone()));
    let mut bridge = Bridge {
        actor: options.actor.clone(),
        options,
        to_client,
        events,
        generation: 0,
        link: None,
        init: None,
        init_confirmed: false,
        initialized: None,
        subscribed: BTreeMap::new(),
        subscribing: HashMap::new(),
        in_flight: HashSet::new(),
        queue: VecDeque::new(),
        backoff: FIRST_BACKOFF,
        next_attempt: Instant::now(),
        last_error: None,
        closing: false,
    };
    bridge.serve(inbox).await;
    reader.abort();
    drop(bridge);
    if let Err(e) = writer.await {
        tracing::error!("the bridge's output task failed: {e}");
    }
}

/// What the bridge's loop hears about.
enum Event {
    /// A message from the client.
    Client(Value),
    /// The client closed its input.
    ClientClosed,
    /// A message from the server, on connection `generation`.
    Server(u64, Value),
    /// Connection `generation` ended.
    ServerClosed(u64),
}

/// The connection to the server.
struct Link {
    generation: u64,
    to_server: mpsc::UnboundedSender<Vec<u8>>,
    /// Replaying the handshake: client messages wait until it is done.
    replaying: bool,
}

/// A client message waiting for a connection.
struct Waiting {
    deadline: Instant,
    message: Value,
}

struct Bridge {
    options: BridgeOptions,
    actor: Option<String>,
    to_client: mpsc::Sender<Vec<u8>>,
    events: mpsc::Sender<Event>,
    generation: u64,
    link: Option<Link>,
    /// The client's `initialize`, as sent (with the actor).
    init: Option<Value>,
    /// Its response was a result: the session is set up.
    init_confirmed: bool,
    /// The client's `notifications/initialized`.
    initialized: Option<Value>,
    /// The resources the client is subscribed to: each URI with the
    /// `resources/subscribe` request that the server accepted.
    subscribed: BTreeMap<String, Value>,
    /// The client's `resources/subscribe` and `resources/unsubscribe`
    /// requests in flight, by id (as JSON text): whether it subscribes, and
    /// the request.
    subscribing: HashMap<String, (bool, Value)>,
    /// The ids (as JSON text) of the client's requests sent on the current
    /// connection and not answered yet.
    in_flight: HashSet<String>,
    /// Client messages waiting for a connection, oldest first (so their
    /// deadlines are in order).
    queue: VecDeque<Waiting>,
    backoff: Duration,
    next_attempt: Instant,
    last_error: Option<String>,
    /// The client closed its input: the bridge ends once nothing it sent
    /// waits for an answer.
    closing: bool,
}

fn key(id: &Value) -> String {
    id.to_string()
}

fn method(message: &Value) -> Option<&str> {
    message.get("method").and_then(Value::as_str)
}

/// A request has a method and an id; a notification a method only.
fn is_request(message: &Value) -> bool {
    method(message).is_some() && message.get("id").is_some()
}

fn line(message: &Value) -> Vec<u8> {
    let mut bytes = message.to_string().into_bytes();
    bytes.push(b'\n');
    bytes
}

fn error_reply(id: &Value, code: i64, message: &str, data: Value) -> Vec<u8> {
    line(&json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": code, "message": message, "data": data},
    }))
}

impl Bridge {
    async fn serve(&mut self, mut inbox: mpsc::Receiver<Event>) {
        loop {
            if self.closing && self.in_flight.is_empty() && self.queue.is_empty() {
                return;
            }
            let deadline = self.queue.front().map(|w| w.deadline);
            tokio::select! {
                event = inbox.recv() => match event {
                    Some(Event::Client(message)) => self.on_client(message).await,
                    Some(Event::ClientClosed) => self.closing = true,
                    None => return,
                    Some(Event::Server(generation, message)) => {
                        if self.current(generation) {
                            self.on_server(message).await;
                        }
                    }
                    Some(Event::ServerClosed(generation)) => {
                        if self.current(generation) {
                            self.lost().await;
                        }
                    }
                },
                // A true timer: the backoff before the next connection
                // attempt (nothing announces that a server came back).
                () = tokio::time::sleep_until(self.next_attempt), if self.link.is_none() => {
                    self.connect().await;
                }
                // A true timer: the deadline of the oldest waiting message.
                () = async {
                    match deadline {
                        Some(at) => tokio::time::sleep_until(at).await,
                        None => std::future::pending().await,
                    }
                } => self.expire().await,
            }
        }
    }

    fn current(&self, generation: u64) -> bool {
        self.link
            .as_ref()
            .is_some_and(|l| l.generation == generation)
    }

    /// The link, if client messages can go on it now.
    fn ready(&self) -> Option<&Link> {
        self.link.as_ref().filter(|l| !l.replaying)
    }

    async fn to_client(&self, bytes: Vec<u8>) {
        if self.to_client.send(bytes).await.is_err() {
            tracing::debug!("the client stopped reading");
        }
    }

    async fn on_client(&mut self, mut message: Value) {
        match method(&message) {
            Some("initialize") if is_request(&message) => {
                self.label(&mut message);
                self.init = Some(message.clone());
                self.init_confirmed = false;
                self.initialized = None;
            }
            Some("tools/call") => self.label(&mut message),
            Some(op @ ("resources/subscribe" | "resources/unsubscribe"))
                if is_request(&message) =>
            {
                let subscribe = op == "resources/subscribe";
                if let Some(id) = message.get("id") {
                    self.subscribing
                        .insert(key(id), (subscribe, message.clone()));
                }
            }
            Some("notifications/initialized") => self.initialized = Some(message.clone()),
            Some("notifications/cancelled") => {
                let id = message.pointer("/params/requestId").map(key);
                if let Some(id) = id {
                    let before = self.queue.len();
                    self.queue
                        .retain(|w| w.message.get("id").map(key) != Some(id.clone()));
                    if self.queue.len() != before || !self.in_flight.contains(&id) {
                        // Never sent, or already answered: nothing to cancel.
                        return;
                    }
                }
            }
            Some(_) => {}
            // A response to a request of the server: only the server that
            // asked can use it.
            None => {
                if let Some(link) = self.ready() {
                    let _ = link.to_server.send(line(&message));
                }
                return;
            }
        }
        if self.ready().is_some() {
            self.send(message);
        } else {
            self.queue.push_back(Waiting {
                deadline: Instant::now() + self.options.wait,
                message,
            });
        }
    }

    /// Writes the actor, if any, into a request's `params._meta`.
    fn label(&self, message: &mut Value) {
        if let Some(actor) = &self.actor {
            label(actor, message);
        }
    }

    /// Sends a client message on the ready link.
    fn send(&mut self, message: Value) {
        let Some(link) = self.ready() else {
            return;
        };
        if link.to_server.send(line(&message)).is_ok()
            && is_request(&message)
            && let Some(id) = message.get("id")
        {
            self.in_flight.insert(key(id));
        }
    }

    async fn on_server(&mut self, message: Value) {
        let response = method(&message).is_none();
        let id = message.get("id").cloned();
        if response && let Some(id) = &id {
            if id.as_str() == Some(REPLAY_ID) {
                self.replayed(&message);
                return;
            }
            if let Some(uri) = id.as_str().and_then(|i| i.strip_prefix(RESUBSCRIBE_ID)) {
                let uri = uri.to_owned();
                self.resubscribed(&uri, &message).await;
                return;
            }
            let id_key = key(id);
            self.in_flight.remove(&id_key);
            if let Some((subscribe, request)) = self.subscribing.remove(&id_key)
                && message.get("result").is_some()
                && let Some(uri) = request.pointer("/params/uri").and_then(Value::as_str)
            {
                if subscribe {
                    self.subscribed.insert(uri.to_owned(), request);
                } else {
                    self.subscribed.remove(uri);
                }
            }
            let init_id = self.init.as_ref().and_then(|i| i.get("id")).map(key);
            if init_id == Some(id_key) && !self.init_confirmed {
                if message.get("result").is_some() {
                    self.init_confirmed = true;
                } else {
                    self.init = None;
                }
            }
        }
        self.to_client(line(&message)).await;
    }

    /// The response to a replayed `initialize`: swallowed; the session is
    /// set up again, so the waiting messages go.
    fn replayed(&mut self, message: &Value) {
        if let Some(error) = message.get("error") {
            tracing::warn!(%error, "the server refused the replayed initialize");
        }
        if let Some(link) = self.link.as_mut() {
            link.replaying = false;
            if let Some(initialized) = &self.initialized {
                let _ = link.to_server.send(line(initialized));
            }
            // The new server knows none of the client's subscriptions:
            // make each again, before anything the client sends now.
            for (uri, request) in &self.subscribed {
                let mut again = request.clone();
                if let Some(object) = again.as_object_mut() {
                    object.insert("id".into(), Value::String(format!("{RESUBSCRIBE_ID}{uri}")));
                }
                let _ = link.to_server.send(line(&again));
            }
        }
        eprintln!(
            "tmux-mcp bridge: reconnected to {}",
            self.options.socket.display()
        );
        self.flush();
    }

    /// The response to a replayed subscription: swallowed; the client is
    /// told that the resource may have changed while no server watched it
    /// (also when the new server refused it, so the client reads it again
    /// and sees why).
    async fn resubscribed(&mut self, uri: &str, message: &Value) {
        if let Some(error) = message.get("error") {
            tracing::warn!(%error, uri, "the server refused a replayed subscription");
            self.subscribed.remove(uri);
        }
        let updated = json!({
            "jsonrpc": "2.0",
            "method": "notifications/resources/updated",
            "params": {"uri": uri},
        });
        self.to_client(line(&updated)).await;
    }

    /// Sends what waited for a connection.
    fn flush(&mut self) {
        while self.ready().is_some() {
            let Some(waiting) = self.queue.pop_front() else {
                break;
            };
            self.send(waiting.message);
        }
    }

    /// The connection ended: every request in flight is answered (it may
    /// have run; it is not re-sent), and a new connection is tried.
    async fn lost(&mut self) {
        self.link = None;
        if !self.init_confirmed {
            self.init = None;
            self.initialized = None;
        }
        let in_flight: Vec<String> = self.in_flight.drain().collect();
        // Answered below with an error: the server may or may not have
        // taken them, so they change nothing remembered.
        self.subscribing.clear();
        eprintln!(
            "tmux-mcp bridge: lost the connection to {} ({} call(s) in flight); reconnecting",
            self.options.socket.display(),
            in_flight.len()
        );
        for id in in_flight {
            let id: Value = serde_json::from_str(&id).unwrap_or(Value::Null);
            let reply = error_reply(
                &id,
                SERVER_WENT_AWAY,
                "The shared tmux-mcp server went away (it stopped or restarted) while this call was in flight. \
                 The call may or may not have run, and it was not re-sent: the bridge never re-sends a call that may already have run. \
                 Check the state (list_terminals, read_output, capture_screen) before calling it again.",
                json!({"resent": false, "socket": self.options.socket.display().to_string()}),
            );
            self.to_client(reply).await;
        }
        self.backoff = FIRST_BACKOFF;
        self.next_attempt = Instant::now();
    }

    async fn connect(&mut self) {
        let stream = match UnixStream::connect(&self.options.socket).await {
            Ok(stream) => stream,
            Err(e) => {
                tracing::debug!("cannot connect to {}: {e}", self.options.socket.display());
                self.last_error = Some(e.to_string());
                self.next_attempt = Instant::now() + self.backoff;
                self.backoff = (self.backoff * 2).min(MAX_BACKOFF);
                return;
            }
        };
        self.last_error = None;
        self.generation += 1;
        let generation = self.generation;
        let (read, write) = stream.into_split();
        let (to_server, outgoing) = mpsc::unbounded_channel();
        tokio::spawn(write_server(outgoing, write));
        tokio::spawn(read_server(read, generation, self.events.clone()));
        let replay = self.init.clone().filter(|_| self.init_confirmed);
        self.link = Some(Link {
            generation,
            to_server,
            replaying: replay.is_some(),
        });
        match replay {
            Some(mut init) => {
                if let Some(object) = init.as_object_mut() {
                    object.insert("id".into(), Value::String(REPLAY_ID.into()));
                }
                if let Some(link) = &self.link {
                    let _ = link.to_server.send(line(&init));
                }
            }
            None => {
                tracing::info!("connected to {}", self.options.socket.display());
                self.flush();
            }
        }
    }

    /// Answers or drops the messages whose wait is over.
    async fn expire(&mut self) {
        let now = Instant::now();
        while self.queue.front().is_some_and(|w| w.deadline <= now) {
            let Some(waiting) = self.queue.pop_front() else {
                break;
            };
            if !is_request(&waiting.message) {
                continue;
            }
            let id = waiting.message.get("id").cloned().unwrap_or(Value::Null);
            let why = match &self.last_error {
                Some(e) => format!("connecting fails: {e}"),
                None => "it has not finished the handshake".to_owned(),
            };
            let reply = error_reply(
                &id,
                SERVER_UNREACHABLE,
                &format!(
                    "The shared tmux-mcp server at {} is not reachable ({why}) after waiting {} s; the call was not sent. \
                     Start it with `tmux-mcp serve --unix {}`, then call again.",
                    self.options.socket.display(),
                    self.options.wait.as_secs_f64(),
                    self.options.socket.display()
                ),
                json!({"resent": false, "sent": false, "socket": self.options.socket.display().to_string()}),
            );
            self.to_client(reply).await;
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn the_actor_goes_into_meta_beside_what_is_there() {
        let mut init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "c", "version": "1"}}});
        label("agent-a", &mut init);
        assert_eq!(init["params"]["_meta"][ACTOR_META_KEY], "agent-a");
        assert_eq!(init["params"]["clientInfo"]["name"], "c");
        let mut call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "list_terminals", "_meta": {"progressToken": 7}}});
        label("agent-b", &mut call);
        assert_eq!(call["params"]["_meta"]["progressToken"], 7);
        assert_eq!(call["params"]["_meta"][ACTOR_META_KEY], "agent-b");
        let mut bare = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call"});
        label("x", &mut bare);
        assert_eq!(bare["params"]["_meta"][ACTOR_META_KEY], "x");
    }

    #[test]
    fn replies_keep_the_id_and_say_nothing_was_resent() {
        let reply = error_reply(
            &json!("r-1"),
            SERVER_WENT_AWAY,
            "gone",
            json!({"resent": false}),
        );
        let value: Value = serde_json::from_slice(&reply).unwrap();
        assert!(reply.ends_with(b"\n"));
        assert_eq!(value["id"], "r-1");
        assert_eq!(value["error"]["code"], SERVER_WENT_AWAY);
        assert_eq!(value["error"]["data"]["resent"], false);
    }
}
