//! Making a connection: the server, its configuration, the home session, the state directories.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use tmux_control::command::{
    DisplayMessage, ListPanes, OptionScope, RenameWindow, SetOption, ShowOption,
};
use tmux_control::{ConnectOptions, PaneId, Server, SessionId, Tmux, WindowId};

use crate::config::{HostKind, SocketChoice};
use crate::reply::ToolError;
use crate::terminal::actors::PaneActors;
use crate::terminal::guard;
use crate::terminal::journal::journals::Journals;
use crate::terminal::presence::Humans;
use crate::terminal::record::Terminals;
use crate::terminal::shell::Shells;
use tmux_control::shell;

use super::reach::remote_detail;
use super::{Backend, Conn, HOME_SESSION};

/// Marks the placeholder program in `#{pane_start_command}`.
const HOME_MARK: &str = "tmux-mcp-home";

/// What the home pane runs (through the default shell's `-c`).
const HOME_PROGRAM: &str = "printf '%s\\n' 'This session keeps the tmux-mcp control connection attached.' \
'The terminals agents use are the other sessions: list them with tmux ls.'; \
while :; do sleep 3600; done # tmux-mcp-home";

impl Backend {
    pub(super) fn server(&self) -> Result<Server, ToolError> {
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

    pub(super) async fn connect(&self) -> Result<Conn, ToolError> {
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
        // One record per followed pane, which each concern below keeps
        // its part of the pane in.
        let terminals: Arc<Terminals> = Arc::default();
        let journals = Arc::new(Journals::new(
            private_subdir(&self.state_dir(), "logs"),
            self.log_bytes,
            server_pid.filter(|_| self.remote.is_none()),
            terminals.clone(),
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
            terminals.clone(),
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
            humans: Humans::watch(&tmux, self.attention.clone(), self.host().into()),
            tmux,
            home,
            socket_path,
            actors: PaneActors::new(terminals.clone()),
            terminals,
            runs: Mutex::new(HashMap::new()),
            shells,
            journals,
            remote: self.remote.is_some(),
            attention: self.attention.clone(),
            host: self.host().into(),
            collected: Mutex::default(),
            me: std::sync::OnceLock::new(),
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
                shell::join(self.socket_words())
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
