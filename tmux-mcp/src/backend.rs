//! The tmux side: one control connection to the configured server, started
//! on first use, its home session, target resolution and followed panes.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use tmux_control::command::{
    DisplayMessage, ListPanes, OptionScope, PaneInfo, RenameWindow, SetOption,
};
use tmux_control::{
    ConnectOptions, PaneId, PaneOutput, Resolved, Server, SessionId, Tmux, WindowId,
};

use crate::config::{Config, SocketChoice};
use crate::guard;
use crate::reply::ToolError;
use crate::runs::RunState;
use crate::shell::Shells;
use crate::text::shell_quote;

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

/// The tmux server the tools act on, and the connection to it.
pub(crate) struct Backend {
    choice: SocketChoice,
    program: String,
    history_limit: u32,
    pane_log_bytes: usize,
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
    inputs: Mutex<HashMap<PaneId, u64>>,
    /// Runs started by the `run` tool, by run id.
    pub(crate) runs: Mutex<HashMap<String, RunState>>,
    /// The terminals whose shells run with shell integration.
    pub(crate) shells: Shells,
}

impl Backend {
    pub(crate) fn new(config: &Config) -> Self {
        Self {
            choice: config.socket.clone(),
            program: config.tmux_program.clone(),
            history_limit: config.history_limit,
            pane_log_bytes: config.pane_log_bytes,
            state_dir: config.state_dir.clone(),
            shell_integration: config.shell_integration,
            conn: tokio::sync::Mutex::new(None),
            generation: tokio::sync::watch::Sender::new(0),
        }
    }

    /// `tmux -L tmux-mcp`, `tmux -S /path` or `tmux`: the start of a command
    /// a human runs to reach this server.
    pub(crate) fn attach_prefix(&self) -> String {
        let program = shell_quote(&self.program);
        match &self.choice {
            SocketChoice::Named(name) => format!("{program} -L {}", shell_quote(name)),
            SocketChoice::Path(path) => {
                format!("{program} -S {}", shell_quote(&path.display().to_string()))
            }
            SocketChoice::Default => program,
        }
    }

    /// The command a human runs to watch session `name`.
    pub(crate) fn attach_command(&self, session_name: &str) -> String {
        format!(
            "{} attach -t {}",
            self.attach_prefix(),
            shell_quote(session_name)
        )
    }

    /// A description like `tmux -L tmux-mcp`.
    pub(crate) fn describe(&self) -> String {
        self.attach_prefix()
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
    pub(crate) async fn conn(&self) -> Result<Arc<Conn>, ToolError> {
        let mut slot = self.conn.lock().await;
        if let Some(conn) = slot.as_ref()
            && !conn.tmux.is_closed()
        {
            return Ok(conn.clone());
        }
        let conn = Arc::new(self.connect().await?);
        *slot = Some(conn.clone());
        self.generation.send_modify(|g| *g += 1);
        Ok(conn)
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
             set -g default-size 200x50\n",
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
    fn state_dir(&self) -> PathBuf {
        match &self.state_dir {
            Some(dir) => dir.clone(),
            None => default_state_dir(),
        }
    }

    async fn connect(&self) -> Result<Conn, ToolError> {
        let what = format!("Connecting to the tmux server ({})", self.describe());
        let server = self.server()?;
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
                Err(e) => return Err(ToolError::tmux(what.clone(), &e)),
            }
        };
        let socket_path = tmux
            .run(DisplayMessage::format("#{socket_path}"))
            .await
            .ok()
            .map(|b| PathBuf::from(String::from_utf8_lossy(&b).trim().to_owned()))
            .filter(|p| !p.as_os_str().is_empty());
        let home = setup_home(&tmux)
            .await
            .map_err(|e| ToolError::tmux(what.clone(), &e))?;
        tracing::info!(server = %self.describe(), ?socket_path, "connected to tmux");
        Ok(Conn {
            tmux,
            home,
            socket_path,
            inputs: Mutex::new(HashMap::new()),
            runs: Mutex::new(HashMap::new()),
            shells: Shells::new(self.shell_integration, self.state_dir().join("shell")),
        })
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
fn default_state_dir() -> PathBuf {
    match std::env::var_os("XDG_RUNTIME_DIR").filter(|v| !v.is_empty()) {
        Some(dir) => PathBuf::from(dir).join("tmux-mcp"),
        None => std::env::temp_dir().join(format!("tmux-mcp-{}", guard::current_uid())),
    }
}

/// Creates `dir` with mode 0700, or checks that an existing one is a real
/// directory owned by this user and closed to others.
fn private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt as _, MetadataExt as _, PermissionsExt as _};
    match std::fs::DirBuilder::new()
        .mode(0o700)
        .recursive(true)
        .create(dir)
    {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e),
    }
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
                    format!("{target:?} does not exist on this tmux server ({e})"),
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
    pub(crate) async fn follow(&self, pane: PaneId) -> Result<PaneOutput, ToolError> {
        self.tmux
            .follow(pane)
            .await
            .map_err(|e| ToolError::tmux(format!("Following pane {pane}"), &e))
    }

    /// Remembers the output offset just before input was sent to `pane`.
    pub(crate) fn note_input(&self, pane: PaneId, offset: u64) {
        self.inputs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(pane, offset);
    }

    /// The output offset just before the last input this server sent to `pane`.
    pub(crate) fn last_input(&self, pane: PaneId) -> Option<u64> {
        self.inputs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&pane)
            .copied()
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
    if target.starts_with(['$', '@', '%', '{']) {
        return Ok(target.to_owned());
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
}
