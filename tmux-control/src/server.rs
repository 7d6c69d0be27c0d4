//! Addressing a tmux server, and throwaway isolated servers.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::{Error, Result};

/// Which tmux server to talk to, and how to start its control client.
///
/// The default server (the one plain `tmux` uses) is only reached when asked
/// for by name with [`Server::default_server`]; every other constructor names
/// a private socket.
///
/// ```
/// use tmux_control::Server;
/// let s = Server::named("work");
/// assert_eq!(s.tmux_args(), vec!["-L", "work"]);
/// let s = Server::path("/tmp/my.sock");
/// assert_eq!(s.tmux_args(), vec!["-S", "/tmp/my.sock"]);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Server {
    program: OsString,
    prefix: Vec<OsString>,
    socket: Socket,
    config: Option<PathBuf>,
    env_remove: Vec<OsString>,
    env: Vec<(OsString, OsString)>,
    /// Set for a server reached over ssh: the tmux program on the remote host.
    remote_tmux: Option<String>,
}

/// The socket part of a [`Server`].
#[derive(Debug, Clone, PartialEq, Eq)]
enum Socket {
    Name(String),
    Path(PathBuf),
    /// The custom command names the server itself.
    Custom,
}

impl Server {
    fn with_socket(socket: Socket) -> Self {
        Self {
            program: "tmux".into(),
            prefix: Vec::new(),
            socket,
            config: None,
            // A control client started from inside tmux must not inherit the
            // outer session's $TMUX: `new-session` would refuse to nest, and
            // nothing should be routed to the outer server by accident.
            env_remove: vec!["TMUX".into(), "TMUX_PANE".into()],
            env: Vec::new(),
            remote_tmux: None,
        }
    }

    /// The server on socket `name` in tmux's socket directory (`tmux -L name`).
    pub fn named(name: impl Into<String>) -> Self {
        Self::with_socket(Socket::Name(name.into()))
    }

    /// The server on the socket at `path` (`tmux -S path`).
    pub fn path(path: impl Into<PathBuf>) -> Self {
        Self::with_socket(Socket::Path(path.into()))
    }

    /// The user's default server (`tmux -L default`, the one a bare `tmux`
    /// uses outside tmux). Only use this when the user asked for it.
    pub fn default_server() -> Self {
        Self::named("default")
    }

    /// A server reached through a custom command that stands for `tmux` and
    /// already selects the server, for example
    /// `["docker", "exec", "-i", "box", "tmux", "-L", "work"]` (the control
    /// client then runs in the container). The library appends `-u -C …`
    /// to it, for the connection and for each client that follows panes of
    /// another session, so the command must hand its arguments on as
    /// separate words (`docker exec`, `kubectl exec … --`, `sudo`,
    /// `sh -c 'exec tmux "$@"' sh` do). ssh joins them into one string for
    /// the remote shell: use [`Server::over_ssh`], which quotes them.
    ///
    /// ```
    /// use tmux_control::Server;
    /// let s = Server::custom(["docker", "exec", "-i", "box", "tmux", "-L", "ci"]).unwrap();
    /// assert_eq!(s.tmux_args(), Vec::<String>::new());
    /// assert_eq!(s.describe(), "docker exec -i box tmux -L ci");
    /// ```
    pub fn custom<I, S>(argv: I) -> Result<Self>
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        let mut argv = argv.into_iter().map(Into::into);
        let program = argv.next().ok_or_else(|| {
            Error::InvalidArgument("a custom server command needs a program".into())
        })?;
        let mut s = Self::with_socket(Socket::Custom);
        s.program = program;
        s.prefix = argv.collect();
        Ok(s)
    }

    /// The same server address on another host, reached with
    /// `ssh -T <ssh_args…> 'tmux -u -C …'`. `ssh_args` end with the
    /// destination and may carry options before it (`-p`, `-i`, `-o`, …);
    /// login must work without a prompt (keys or an agent). Every API works
    /// the same over the ssh stream.
    ///
    /// ```
    /// use tmux_control::Server;
    /// let s = Server::named("work").over_ssh(["-p", "2222", "me@build-host"]);
    /// assert_eq!(s.describe(), "ssh -T -o BatchMode=yes -p 2222 me@build-host tmux -L work");
    /// ```
    pub fn over_ssh<I, S>(mut self, ssh_args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        let remote = self.program.to_string_lossy().into_owned();
        self.remote_tmux = Some(remote);
        self.program = "ssh".into();
        let mut prefix: Vec<OsString> = vec!["-T".into(), "-o".into(), "BatchMode=yes".into()];
        prefix.extend(ssh_args.into_iter().map(Into::into));
        self.prefix = prefix;
        self
    }

    /// Uses another tmux binary (default: `tmux` from `PATH`).
    pub fn program(mut self, program: impl Into<OsString>) -> Self {
        self.program = program.into();
        self
    }

    /// The configuration file tmux reads if this connection starts the
    /// server (`-f`). `/dev/null` gives tmux's built-in defaults.
    pub fn config(mut self, path: impl Into<PathBuf>) -> Self {
        self.config = Some(path.into());
        self
    }

    /// Sets an environment variable for the tmux process.
    pub fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }

    /// The arguments that select the socket (`-L name` or `-S path`).
    pub fn tmux_args(&self) -> Vec<String> {
        match &self.socket {
            Socket::Name(n) => vec!["-L".into(), n.clone()],
            Socket::Path(p) => vec!["-S".into(), p.display().to_string()],
            Socket::Custom => Vec::new(),
        }
    }

    /// A description for messages, like `tmux -L work`.
    pub fn describe(&self) -> String {
        let mut parts = vec![self.program.to_string_lossy().into_owned()];
        parts.extend(self.prefix.iter().map(|a| a.to_string_lossy().into_owned()));
        if let Some(remote) = &self.remote_tmux {
            parts.push(remote.clone());
        }
        parts.extend(self.tmux_args());
        parts.join(" ")
    }

    /// A `std` command for `tmux [socket] [-f conf] -u ARGS…` on this server
    /// (used for one-off commands such as `kill-server`, never per call).
    pub(crate) fn command(&self, args: &[&str]) -> tokio::process::Command {
        let mut cmd = tokio::process::Command::new(&self.program);
        cmd.args(&self.prefix);
        let mut tmux: Vec<OsString> = self.tmux_args().into_iter().map(Into::into).collect();
        if let Some(conf) = &self.config {
            tmux.push("-f".into());
            tmux.push(conf.into());
        }
        tmux.push("-u".into());
        tmux.extend(args.iter().map(Into::into));
        match &self.remote_tmux {
            // ssh hands the remote shell one string: quote every word for it.
            Some(remote) => {
                let words: Vec<String> = std::iter::once(remote.clone())
                    .chain(tmux.iter().map(|a| a.to_string_lossy().into_owned()))
                    .map(|w| crate::quote::quote(&w).into_owned())
                    .collect();
                cmd.arg(words.join(" "));
            }
            None => {
                cmd.args(tmux);
            }
        }
        for key in &self.env_remove {
            cmd.env_remove(key);
        }
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        cmd
    }

    pub(crate) fn program_name(&self) -> String {
        self.program.to_string_lossy().into_owned()
    }
}

