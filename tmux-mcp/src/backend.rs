//! The tmux side: one control connection per tmux server (the local one,
//! and one per configured remote host), each started on first use, its
//! home session, target resolution and followed panes.
//!
//! A remote host's connection is one control-mode stream per host, by its
//! kind ([`HostKind`]): `ssh -T … 'tmux -u -C …'` ([`Server::over_ssh`]),
//! or a command that hands its words on and stands for `tmux` there
//! (`docker exec -i CONTAINER tmux`, `kubectl exec -i POD -- tmux`, an
//! `exec:` command), with `-L NAME -u -C …` appended ([`Server::custom`]).
//! When it cannot be made, calls are answered with a `host_unreachable`
//! error at once until a backoff deadline passes; then the next call tries
//! again.
//!
//! (Over 600 lines with its unit tests, which are the last 215: the
//! connection, its home session and per-host reach belong together, and
//! issue 23 splits the per-pane state out of it.)

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tmux_control::command::{
    DisplayMessage, ListPanes, OptionScope, PaneInfo, RenameWindow, SetOption, ShowOption,
};
use tmux_control::{
    ConnectOptions, PaneId, PaneOutput, Resolved, Server, SessionId, Tmux, WindowId,
};

use crate::actors::PaneActors;
use crate::config::{Config, DEFAULT_SOCKET_NAME, HostKind, HostSpec, LOCAL_HOST, SocketChoice};
use crate::guard;
use crate::journal::Journals;
use crate::reply::ToolError;
use crate::runs::RunState;
use crate::shell::Shells;
use crate::text::{shell_quote, shell_words};

/// The session the control connection attaches to. It holds one window
/// running a placeholder that never exits, so the connection survives
/// agents killing all of their terminals.
pub const HOME_SESSION: &str = "tmux-mcp-control";

/// Marks the placeholder program in `#{pane_start_command}`.
const HOME_MARK: &str = "tmux-mcp-home";

/// What the home pane runs (through the default shell's `-c`).
const HOME_PROGRAM: &str = "printf '%s\\n' 'This session keeps the tmux-mcp control connection attached.' \
'The terminals agents use are the other sessions: list them with tmux ls.'; \
while :; do sleep 3600; done # tmux-mcp-home";

/// The first pause after a failed connection to a remote host; it doubles
/// after each failure up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_secs(1);

/// The longest pause between attempts to reach a remote host.
const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// ssh options tmux-mcp adds after the host's own (ssh keeps the first
/// value it reads, so the host's options win): give up on an unreachable
/// machine after 10 s instead of the system's TCP timeout, and notice a
/// connection that went silent within 45 s.
const SSH_DEFAULTS: [&str; 6] = [
    "-o",
    "ConnectTimeout=10",
    "-o",
    "ServerAliveInterval=15",
    "-o",
    "ServerAliveCountMax=3",
];

/// A remote host: its name and how it is reached.
struct Remote {
    spec: HostSpec,
    /// The last failed attempt to connect, until a call succeeds.
    failure: Mutex<Option<Failure>>,
}

/// A failed connection to a remote host, and when to try again.
struct Failure {
    /// What ssh, the container engine or the command (or tmux behind
    /// it) said.
    why: String,
    /// No new attempt before this deadline.
    retry_at: tokio::time::Instant,
    /// The pause used for this deadline (doubled for the next).
    pause: Duration,
}

/// A tmux server the tools act on, and the connection to it.
pub(crate) struct Backend {
    /// Set for a remote host.
    remote: Option<Remote>,
    choice: SocketChoice,
    program: String,
    history_limit: u32,
    pane_log_bytes: usize,
    log_bytes: u64,
    state_dir: Option<PathBuf>,
    shell_integration: bool,
    conn: tokio::sync::Mutex<Option<Arc<Conn>>>,
    /// Bumped each time a new connection is made, for the live resources
    /// (`crate::resources`), which follow the connection without making one.
    generation: tokio::sync::watch::Sender<u64>,
}

/// One live control connection and what the server tracks on it.
pub(crate) struct Conn {
    /// The connection.
    pub(crate) tmux: Tmux,
    /// The home session, window and pane.
    pub(crate) home: (SessionId, WindowId, PaneId),
    /// The server's socket, as the server itself reports it.
    pub(crate) socket_path: Option<PathBuf>,
    /// The input sent to each terminal.
    pub(crate) terminals: crate::terminal::Terminals,
    /// Runs started by the `run` tool, by run id.
    pub(crate) runs: Mutex<HashMap<String, RunState>>,
    /// The terminals whose shells run with shell integration.
    pub(crate) shells: Shells,
    /// Each followed pane's cooked, durable log.
    pub(crate) journals: Arc<Journals>,
    /// On a remote host (its socket path is the remote machine's).
    pub(crate) remote: bool,
    /// Who created each pane and typed into it; input turns.
    pub(crate) actors: PaneActors,
}

impl Backend {
    /// The local tmux server.
    pub(crate) fn new(config: &Config) -> Self {
        Self {
            remote: None,
            choice: config.socket.clone(),
            program: config.tmux_program.clone(),
            history_limit: config.history_limit,
            pane_log_bytes: config.pane_log_bytes,
            log_bytes: config.log_bytes,
            state_dir: config.state_dir.clone(),
            shell_integration: config.shell_integration,
            conn: tokio::sync::Mutex::new(None),
            generation: tokio::sync::watch::Sender::new(0),
        }
    }

    /// The tmux server of remote host `spec`, reached as its kind says: on the
    /// socket named like the local one (`--socket-name`, else `tmux-mcp`),
    /// run by `--host-tmux`. Its shells get shell integration as local ones
    /// do, with the hooks read through the remote tmux server itself (its
    /// user options, set over the connection): no file is copied to the
    /// remote machine.
    pub(crate) fn remote(config: &Config, spec: &HostSpec) -> Self {
        let name = match &config.socket {
            SocketChoice::Named(name) => name.clone(),
            SocketChoice::Path(_) | SocketChoice::Default => DEFAULT_SOCKET_NAME.to_owned(),
        };
        Self {
            remote: Some(Remote {
                spec: spec.clone(),
                failure: Mutex::new(None),
            }),
            choice: SocketChoice::Named(name),
            program: config.host_tmux.clone(),
            history_limit: config.history_limit,
            pane_log_bytes: config.pane_log_bytes,
            log_bytes: config.log_bytes,
            state_dir: config.state_dir.clone(),
            shell_integration: config.shell_integration,
            conn: tokio::sync::Mutex::new(None),
            generation: tokio::sync::watch::Sender::new(0),
        }
    }

