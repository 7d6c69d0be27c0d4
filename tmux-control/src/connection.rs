//! One persistent control-mode connection: the task that owns the `tmux -C`
//! child, and the cheap handle that talks to it.

use std::collections::{HashMap, VecDeque};
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot, watch};

use crate::command::{Command, CommandLine};
use crate::error::{Closed, Error, Result};
use crate::ids::{PaneId, SessionId};
use crate::pane::{DEFAULT_PANE_LOG, PaneEnd, PaneLog, PaneOutput};
use crate::proto::{DecodeError, Decoder, Frame, FrameError, Notification, Reply, layout_panes};
use crate::server::Server;
use crate::version::{OLDEST, Version};

/// How long a closing connection waits for tmux to finish before killing the
/// client process.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(3);
/// The most stderr kept for error messages.
const STDERR_CAP: usize = 16 * 1024;
/// Default queue length of a [`Subscription`].
pub const DEFAULT_SUBSCRIPTION_CAPACITY: usize = 4096;

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

/// Options for [`Tmux::connect_with`].
///
/// ```
/// use tmux_control::ConnectOptions;
/// let opts = ConnectOptions::default().session("agents").size(120, 40);
/// assert_eq!(opts.session_name(), "agents");
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ConnectOptions {
    session: String,
    create: bool,
    size: Option<(u16, u16)>,
    pause_after: Option<u32>,
    pane_log: usize,
    observer: bool,
    timeout: Duration,
    command: Option<String>,
}

/// The session a connection attaches to when none is named.
pub const DEFAULT_SESSION: &str = "tmux-control";

impl Default for ConnectOptions {
    fn default() -> Self {
        Self {
            session: DEFAULT_SESSION.to_owned(),
            create: true,
            size: None,
            pause_after: Some(DEFAULT_PAUSE_AFTER),
            pane_log: DEFAULT_PANE_LOG,
            observer: false,
            timeout: DEFAULT_CONNECT_TIMEOUT,
            command: None,
        }
    }
}

impl ConnectOptions {
    /// The session to attach to (created if missing unless
    /// [`attach_only`](ConnectOptions::attach_only) is set). Default
    /// [`DEFAULT_SESSION`].
    pub fn session(mut self, name: impl Into<String>) -> Self {
        self.session = name.into();
        self
    }

    /// Fail instead of creating the session when it does not exist.
    pub fn attach_only(mut self) -> Self {
        self.create = false;
        self
    }

    /// Size of the session's first window if the connection creates it.
    pub fn size(mut self, columns: u16, rows: u16) -> Self {
        self.size = Some((columns, rows));
        self
    }

    /// Flow control: tmux pauses a pane's output to this connection once it
    /// is `seconds` behind (`pause-after`), and the connection resumes it at
    /// once, reporting the loss ([`PaneChunk::Lost`](crate::PaneChunk)).
    /// `None` turns it off: tmux then throttles the pane's program instead.
    /// Default: [`DEFAULT_PAUSE_AFTER`] seconds.
    pub fn pause_after(mut self, seconds: Option<u32>) -> Self {
        self.pause_after = seconds;
        self
    }

    /// The program the session's first pane runs if the connection creates
    /// the session (one shell command line; default: the user's shell).
    /// Useful to keep a session the library owns alive: the connection ends
    /// when its session is destroyed.
    pub fn command(mut self, command: impl Into<String>) -> Self {
        self.command = Some(command.into());
        self
    }

    /// How long connecting may take before it fails with
    /// [`Error::Timeout`] and the client process is stopped (default
    /// [`DEFAULT_CONNECT_TIMEOUT`]; over ssh this includes the login).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Bytes of output kept per followed pane (default 4 MiB).
    pub fn pane_log(mut self, bytes: usize) -> Self {
        self.pane_log = bytes;
        self
    }

    /// The session name in force.
    pub fn session_name(&self) -> &str {
        &self.session
    }

