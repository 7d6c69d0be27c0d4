//! One persistent control-mode connection: a multiplexer over one `tmux -C`
//! client, and the cheap handle that talks to it.
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

mod options;
mod routing;
mod task;
mod writer;

use std::any::Any;
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
    /// State the api layer keeps per connection (its follower).
    api: OnceLock<Arc<dyn Any + Send + Sync>>,
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

/// A handle to one persistent `tmux -C` connection. Cheap to clone; any
/// number of tasks may send commands at once (they are pipelined). The
/// connection ends when the last handle is dropped or tmux goes away.
///
/// ```no_run
/// # async fn demo() -> tmux_control::Result<()> {
/// use tmux_control::{Server, Tmux};
/// let tmux = Tmux::connect(&Server::named("work")).await?;
/// let reply = tmux.raw_line("display-message -p '#{version}'").await?;
/// println!("tmux {}", String::from_utf8_lossy(&reply.body[0]));
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Tmux {
    tx: mpsc::UnboundedSender<Message>,
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Tmux {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tmux")
            .field("server", &self.shared.server)
            .field("closed", &self.shared.closed.get())
            .finish()
    }
}

/// A handle that does not keep the connection open (for the api's
/// callbacks, which must not outlive the user's handles).
#[derive(Debug, Clone)]
pub(crate) struct WeakTmux {
    tx: mpsc::WeakUnboundedSender<Message>,
    shared: Weak<Shared>,
}

impl WeakTmux {
    /// A full handle, while the connection is still wanted.
    pub(crate) fn upgrade(&self) -> Option<Tmux> {
        Some(Tmux {
            tx: self.tx.upgrade()?,
            shared: self.shared.upgrade()?,
        })
    }
}

impl Tmux {
    /// Connects to `server`, attaching to (or creating) the session
    /// [`ConnectOptions::DEFAULT_SESSION`]. The server is started if it is not running.
    pub async fn connect(server: &Server) -> Result<Tmux> {
        Self::connect_with(server, ConnectOptions::default()).await
    }

    /// Connects with explicit options.
    pub async fn connect_with(server: &Server, options: ConnectOptions) -> Result<Tmux> {
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

    /// Runs the connection over a `tmux -C` client that the caller started
    /// and reaches through any pair of byte streams: `reader` is what the
    /// client writes (its stdout), `writer` what it reads (its stdin). For
    /// example `docker exec -i CONTAINER tmux -C attach`, or an ssh
    /// channel. The client must have been started with a command that
    /// attaches it (`attach`, `new-session -A`); of `options`, the ones
    /// that choose how to start a client (session, size, command,
    /// attach-only) do not apply. Panes of other sessions cannot be
    /// followed over a stream, since that needs a client of its own.
    ///
    /// ```no_run
    /// # async fn demo() -> tmux_control::Result<()> {
    /// use std::process::Stdio;
    /// use tmux_control::{ConnectOptions, Tmux};
    /// let mut child = tokio::process::Command::new("docker")
    ///     .args(["exec", "-i", "box", "tmux", "-C", "new-session", "-A", "-s", "work"])
    ///     .stdin(Stdio::piped())
    ///     .stdout(Stdio::piped())
    ///     .kill_on_drop(true)
    ///     .spawn()?;
    /// let (stdout, stdin) = (child.stdout.take().unwrap(), child.stdin.take().unwrap());
    /// let tmux = Tmux::connect_stream(stdout, stdin, "docker box", ConnectOptions::default()).await?;
    /// println!("tmux {} in the container", tmux.version());
    /// # Ok(()) }
    /// ```
    pub async fn connect_stream<R, W>(
        reader: R,
        writer: W,
        description: impl Into<String>,
        options: ConnectOptions,
    ) -> Result<Tmux>
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
        Self::start(transport, description.into(), None, options).await
    }

    async fn start(
        transport: Transport,
        server: String,
        address: Option<Server>,
        options: ConnectOptions,
    ) -> Result<Tmux> {
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
            api: OnceLock::new(),
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
        let tmux = Tmux { tx, shared };
        if let Some(seconds) = options.pause_after_seconds() {
            tmux.run(RefreshClient::flags([ClientFlag::PauseAfter(seconds)], []))
                .await?;
        }
        // One query for everything the connection needs to know: the
        // session it is attached to and which tmux it talks to. Written
        // by hand because typed commands are encoded for a version, which
        // is what this asks; neither value can hold a character that any
        // version escapes.
        let reply = tmux
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
        tmux.shared.set_session(session);
        let _ = tmux
            .shared
            .version
            .set(Version::parse(&String::from_utf8_lossy(version)));
        tracing::info!(
            server = %tmux.shared.server,
            version = %tmux.version(),
            session = %session,
            "connected to tmux"
        );
        Ok(tmux)
    }