    /// The host's name: `local`, or the remote host's.
    pub(crate) fn host(&self) -> &str {
        self.remote
            .as_ref()
            .map_or(LOCAL_HOST, |r| r.spec.name.as_str())
    }

    /// Whether this is a remote host.
    pub(crate) fn is_remote(&self) -> bool {
        self.remote.is_some()
    }

    /// The ssh arguments for an ssh host: its own options, tmux-mcp's
    /// defaults, then the destination.
    fn ssh_args(options: &[String], destination: &str) -> Vec<String> {
        let mut args = options.to_vec();
        args.extend(SSH_DEFAULTS.iter().map(|s| (*s).to_owned()));
        args.push(destination.to_owned());
        args
    }

    /// The words that select this server to a tmux on its machine
    /// (`-L NAME`, `-S PATH`, or none).
    fn socket_words(&self) -> Vec<String> {
        match &self.choice {
            SocketChoice::Named(name) => vec!["-L".into(), name.clone()],
            SocketChoice::Path(path) => vec!["-S".into(), path.display().to_string()],
            SocketChoice::Default => Vec::new(),
        }
    }

    /// For a host of a kind that hands its words on (all but ssh): the
    /// command that stands for `tmux -L NAME` there, such as
    /// `docker exec -i CONTAINER tmux -L tmux-mcp`; `terminal` gives the
    /// form a human runs from a terminal (`exec -it`).
    fn through_words(&self, spec: &HostSpec, terminal: bool) -> Option<Vec<String>> {
        let mut words = spec.tmux_command(&self.program, terminal)?;
        words.extend(self.socket_words());
        Some(words)
    }

    /// The tmux command that selects this server on its machine.
    fn tmux_prefix(&self) -> String {
        let program = shell_quote(&self.program);
        match &self.choice {
            SocketChoice::Named(name) => format!("{program} -L {}", shell_quote(name)),
            SocketChoice::Path(path) => {
                format!("{program} -S {}", shell_quote(&path.display().to_string()))
            }
            SocketChoice::Default => program,
        }
    }

    /// `ssh -t ARGS` for an ssh host (the words quoted for a shell), or
    /// `None` for the other kinds.
    fn ssh_prefix(spec: &HostSpec) -> Option<String> {
        let mut words = vec!["ssh".to_owned(), "-t".to_owned()];
        words.extend(spec.ssh_args()?);
        Some(shell_words(&words))
    }

    /// `tmux -L tmux-mcp`, `tmux -S /path` or `tmux`: the start of a
    /// command a human runs to reach this server. For a remote host, after
    /// `ssh -t ARGS` (the tmux words quoted once more for the remote
    /// shell), or the host's own words (`docker exec -it CONTAINER tmux -L
    /// tmux-mcp`, `kubectl exec -it POD -- tmux -L tmux-mcp`, the `exec:`
    /// command with `-L tmux-mcp`).
    pub(crate) fn attach_prefix(&self) -> String {
        let Some(r) = &self.remote else {
            return self.tmux_prefix();
        };
        if let Some(ssh) = Self::ssh_prefix(&r.spec) {
            return format!("{ssh} {}", shell_quote(&self.tmux_prefix()));
        }
        shell_words(&self.through_words(&r.spec, true).unwrap_or_default())
    }

    /// The command a human runs to watch session `name`: over `ssh -t` for
    /// an ssh host (the remote command is quoted once more for the remote
    /// shell), through `exec -it` for a container or a pod. An `exec:`
    /// host's is its command with `-L NAME attach -t NAME`, which works from
    /// a terminal when the command hands the terminal on (`sudo`, `env`,
    /// `sh -c` do; one that needs a flag of its own for a terminal needs it
    /// added).
    pub(crate) fn attach_command(&self, session_name: &str) -> String {
        let local = format!(
            "{} attach -t {}",
            self.tmux_prefix(),
            shell_quote(session_name)
        );
        let Some(r) = &self.remote else {
            return local;
        };
        if let Some(ssh) = Self::ssh_prefix(&r.spec) {
            return format!("{ssh} {}", shell_quote(&local));
        }
        let mut words = self.through_words(&r.spec, true).unwrap_or_default();
        words.extend([
            "attach".to_owned(),
            "-t".to_owned(),
            session_name.to_owned(),
        ]);
        shell_words(&words)
    }

    /// A description like `tmux -L tmux-mcp`, or for a remote host
    /// `host box: ssh me@box tmux -L tmux-mcp`,
    /// `host web: docker exec -i web tmux -L tmux-mcp`.
    pub(crate) fn describe(&self) -> String {
        let Some(r) = &self.remote else {
            return self.tmux_prefix();
        };
        match r.spec.ssh_args() {
            Some(args) => format!(
                "host {}: ssh {} {}",
                r.spec.name,
                shell_words(&args),
                self.tmux_prefix()
            ),
            None => format!(
                "host {}: {}",
                r.spec.name,
                shell_words(&self.through_words(&r.spec, false).unwrap_or_default())
            ),
        }
    }