    fn argv(&self) -> Result<Vec<String>> {
        validate_session_name(&self.session)?;
        let mut argv = Vec::new();
        if self.create {
            argv.extend(["new-session", "-A", "-s"].map(String::from));
            argv.push(self.session.clone());
            if let Some((x, y)) = self.size {
                argv.extend(["-x".into(), x.to_string(), "-y".into(), y.to_string()]);
            }
            if let Some(command) = &self.command {
                // On the command line each argv element is one argument:
                // no quoting for tmux's parser is needed, only an end to flags.
                argv.extend(["--".into(), command.clone()]);
            }
        } else {
            argv.extend(["attach-session", "-t"].map(String::from));
            // `=` asks for an exact match, never a prefix of another name;
            // a session id (`$3`) is exact already.
            if self.session.starts_with('$') {
                argv.push(self.session.clone());
            } else {
                argv.push(format!("={}", self.session));
            }
        }
        if self.observer {
            // Observers must never change a window's size.
            argv.extend(["-f".into(), "ignore-size".into()]);
        }
        Ok(argv)
    }
}

/// Default for [`ConnectOptions::timeout`].
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// Default `pause-after` in seconds.
pub const DEFAULT_PAUSE_AFTER: u32 = 10;

fn validate_session_name(name: &str) -> Result<()> {
    if let Some(digits) = name.strip_prefix('$')
        && !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
    {
        return Ok(());
    }
    let bad = name.is_empty()
        || name.ends_with(';')
        || name.starts_with('-')
        || name
            .bytes()
            .any(|b| b < 0x20 || b == 0x7f || b == b':' || b == b'.');
    if bad {
        return Err(Error::InvalidArgument(format!(
            "{name:?} cannot be a tmux session name (empty, ':', '.', control characters, a leading '-' or a trailing ';')"
        )));
    }
    Ok(())
}

enum Message {
    Request {
        line: Vec<u8>,
        reply: oneshot::Sender<Result<Reply>>,
    },
    Subscribe(Subscriber),
}

struct Subscriber {
    tx: mpsc::Sender<Event>,
    missed: Arc<AtomicU64>,
}

impl Subscriber {
    /// Delivers without ever waiting: a full queue counts a miss.
    fn deliver(&self, event: &Event) -> bool {
        if self.tx.is_closed() {
            return false;
        }
        // After a loss, the gap marker and the event go in together, or
        // neither does: a subscriber that frees one slot at a time would
        // otherwise receive nothing but gap markers.
        let needed = if self.missed.load(Ordering::Acquire) > 0 {
            2
        } else {
            1
        };
        if self.tx.capacity() < needed {
            self.missed.fetch_add(1, Ordering::AcqRel);
            return true;
        }
        if needed == 2 {
            let missed = self.missed.swap(0, Ordering::AcqRel);
            if missed > 0 && self.tx.try_send(Event::Gap { missed }).is_err() {
                self.missed.fetch_add(missed + 1, Ordering::AcqRel);
                return true;
            }
        }
        match self.tx.try_send(event.clone()) {
            Ok(()) => true,
            Err(mpsc::error::TrySendError::Full(_)) => {
                self.missed.fetch_add(1, Ordering::AcqRel);
                true
            }
            Err(mpsc::error::TrySendError::Closed(_)) => false,
        }
    }
}

struct Shared {
    closed: OnceLock<Arc<Closed>>,
    closed_tx: watch::Sender<bool>,
    server: String,
    address: Server,
    options: ConnectOptions,
    /// Panes followed through this connection.
    panes: Mutex<HashMap<PaneId, Weak<PaneLog>>>,
    /// The session this connection is attached to.
    session: Mutex<Option<SessionId>>,
    /// Observer connections for panes of other sessions (main connection only).
    observers: tokio::sync::Mutex<HashMap<SessionId, Tmux>>,
    /// Whether the pane-state subscriptions were added.
    state_subscribed: std::sync::atomic::AtomicBool,
    /// The tmux at the other end, read once at connect time.
    version: OnceLock<Version>,
}

impl Shared {
    fn closed(&self) -> Arc<Closed> {
        self.closed.get().cloned().unwrap_or_default()
    }

    fn set_session(&self, id: SessionId) {
        *self.session.lock().unwrap_or_else(|e| e.into_inner()) = Some(id);
    }

