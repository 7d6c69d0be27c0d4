//! One persistent control-mode connection: a multiplexer over one `tmux -C`
//! client, and [`Connection`], the crate-private handle that talks to it.
//!
//! The connection knows frames, replies and routes, and nothing about what
//! a pane is for:
//!
//! - `options`: how the client attaches ([`ConnectOptions`]).
//! - `task`: the task that owns the client. It reads frames, matches
//!   replies to callers in FIFO order, resumes paused output (flow
//!   control) and hands everything else to the routing table.
//! - `writer`: the task that writes command lines, so a slow stdin never
//!   stops the reader.
//! - `routing`: pane output to per-pane sinks, other notifications to the
//!   api's watchers, every event to the public [`Subscription`]s.
//!
//! Sinks, watchers and subscriptions are registered through the same
//! channel as commands, so each takes effect in order with them.
//!
//! The public handle, [`Tmux`](crate::Tmux), is not defined here but at
//! the api layer (`pane`), as a thin client over a [`Connection`] (the
//! shape of tokio-postgres' `Client` over its private connection): it
//! holds the connection handle beside the api's own state for the
//! connection (its follower), as a typed field. So this layer needs no
//! slot for the state of a layer above it, and imports nothing from it;
//! the api passes its sinks and watchers down as trait objects
//! ([`PaneSink`], [`Watcher`]).

mod options;
mod routing;
mod task;
mod writer;

use std::process::Stdio;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, OnceLock, Weak};

use bytes::Bytes;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{mpsc, oneshot, watch};

pub use options::ConnectOptions;
pub use routing::Subscription;
pub(crate) use routing::{PaneSink, Watcher};

use crate::command::{ClientFlag, Command, CommandLine, RefreshClient};
use crate::error::{Closed, Error, Result};
use crate::ids::{PaneId, SessionId};
use crate::proto::{FrameError, Notification, Reply};
use crate::server::Server;
use crate::version::{OLDEST, Version};
use routing::Subscriber;
use task::ConnectionTask;

/// Something the connection saw that is not the reply to a caller's command.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Event {
    /// A notification line (`%output`, `%window-add`, …).
    Notification(Notification),
    /// A reply block tmux sent on its own (flags 0): the attach command's
    /// reply, or output of a command run by a hook.
    Unsolicited(Reply),
    /// A line outside any block that is not a notification (`run-shell`
    /// output, the continuation of a multi-line subscription value, …).
    Stray(Bytes),
    /// tmux wrote something the decoder could not frame; that frame is lost,
    /// the stream continues.
    ProtocolError(FrameError),
    /// This subscriber's queue was full: `missed` events were dropped here.
    /// Other subscribers and callers were not delayed.
    Gap {
        /// How many events were dropped at this point of the stream.
        missed: u64,
    },
    /// The connection ended. The last event of every subscription.
    Closed(Arc<Closed>),
}

/// What the handle asks of the connection task, in order.
enum Message {
    /// A command line and who gets its reply.
    Request {
        line: Vec<u8>,
        reply: oneshot::Sender<Result<Reply>>,
    },
    /// A public subscription.
    Subscribe(Subscriber),
    /// A pane's output sink; `ack` once it is in the table.
    Route {
        pane: PaneId,
        sink: Weak<dyn PaneSink>,
        ack: oneshot::Sender<()>,
    },
    /// A watcher of notifications.
    Watch(Weak<dyn Watcher>),
}

/// The two byte streams of a `tmux -C` client, and its process if the
/// connection started it.
pub(crate) struct Transport {
    reader: Box<dyn AsyncRead + Unpin + Send>,
    writer: Box<dyn AsyncWrite + Unpin + Send>,
    stderr: Option<Box<dyn AsyncRead + Unpin + Send>>,
    child: Option<tokio::process::Child>,
}

