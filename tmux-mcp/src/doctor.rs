//! `tmux-mcp doctor`: checks the set-up and says what is wrong and how to fix
//! it.
//!
//! Each [`Check`] has a status (ok, warn, fail or skipped), a plain message,
//! a fix hint and the facts it found. The doctor only looks: it runs
//! `tmux -V` (which contacts no server) and `$SHELL --version`, a remote
//! host's `tmux -V` through ssh or the engine's `exec -i` (never an `exec:`
//! host's command, which could do anything), reads file modes, and
//! connects to the configured isolated server's socket to see whether a
//! server listens there. It never starts a tmux server, never
//! sends tmux a command, and never touches the user's default server.
//!
//! (Over 600 lines with its unit tests, which are the last 90: one check per
//! part of the set-up, each with its advice.)

use std::io::Read as _;
use std::os::unix::fs::{FileTypeExt as _, MetadataExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Map, Value, json};
use tmux_control::{ShellKind, Version};

use crate::config::{
    Cli, Config, DEFAULT_SOCKET_NAME, DoctorArgs, HostKind, HostSpec, SocketChoice,
};
use crate::guard;
use crate::text::shell_words;

/// How long `tmux -V` or `$SHELL --version` may take. A true timer: a
/// deadline, so that a program that never exits cannot hang the doctor.
const VERSION_DEADLINE: Duration = Duration::from_secs(5);

/// The outcome of one check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Status {
    /// Nothing to fix.
    Ok,
    /// Works, but something is worth knowing or fixing.
    Warn,
    /// Does not work; tmux-mcp will fail here.
    Fail,
    /// Not checked (nothing configured, or deliberately not looked at).
    Skipped,
}

impl Status {
    fn label(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::Warn => "warn",
            Self::Fail => "FAIL",
            Self::Skipped => "skipped",
        }
    }
}

/// One finding of the doctor.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Check {
    /// A short stable name (`tmux`, `socket_dir`, `server`, ...).
    pub name: &'static str,
    /// The outcome.
    pub status: Status,
    /// What was found, in a sentence.
    pub message: String,
    /// How to fix it, when there is something to fix.
    pub hint: Option<String>,
    /// Facts found on the way (paths, modes, versions), for `--json`.
    pub facts: Map<String, Value>,
}

impl Check {
    fn new(name: &'static str, status: Status, message: impl Into<String>) -> Self {
        Self {
            name,
            status,
            message: message.into(),
            hint: None,
            facts: Map::new(),
        }
    }

    fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    fn fact(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.facts.insert(key.to_owned(), value.into());
        self
    }

    fn to_json(&self) -> Value {
        let mut object = Map::new();
        object.insert("name".into(), self.name.into());
        object.insert("status".into(), json!(self.status));
        object.insert("message".into(), self.message.clone().into());
        object.insert(
            "hint".into(),
            self.hint.clone().map_or(Value::Null, Value::String),
        );
        for (key, value) in &self.facts {
            object.entry(key.clone()).or_insert_with(|| value.clone());
        }
        Value::Object(object)
    }
}

/// Everything the doctor found.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Report {
    /// The checks, in the order they ran.
    pub checks: Vec<Check>,
}

impl Report {
    /// `true` when no check failed.
    pub fn ok(&self) -> bool {
        !self.checks.iter().any(|c| c.status == Status::Fail)
    }

    /// The report as one JSON object:
    /// `{"version", "ok", "checks": [{"name", "status", "message", "hint", ...facts}]}`.
    pub fn to_json(&self) -> Value {
        json!({
            "version": env!("CARGO_PKG_VERSION"),
            "ok": self.ok(),
            "checks": self.checks.iter().map(Check::to_json).collect::<Vec<_>>(),
        })
    }

    /// The report as a table a person reads.
    pub fn to_table(&self) -> String {
        let width = self.checks.iter().map(|c| c.name.len()).max().unwrap_or(0);
        let mut out = format!("tmux-mcp {} doctor\n\n", env!("CARGO_PKG_VERSION"));
        for check in &self.checks {
            out.push_str(&format!(
                "{:<7}  {:<width$}  {}\n",
                check.status.label(),
                check.name,
                check.message
            ));
            if let Some(hint) = &check.hint {
                out.push_str(&format!("{:<7}  {:<width$}  fix: {hint}\n", "", ""));
            }
        }
        let failed = self
            .checks
            .iter()
            .filter(|c| c.status == Status::Fail)
            .count();
        out.push('\n');
        if failed == 0 {
            out.push_str("Nothing failed.\n");
        } else {
            out.push_str(&format!(
                "{failed} check{} failed.\n",
                if failed == 1 { "" } else { "s" }
            ));
        }
        out
    }
}