    /// Who speaks for a remote host in its errors: `ssh`, `docker`,
    /// `podman`, `kubectl`, or `the exec: command`.
    fn speaker(spec: &HostSpec) -> &'static str {
        match &spec.kind {
            HostKind::Exec { .. } => "the exec: command",
            _ => spec.kind_name(),
        }
    }

    /// The socket this server should be on, computed without asking tmux.
    pub(crate) fn expected_socket(&self) -> PathBuf {
        match &self.choice {
            SocketChoice::Named(name) => guard::socket_for_name(name),
            SocketChoice::Path(path) => path.clone(),
            SocketChoice::Default => guard::socket_for_name("default"),
        }
    }

    /// The live connection, connecting (and starting the server) first if
    /// there is none or the last one ended.
    ///
    /// For a remote host, a failed attempt sets a backoff deadline (1 s,
    /// doubling up to 30 s); until it passes, calls get the last failure at
    /// once as a `host_unreachable` error instead of waiting on ssh again.
    pub(crate) async fn conn(&self) -> Result<Arc<Conn>, ToolError> {
        let mut slot = self.conn.lock().await;
        if let Some(conn) = slot.as_ref()
            && !conn.tmux.is_closed()
        {
            return Ok(conn.clone());
        }
        if let Some(remote) = &self.remote {
            let now = tokio::time::Instant::now();
            let waiting = remote
                .failure
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .as_ref()
                // A true timer: the backoff deadline of a failing host.
                .filter(|f| f.retry_at > now)
                .map(|f| (f.why.clone(), f.retry_at - now));
            if let Some((why, wait)) = waiting {
                return Err(self.unreachable(&why, wait));
            }
        }
        match self.connect().await {
            Ok(conn) => {
                if let Some(remote) = &self.remote {
                    *remote.failure.lock().unwrap_or_else(|e| e.into_inner()) = None;
                }
                let conn = Arc::new(conn);
                // Everything the connection knows about a pane goes when
                // tmux says the pane is gone.
                let weak = Arc::downgrade(&conn);
                conn.journals.when_gone(Box::new(move |pane| {
                    if let Some(conn) = weak.upgrade() {
                        conn.forget(pane);
                    }
                }));
                *slot = Some(conn.clone());
                self.generation.send_modify(|g| *g += 1);
                Ok(conn)
            }
            Err(e) => match &self.remote {
                None => Err(e),
                Some(remote) => {
                    let pause = {
                        let mut failure = remote.failure.lock().unwrap_or_else(|e| e.into_inner());
                        let pause = failure
                            .as_ref()
                            .map_or(FIRST_BACKOFF, |f| (f.pause * 2).min(MAX_BACKOFF));
                        *failure = Some(Failure {
                            why: e.why.clone(),
                            // A true timer: the next attempt's deadline.
                            retry_at: tokio::time::Instant::now() + pause,
                            pause,
                        });
                        pause
                    };
                    Err(self.unreachable(&e.why, pause))
                }
            },
        }
    }

    /// The `host_unreachable` error of this (remote) host, with the check
    /// its kind calls for.
    fn unreachable(&self, why: &str, retry_in: Duration) -> ToolError {
        let check = self.remote.as_ref().map_or_else(String::new, |r| {
            let version = |words: Option<Vec<String>>| {
                let mut words = words.unwrap_or_default();
                words.push("-V".to_owned());
                shell_words(&words)
            };
            match &r.spec.kind {
                HostKind::Ssh { .. } => format!(
                    "Check that the machine is up and that `{}` logs in without a prompt (keys or an agent; tmux-mcp runs ssh with BatchMode=yes)",
                    self.attach_prefix()
                ),
                HostKind::Container { engine, container } => format!(
                    "Check that the container {container} is running (`{} ps`) and that `{}` prints tmux's version (tmux installed in the container; --host-tmux names it)",
                    engine.program(),
                    version(r.spec.tmux_command(&self.program, false))
                ),
                HostKind::Kubectl { .. } => format!(
                    "Check that the pod is running in kubectl's current context (`kubectl get pods`) and that `{}` prints tmux's version (tmux installed in the container; --host-tmux names it)",
                    version(r.spec.tmux_command(&self.program, false))
                ),
                HostKind::Exec { argv } => format!(
                    "Check that `{}` prints tmux's version: an exec: command stands for tmux, and tmux-mcp runs it with `{} -u -C new-session -A -s {HOME_SESSION} …` appended, so it must hand its arguments on (as `sh -c 'exec tmux \"$@\"' sh` does)",
                    version(Some(argv.clone())),
                    shell_words(&self.socket_words())
                ),
            }
        });
        self.host_unreachable(
            why,
            format!(
                "{check}. tmux-mcp tries again on the first call after {:.0} s; calls before then get this answer at once. Terminals on other hosts are not affected",
                retry_in.as_secs_f64().ceil()
            ),
        )
    }

    /// [`ToolError::host_unreachable`] for this host, saying how it is
    /// reached: `over ssh`, `through docker exec`, …
    fn host_unreachable(&self, why: &str, next: String) -> ToolError {
        let how = match self.remote.as_ref().map(|r| &r.spec) {
            None => "over ssh".to_owned(),
            Some(spec) => match spec.kind {
                HostKind::Ssh { .. } => "over ssh".to_owned(),
                HostKind::Exec { .. } => "through its exec: command".to_owned(),
                _ => format!("through {} exec", spec.kind_name()),
            },
        };
        ToolError::host_unreachable(self.host(), &how, why, next)
    }

    /// If this is a remote host whose connection has ended (ssh, the
    /// engine's exec or the command exited, or the network dropped), why:
    /// for a reply that failed because of it.
    pub(crate) async fn lost(&self) -> Option<ToolError> {
        let remote = self.remote.as_ref()?;
        let conn = self.conn.lock().await.clone()?;
        if !conn.tmux.is_closed() {
            return None;
        }
        let closed = conn.tmux.closed().await;
        let link = match &remote.spec.kind {
            HostKind::Ssh { .. } => "the ssh connection".to_owned(),
            HostKind::Exec { .. } => "the exec: command's connection".to_owned(),
            _ => format!("the {} exec connection", remote.spec.kind_name()),
        };
        let speaker = Self::speaker(&remote.spec);
        Some(self.host_unreachable(
            &format!(
                "{link} was lost ({})",
                closed_detail(&closed, speaker)
            ),
            format!(
                "The next call on host {} connects again; ids from before stay valid if the remote tmux server kept running. Terminals on other hosts are not affected",
                self.host()
            ),
        ))
    }

    /// The live connection if there is one; never connects (so it never
    /// starts a tmux server).
    pub(crate) async fn current(&self) -> Option<Arc<Conn>> {
        self.conn
            .lock()
            .await
            .as_ref()
            .filter(|conn| !conn.tmux.is_closed())
            .cloned()
    }

    /// Changes each time a new connection is made (see [`Backend::current`]).
    pub(crate) fn connections(&self) -> tokio::sync::watch::Receiver<u64> {
        self.generation.subscribe()
    }

    /// Forgets the connection (after the server was killed).
    pub(crate) async fn reset(&self) {
        *self.conn.lock().await = None;
    }

    fn server(&self) -> Result<Server, ToolError> {
        if let Some(remote) = &self.remote {
            // No configuration file: it would name a local path. The
            // settings are applied over the connection instead.
            if let (
                HostKind::Ssh {
                    options,
                    destination,
                },
                SocketChoice::Named(name),
            ) = (&remote.spec.kind, &self.choice)
            {
                return Ok(Server::named(name.clone())
                    .program(self.program.clone())
                    .over_ssh(Self::ssh_args(options, destination)));
            }
            // The other kinds hand their words on: the command stands for
            // `tmux -L NAME`, and the library appends `-u -C …`.
            let words = self.through_words(&remote.spec, false).unwrap_or_default();
            return Server::custom(words).map_err(|e| {
                ToolError::new(
                    format!("Connecting to host {}", self.host()),
                    e.to_string(),
                    "Fix the host's entry in --host / TMUX_MCP_HOSTS / --hosts-file",
                )
            });
        }
        let server = match &self.choice {
            SocketChoice::Named(name) => Server::named(name.clone()).config(self.write_config()?),
            SocketChoice::Path(path) => Server::path(path.clone()).config(self.write_config()?),
            SocketChoice::Default => Server::default_server(),
        };
        Ok(server.program(self.program.clone()))
    }

    /// Writes the configuration a server started by tmux-mcp reads, into a
    /// private (0700) directory, and returns its path.
    fn write_config(&self) -> Result<PathBuf, ToolError> {
        let fail = |why: String| {
            ToolError::new(
                "Preparing the tmux configuration",
                why,
                "Set --state-dir (TMUX_MCP_STATE_DIR) to a directory only you can write",
            )
        };
        let dir = self.state_dir();
        private_dir(&dir).map_err(|e| fail(format!("{}: {e}", dir.display())))?;
        let content = format!(
            "# Written by tmux-mcp. tmux reads it only when tmux-mcp starts this server.\n\
             set -g history-limit {}\n\
             set -g remain-on-exit on\n\
             set -g exit-empty off\n\
             set -g exit-unattached off\n\
             set -g destroy-unattached off\n\
             set -g default-size 200x50\n\
             set -g @tmux-mcp-own 1\n",
            self.history_limit
        );
        let path = dir.join(format!("tmux-{}.conf", self.history_limit));
        let tmp = dir.join(format!(".tmux.conf.{}", std::process::id()));
        std::fs::write(&tmp, &content)
            .and_then(|()| std::fs::rename(&tmp, &path))
            .map_err(|e| fail(format!("{}: {e}", path.display())))?;
        Ok(path)
    }

    /// The state directory: the configured one or the default.
    pub(crate) fn state_dir(&self) -> PathBuf {
        match &self.state_dir {
            Some(dir) => dir.clone(),
            None => default_state_dir(),
        }
    }

    async fn connect(&self) -> Result<Conn, ToolError> {
        let what = format!("Connecting to the tmux server ({})", self.describe());
        let server = self.server()?;
        let fail = |e: &tmux_control::Error| match &self.remote {
            None => ToolError::tmux(what.clone(), e),
            Some(r) => ToolError::new(what.clone(), remote_detail(e, Self::speaker(&r.spec)), ""),
        };
        // The home session is created running its placeholder program
        // (respawning a pane right after attaching can crash tmux 3.3a).
        let options = ConnectOptions::default()
            .session(HOME_SESSION)
            .size(80, 24)
            .command(HOME_PROGRAM)
            .pane_log(self.pane_log_bytes)
            .keep_followed();
        // A server that is still shutting down (just killed) accepts the
        // connection and then exits: try again a few times, after a
        // growing pause (a true timer: backoff between attempts).
        let mut attempt = 0;
        let tmux = loop {
            match Tmux::connect_with(&server, options.clone()).await {
                Ok(tmux) => break tmux,
                Err(tmux_control::Error::Closed(_)) if attempt < 4 => {
                    attempt += 1;
                    // A true timer: backoff before the next attempt.
                    tokio::time::sleep(std::time::Duration::from_millis(150 * attempt)).await;
                }
                Err(e) => return Err(fail(&e)),
            }
        };
        if let Some(r) = &self.remote {
            if matches!(r.spec.kind, HostKind::Exec { .. }) {
                self.check_exec_session(&tmux).await?;
            }
            self.apply_remote_settings(&tmux)
                .await
                .map_err(|e| fail(&e))?;
        }
        // The server's process id (whose panes the local logs are) and its
        // socket, in one round trip.
        let (server_pid, socket_path) = match tmux
            .run(DisplayMessage::format("#{pid} #{socket_path}"))
            .await
        {
            Ok(reply) => {
                let reply = String::from_utf8_lossy(&reply).trim().to_owned();
                let (pid, path) = reply.split_once(' ').unwrap_or((reply.as_str(), ""));
                (
                    pid.parse::<u32>().ok(),
                    Some(PathBuf::from(path)).filter(|p| !p.as_os_str().is_empty()),
                )
            }
            Err(_) => (None, None),
        };
        let home = setup_home(&tmux).await.map_err(|e| fail(&e))?;
        // A remote server's process ids are the remote machine's: only the
        // local logs name their server, and only they are pruned.
        let journals = Arc::new(Journals::new(
            private_subdir(&self.state_dir(), "logs"),
            self.log_bytes,
            server_pid.filter(|_| self.remote.is_none()),
        ));
        // Before the first call goes on: a scan of the logs directory and
        // at most one round trip.
        let removed = journals.prune(&tmux).await;
        if removed > 0 {
            tracing::info!(removed, "removed the logs of panes that ended unseen");
        }
        // Local hooks are files: only in a directory of the state
        // directory's own that is no symbolic link.
        let hooks_dir = self.state_dir().join("shell");
        let hooks_ok =
            self.remote.is_some() || private_subdir(&self.state_dir(), "shell").is_some();
        let shells = Shells::new(
            self.shell_integration && hooks_ok,
            hooks_dir,
            self.remote.as_ref().map(|_| self.program.as_str()),
        );
        // A server tmux-mcp started (its configuration marks it), or
        // tmux-mcp's own socket on a remote host: every new pane's shell is
        // integrated, whoever opens it.
        let own = self.remote.is_some()
            || tmux
                .run(ShowOption::new(OptionScope::Session, "@tmux-mcp-own").global())
                .await
                .ok()
                .flatten()
                .is_some();
        shells.prepare(&tmux, own).await;
        tracing::info!(server = %self.describe(), ?socket_path, "connected to tmux");
        Ok(Conn {
            tmux,
            home,
            socket_path,
            terminals: crate::terminal::Terminals::default(),
            runs: Mutex::new(HashMap::new()),
            shells,
            journals,
            remote: self.remote.is_some(),
            actors: PaneActors::default(),
        })
    }

    /// Refuses the connection of an `exec:` host whose command did not hand
    /// on the arguments tmux-mcp appended (one that runs its own `tmux -C
    /// attach`, say): its client is attached to some other session, and
    /// the clients that follow other sessions' panes would be too.
    async fn check_exec_session(&self, tmux: &Tmux) -> Result<(), ToolError> {
        let name = tmux
            .run(DisplayMessage::format("#{session_name}"))
            .await
            .map(|reply| String::from_utf8_lossy(&reply).trim().to_owned())
            .unwrap_or_default();
        if name == HOME_SESSION {
            return Ok(());
        }
        Err(ToolError::new(
            format!("Connecting to host {}", self.host()),
            format!(
                "the exec: command attached its tmux client to session {name:?}, not {HOME_SESSION}: it does not hand on the arguments tmux-mcp appends ({} -u -C new-session -A -s {HOME_SESSION} …)",
                shell_words(&self.socket_words())
            ),
            "",
        ))
    }

    /// What the configuration file does for a local server, for a remote
    /// host's server (tmux-mcp's own socket there): set over the
    /// connection, so it also applies to a server that was already running.
    async fn apply_remote_settings(&self, tmux: &Tmux) -> tmux_control::Result<()> {
        let history = self.history_limit.to_string();
        let settings = [
            (OptionScope::Session, "history-limit", history.as_str()),
            (OptionScope::Window, "remain-on-exit", "on"),
            (OptionScope::Server, "exit-empty", "off"),
            (OptionScope::Server, "exit-unattached", "off"),
            (OptionScope::Session, "destroy-unattached", "off"),
            (OptionScope::Session, "default-size", "200x50"),
        ];
        for (scope, name, value) in settings {
            tmux.run(SetOption::new(scope, name, value).global())
                .await?;
        }
        Ok(())
    }
}