/// What the handles and the task share.
pub(crate) struct Shared {
    closed: OnceLock<Arc<Closed>>,
    closed_tx: watch::Sender<bool>,
    server: String,
    /// The server, when the connection started its client (observers are
    /// started the same way); `None` over a caller's stream.
    address: Option<Server>,
    options: ConnectOptions,
    /// The session this connection is attached to.
    session: Mutex<Option<SessionId>>,
    /// The tmux at the other end, read once at connect time.
    version: OnceLock<Version>,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared")
            .field("server", &self.server)
            .finish()
    }
}

impl Shared {
    fn closed(&self) -> Arc<Closed> {
        self.closed.get().cloned().unwrap_or_default()
    }

    fn set_closed(&self, closed: Arc<Closed>) {
        let _ = self.closed.set(closed);
        self.closed_tx.send_replace(true);
    }

    fn set_session(&self, id: SessionId) {
        *self.session.lock().unwrap_or_else(|e| e.into_inner()) = Some(id);
    }

    fn session(&self) -> Option<SessionId> {
        *self.session.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn version(&self) -> &Version {
        self.version.get().unwrap_or(&OLDEST)
    }
}

/// The handle to one persistent `tmux -C` connection, private to the
/// crate. Cheap to clone; any number of tasks may send commands at once
/// (they are pipelined). The connection ends when the last handle is
/// dropped or tmux goes away.
///
/// The public [`Tmux`](crate::Tmux) (at the api layer) holds one of these
/// beside the api's own state for the connection; the api's internals
/// (observers, callbacks) use this handle directly.
#[derive(Clone)]
pub(crate) struct Connection {
    tx: mpsc::UnboundedSender<Message>,
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("server", &self.shared.server)
            .field("closed", &self.shared.closed.get())
            .finish()
    }
}

/// A handle that does not keep the connection open (for the api's
/// callbacks, which must not outlive the user's handles).
#[derive(Debug, Clone)]
pub(crate) struct WeakConnection {
    tx: mpsc::WeakUnboundedSender<Message>,
    shared: Weak<Shared>,
}

impl WeakConnection {
    /// A full handle, while the connection is still wanted.
    pub(crate) fn upgrade(&self) -> Option<Connection> {
        Some(Connection {
            tx: self.tx.upgrade()?,
            shared: self.shared.upgrade()?,
        })
    }
}