/// Runs `tmux-mcp doctor`: prints the report (JSON or a table) to standard
/// output and returns the exit status (0 when nothing failed, 1 otherwise).
pub fn main(cli: &Cli, args: &DoctorArgs) -> std::process::ExitCode {
    let report = run(cli, args);
    if args.json {
        println!("{}", report.to_json());
    } else {
        print!("{}", report.to_table());
    }
    if report.ok() {
        std::process::ExitCode::SUCCESS
    } else {
        std::process::ExitCode::FAILURE
    }
}

/// Runs every check. Never panics: whatever goes wrong becomes a check.
pub fn run(cli: &Cli, args: &DoctorArgs) -> Report {
    let mut checks = Vec::new();
    let config = match Config::from_cli(cli) {
        Ok(config) => {
            checks.push(Check::new(
                "config",
                Status::Ok,
                "the flags and environment variables are valid",
            ));
            Some(config)
        }
        Err(err) => {
            checks.push(
                Check::new(
                    "config",
                    Status::Fail,
                    format!("the configuration is not valid: {err}"),
                )
                .hint("Fix the flag or the TMUX_MCP_* environment variable named in the message"),
            );
            None
        }
    };
    checks.push(tmux_check(&cli.tmux_program));
    let socket = config
        .as_ref()
        .map(|c| c.socket.clone())
        .unwrap_or_else(|| fallback_socket(cli));
    checks.push(socket_dir_check(&socket));
    checks.push(server_check(&socket));
    let state_dir = cli
        .state_dir
        .clone()
        .unwrap_or_else(crate::backend::default_state_dir);
    checks.push(state_dir_check(&state_dir));
    checks.push(shell_check(
        std::env::var_os("SHELL").map(PathBuf::from),
        !cli.no_shell_integration,
    ));
    let token_file = args
        .token_file
        .clone()
        .unwrap_or_else(|| state_dir.join(crate::http::DEFAULT_TOKEN_FILE));
    checks.push(token_check(Some(&token_file)));
    checks.extend(host_checks(config.as_ref()));
    Report { checks }
}

/// The socket the flags ask for when they do not validate as a whole.
fn fallback_socket(cli: &Cli) -> SocketChoice {
    if let Some(path) = &cli.socket_path {
        SocketChoice::Path(path.clone())
    } else if cli.default_server {
        SocketChoice::Default
    } else {
        SocketChoice::Named(
            cli.socket_name
                .clone()
                .filter(|n| !n.is_empty() && !n.contains('/'))
                .unwrap_or_else(|| DEFAULT_SOCKET_NAME.to_owned()),
        )
    }
}