static ISOLATED_COUNTER: AtomicU64 = AtomicU64::new(0);

/// A throwaway tmux server of its own: a unique socket in a private
/// directory (mode 0700), its own `TMUX_TMPDIR`, `$TMUX` scrubbed and a known
/// configuration. Dropping it kills the server and removes the directory,
/// also while a panic unwinds.
///
/// ```no_run
/// # async fn demo() -> tmux_control::Result<()> {
/// use tmux_control::{IsolatedServer, Tmux};
/// let isolated = IsolatedServer::new()?;
/// let tmux = Tmux::connect(isolated.server()).await?;
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct IsolatedServer {
    dir: PathBuf,
    server: Server,
}

impl IsolatedServer {
    /// The configuration an isolated server starts with.
    pub const CONFIG: &'static str = "\
# Written by tmux-control for an isolated server.
set -g history-limit 50000
set -g exit-empty on
set -g destroy-unattached off
set -g remain-on-exit off
set -g default-size 200x50
";

    /// Creates the private directory, socket path and configuration. The
    /// server itself starts with the first connection.
    pub fn new() -> Result<Self> {
        Self::with_config(Self::CONFIG)
    }

    /// Like [`IsolatedServer::new`] with a configuration of your own.
    pub fn with_config(config: &str) -> Result<Self> {
        let n = ISOLATED_COUNTER.fetch_add(1, Ordering::Relaxed);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let name = format!("tmux-control-{}-{n}-{nanos:x}", std::process::id());
        let mut base = std::env::temp_dir();
        // Unix socket paths are limited to about 100 bytes.
        if base.as_os_str().len() > 60 {
            base = PathBuf::from("/tmp");
        }
        let dir = base.join(name);
        {
            use std::os::unix::fs::DirBuilderExt;
            std::fs::DirBuilder::new().mode(0o700).create(&dir)?;
        }
        let conf = dir.join("tmux.conf");
        std::fs::write(&conf, config)?;
        let server = Server::path(dir.join("socket"))
            .config(conf)
            .env("TMUX_TMPDIR", dir.clone());
        Ok(Self { dir, server })
    }

    /// The address to connect to.
    pub fn server(&self) -> &Server {
        &self.server
    }

    /// The socket's path (for `tmux -S PATH attach` by a human).
    pub fn socket_path(&self) -> PathBuf {
        self.dir.join("socket")
    }

    /// The private directory holding the socket and configuration.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

impl Drop for IsolatedServer {
    fn drop(&mut self) {
        let socket = self.socket_path();
        if socket.exists() {
            let mut cmd = std::process::Command::new(&self.server.program);
            cmd.arg("-S")
                .arg(&socket)
                .arg("kill-server")
                .env_remove("TMUX")
                .env("TMUX_TMPDIR", &self.dir)
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null());
            let _ = cmd.status();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