    fn session(&self) -> Option<SessionId> {
        *self.session.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn followed(&self, pane: PaneId) -> Option<Arc<PaneLog>> {
        let panes = self.panes.lock().unwrap_or_else(|e| e.into_inner());
        panes.get(&pane).and_then(Weak::upgrade)
    }

    fn all_followed(&self) -> Vec<Arc<PaneLog>> {
        let mut panes = self.panes.lock().unwrap_or_else(|e| e.into_inner());
        panes.retain(|_, w| w.strong_count() > 0);
        panes.values().filter_map(Weak::upgrade).collect()
    }
}

/// Names of the subscriptions that keep followed panes' state fresh, and
/// the format each one watches (one field each, so no separator is needed).
const STATE_SUBSCRIPTIONS: &[(&str, &str)] = &[
    ("tmux-control-dead", "#{pane_dead} #{pane_dead_status}"),
    ("tmux-control-cmd", "#{pane_current_command}"),
    ("tmux-control-path", "#{pane_current_path}"),
    ("tmux-control-title", "#{pane_title}"),
    ("tmux-control-mode", "#{pane_in_mode} #{alternate_on}"),
];

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

impl Tmux {
    /// Connects to `server`, attaching to (or creating) the session
    /// [`DEFAULT_SESSION`]. The server is started if it is not running.
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
        let (tx, rx) = mpsc::unbounded_channel();
        let (closed_tx, _) = watch::channel(false);
        let shared = Arc::new(Shared {
            closed: OnceLock::new(),
            closed_tx,
            server: server.describe(),
            address: server.clone(),
            options: options.clone(),
            panes: Mutex::new(HashMap::new()),
            session: Mutex::new(None),
            observers: tokio::sync::Mutex::new(HashMap::new()),
            state_subscribed: std::sync::atomic::AtomicBool::new(false),
            version: OnceLock::new(),
        });
        let (ready_tx, ready_rx) = oneshot::channel();
        let task = ConnectionTask {
            rx,
            pending: VecDeque::new(),
            subscribers: Vec::new(),
            shared: shared.clone(),
            ready: Some(ready_tx),
            exit_reason: None,
            stderr_buf: Vec::new(),
            write_tx: None,
        };
        tokio::spawn(task.run(child, stdin, stdout, stderr));
        // On a timeout `tx` is dropped here, which makes the task close the
        // client's stdin and kill it after a grace period.
        match tokio::time::timeout(options.timeout, ready_rx).await {
            Ok(Ok(Ok(()))) => {}
            Ok(Ok(Err(e))) => return Err(e),
            Ok(Err(_)) => return Err(Error::Closed(shared.closed())),
            Err(_) => return Err(Error::Timeout(options.timeout)),
        }
        let tmux = Tmux { tx, shared };
        if let Some(seconds) = options.pause_after {
            tmux.expect_ok(format!("refresh-client -f pause-after={seconds}"))
                .await?;
        }
        // One query for everything the connection needs to know: the
        // session it is attached to and which tmux it talks to.
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
        Ok(tmux)
    }