/// Where `program` is: itself when it names a path, else the first
/// executable of that name on `PATH`.
fn find_program(program: &str) -> Option<PathBuf> {
    let executable = |p: &Path| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if program.contains('/') {
        let path = PathBuf::from(program);
        return executable(&path).then_some(path);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .filter(|dir| !dir.as_os_str().is_empty())
        .map(|dir| dir.join(program))
        .find(|candidate| executable(candidate))
}

/// What `program FLAG` (`tmux -V`, `bash --version`) printed, within
/// [`VERSION_DEADLINE`].
fn version_output(program: &Path, flag: &str) -> Result<String, String> {
    command_output(program, &[flag.to_owned()], flag)
}

/// The most characters of a failed command's standard error quoted in a
/// check.
const STDERR_QUOTED: usize = 400;

/// What `program ARGS` printed, within [`VERSION_DEADLINE`]; `what` names
/// it in errors, which quote the last line of its standard error (`Error:
/// No such container: web`, ssh's `Permission denied (publickey)`).
fn command_output(program: &Path, args: &[String], what: &str) -> Result<String, String> {
    // `tmux -V` prints the version and exits; it contacts no server.
    let mut child = std::process::Command::new(program)
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run it: {e}"))?;
    let (Some(mut stdout), Some(mut stderr)) = (child.stdout.take(), child.stderr.take()) else {
        let _ = child.kill();
        let _ = child.wait();
        return Err("cannot read its output".into());
    };
    // Read on a thread of its own, so that a full stderr pipe never
    // blocks the program; it ends when the program (or its kill) closes it.
    let errors = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = stderr.read_to_end(&mut bytes);
        let text = String::from_utf8_lossy(&bytes);
        let last = text.lines().map(str::trim).rfind(|l| !l.is_empty());
        let last = last.unwrap_or_default();
        match last.char_indices().nth(STDERR_QUOTED) {
            Some((at, _)) => format!("{}…", &last[..at]),
            None => last.to_owned(),
        }
    });
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut text = String::new();
        let read = stdout.read_to_string(&mut text).map(|_| text);
        let _ = tx.send(read);
    });
    // A true timer: the deadline for `-V` (see VERSION_DEADLINE).
    let outcome = rx.recv_timeout(VERSION_DEADLINE);
    let result = match outcome {
        Ok(Ok(text)) => Ok(text),
        Ok(Err(e)) => Err(format!("cannot read its output: {e}")),
        Err(_) => {
            let _ = child.kill();
            Err(format!(
                "`{what}` did not finish within {} s",
                VERSION_DEADLINE.as_secs()
            ))
        }
    };
    let status = child.wait();
    let said = errors.join().unwrap_or_default();
    let text = result?;
    match status {
        Ok(s) if s.success() => Ok(text),
        Ok(s) if said.is_empty() => Err(format!("`{what}` failed ({s})")),
        Ok(s) => Err(format!("`{what}` failed ({s}): {said}")),
        Err(e) => Err(format!("cannot wait for it: {e}")),
    }
}

/// What tmux-mcp and the library do differently by tmux version; the
/// thresholds are the ones `tmux-control/src/version.rs` uses (see
/// docs/compatibility.md).
fn features(v: &Version) -> Map<String, Value> {
    let mut m = Map::new();
    let mut put = |k: &str, on: bool| {
        m.insert(k.to_owned(), Value::Bool(on));
    };
    put("control_mode", true);
    put("show_buffer_raw", v.at_least(3, 4));
    put("capture_trim_flag", v.at_least(3, 4));
    put("replies_vis_escaped", v.at_least(3, 4) && !v.at_least(3, 6));
    put("capture_keeps_tabs", v.at_least(3, 6));
    put("clean_names", v.at_least(3, 7));
    put("paste_raw_flag", v.at_least(3, 7));
    m
}

fn tmux_check(program: &str) -> Check {
    let Some(path) = find_program(program) else {
        let where_ = if program.contains('/') {
            format!("{program} is not an executable file")
        } else {
            format!("{program:?} is not on PATH")
        };
        return Check::new("tmux", Status::Fail, format!("tmux not found: {where_}"))
            .hint(format!(
                "Install tmux {} or newer (Debian/Ubuntu: apt-get install tmux), or pass --tmux PATH (TMUX_MCP_TMUX)",
                Version::OLDEST_SUPPORTED
            ))
            .fact("program", program);
    };
    let shown = path.display().to_string();
    let output = match version_output(&path, "-V") {
        Ok(text) => text,
        Err(why) => {
            return Check::new("tmux", Status::Fail, format!("{shown}: {why}"))
                .hint("Point --tmux at a working tmux binary")
                .fact("path", shown);
        }
    };
    let text = output.trim();
    if !text.starts_with("tmux ") {
        return Check::new(
            "tmux",
            Status::Fail,
            format!("{shown} does not look like tmux (`-V` printed {text:?})"),
        )
        .hint("Point --tmux at the tmux binary")
        .fact("path", shown);
    }
    let version = Version::parse(text);
    let facts = features(&version);
    let check = if version < Version::OLDEST_SUPPORTED {
        Check::new(
            "tmux",
            Status::Fail,
            format!(
                "tmux {version} at {shown} is older than {}, the oldest version tmux-mcp supports",
                Version::OLDEST_SUPPORTED
            ),
        )
        .hint(format!(
            "Install tmux {} or newer",
            Version::OLDEST_SUPPORTED
        ))
    } else {
        Check::new("tmux", Status::Ok, format!("tmux {version} at {shown}"))
    };
    check
        .fact("path", shown)
        .fact("version", version.to_string())
        .fact("supported", version >= Version::OLDEST_SUPPORTED)
        .fact("features", Value::Object(facts))
}

