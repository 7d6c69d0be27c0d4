//! [`Tmux`], the public handle: a thin client over the crate-private
//! [`Connection`] (the shape of tokio-postgres' `Client` over its private
//! connection), defined here at the api layer so that it can hold the
//! api's own state for the connection as a typed field: the
//! [`Follower`], made when the connection is.
//!
//! The connection-level methods here (`run`, `raw_line`, `subscribe`,
//! `version`, `closed`, …) delegate to the [`Connection`]; the api's own
//! (`follow`, `spawn`, `resolve`, `type_text`, …) are in their modules
//! of this layer.

use std::sync::Arc;

use tokio::io::{AsyncRead, AsyncWrite};

use super::follow::Follower;
use crate::command::Command;
use crate::connection::{ConnectOptions, Connection, Subscription};
use crate::error::{Closed, Result};
use crate::ids::SessionId;
use crate::proto::Reply;
use crate::server::Server;
use crate::version::Version;

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
    /// The connection.
    conn: Connection,
    /// What the api keeps for the connection: the panes followed through
    /// it and its observers.
    follower: Arc<Follower>,
}

impl std::fmt::Debug for Tmux {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tmux")
            .field("server", &self.conn.describe())
            .field("closed", &self.conn.ended())
            .finish()
    }
}

impl Tmux {
    /// The handle over a new connection, with its follower.
    fn over(conn: Connection) -> Tmux {
        let follower = Follower::new(&conn);
        Tmux { conn, follower }
    }

    /// The connection (for the api's internals).
    pub(super) fn connection(&self) -> &Connection {
        &self.conn
    }

    /// The connection's follower.
    pub(super) fn follower(&self) -> &Arc<Follower> {
        &self.follower
    }

    /// Connects to `server`, attaching to (or creating) the session
    /// [`ConnectOptions::DEFAULT_SESSION`]. The server is started if it is not running.
    pub async fn connect(server: &Server) -> Result<Tmux> {
        Self::connect_with(server, ConnectOptions::default()).await
    }

    /// Connects with explicit options.
    pub async fn connect_with(server: &Server, options: ConnectOptions) -> Result<Tmux> {
        Connection::connect_with(server, options)
            .await
            .map(Tmux::over)
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
        Connection::connect_stream(reader, writer, description.into(), options)
            .await
            .map(Tmux::over)
    }

    /// Runs a typed command and returns its typed result. The command is
    /// encoded and its reply decoded for [`Tmux::version`].
    pub async fn run<C: Command>(&self, command: C) -> Result<C::Output> {
        self.conn.run(command).await
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
        self.conn.version()
    }

    /// Sends one command line exactly as given (already quoted for tmux's
    /// parser) and returns its reply block, `%error` included.
    ///
    /// The line must hold exactly one command: no unquoted `;`, and no
    /// command that makes tmux send extra reply blocks (`if-shell`,
    /// `source-file`, …); otherwise later replies would be matched to the
    /// wrong callers. Prefer [`Tmux::run`] with the typed commands.
    pub async fn raw_line(&self, line: impl Into<Vec<u8>>) -> Result<Reply> {
        self.conn.raw_line(line).await
    }

    /// The session this connection is attached to.
    pub fn attached_session(&self) -> Option<SessionId> {
        self.conn.attached_session()
    }

    /// Subscribes to every [`Event`](crate::Event) from now on, with the
    /// default queue length. A subscriber that does not keep up gets
    /// [`Event::Gap`](crate::Event::Gap) markers; it never slows the
    /// connection or other subscribers.
    pub fn subscribe(&self) -> Subscription {
        self.subscribe_with_capacity(Subscription::DEFAULT_CAPACITY)
    }

    /// Subscribes with a queue of `capacity` events (at least 1).
    ///
    /// The subscription is registered in order with commands: it sees every
    /// event that tmux sends after the reply to any command sent before it.
    pub fn subscribe_with_capacity(&self, capacity: usize) -> Subscription {
        self.conn.subscribe_with_capacity(capacity)
    }

    /// `true` once the connection has ended.
    pub fn is_closed(&self) -> bool {
        self.conn.is_closed()
    }

    /// Waits until the connection ends and returns why.
    pub async fn closed(&self) -> Arc<Closed> {
        self.conn.closed().await
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
        self.conn.server()
    }

    /// A description of the server for messages, like `tmux -L work` (or
    /// the description given to [`Tmux::connect_stream`]).
    pub fn describe(&self) -> &str {
        self.conn.describe()
    }
}