/// What `speaker` (ssh, docker, the exec: command, …) said, for a failed
/// connection to a remote host.
fn remote_detail(e: &tmux_control::Error, speaker: &str) -> String {
    match e {
        tmux_control::Error::Closed(closed) => closed_detail(closed, speaker),
        tmux_control::Error::Spawn { program, source } => {
            format!("cannot start {program}: {source}")
        }
        other => other.to_string(),
    }
}

/// A closed connection to a remote host in words: what `speaker` (ssh,
/// docker, …, or tmux behind it) wrote to its standard error, and its exit
/// status.
fn closed_detail(closed: &tmux_control::Closed, speaker: &str) -> String {
    let mut s = if closed.stderr.is_empty() {
        format!("{speaker} ended without a message")
    } else {
        format!("{speaker} said: {}", closed.stderr)
    };
    if let Some(reason) = closed.reason.as_ref().filter(|r| !r.is_empty()) {
        s.push_str("; tmux said: ");
        s.push_str(reason);
    }
    if let Some(code) = closed.exit_status {
        s.push_str(&format!(" (exit status {code})"));
    }
    s
}

/// Finds the home pane; replaces its shell with the placeholder program the
/// first time.
async fn setup_home(tmux: &Tmux) -> tmux_control::Result<(SessionId, WindowId, PaneId)> {
    let session = tmux
        .attached_session()
        .ok_or_else(|| tmux_control::Error::UnexpectedReply {
            command: "attach".into(),
            detail: "the control connection is attached to no session".into(),
        })?;
    let panes = tmux.run(ListPanes::in_session(session)).await?;
    let first = panes
        .first()
        .ok_or_else(|| tmux_control::Error::UnexpectedReply {
            command: "list-panes".into(),
            detail: "the home session has no pane".into(),
        })?;
    let start = tmux
        .run(DisplayMessage::format("#{pane_start_command}").target(first.id))
        .await?;
    if String::from_utf8_lossy(&start).contains(HOME_MARK) {
        tmux.run(SetOption::new(OptionScope::Pane, "remain-on-exit", "on").target(first.id))
            .await?;
        tmux.run(RenameWindow::new(first.window, "tmux-mcp"))
            .await?;
    } else {
        // A session of that name that tmux-mcp did not create (a shared
        // server): leave whatever runs in it alone.
        tracing::warn!(session = %session, "the home session runs a program tmux-mcp did not start; leaving it as is");
    }
    Ok((session, first.window, first.id))
}