/// The socket file the choice resolves to; `None` for the default server.
fn socket_file(socket: &SocketChoice) -> Option<PathBuf> {
    match socket {
        SocketChoice::Named(name) => Some(guard::socket_for_name(name)),
        SocketChoice::Path(path) => Some(path.clone()),
        SocketChoice::Default => None,
    }
}

fn mode_text(mode: u32) -> String {
    format!("{:04o}", mode & 0o7777)
}

fn socket_dir_check(socket: &SocketChoice) -> Check {
    let Some(file) = socket_file(socket) else {
        return Check::new(
            "socket_dir",
            Status::Skipped,
            "--default-server is set: the doctor does not look at the default server's socket",
        );
    };
    let Some(dir) = file.parent().map(Path::to_path_buf) else {
        return Check::new(
            "socket_dir",
            Status::Fail,
            format!("the socket path {} has no directory", file.display()),
        )
        .hint("Give --socket-path a full path");
    };
    let named = matches!(socket, SocketChoice::Named(_));
    let shown = dir.display().to_string();
    let meta = match std::fs::symlink_metadata(&dir) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let base = dir.parent().map(Path::to_path_buf).unwrap_or_default();
            return if named && base.is_dir() {
                Check::new(
                    "socket_dir",
                    Status::Ok,
                    format!("{shown} does not exist yet; tmux creates it (mode 0700) when it starts the server"),
                )
                .fact("path", shown)
                .fact("exists", false)
            } else if named {
                Check::new(
                    "socket_dir",
                    Status::Fail,
                    format!(
                        "{} does not exist, so tmux cannot create {shown} in it",
                        base.display()
                    ),
                )
                .hint("Create the directory or point TMUX_TMPDIR at one that exists")
                .fact("path", shown)
                .fact("exists", false)
            } else {
                Check::new(
                    "socket_dir",
                    Status::Fail,
                    format!("{shown}, the directory of --socket-path, does not exist"),
                )
                .hint("Create it (mode 0700) or choose another --socket-path")
                .fact("path", shown)
                .fact("exists", false)
            };
        }
        Err(e) => {
            return Check::new(
                "socket_dir",
                Status::Fail,
                format!("cannot read {shown}: {e}"),
            )
            .hint("Check the permissions of the directory and its parents")
            .fact("path", shown);
        }
    };
    let mode = meta.permissions().mode();
    let base = Check::new("socket_dir", Status::Ok, "")
        .fact("path", shown.clone())
        .fact("exists", true)
        .fact("mode", mode_text(mode))
        .fact("owner_uid", meta.uid());
    if !meta.is_dir() {
        return Check {
            status: Status::Fail,
            message: format!("{shown} is not a directory"),
            ..base
        }
        .hint("Remove it, or choose another TMUX_TMPDIR or --socket-path");
    }
    let uid = guard::current_uid();
    if named && meta.uid() != uid {
        return Check {
            status: Status::Fail,
            message: format!(
                "{shown} belongs to user {}, not to you ({uid}); tmux refuses it",
                meta.uid()
            ),
            ..base
        }
        .hint("Point TMUX_TMPDIR at a directory of your own");
    }
    if named && mode & 0o077 != 0 {
        return Check {
            status: Status::Fail,
            message: format!(
                "{shown} has mode {}; tmux refuses a socket directory others can reach",
                mode_text(mode)
            ),
            ..base
        }
        .hint(format!("chmod 700 {shown}"));
    }
    if !named && mode & 0o002 != 0 && mode & 0o1000 == 0 {
        return Check {
            status: Status::Warn,
            message: format!(
                "{shown} has mode {}: anyone can replace the socket in it",
                mode_text(mode)
            ),
            ..base
        }
        .hint("Keep --socket-path in a directory only you can write (mode 0700)");
    }
    Check {
        message: format!("{shown} (mode {})", mode_text(mode)),
        ..base
    }
}

