//! The tmux side: one control connection per tmux server (the local one,
//! and one per configured remote host), each started on first use, its
//! home session, target resolution and followed panes.
//!
//! A remote host's connection is one control-mode stream per host, by its
//! kind ([`HostKind`]): `ssh -T … 'tmux -u -C …'`
//! ([`Server::over_ssh`](tmux_control::Server::over_ssh)), or a command
//! that hands its words on and stands for `tmux` there (`docker exec -i
//! CONTAINER tmux`, `kubectl exec -i POD -- tmux`, an `exec:` command),
//! with `-L NAME -u -C …` appended
//! ([`Server::custom`](tmux_control::Server::custom)).
//! When it cannot be made, calls are answered with a `host_unreachable`
//! error at once until a backoff deadline passes; then the next call tries
//! again.
//!
//! Split by concern (issue 23): this file holds [`Backend`], its
//! connection slot and a remote host's failure and backoff state (and the
//! unit tests); `reach` the words that select and describe a server and a
//! host's `host_unreachable` errors; `connect` the making of a connection
//! (the server chosen, the configuration written, the home session, the
//! private state directories); `conn` one live connection ([`Conn`]) and
//! the checks of targets and names.

mod conn;
mod connect;
mod notices;
mod reach;
mod watch;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::config::{Config, DEFAULT_SOCKET_NAME, HostKind, HostSpec, LOCAL_HOST, SocketChoice};
use crate::reply::ToolError;
use crate::terminal::attention::Attention;
use crate::terminal::guard;

pub(crate) use conn::{Conn, check_session_name, check_window_name};
pub(crate) use connect::{create_dir_0700, default_state_dir, private_dir};
use reach::closed_detail;

/// The session the control connection attaches to. It holds one window
/// running a placeholder that never exits, so the connection survives
/// agents killing all of their terminals.
pub const HOME_SESSION: &str = "tmux-mcp-control";

/// The first pause after a failed connection to a remote host; it doubles
/// after each failure up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_secs(1);

/// The longest pause between attempts to reach a remote host.
const MAX_BACKOFF: Duration = Duration::from_secs(30);

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
    /// The attention log its connections write to (one per process).
    attention: Arc<Attention>,
    /// Whether its connections show attention events to people's clients.
    notify_clients: bool,
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
            attention: Attention::new(config.attention_events),
            notify_clients: config.notify_clients,
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
            attention: Attention::new(config.attention_events),
            notify_clients: config.notify_clients,
        }
    }

    /// The same, its connections writing attention events to `log` (the
    /// process's one log).
    pub(crate) fn logging_to(mut self, log: Arc<Attention>) -> Self {
        self.attention = log;
        self
    }

    /// The attention log its connections write to.
    pub(crate) fn attention(&self) -> &Arc<Attention> {
        &self.attention
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
                let _ = conn.me.set(Arc::downgrade(&conn));
                if self.notify_clients {
                    notices::spawn(&conn);
                }
                // Everything the connection knows about a pane goes when
                // tmux says the pane is gone.
                let weak = Arc::downgrade(&conn);
                conn.journals.when_gone(Box::new(move |pane| {
                    if let Some(conn) = weak.upgrade() {
                        conn.forget(pane);
                    }
                }));
                // Output the durable log missed is an attention event.
                let weak = Arc::downgrade(&conn);
                conn.journals.when_missed(Box::new(move |pane, from, bytes| {
                    if let Some(conn) = weak.upgrade() {
                        conn.attend(
                            Some(pane),
                            crate::terminal::attention::Kind::OutputLost,
                            crate::terminal::attention::Detail {
                                offset: Some(from),
                                evidence: format!("{bytes} bytes of output were evicted from the in-memory log before the durable log recorded them"),
                                ..Default::default()
                            },
                        );
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

    /// Completes once the durable logs of the live connection hold what it
    /// has seen, with their regions (for a process about to end).
    pub(crate) async fn settle_logs(&self) {
        if let Some(conn) = self.current().await {
            conn.journals.settled(conn.shells.regions.version()).await;
        }
    }

    /// The state directory: the configured one or the default.
    pub(crate) fn state_dir(&self) -> PathBuf {
        match &self.state_dir {
            Some(dir) => dir.clone(),
            None => default_state_dir(),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::conn::normalize_target;
    use super::*;
    use tmux_control::shell;

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
            shell::quote("tmux -L tmux-mcp attach -t 'a b'")
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