    /// Runs a typed command and returns its typed result. The command is
    /// encoded and its reply decoded for [`Tmux::version`].
    pub async fn run<C: Command>(&self, command: C) -> Result<C::Output> {
        let version = self.version();
        let mut line = CommandLine::for_version(version.clone());
        command.encode(&mut line)?;
        let reply = self.send(line.into_bytes()).await?;
        command.parse(reply, version)
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
        self.shared.version.get().unwrap_or(&OLDEST)
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

    /// Follows a pane's output, in any session of the server.
    ///
    /// tmux sends a pane's output only to control clients attached to a
    /// session that contains it. For a pane in another session the library
    /// attaches an observer connection to that session (with
    /// `ignore-size`, so it never changes a window's size) and routes its
    /// output here. Everything the pane writes after this returns is
    /// captured: create waits and streams from the returned handle before
    /// acting on the pane.
    pub async fn follow(&self, pane: PaneId) -> Result<PaneOutput> {
        let body = self
            .expect_ok(format!(
                "display-message -p -t {pane} '#{{session_id}} #{{window_id}}'"
            ))
            .await?;
        let line = body
            .first()
            .map(|l| String::from_utf8_lossy(l).into_owned())
            .unwrap_or_default();
        let mut parts = line.split(' ');
        let (Some(session), Some(window)) = (
            parts.next().and_then(|s| s.parse::<SessionId>().ok()),
            parts.next().and_then(|w| w.parse().ok()),
        ) else {
            return Err(Error::UnexpectedReply {
                command: "display-message".into(),
                detail: format!("cannot read the session and window of {pane} from {line:?}"),
            });
        };
        let conn = if self.shared.session() == Some(session) {
            self.clone()
        } else {
            self.observer(session).await?
        };
        conn.ensure_state_subscriptions().await?;
        let mut panes = conn.shared.panes.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(log) = panes.get(&pane).and_then(Weak::upgrade) {
            return Ok(PaneOutput::new(log, self.clone()));
        }
        let log = PaneLog::new(pane, conn.shared.options.pane_log, Some(window));
        panes.insert(pane, Arc::downgrade(&log));
        Ok(PaneOutput::new(log, self.clone()))
    }

    async fn observer(&self, session: SessionId) -> Result<Tmux> {
        let mut observers = self.shared.observers.lock().await;
        if let Some(o) = observers.get(&session)
            && !o.is_closed()
        {
            return Ok(o.clone());
        }
        let mut options = self.shared.options.clone();
        options.session = session.to_string();
        options.create = false;
        options.size = None;
        options.observer = true;
        let o = Box::pin(Tmux::connect_with(&self.shared.address, options)).await?;
        observers.insert(session, o.clone());
        Ok(o)
    }

    async fn ensure_state_subscriptions(&self) -> Result<()> {
        if self.shared.state_subscribed.swap(true, Ordering::AcqRel) {
            return Ok(());
        }
        for (name, format) in STATE_SUBSCRIPTIONS {
            self.expect_ok(format!("refresh-client -B '{name}:%*:{format}'"))
                .await?;
        }
        Ok(())
    }

    /// Subscribes to every [`Event`] from now on, with the default queue
    /// length. A subscriber that does not keep up gets [`Event::Gap`]
    /// markers; it never slows the connection or other subscribers.
    pub fn subscribe(&self) -> Subscription {
        self.subscribe_with_capacity(DEFAULT_SUBSCRIPTION_CAPACITY)
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
        Subscription {
            rx,
            missed,
            shared: self.shared.clone(),
            state: if registered {
                SubState::Open
            } else {
                SubState::Draining
            },
        }
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

    /// A description of the server, like `tmux -L work`.
    pub fn server(&self) -> &str {
        &self.shared.server
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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SubState {
    Open,
    Draining,
    Done,
}

/// A stream of [`Event`]s from one connection, with its own bounded queue.
///
/// ```no_run
/// # async fn demo(tmux: tmux_control::Tmux) {
/// use tmux_control::Event;
/// let mut events = tmux.subscribe();
/// while let Some(event) = events.recv().await {
///     if let Event::Closed(why) = event {
///         eprintln!("{why}");
///     }
/// }
/// # }
/// ```
#[derive(Debug)]
pub struct Subscription {
    rx: mpsc::Receiver<Event>,
    missed: Arc<AtomicU64>,
    shared: Arc<Shared>,
    state: SubState,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared")
            .field("server", &self.server)
            .finish()
    }
}

impl Subscription {
    /// The next event; `None` after [`Event::Closed`] has been returned.
    pub async fn recv(&mut self) -> Option<Event> {
        loop {
            match self.state {
                SubState::Done => return None,
                SubState::Draining => {
                    let missed = self.missed.swap(0, Ordering::AcqRel);
                    if missed > 0 {
                        return Some(Event::Gap { missed });
                    }
                    self.state = SubState::Done;
                    return Some(Event::Closed(self.shared.closed()));
                }
                SubState::Open => match self.rx.try_recv() {
                    Ok(e) => return Some(e),
                    Err(mpsc::error::TryRecvError::Disconnected) => {
                        self.state = SubState::Draining;
                    }
                    Err(mpsc::error::TryRecvError::Empty) => {
                        let missed = self.missed.swap(0, Ordering::AcqRel);
                        if missed > 0 {
                            return Some(Event::Gap { missed });
                        }
                        match self.rx.recv().await {
                            Some(e) => return Some(e),
                            None => self.state = SubState::Draining,
                        }
                    }
                },
            }
        }
    }
}

/// Who gets the next flags-1 reply.
enum Waiter {
    /// A caller of [`Tmux::send`]; `true` for `refresh-client -A`, whose
    /// reply body carries `%pause`/`%continue` lines in tmux up to 3.7.
    Caller(oneshot::Sender<Result<Reply>>, bool),
    /// A command the connection sent itself; the reply is ignored (but
    /// scanned like a `refresh-client -A` reply when `true`).
    Ignore(bool),
    /// `list-panes -a`: followed panes missing from the answer are gone.
    PaneCheck,
}

/// The format of the pane check: one pane id per line.
const PANE_CHECK: &str = "list-panes -a -F '#{pane_id}'";

struct ConnectionTask {
    rx: mpsc::UnboundedReceiver<Message>,
    pending: VecDeque<Waiter>,
    subscribers: Vec<Subscriber>,
    shared: Arc<Shared>,
    ready: Option<oneshot::Sender<Result<()>>>,
    exit_reason: Option<String>,
    stderr_buf: Vec<u8>,
    write_tx: Option<mpsc::UnboundedSender<Bytes>>,
}

impl ConnectionTask {
    async fn run(
        mut self,
        mut child: tokio::process::Child,
        stdin: tokio::process::ChildStdin,
        mut stdout: tokio::process::ChildStdout,
        mut stderr: tokio::process::ChildStderr,
    ) {
        // The writer is its own task so that a slow stdin never stops us
        // reading stdout (tmux blocks on a full stdout pipe).
        let (write_tx, write_rx) = mpsc::unbounded_channel::<Bytes>();
        let writer = tokio::spawn(write_loop(stdin, write_rx));
        self.write_tx = Some(write_tx);

        let mut decoder = Decoder::new();
        let mut buf = BytesMut::with_capacity(64 * 1024);
        let mut err_buf = [0u8; 4096];
        let mut stdout_open = true;
        let mut stderr_open = true;
        let mut requests_open = true;
        let mut batch = Vec::new();
        let deadline = tokio::time::sleep(Duration::from_secs(3600 * 24 * 365));
        tokio::pin!(deadline);
        let mut shutting_down = false;

        while stdout_open {
            tokio::select! {
                biased;
                read = stdout.read_buf(&mut buf) => match read {
                    Ok(0) | Err(_) => stdout_open = false,
                    Ok(_) => {
                        decoder.push(&buf);
                        buf.clear();
                        self.drain(&mut decoder);
                    }
                },
                msg = self.rx.recv(), if requests_open => match msg {
                    Some(first) => {
                        batch.clear();
                        self.accept(first, &mut batch);
                        while let Ok(more) = self.rx.try_recv() {
                            self.accept(more, &mut batch);
                        }
                        if !batch.is_empty()
                            && let Some(w) = &self.write_tx
                        {
                            let _ = w.send(Bytes::copy_from_slice(&batch));
                        }
                    }
                    None => {
                        // Every handle is gone: close stdin, which makes
                        // tmux detach us; keep reading until EOF.
                        requests_open = false;
                        self.write_tx = None;
                        shutting_down = true;
                        deadline.as_mut().reset(tokio::time::Instant::now() + SHUTDOWN_GRACE);
                    }
                },
                n = stderr.read(&mut err_buf), if stderr_open => match n {
                    Ok(0) | Err(_) => stderr_open = false,
                    Ok(n) => {
                        let room = STDERR_CAP.saturating_sub(self.stderr_buf.len());
                        self.stderr_buf.extend_from_slice(&err_buf[..n.min(room)]);
                    }
                },
                () = &mut deadline, if shutting_down => {
                    let _ = child.start_kill();
                    shutting_down = false;
                }
            }
        }
        if let Err(e) = decoder.finish() {
            self.broadcast(&Event::ProtocolError(e));
        }
        self.write_tx = None;
        writer.abort();
        // stdout is closed: the client is exiting. Collect its status, but
        // never hang on it.
        let status = match tokio::time::timeout(SHUTDOWN_GRACE, child.wait()).await {
            Ok(Ok(status)) => status.code(),
            _ => {
                let _ = child.start_kill();
                child.wait().await.ok().and_then(|s| s.code())
            }
        };
        if stderr_open {
            let mut rest = Vec::new();
            let _ = tokio::time::timeout(Duration::from_millis(200), stderr.read_to_end(&mut rest))
                .await;
            let room = STDERR_CAP.saturating_sub(self.stderr_buf.len());
            self.stderr_buf
                .extend_from_slice(&rest[..rest.len().min(room)]);
        }
        let closed = Arc::new(Closed {
            reason: self.exit_reason.take(),
            stderr: String::from_utf8_lossy(&self.stderr_buf).trim().to_owned(),
            exit_status: status,
        });
        let _ = self.shared.closed.set(closed.clone());
        self.shared.closed_tx.send_replace(true);
        if let Some(ready) = self.ready.take() {
            let _ = ready.send(Err(Error::Closed(closed.clone())));
        }
        for waiter in self.pending.drain(..) {
            if let Waiter::Caller(tx, _) = waiter {
                let _ = tx.send(Err(Error::Closed(closed.clone())));
            }
        }
        for log in self.shared.all_followed() {
            log.end(PaneEnd::ConnectionClosed(closed.clone()));
        }
        // Requests that raced with the close.
        self.rx.close();
        while let Ok(msg) = self.rx.try_recv() {
            if let Message::Request { reply, .. } = msg {
                let _ = reply.send(Err(Error::Closed(closed.clone())));
            }
        }
        // Dropping the senders ends every subscription with Event::Closed.
        self.subscribers.clear();
    }

    fn accept(&mut self, msg: Message, batch: &mut Vec<u8>) {
        match msg {
            Message::Request { line, reply } => {
                batch.extend_from_slice(&line);
                batch.push(b'\n');
                let rescan = is_refresh_a(&line);
                self.pending.push_back(Waiter::Caller(reply, rescan));
            }
            Message::Subscribe(s) => self.subscribers.push(s),
        }
    }

    fn drain(&mut self, decoder: &mut Decoder) {
        loop {
            match decoder.decode() {
                Ok(frame) => self.frame(frame),
                Err(DecodeError::Incomplete) => return,
                Err(DecodeError::Failed(e)) => self.frame_error(e),
            }
        }
    }

    fn frame(&mut self, frame: Frame) {
        match frame {
            Frame::Reply(reply) if reply.flags & 1 == 1 => match self.pending.pop_front() {
                Some(Waiter::Caller(tx, rescan)) => {
                    if rescan {
                        self.flow_lines(&reply);
                    }
                    let _ = tx.send(Ok(reply));
                }
                Some(Waiter::Ignore(rescan)) => {
                    if rescan {
                        self.flow_lines(&reply);
                    }
                }
                Some(Waiter::PaneCheck) => self.pane_check(&reply),
                None => self.broadcast(&Event::Unsolicited(reply)),
            },
            Frame::Reply(reply) => {
                if let Some(ready) = self.ready.take() {
                    let result = crate::command::ok_body("attach", reply.clone()).map(drop);
                    let _ = ready.send(result);
                }
                self.broadcast(&Event::Unsolicited(reply));
            }
            Frame::Notification(n) => {
                self.track(&n);
                self.broadcast(&Event::Notification(n));
            }
            Frame::Stray(line) => self.broadcast(&Event::Stray(line)),
            // -C never produces DCS frames.
            _ => {}
        }
    }

    fn frame_error(&mut self, e: FrameError) {
        if let FrameError::BlockTooLarge { header, .. } = &e
            && header.flags & 1 == 1
            && let Some(Waiter::Caller(tx, _)) = self.pending.pop_front()
        {
            let _ = tx.send(Err(Error::Protocol(e.clone())));
        }
        self.broadcast(&Event::ProtocolError(e));
    }

    /// tmux up to 3.7 writes the `%pause`/`%continue` caused by
    /// `refresh-client -A` inside that command's reply; handle and publish
    /// them as the notifications they are.
    fn flow_lines(&mut self, reply: &Reply) {
        for line in &reply.body {
            if (line.starts_with(b"%pause %") || line.starts_with(b"%continue %"))
                && let Ok(n) = crate::proto::parse_notification_line(line)
            {
                self.track(&n);
                self.broadcast(&Event::Notification(n));
            }
        }
    }

    /// Sends a command of the connection's own.
    fn internal(&mut self, line: String, waiter: Waiter) {
        if let Some(w) = &self.write_tx {
            let mut bytes = line.into_bytes();
            bytes.push(b'\n');
            if w.send(Bytes::from(bytes)).is_ok() {
                self.pending.push_back(waiter);
            }
        }
    }

    /// Keeps followed panes and connection state up to date.
    fn track(&mut self, n: &Notification) {
        use Notification as N;
        match n {
            N::Output { pane, data } | N::ExtendedOutput { pane, data, .. } => {
                if let Some(log) = self.shared.followed(*pane) {
                    log.append(data);
                }
            }
            N::Pause { pane } => {
                if let Some(log) = self.shared.followed(*pane) {
                    log.mark_lost();
                }
                // Everything is consumed as it arrives, so resume at once.
                self.internal(
                    format!("refresh-client -A '{pane}:continue'"),
                    Waiter::Ignore(true),
                );
            }
            N::Exit { reason } => {
                self.exit_reason = reason
                    .as_ref()
                    .map(|r| String::from_utf8_lossy(r).into_owned());
            }
            N::SessionChanged { session, .. } => self.shared.set_session(*session),
            N::LayoutChange { window, layout, .. } => {
                let Some(panes) = layout_panes(layout) else {
                    return;
                };
                let mut vanished = false;
                for log in self.shared.all_followed() {
                    if panes.contains(&log.pane()) {
                        log.update_state(|s| {
                            s.window = Some(*window);
                            s.layout_generation += 1;
                        });
                    } else if log.window() == Some(*window) {
                        vanished = true;
                    }
                }
                if vanished {
                    self.internal(PANE_CHECK.to_owned(), Waiter::PaneCheck);
                }
            }
            N::WindowClose { window } | N::UnlinkedWindowClose { window }
                if self
                    .shared
                    .all_followed()
                    .iter()
                    .any(|l| l.window() == Some(*window)) =>
            {
                self.internal(PANE_CHECK.to_owned(), Waiter::PaneCheck);
            }
            N::SubscriptionChanged {
                name,
                pane: Some(pane),
                value,
                ..
            } if name.starts_with(b"tmux-control-") => {
                if let Some(log) = self.shared.followed(*pane) {
                    apply_state(&log, name, value);
                }
                // tmux 3.3a sometimes misses the SIGCHLD of a pane's program:
                // the pane is dead but its status never arrives until another
                // child of the server exits. A trivial background job makes
                // tmux reap (and so report) it.
                if &name[..] == b"tmux-control-dead" && &value[..] == b"1 " {
                    self.internal("run-shell -b true".to_owned(), Waiter::Ignore(false));
                }
            }
            _ => {}
        }
    }

    /// Ends the logs of followed panes that `list-panes -a` no longer shows.
    fn pane_check(&mut self, reply: &Reply) {
        if reply.error {
            return;
        }
        let alive: Vec<PaneId> = reply
            .body
            .iter()
            .filter_map(|l| PaneId::from_bytes(l))
            .collect();
        for log in self.shared.all_followed() {
            if !alive.contains(&log.pane()) && !log.is_ended() {
                log.end(PaneEnd::Gone);
            }
        }
    }

    fn broadcast(&mut self, event: &Event) {
        self.subscribers.retain(|s| s.deliver(event));
    }
}

/// `refresh-client … -A …`: its reply may hold flow-control lines.
fn is_refresh_a(line: &[u8]) -> bool {
    line.starts_with(b"refresh-client") && memchr::memmem::find(line, b" -A").is_some()
}

/// Applies one of the [`STATE_SUBSCRIPTIONS`] values to a followed pane.
fn apply_state(log: &PaneLog, name: &[u8], value: &[u8]) {
    let text = String::from_utf8_lossy(value).into_owned();
    let nonempty = |t: &str| (!t.is_empty()).then(|| t.to_owned());
    match name {
        b"tmux-control-dead" => {
            let mut parts = text.split(' ');
            let dead = parts.next() == Some("1");
            let status = parts.next().and_then(|s| s.parse().ok());
            log.update_state(|s| {
                s.dead = dead;
                s.exit_status = if dead { status } else { None };
            });
        }
        b"tmux-control-cmd" => log.update_state(|s| s.current_command = nonempty(&text)),
        b"tmux-control-path" => log.update_state(|s| s.current_path = nonempty(&text)),
        b"tmux-control-title" => log.update_state(|s| s.title = nonempty(&text)),
        b"tmux-control-mode" => {
            let mut parts = text.split(' ');
            let in_mode = parts.next() == Some("1");
            let alternate = parts.next() == Some("1");
            log.update_state(|s| {
                s.in_mode = in_mode;
                s.alternate_screen = alternate;
            });
        }
        _ => {}
    }
}

async fn write_loop(mut stdin: tokio::process::ChildStdin, mut rx: mpsc::UnboundedReceiver<Bytes>) {
    while let Some(mut chunk) = rx.recv().await {
        // Coalesce whatever else is queued into one write.
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
        if stdin.write_all(&chunk).await.is_err() || stdin.flush().await.is_err() {
            return;
        }
    }
    let _ = stdin.shutdown().await;
}