fn server_check(socket: &SocketChoice) -> Check {
    let Some(file) = socket_file(socket) else {
        return Check::new(
            "server",
            Status::Skipped,
            "--default-server is set: the doctor never contacts the user's default tmux server",
        );
    };
    let flag = match socket {
        SocketChoice::Named(name) => format!("-L {name}"),
        _ => format!("-S {}", file.display()),
    };
    let shown = file.display().to_string();
    let base = Check::new("server", Status::Ok, "")
        .fact("socket", shown.clone())
        .fact("tmux_flags", flag.clone());
    let meta = match std::fs::symlink_metadata(&file) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Check {
                message: format!(
                    "the isolated server (tmux {flag}) is not started yet; tmux-mcp starts it on first use"
                ),
                ..base
            }
            .fact("running", false);
        }
        Err(e) => {
            return Check {
                status: Status::Fail,
                message: format!("cannot read {shown}: {e}"),
                ..base
            }
            .hint("Check the permissions of the socket directory");
        }
    };
    if !meta.file_type().is_socket() {
        return Check {
            status: Status::Fail,
            message: format!("{shown} exists but is not a socket"),
            ..base
        }
        .hint("Remove the file or choose another socket");
    }
    // Connecting and closing at once: tmux sees a client that went away
    // without a word. Nothing is started and no command is sent.
    match std::os::unix::net::UnixStream::connect(&file) {
        Ok(stream) => {
            drop(stream);
            Check {
                message: format!("the isolated server (tmux {flag}) is running and reachable"),
                ..base
            }
            .fact("running", true)
        }
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => Check {
            message: format!(
                "no server listens on {shown} (a socket left by a server that exited); tmux-mcp starts a new one on first use"
            ),
            ..base
        }
        .fact("running", false),
        Err(e) => Check {
            status: Status::Fail,
            message: format!("cannot connect to {shown}: {e}"),
            ..base
        }
        .hint("Check that the socket belongs to you and has mode 0600 or 0700")
        .fact("running", Value::Null),
    }
}

fn state_dir_check(dir: &Path) -> Check {
    let shown = dir.display().to_string();
    let meta = match std::fs::symlink_metadata(dir) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Check::new(
                "state_dir",
                Status::Ok,
                format!(
                    "{shown} does not exist yet; tmux-mcp creates it with mode 0700 on first use"
                ),
            )
            .fact("path", shown)
            .fact("exists", false);
        }
        Err(e) => {
            return Check::new(
                "state_dir",
                Status::Fail,
                format!("cannot read {shown}: {e}"),
            )
            .hint("Set --state-dir (TMUX_MCP_STATE_DIR) to a directory only you can write")
            .fact("path", shown);
        }
    };
    let mode = meta.permissions().mode();
    let base = Check::new("state_dir", Status::Ok, "")
        .fact("path", shown.clone())
        .fact("exists", true)
        .fact("mode", mode_text(mode));
    if !meta.is_dir() {
        return Check {
            status: Status::Fail,
            message: format!("{shown} is not a directory (or is a symbolic link)"),
            ..base
        }
        .hint("Set --state-dir (TMUX_MCP_STATE_DIR) to a directory only you can write");
    }
    if meta.uid() != guard::current_uid() {
        return Check {
            status: Status::Fail,
            message: format!("{shown} belongs to another user ({})", meta.uid()),
            ..base
        }
        .hint("Set --state-dir (TMUX_MCP_STATE_DIR) to a directory of your own");
    }
    if mode & 0o077 != 0 {
        return Check {
            status: Status::Warn,
            message: format!(
                "{shown} has mode {}; tmux-mcp narrows it to 0700 when it next starts a server",
                mode_text(mode)
            ),
            ..base
        }
        .hint(format!("chmod 700 {shown}"));
    }
    Check {
        message: format!("{shown} (mode {})", mode_text(mode)),
        ..base
    }
}