/// `$XDG_RUNTIME_DIR/tmux-mcp`, or `$TMPDIR/tmux-mcp-UID`.
pub(crate) fn default_state_dir() -> PathBuf {
    match std::env::var_os("XDG_RUNTIME_DIR").filter(|v| !v.is_empty()) {
        Some(dir) => PathBuf::from(dir).join("tmux-mcp"),
        None => std::env::temp_dir().join(format!("tmux-mcp-{}", guard::current_uid())),
    }
}

/// Creates `dir` and its missing parents with mode 0700; one that already
/// exists is left as it is (its checks are the caller's).
pub(crate) fn create_dir_0700(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt as _;
    match std::fs::DirBuilder::new()
        .mode(0o700)
        .recursive(true)
        .create(dir)
    {
        Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => Err(e),
        _ => Ok(()),
    }
}

/// `state/name`, made or checked as [`private_dir`] does (so a symbolic
/// link there is refused, not followed); `None`, with a warning, when it
/// cannot be used.
fn private_subdir(state: &Path, name: &str) -> Option<PathBuf> {
    let dir = state.join(name);
    let checked = private_dir(state).and_then(|()| private_dir(&dir));
    match checked {
        Ok(()) => Some(dir),
        Err(e) => {
            tracing::warn!(dir = %dir.display(), error = %e, "cannot use this part of the state directory; going on without it");
            None
        }
    }
}