    /// Runs a typed command and returns its typed result. The command is
    /// encoded and its reply decoded for [`Tmux::version`].
    pub async fn run<C: Command>(&self, command: C) -> Result<C::Output> {
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

    /// The version of the tmux server this connection talks to, as
    /// `#{version}` gave it at connect time (asked in the same query as the
    /// attached session, so it costs no round trip of its own).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> tmux_control::Result<()> {
    /// use tmux_control::{IsolatedServer, Tmux, Version};
    /// let server = IsolatedServer::new()?;
    /// let tmux = Tmux::connect(server.server()).await?;
    /// assert!(tmux.version() >= &Version::OLDEST_SUPPORTED);
    /// println!("connected to tmux {}", tmux.version());
    /// # Ok(()) }
    /// ```
    pub fn version(&self) -> &Version {
        self.shared.version()
    }

    /// Sends one command line exactly as given (already quoted for tmux's
    /// parser) and returns its reply block, `%error` included.
    ///
    /// The line must hold exactly one command: no unquoted `;`, and no
    /// command that makes tmux send extra reply blocks (`if-shell`,
    /// `source-file`, …); otherwise later replies would be matched to the
    /// wrong callers. Prefer [`Tmux::run`] with the typed commands.
    pub async fn raw_line(&self, line: impl Into<Vec<u8>>) -> Result<Reply> {
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
    pub fn attached_session(&self) -> Option<SessionId> {
        self.shared.session()
    }

    /// Subscribes to every [`Event`] from now on, with the default queue
    /// length. A subscriber that does not keep up gets [`Event::Gap`]
    /// markers; it never slows the connection or other subscribers.
    pub fn subscribe(&self) -> Subscription {
        self.subscribe_with_capacity(Subscription::DEFAULT_CAPACITY)
    }

    /// Subscribes with a queue of `capacity` events (at least 1).
    ///
    /// The subscription is registered in order with commands: it sees every
    /// event that tmux sends after the reply to any command sent before it.
    pub fn subscribe_with_capacity(&self, capacity: usize) -> Subscription {
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
    pub fn is_closed(&self) -> bool {
        self.shared.closed.get().is_some()
    }

    /// Waits until the connection ends and returns why.
    pub async fn closed(&self) -> Arc<Closed> {
        let mut rx = self.shared.closed_tx.subscribe();
        let _ = rx.wait_for(|closed| *closed).await;
        self.shared.closed()
    }

    /// How to reach the server again: the address this connection was
    /// made with, or `None` for a connection over a caller's streams
    /// ([`Tmux::connect_stream`]).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> tmux_control::Result<()> {
    /// use tmux_control::{IsolatedServer, Tmux};
    /// let server = IsolatedServer::new()?;
    /// let tmux = Tmux::connect(server.server()).await?;
    /// assert_eq!(tmux.server().map(|s| s.describe()), Some(server.server().describe()));
    /// # Ok(()) }
    /// ```
    pub fn server(&self) -> Option<&Server> {
        self.shared.address.as_ref()
    }

    /// A description of the server for messages, like `tmux -L work` (or
    /// the description given to [`Tmux::connect_stream`]).
    pub fn describe(&self) -> &str {
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
    pub(crate) fn downgrade(&self) -> WeakTmux {
        WeakTmux {
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
    pub(crate) async fn connect_sibling(&self, options: ConnectOptions) -> Result<Tmux> {
        match &self.shared.address {
            Some(server) => Box::pin(Tmux::connect_with(server, options)).await,
            None => Err(Error::InvalidArgument(format!(
                "{} is a connection over a stream: it cannot start another client \
                 (to follow a pane of another session, connect over a stream to that session)",
                self.shared.server
            ))),
        }
    }

    /// The api's per-connection state of type `T`, made by `init` on first
    /// use. One type per connection: the api's follower.
    pub(crate) fn api_state<T: Any + Send + Sync>(
        &self,
        init: impl FnOnce() -> Arc<T>,
    ) -> Option<Arc<T>> {
        let any = self
            .shared
            .api
            .get_or_init(|| init() as Arc<dyn Any + Send + Sync>)
            .clone();
        any.downcast::<T>().ok()
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