fn shell_check(shell: Option<PathBuf>, enabled: bool) -> Check {
    let Some(shell) = shell.filter(|s| !s.as_os_str().is_empty()) else {
        return Check::new(
            "shell_integration",
            Status::Warn,
            "SHELL is not set: new terminals run tmux's default shell, without hooks; run types its wrapped form",
        )
        .hint("Set SHELL to bash, zsh or fish for exact exit statuses and command boundaries")
        .fact("enabled", enabled);
    };
    let shown = shell.display().to_string();
    let kind = ShellKind::of(&shown);
    let base = Check::new("shell_integration", Status::Ok, "")
        .fact("shell", shown.clone())
        .fact("kind", kind.map(ShellKind::name))
        .fact("enabled", enabled);
    if !enabled {
        return Check {
            status: Status::Skipped,
            message: format!(
                "--no-shell-integration is set: {shown} runs without hooks; run types its wrapped form"
            ),
            ..base
        };
    }
    match kind {
        Some(kind) if shell.is_file() => {
            // The hooks need bash 4.4 (PS0) and fish 3; any zsh with
            // precmd and preexec (every zsh in use) has what they need.
            let (major, minor) = match kind {
                ShellKind::Bash => (4, 4),
                ShellKind::Fish => (3, 0),
                _ => (0, 0),
            };
            match version_output(&shell, "--version") {
                Ok(text) => {
                    let first = text.lines().next().unwrap_or("").trim().to_owned();
                    let version = Version::parse(&first);
                    let base = base.fact("shell_version", first.clone());
                    if version.major() != u32::MAX && !version.at_least(major, minor) {
                        Check {
                            status: Status::Warn,
                            message: format!(
                                "{shown} is {first}; the {} hooks need {major}.{minor} or later, so run types its wrapped form",
                                kind.name()
                            ),
                            ..base
                        }
                        .hint(format!("Install {} {major}.{minor} or later", kind.name()))
                    } else {
                        Check {
                            message: format!(
                                "{shown} ({first}) gets tmux-mcp's shell hooks",
                            ),
                            ..base
                        }
                    }
                }
                Err(why) => Check {
                    status: Status::Warn,
                    message: format!("{shown} ({}): cannot read its version: {why}", kind.name()),
                    ..base
                }
                .hint("Check that SHELL names a working shell"),
            }
        }
        Some(_) => Check {
            status: Status::Warn,
            message: format!("SHELL is {shown}, which does not exist"),
            ..base
        }
        .hint("Set SHELL to the path of an installed bash, zsh or fish"),
        None => Check {
            status: Status::Warn,
            message: format!(
                "{shown} has no hooks (bash, zsh and fish have): run types its wrapped form and idle detection is by silence"
            ),
            ..base
        }
        .hint("Use bash, zsh or fish as SHELL for exact exit statuses and command boundaries"),
    }
}

/// The token file of `serve --http`: `--token-file` (or
/// `TMUX_MCP_TOKEN_FILE`), else `http-token` in the state directory, as
/// `serve --http` uses. It is judged by the function `serve --http` uses,
/// [`crate::http::read_token_file`], so the doctor passes exactly the files
/// the server accepts (the token itself is read, never shown).
fn token_check(path: Option<&Path>) -> Check {
    use crate::http::TokenFileProblem;
    let Some(path) = path else {
        return Check::new(
            "token_file",
            Status::Skipped,
            "no --token-file given (TMUX_MCP_TOKEN_FILE is not set)",
        );
    };
    let shown = path.display().to_string();
    let base = Check::new("token_file", Status::Ok, "").fact("path", shown.clone());
    match crate::http::read_token_file(path) {
        Ok(None) => Check {
            message: format!("{shown} does not exist yet; serve --http creates it with mode 0600"),
            ..base
        }
        .fact("exists", false),
        Ok(Some(file)) => Check {
            message: format!("{shown} (mode {})", mode_text(file.mode)),
            ..base
        }
        .fact("exists", true)
        .fact("mode", mode_text(file.mode)),
        Err(refusal) => {
            let hint = match refusal.problem {
                TokenFileProblem::NotRegular => {
                    "Point --token-file at a regular file (not a symbolic link, FIFO or directory)"
                        .to_owned()
                }
                TokenFileProblem::OtherOwner => "Use a token file of your own".to_owned(),
                TokenFileProblem::NotPrivate => {
                    format!("chmod 600 {shown}, and replace the token if others may have read it")
                }
                TokenFileProblem::Contents => format!(
                    "Put one token of at least 16 printable characters (at most {} bytes) in {shown}, \
                     or delete it to have serve --http make a new one",
                    crate::http::MAX_TOKEN_FILE_BYTES
                ),
                TokenFileProblem::Unreadable => "Check the file and its directory".to_owned(),
            };
            let check = Check {
                status: Status::Fail,
                message: format!("{shown}: {}", refusal.reason),
                ..base
            }
            .fact("exists", true)
            .hint(hint);
            match refusal.mode {
                Some(mode) => check.fact("mode", mode_text(mode)),
                None => check,
            }
        }
    }
}