/// Creates `dir` with mode 0700, or checks that an existing one is a real
/// directory owned by this user and closed to others.
pub(crate) fn private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
    create_dir_0700(dir)?;
    let meta = std::fs::symlink_metadata(dir)?;
    if !meta.is_dir() {
        return Err(std::io::Error::other(
            "not a directory (or a symbolic link)",
        ));
    }
    if meta.uid() != guard::current_uid() {
        return Err(std::io::Error::other("owned by another user"));
    }
    if meta.permissions().mode() & 0o077 != 0 {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

impl Conn {
    /// Resolves a target (an id or an exact name) to ids.
    pub(crate) async fn resolve(&self, target: &str) -> Result<Resolved, ToolError> {
        let normalized = normalize_target(target)?;
        let what = format!("Finding target {target:?}");
        self.tmux
            .resolve(normalized)
            .await
            .map_err(|e| match e.kind() {
                tmux_control::ErrorKind::NotFound => ToolError::new(
                    what,
                    format!(
                        "{target:?} does not exist on this tmux server{} ({e})",
                        if self.remote { " (a remote host: ids are per host)" } else { "" }
                    ),
                    "Call list_terminals and use an id from it (%N pane, @N window, $N session) or an exact session name",
                ),
                _ => ToolError::tmux(what, &e),
            })
    }

    /// Whether `r` is in tmux-mcp's own home session.
    pub(crate) fn is_home(&self, r: &Resolved) -> bool {
        r.session == self.home.0
    }

    /// Refuses a target in the home session.
    pub(crate) fn refuse_home(&self, r: &Resolved, what: &str) -> Result<(), ToolError> {
        if self.is_home(r) {
            return Err(ToolError::new(
                what,
                format!(
                    "{HOME_SESSION} ({}) is tmux-mcp's own control session",
                    r.session
                ),
                "Use create_terminal to get a terminal of your own, and target it",
            ));
        }
        Ok(())
    }

    /// Follows `pane`'s output. The connection keeps every followed pane
    /// until it is gone, so later calls share the log.
    /// Its cooked log ([`crate::journal`]) is opened, or recovered from
    /// an earlier run of tmux-mcp, the first time.
    pub(crate) async fn follow(&self, pane: PaneId) -> Result<PaneOutput, ToolError> {
        let po = self
            .tmux
            .follow(pane)
            .await
            .map_err(|e| ToolError::tmux(format!("Following pane {pane}"), &e))?;
        if pane != self.home.2 {
            self.journals
                .ensure(&self.tmux, &po, &self.shells.regions)
                .await;
        }
        Ok(po)
    }

    /// Remembers the output offset just before input was sent to `pane`.
    pub(crate) fn note_input(&self, pane: PaneId, offset: u64) {
        self.terminals.update(pane, |i| i.last_at = Some(offset));
    }

    /// Notes whether text this server typed into `pane` waits on its input
    /// line unsubmitted (`true`), or the line was submitted or cleared.
    pub(crate) fn note_unsubmitted(&self, pane: PaneId, pending: bool) {
        self.terminals.update(pane, |i| i.unsubmitted = pending);
    }

    /// Whether text this server typed into `pane` waits unsubmitted.
    pub(crate) fn unsubmitted(&self, pane: PaneId) -> bool {
        self.terminals.input(pane).unsubmitted
    }

    /// The output offset just before the last input this server sent to `pane`.
    pub(crate) fn last_input(&self, pane: PaneId) -> Option<u64> {
        self.terminals.input(pane).last_at
    }

    /// Forgets everything this connection knows about `pane`, which tmux
    /// says is gone: its input, shell, regions and actors (its durable log
    /// is removed by its own task, which calls this). Runs typed into it
    /// stay, by run id, for the calls that resume them.
    pub(crate) fn forget(&self, pane: PaneId) {
        self.terminals.forget(pane);
        self.shells.gone(pane);
        self.actors.forget(pane);
    }

    /// How many records this connection holds about panes, by concern:
    /// input, shells, regions, actors, durable logs.
    #[cfg(test)]
    pub(crate) fn records(&self) -> [usize; 5] {
        [
            self.terminals.len(),
            self.shells.len(),
            self.shells.regions.len(),
            self.actors.len(),
            self.journals.len(),
        ]
    }

    /// The `list-panes` row of one pane.
    pub(crate) async fn pane_row(&self, pane: PaneId) -> Result<PaneInfo, ToolError> {
        let what = format!("Reading the state of pane {pane}");
        let rows = self
            .tmux
            .run(ListPanes::in_window(pane))
            .await
            .map_err(|e| ToolError::tmux(what.clone(), &e))?;
        rows.into_iter().find(|r| r.id == pane).ok_or_else(|| {
            ToolError::new(
                what,
                "the pane is gone",
                "Call list_terminals to see what exists",
            )
        })
    }
}

/// Checks a window name or pane title: no control characters, and no `\\`
/// or `$`, which tmux rewrites.
pub(crate) fn check_window_name(name: &str, what: &str) -> Result<(), ToolError> {
    if let Some(c) = name
        .chars()
        .find(|c| c.is_control() || matches!(c, '\\' | '$'))
    {
        return Err(ToolError::new(
            what,
            format!("the name contains {c:?}, which tmux would store differently"),
            "Use a name without control characters, '\\' and '$'",
        ));
    }
    Ok(())
}

/// Checks a target and makes a bare session name exact (`=name`), so that
/// `work` never means `workshop`.
pub(crate) fn normalize_target(target: &str) -> Result<String, ToolError> {
    let bad = |why: &str| {
        ToolError::new(
            format!("Reading target {target:?}"),
            why,
            "Give an id from list_terminals (%3 pane, @2 window, $1 session) or an exact name (session, session:window, session:window.pane)",
        )
    };
    if target.trim().is_empty() {
        return Err(bad("it is empty"));
    }
    if target.chars().any(char::is_control) {
        return Err(bad("it contains control characters"));
    }
    // An id: its sign and number, as tmux writes it (tmux would also read
    // `% 1` and `%01` as `%1`, and trailing junk after some forms).
    if let Some(number) = target.strip_prefix(['$', '@', '%']) {
        let canonical = !number.is_empty()
            && number.bytes().all(|b| b.is_ascii_digit())
            && (number == "0" || !number.starts_with('0'));
        if !canonical {
            return Err(bad(
                "an id is $, @ or % and its number as list_terminals shows it (%3), with no space, sign or leading zero",
            ));
        }
        return Ok(target.to_owned());
    }
    if target.starts_with('{') {
        return Ok(target.to_owned());
    }
    let name = target.strip_prefix('=').unwrap_or(target);
    let (session, place) = match name.split_once(':') {
        Some((session, place)) => (session, Some(place)),
        None => (name, None),
    };
    if session.is_empty() {
        // tmux would take the current session: tmux-mcp's own.
        return Err(bad("it names no session"));
    }
    if let Some((_, pane)) = place.and_then(|p| p.split_once('.'))
        && !(pane.is_empty()
            || (pane.bytes().all(|b| b.is_ascii_digit())
                && (pane == "0" || !pane.starts_with('0'))))
    {
        return Err(bad("the part after '.' must be the pane's index (digits)"));
    }
    // `=name` alone is not found as a pane target; `=name:` (the session's
    // current window) is.
    let exact = if target.starts_with('=') {
        target.to_owned()
    } else {
        format!("={target}")
    };
    if exact.contains(':') {
        Ok(exact)
    } else {
        Ok(format!("{exact}:"))
    }
}

/// Checks a session name: tmux forbids `:` and `.` (it would silently
/// replace them) and escapes `\` and `$` (the stored name would differ); a
/// leading `$ @ % = -` would be read as an id, an exact match marker or a
/// flag. Other shell metacharacters are fine: every argument is quoted.
pub(crate) fn check_session_name(name: &str) -> Result<(), ToolError> {
    let why = if name.is_empty() {
        Some("it is empty".to_owned())
    } else if name.len() > 200 {
        Some("it is longer than 200 bytes".to_owned())
    } else if let Some(c) = name.chars().find(|c| matches!(c, ':' | '.')) {
        Some(format!("tmux does not allow {c:?} in session names"))
    } else if name.chars().any(char::is_control) {
        Some("it contains control characters".to_owned())
    } else if let Some(c) = name.chars().find(|c| matches!(c, '\\' | '$')) {
        Some(format!(
            "tmux rewrites {c:?} in names (it would store a different name than asked)"
        ))
    } else if name.starts_with(['$', '@', '%', '=', '-']) {
        Some("it starts with a character tmux would read as an id, a match marker or a flag ($ @ % = -)".to_owned())
    } else if name == HOME_SESSION {
        Some("that name is reserved for tmux-mcp's control session".to_owned())
    } else {
        None
    };
    match why {
        Some(why) => Err(ToolError::new(
            format!("Using session name {name:?}"),
            why,
            "Choose another name; letters, digits, spaces, '-', '_' and most punctuation other than ':' and '.' work",
        )),
        None => Ok(()),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn targets_are_made_exact() {
        assert_eq!(normalize_target("%3").unwrap(), "%3");
        assert_eq!(normalize_target("$1").unwrap(), "$1");
        assert_eq!(normalize_target("work").unwrap(), "=work:");
        assert_eq!(normalize_target("work:1.0").unwrap(), "=work:1.0");
        assert_eq!(normalize_target("=x").unwrap(), "=x:");
        assert!(normalize_target("").is_err());
        assert!(normalize_target("a\nb").is_err());
        // Forms tmux would read loosely (issue 24, item 19).
        for quirk in [
            "t1:0.0;", "% 1", "%01", "%", "$-1", "@1x", "=", ":", "=:", ":1", "t1:0.x",
        ] {
            assert!(normalize_target(quirk).is_err(), "{quirk:?}");
        }
        assert_eq!(normalize_target("%0").unwrap(), "%0");
        assert_eq!(normalize_target("t1:0.").unwrap(), "=t1:0.");
        assert_eq!(normalize_target("a;b").unwrap(), "=a;b:");
    }

    #[test]
    fn session_names() {
        for ok in [
            "build",
            "my session",
            "a;b'c\"d`f|g&h*",
            "#{x}",
            "日本語 🚀",
            "x;",
        ] {
            check_session_name(ok).unwrap();
        }
        for bad in [
            "",
            "a:b",
            "a.b",
            "-x",
            "$1",
            "%1",
            "=x",
            "a\tb",
            "a$b",
            "a\\b",
            HOME_SESSION,
        ] {
            let e = check_session_name(bad).unwrap_err();
            assert!(e.to_string().contains("Choose another name"), "{e}");
        }
    }

    #[test]
    fn attach_commands_are_shell_quoted() {
        let b = Backend::new(&Config::default());
        assert_eq!(b.attach_command("work"), "tmux -L tmux-mcp attach -t work");
        assert_eq!(
            b.attach_command("a;b c"),
            "tmux -L tmux-mcp attach -t 'a;b c'"
        );
        let b = Backend::new(&Config::for_socket_path("/tmp/x y/s"));
        assert_eq!(b.attach_prefix(), "tmux -S '/tmp/x y/s'");
    }

    #[test]
    fn remote_hosts_attach_over_ssh() {
        let spec = HostSpec::parse("box=-p 2222 -i '/k/my key' me@box").unwrap();
        let b = Backend::remote(&Config::for_socket_path("/tmp/s"), &spec);
        assert_eq!(b.host(), "box");
        assert!(b.is_remote());
        let expected = format!(
            "ssh -t -p 2222 -i '/k/my key' me@box {}",
            shell_quote("tmux -L tmux-mcp attach -t 'a b'")
        );
        assert_eq!(b.attach_command("a b"), expected);
        assert!(
            b.describe().starts_with("host box: ssh -p 2222"),
            "{}",
            b.describe()
        );
        let HostKind::Ssh {
            options,
            destination,
        } = &spec.kind
        else {
            panic!("{spec:?}")
        };
        let args = Backend::ssh_args(options, destination);
        assert_eq!(args.last().map(String::as_str), Some("me@box"));
        assert!(args.contains(&"ConnectTimeout=10".to_owned()));
        let local = Backend::new(&Config::default());
        assert_eq!(local.host(), "local");
        assert!(!local.is_remote());
        let e = b.unreachable("ssh said: refused", Duration::from_secs(2));
        let text = e.to_string();
        assert!(
            text.contains("cannot be reached over ssh: ssh said: refused"),
            "{text}"
        );
        assert!(text.contains("BatchMode=yes"), "{text}");
    }

    /// A remote backend of `spec` on the socket `--socket-name work`.
    fn remote(spec: &str, host_tmux: &str) -> Backend {
        let config = Config {
            socket: SocketChoice::Named("work".into()),
            host_tmux: host_tmux.into(),
            ..Config::default()
        };
        Backend::remote(&config, &HostSpec::parse(spec).unwrap())
    }

    #[test]
    fn container_hosts_attach_through_exec_it() {
        let b = remote("web=docker:web-1", "tmux");
        assert_eq!(
            b.attach_command("a b"),
            "docker exec -it web-1 tmux -L work attach -t 'a b'"
        );
        assert_eq!(b.attach_prefix(), "docker exec -it web-1 tmux -L work");
        assert_eq!(b.describe(), "host web: docker exec -i web-1 tmux -L work");
        let server = b.server().unwrap();
        assert_eq!(server.describe(), "docker exec -i web-1 tmux -L work");
        let b = remote("pm=podman:box", "/opt/tmux");
        assert_eq!(
            b.attach_command("x"),
            "podman exec -it box /opt/tmux -L work attach -t x"
        );
        assert_eq!(
            b.server().unwrap().describe(),
            "podman exec -i box /opt/tmux -L work"
        );
        // The error says how the host is reached and what to check.
        let text = b
            .unreachable(
                "podman said: Error: no container with name or ID \"box\"",
                Duration::from_secs(1),
            )
            .to_string();
        assert!(
            text.contains("host_unreachable: host pm cannot be reached through podman exec: podman said: Error: no container"),
            "{text}"
        );
        assert!(text.contains("`podman exec -i box /opt/tmux -V`"), "{text}");
        assert!(!text.contains("BatchMode"), "{text}");
        assert!(text.contains("after 1 s"), "{text}");
    }

    #[test]
    fn kubectl_hosts_attach_through_exec_it() {
        let b = remote("k=kubectl:prod/web-0:app", "tmux");
        assert_eq!(
            b.attach_command("build"),
            "kubectl exec -it -n prod web-0 -c app -- tmux -L work attach -t build"
        );
        assert_eq!(
            b.server().unwrap().describe(),
            "kubectl exec -i -n prod web-0 -c app -- tmux -L work"
        );
        assert_eq!(
            b.describe(),
            "host k: kubectl exec -i -n prod web-0 -c app -- tmux -L work"
        );
        let text = b
            .unreachable("kubectl said: x", Duration::from_secs(4))
            .to_string();
        assert!(
            text.contains("through kubectl exec: kubectl said: x"),
            "{text}"
        );
        assert!(
            text.contains("`kubectl exec -i -n prod web-0 -c app -- tmux -V`"),
            "{text}"
        );
    }

    #[test]
    fn exec_hosts_run_their_command_as_tmux() {
        let b = remote(r#"vm=exec:sh -c 'exec tmux "$@"' sh"#, "/ignored/tmux");
        assert_eq!(
            b.server().unwrap().describe(),
            r#"sh -c exec tmux "$@" sh -L work"#
        );
        assert_eq!(
            b.describe(),
            r#"host vm: sh -c 'exec tmux "$@"' sh -L work"#
        );
        assert_eq!(
            b.attach_command("s 1"),
            r#"sh -c 'exec tmux "$@"' sh -L work attach -t 's 1'"#
        );
        let text = b
            .unreachable("the exec: command said: boom", Duration::from_secs(1))
            .to_string();
        assert!(
            text.contains(
                "host vm cannot be reached through its exec: command: the exec: command said: boom"
            ),
            "{text}"
        );
        assert!(text.contains(r#"`sh -c 'exec tmux "$@"' sh -V`"#), "{text}");
        assert!(
            text.contains("-L work -u -C new-session -A -s tmux-mcp-control"),
            "{text}"
        );
    }

    #[test]
    fn closed_connections_name_who_spoke() {
        let mut closed = tmux_control::Closed::default();
        closed.stderr = "Error: No such container: nope".into();
        closed.exit_status = Some(1);
        assert_eq!(
            closed_detail(&closed, "docker"),
            "docker said: Error: No such container: nope (exit status 1)"
        );
        assert_eq!(
            closed_detail(&tmux_control::Closed::default(), "the exec: command"),
            "the exec: command ended without a message"
        );
    }
}