impl Connection {
    /// Connects to `server` with `options`, starting a `tmux -C` client
    /// (and the server, if it is not running).
    pub(crate) async fn connect_with(
        server: &Server,
        options: ConnectOptions,
    ) -> Result<Connection> {
        let mut args = vec!["-C".to_owned()];
        args.extend(options.argv()?);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let mut cmd = server.command(&args);
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = cmd.spawn().map_err(|e| Error::Spawn {
            program: server.program_name(),
            source: Arc::new(e),
        })?;
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(Error::Io(Arc::new(std::io::Error::other(
                "tmux child has no pipes",
            ))));
        };
        let transport = Transport {
            reader: Box::new(stdout),
            writer: Box::new(stdin),
            stderr: Some(Box::new(stderr)),
            child: Some(child),
        };
        Self::start(transport, server.describe(), Some(server.clone()), options).await
    }

    /// Runs the connection over a `tmux -C` client that the caller started,
    /// through its stdout (`reader`) and stdin (`writer`).
    pub(crate) async fn connect_stream<R, W>(
        reader: R,
        writer: W,
        description: String,
        options: ConnectOptions,
    ) -> Result<Connection>
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let transport = Transport {
            reader: Box::new(reader),
            writer: Box::new(writer),
            stderr: None,
            child: None,
        };
        Self::start(transport, description, None, options).await
    }

    async fn start(
        transport: Transport,
        server: String,
        address: Option<Server>,
        options: ConnectOptions,
    ) -> Result<Connection> {
        let (tx, rx) = mpsc::unbounded_channel();
        let (closed_tx, _) = watch::channel(false);
        let shared = Arc::new(Shared {
            closed: OnceLock::new(),
            closed_tx,
            server,
            address,
            options: options.clone(),
            session: Mutex::new(None),
            version: OnceLock::new(),
        });
        let (ready_tx, ready_rx) = oneshot::channel();
        let task = ConnectionTask::new(rx, shared.clone(), ready_tx);
        tokio::spawn(task.run(transport));
        // A true timer: the deadline of connecting. On a timeout `tx` is
        // dropped here, which makes the task close the client's stdin and
        // kill it after a grace period.
        let timeout = options.connect_timeout();
        match tokio::time::timeout(timeout, ready_rx).await {
            Ok(Ok(Ok(()))) => {}
            Ok(Ok(Err(e))) => return Err(e),
            Ok(Err(_)) => return Err(Error::Closed(shared.closed())),
            Err(_) => return Err(Error::Timeout(timeout)),
        }
        let conn = Connection { tx, shared };
        if let Some(seconds) = options.pause_after_seconds() {
            conn.run(RefreshClient::flags([ClientFlag::PauseAfter(seconds)], []))
                .await?;
        }
        // One query for everything the connection needs to know: the
        // session it is attached to and which tmux it talks to. Written
        // by hand because typed commands are encoded for a version, which
        // is what this asks; neither value can hold a character that any
        // version escapes.
        let reply = conn
            .expect_ok("display-message -p '#{session_id} #{version}'")
            .await?;
        let line = reply.first().map(|l| &l[..]).unwrap_or_default();
        let (session, version) = match line.iter().position(|&b| b == b' ') {
            Some(space) => (&line[..space], &line[space + 1..]),
            None => (line, &b""[..]),
        };
        let session = SessionId::from_bytes(session).ok_or_else(|| Error::UnexpectedReply {
            command: "display-message".into(),
            detail: format!("no session id in {:?}", String::from_utf8_lossy(line)),
        })?;
        conn.shared.set_session(session);
        let _ = conn
            .shared
            .version
            .set(Version::parse(&String::from_utf8_lossy(version)));
        tracing::info!(
            server = %conn.shared.server,
            version = %conn.version(),
            session = %session,
            "connected to tmux"
        );
        Ok(conn)
    }

    /// Runs a typed command and returns its typed result, encoded and
    /// decoded for [`Connection::version`].
    pub(crate) async fn run<C: Command>(&self, command: C) -> Result<C::Output> {
        let version = self.version();
        let mut line = CommandLine::for_version(version.clone());
        command.encode(&mut line)?;
        // Timed only when someone listens: free otherwise.
        let timed = tracing::enabled!(tracing::Level::DEBUG).then(|| {
            tracing::debug!(command = command.name(), "command sent");
            std::time::Instant::now()
        });
        let reply = self.send(line.into_bytes()).await;
        if let Some(sent) = timed {
            tracing::debug!(
                command = command.name(),
                micros = u64::try_from(sent.elapsed().as_micros()).unwrap_or(u64::MAX),
                refused = reply.as_ref().map_or(true, |r| r.error),
                "command answered"
            );
        }
        command.parse(reply?, version)
    }

    /// The version of the tmux at the other end, read at connect time.
    pub(crate) fn version(&self) -> &Version {
        self.shared.version()
    }

    /// Sends one command line exactly as given and returns its reply
    /// block, `%error` included; lines that would desynchronise the
    /// matching of replies are refused.
    pub(crate) async fn raw_line(&self, line: impl Into<Vec<u8>>) -> Result<Reply> {
        tracing::debug!(command = "raw", "command sent");
        self.send(line.into()).await
    }

    async fn send(&self, line: Vec<u8>) -> Result<Reply> {
        check_line(&line)?;
        let (reply_tx, reply_rx) = oneshot::channel();
        self.tx
            .send(Message::Request {
                line,
                reply: reply_tx,
            })
            .map_err(|_| Error::Closed(self.shared.closed()))?;
        match reply_rx.await {
            Ok(result) => result,
            Err(_) => Err(Error::Closed(self.shared.closed())),
        }
    }

    /// Sends a line and returns the body, or the error tmux gave.
    async fn expect_ok(&self, line: impl Into<Vec<u8>>) -> Result<Vec<Bytes>> {
        let line = line.into();
        let name =
            String::from_utf8_lossy(line.split(|&b| b == b' ').next().unwrap_or(&[])).into_owned();
        crate::command::ok_body(&name, self.send(line).await?)
    }

    /// The session this connection is attached to.
    pub(crate) fn attached_session(&self) -> Option<SessionId> {
        self.shared.session()
    }

    /// Subscribes to every [`Event`] from now on with a queue of
    /// `capacity` events (at least 1), registered in order with commands.
    pub(crate) fn subscribe_with_capacity(&self, capacity: usize) -> Subscription {
        let (tx, rx) = mpsc::channel(capacity.max(1));
        let missed = Arc::new(AtomicU64::new(0));
        let registered = self
            .tx
            .send(Message::Subscribe(Subscriber {
                tx,
                missed: missed.clone(),
            }))
            .is_ok();
        Subscription::new(rx, missed, self.shared.clone(), registered)
    }

    /// `true` once the connection has ended.
    pub(crate) fn is_closed(&self) -> bool {
        self.shared.closed.get().is_some()
    }

    /// Why the connection ended, once it has.
    pub(crate) fn ended(&self) -> Option<&Arc<Closed>> {
        self.shared.closed.get()
    }

    /// Waits until the connection ends and returns why.
    pub(crate) async fn closed(&self) -> Arc<Closed> {
        let mut rx = self.shared.closed_tx.subscribe();
        let _ = rx.wait_for(|closed| *closed).await;
        self.shared.closed()
    }

    /// The address this connection was made with; `None` over a caller's
    /// streams.
    pub(crate) fn server(&self) -> Option<&Server> {
        self.shared.address.as_ref()
    }

    /// A description of the server for messages.
    pub(crate) fn describe(&self) -> &str {
        &self.shared.server
    }

    /// Routes `pane`'s output to `sink` from the next byte tmux sends after
    /// every command sent before this call. Returns once the route is in
    /// the table.
    pub(crate) async fn route(&self, pane: PaneId, sink: Weak<dyn PaneSink>) -> Result<()> {
        let (ack, done) = oneshot::channel();
        self.tx
            .send(Message::Route { pane, sink, ack })
            .map_err(|_| Error::Closed(self.shared.closed()))?;
        done.await.map_err(|_| Error::Closed(self.shared.closed()))
    }

    /// Registers a watcher of every notification other than pane output.
    pub(crate) fn watch(&self, watcher: Weak<dyn Watcher>) {
        let _ = self.tx.send(Message::Watch(watcher));
    }

    /// A handle that does not keep the connection open.
    pub(crate) fn downgrade(&self) -> WeakConnection {
        WeakConnection {
            tx: self.tx.downgrade(),
            shared: Arc::downgrade(&self.shared),
        }
    }

    /// The options this connection was made with.
    pub(crate) fn options(&self) -> &ConnectOptions {
        &self.shared.options
    }

    /// Starts another client of the same server with `options`: how the api
    /// attaches observers. Fails over a caller's stream.
    pub(crate) async fn connect_sibling(&self, options: ConnectOptions) -> Result<Connection> {
        match &self.shared.address {
            Some(server) => Box::pin(Connection::connect_with(server, options)).await,
            None => Err(Error::InvalidArgument(format!(
                "{} is a connection over a stream: it cannot start another client \
                 (to follow a pane of another session, connect over a stream to that session)",
                self.shared.server
            ))),
        }
    }
}

/// Refuses lines that tmux would not answer with exactly one block.
fn check_line(line: &[u8]) -> Result<()> {
    if let Some(b) = line.iter().find(|b| matches!(b, b'\n' | b'\r' | 0)) {
        return Err(Error::InvalidArgument(format!(
            "a command line cannot contain byte {b:#04x} (LF, CR and NUL end or cut the line); \
             send such text with a paste buffer or send-keys -H"
        )));
    }
    let first = line.iter().find(|b| !matches!(b, b' ' | b'\t'));
    match first {
        None => Err(Error::InvalidArgument(
            "an empty command line would detach the connection".into(),
        )),
        Some(b'#') => Err(Error::InvalidArgument(
            "a comment line gets no reply from tmux".into(),
        )),
        Some(_) => Ok(()),
    }
}