/// One check per configured host (`--host`), by its kind; none starts a
/// tmux server there:
///
/// - ssh: ssh reaches it without a prompt and the remote tmux answers
///   `-V` (`ssh -T -o BatchMode=yes -o ConnectTimeout=4 OPTIONS
///   DESTINATION tmux -V`);
/// - docker, podman, kubectl: the engine is on `PATH` and the container's
///   tmux answers `-V` (`docker exec -i CONTAINER tmux -V`,
///   `kubectl exec -i … POD … -- tmux -V`);
/// - exec: the command's program is on `PATH`; the command itself is not
///   run (it could do anything), the check says what tmux-mcp would run.
fn host_checks(config: Option<&Config>) -> Vec<Check> {
    let Some(config) = config.filter(|c| !c.hosts.is_empty()) else {
        return vec![Check::new(
            "hosts",
            Status::Skipped,
            "no remote hosts configured",
        )];
    };
    // A remote host's server is on the local socket name (else tmux-mcp's).
    let socket = match &config.socket {
        SocketChoice::Named(name) => name.clone(),
        SocketChoice::Path(_) | SocketChoice::Default => DEFAULT_SOCKET_NAME.to_owned(),
    };
    config
        .hosts
        .iter()
        .map(|host| {
            host_check(host, &config.host_tmux, &socket)
                .fact("host", Value::String(host.name.clone()))
                .fact("kind", Value::String(host.kind_name().to_owned()))
                .fact("target", Value::String(host.target()))
        })
        .collect()
}

/// The check of one host (see [`host_checks`]).
fn host_check(host: &HostSpec, remote_tmux: &str, socket: &str) -> Check {
    let name = &host.name;
    let (words, hint) = match &host.kind {
        HostKind::Ssh {
            options,
            destination,
        } => {
            let mut words: Vec<String> = [
                "ssh",
                "-T",
                "-o",
                "BatchMode=yes",
                "-o",
                "ConnectTimeout=4",
            ]
            .into_iter()
            .map(str::to_owned)
            .collect();
            words.extend(options.iter().cloned());
            words.push(destination.clone());
            words.extend([remote_tmux.to_owned(), "-V".to_owned()]);
            let hint = "Check that `ssh -o BatchMode=yes TARGET tmux -V` works without a prompt (a key or agent, a known host key) and that tmux is installed there".to_owned();
            let check = run_host_check(name, &words, "reachable over ssh", hint, "Install the OpenSSH client");
            return check.fact("destination", Value::String(destination.clone()));
        }
        HostKind::Exec { argv } => {
            let mut words = argv.clone();
            words.extend(["-L", socket, "-u", "-C", "new-session", "-A", "-s", crate::backend::HOME_SESSION].map(str::to_owned));
            let program = argv.first().map_or("", String::as_str);
            return match find_program(program) {
                Some(path) => Check::new(
                    "host",
                    Status::Ok,
                    format!(
                        "{name}: an exec: host; tmux-mcp runs `{} …`, which must hand its arguments on to tmux (the doctor does not run it: it could do anything; {program} is {})",
                        shell_words(&words),
                        path.display()
                    ),
                ),
                None => Check::new(
                    "host",
                    Status::Fail,
                    format!("{name}: the exec: command's program {program:?} is not on PATH"),
                )
                .hint("Install it, or name it by its path in the exec: command"),
            };
        }
        HostKind::Container { engine, container } => {
            let program = engine.program();
            (
                host.tmux_command(remote_tmux, false),
                format!(
                    "Check that the container {container} is running (`{program} ps`) and has tmux (on its PATH, or named by --host-tmux)"
                ),
            )
        }
        HostKind::Kubectl { .. } => (
            host.tmux_command(remote_tmux, false),
            "Check that the pod is running in kubectl's current context (`kubectl get pods`) and that its container has tmux (on its PATH, or named by --host-tmux)".to_owned(),
        ),
    };
    let mut words = words.unwrap_or_default();
    words.push("-V".to_owned());
    let program = host.kind_name();
    run_host_check(
        name,
        &words,
        &format!("reachable through {program} exec"),
        hint,
        &format!("Install {program}, or use an exec: host that names it by its path"),
    )
}

