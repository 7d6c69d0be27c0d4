//! One persistent control-mode connection: the task that owns the `tmux -C`
//! child, and the cheap handle that talks to it.

use std::collections::VecDeque;
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot, watch};

use crate::command::{Command, CommandLine};
use crate::error::{Closed, Error, Result};
use crate::proto::{DecodeError, Decoder, Frame, FrameError, Notification, Reply};
use crate::server::Server;

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
}

/// The session a connection attaches to when none is named.
pub const DEFAULT_SESSION: &str = "tmux-control";

impl Default for ConnectOptions {
    fn default() -> Self {
        Self {
            session: DEFAULT_SESSION.to_owned(),
            create: true,
            size: None,
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
        } else {
            argv.extend(["attach-session", "-t"].map(String::from));
            // `=` asks for an exact match, never a prefix of another name.
            argv.push(format!("={}", self.session));
        }
        Ok(argv)
    }
}

fn validate_session_name(name: &str) -> Result<()> {
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
        let pending = self.missed.load(Ordering::Acquire);
        if pending > 0 {
            match self.tx.try_reserve() {
                Ok(permit) => {
                    let missed = self.missed.swap(0, Ordering::AcqRel);
                    if missed > 0 {
                        permit.send(Event::Gap { missed });
                    }
                }
                Err(mpsc::error::TrySendError::Closed(())) => return false,
                Err(mpsc::error::TrySendError::Full(())) => {
                    self.missed.fetch_add(1, Ordering::AcqRel);
                    return true;
                }
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
}

impl Shared {
    fn closed(&self) -> Arc<Closed> {
        self.closed.get().cloned().unwrap_or_default()
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
        };
        tokio::spawn(task.run(child, stdin, stdout, stderr));
        match ready_rx.await {
            Ok(Ok(())) => Ok(Tmux { tx, shared }),
            Ok(Err(e)) => Err(e),
            Err(_) => Err(Error::Closed(shared.closed())),
        }
    }

    /// Runs a typed command and returns its typed result.
    pub async fn run<C: Command>(&self, command: C) -> Result<C::Output> {
        let mut line = CommandLine::new();
        command.encode(&mut line)?;
        let reply = self.send(line.into_bytes()).await?;
        command.parse(reply)
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

struct ConnectionTask {
    rx: mpsc::UnboundedReceiver<Message>,
    pending: VecDeque<oneshot::Sender<Result<Reply>>>,
    subscribers: Vec<Subscriber>,
    shared: Arc<Shared>,
    ready: Option<oneshot::Sender<Result<()>>>,
    exit_reason: Option<String>,
    stderr_buf: Vec<u8>,
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
        let mut write_tx = Some(write_tx);

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
                            && let Some(w) = &write_tx
                        {
                            let _ = w.send(Bytes::copy_from_slice(&batch));
                        }
                    }
                    None => {
                        // Every handle is gone: close stdin, which makes
                        // tmux detach us; keep reading until EOF.
                        requests_open = false;
                        write_tx = None;
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
        drop(write_tx);
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
            let _ = waiter.send(Err(Error::Closed(closed.clone())));
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
                self.pending.push_back(reply);
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
            Frame::Reply(reply) if reply.flags & 1 == 1 => {
                if let Some(waiter) = self.pending.pop_front() {
                    let _ = waiter.send(Ok(reply));
                } else {
                    self.broadcast(&Event::Unsolicited(reply));
                }
            }
            Frame::Reply(reply) => {
                if let Some(ready) = self.ready.take() {
                    let result = crate::command::ok_body("attach", reply.clone()).map(drop);
                    let _ = ready.send(result);
                }
                self.broadcast(&Event::Unsolicited(reply));
            }
            Frame::Notification(n) => {
                if let Notification::Exit { reason } = &n {
                    self.exit_reason = reason
                        .as_ref()
                        .map(|r| String::from_utf8_lossy(r).into_owned());
                }
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
            && let Some(waiter) = self.pending.pop_front()
        {
            let _ = waiter.send(Err(Error::Protocol(e.clone())));
        }
        self.broadcast(&Event::ProtocolError(e));
    }

    fn broadcast(&mut self, event: &Event) {
        self.subscribers.retain(|s| s.deliver(event));
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