/// Runs `words` (a host's `tmux -V`, through ssh or an engine's exec) for
/// host `name`: ok with the version it printed, or failed with `hint`
/// (`install` when the program is not on `PATH`).
fn run_host_check(
    name: &str,
    words: &[String],
    reached: &str,
    hint: String,
    install: &str,
) -> Check {
    let quoted = shell_words(words);
    let Some((program, args)) = words.split_first() else {
        return Check::new("host", Status::Fail, format!("{name}: nothing to run"));
    };
    let Some(path) = find_program(program) else {
        return Check::new(
            "host",
            Status::Fail,
            format!("{name}: {program} is not on PATH (to run `{quoted}`)"),
        )
        .hint(install);
    };
    match command_output(&path, args, program) {
        Ok(out) => Check::new(
            "host",
            Status::Ok,
            format!("{name}: {reached}, {}", out.trim()),
        )
        .fact("tmux_version", Value::String(out.trim().to_owned())),
        Err(why) => Check::new(
            "host",
            Status::Fail,
            format!("{name}: not reachable as `{quoted}`: {why}"),
        )
        .hint(hint),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn versions_map_to_features() {
        let f = features(&Version::parse("3.3a"));
        assert_eq!(f["capture_trim_flag"], false);
        let f = features(&Version::parse("3.7c"));
        assert_eq!(f["paste_raw_flag"], true);
        assert_eq!(f["replies_vis_escaped"], false);
    }

    #[test]
    fn shells() {
        let c = shell_check(Some("/bin/sh".into()), true);
        assert_eq!(c.status, Status::Warn);
        let c = shell_check(None, true);
        assert_eq!(c.status, Status::Warn);
        let c = shell_check(Some("/bin/bash".into()), false);
        assert_eq!(c.status, Status::Skipped);
    }

    #[test]
    fn a_missing_program_fails_with_a_hint() {
        let c = tmux_check("/nonexistent/tmux");
        assert_eq!(c.status, Status::Fail);
        assert!(c.hint.unwrap().contains("--tmux"));
    }

    #[test]
    fn host_checks_follow_the_kind() {
        let config = |specs: &[&str]| Config {
            hosts: specs.iter().map(|s| HostSpec::parse(s).unwrap()).collect(),
            socket: SocketChoice::Named("work".into()),
            ..Config::default()
        };
        let [c] = &host_checks(Some(&config(&[])))[..] else {
            panic!()
        };
        assert_eq!((c.name, c.status), ("hosts", Status::Skipped));
        let checks = host_checks(Some(&config(&[
            r#"vm=exec:sh -c 'exec tmux "$@"' sh"#,
            "nope=exec:/nonexistent/tmux-wrapper -x",
        ])));
        let [vm, nope] = &checks[..] else {
            panic!("{checks:?}")
        };
        assert_eq!(vm.status, Status::Ok, "{vm:?}");
        assert!(
            vm.message.contains(
                r#"tmux-mcp runs `sh -c 'exec tmux "$@"' sh -L work -u -C new-session -A -s tmux-mcp-control …`"#
            ),
            "{}",
            vm.message
        );
        assert!(vm.message.contains("does not run it"), "{}", vm.message);
        assert_eq!(vm.facts["kind"], "exec");
        assert_eq!(nope.status, Status::Fail);
        assert!(nope.message.contains("not on PATH"), "{}", nope.message);
        assert!(nope.hint.as_ref().unwrap().contains("by its path"));
        assert_eq!(nope.facts["host"], "nope");
        assert_eq!(nope.facts["target"], "/nonexistent/tmux-wrapper -x");
    }

    #[test]
    fn a_failed_command_is_quoted() {
        let sh = find_program("sh").unwrap();
        let args = [
            "-c".to_owned(),
            "echo out; echo 'W1 warning' >&2; echo 'Error: No such container: x' >&2; echo >&2; exit 1".to_owned(),
        ];
        let e = command_output(&sh, &args, "docker").unwrap_err();
        assert!(
            e.ends_with("`docker` failed (exit status: 1): Error: No such container: x"),
            "{e}"
        );
        let args = ["-c".to_owned(), "echo fine".to_owned()];
        assert_eq!(command_output(&sh, &args, "sh").unwrap(), "fine\n");
    }

    #[test]
    fn json_has_every_field() {
        let report = Report {
            checks: vec![Check::new("x", Status::Fail, "m").fact("k", 1)],
        };
        let v = report.to_json();
        assert_eq!(v["ok"], false);
        assert_eq!(v["checks"][0]["k"], 1);
        assert_eq!(v["checks"][0]["hint"], Value::Null);
        assert!(report.to_table().contains("1 check failed"));
    }
}
