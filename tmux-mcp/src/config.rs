//! Configuration: command-line flags, the environment variables that mirror
//! them, and the validated [`Config`] the server runs with.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Parser, ValueEnum};

use crate::toolsets::ToolSelection;

/// The socket name used when nothing else is configured (`tmux -L tmux-mcp`).
pub const DEFAULT_SOCKET_NAME: &str = "tmux-mcp";

/// The fewest scrollback lines `--history-limit` accepts.
pub const MIN_HISTORY_LIMIT: u32 = 100;

/// The most scrollback lines `--history-limit` accepts: tmux's own maximum
/// for `history-limit` (`INT_MAX`); a larger value would make tmux refuse
/// the configuration file tmux-mcp writes.
pub const MAX_HISTORY_LIMIT: u32 = i32::MAX as u32;

pub use crate::config_error::ConfigError;

/// Which tmux server the tools act on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SocketChoice {
    /// `tmux -L NAME` (in `$TMUX_TMPDIR` or `/tmp`, under `tmux-UID/`).
    Named(String),
    /// `tmux -S PATH`.
    Path(PathBuf),
    /// The user's default server (what a bare `tmux` uses).
    Default,
}

/// Diagnostic verbosity accepted by `--log-level`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogLevel {
    /// No diagnostics at all.
    Off,
    /// Errors only.
    Error,
    /// Errors and warnings.
    Warn,
    /// Also lifecycle events such as start and stop.
    Info,
    /// Also per-request details.
    Debug,
    /// Everything, including rmcp's internals.
    Trace,
}

/// Command-line interface of `tmux-mcp`. Every flag except
/// `--no-default-redactions` can also be given by the environment variable
/// named in its help; a flag wins over its variable.
#[derive(Debug, Clone, Parser)]
#[command(
    name = "tmux-mcp",
    version,
    about = "An MCP server that gives AI agents tmux terminals.",
    long_about = "An MCP server that gives AI agents tmux terminals.\n\n\
        With no subcommand it speaks MCP over stdio: start it from an MCP client, which \
        writes JSON-RPC requests to its standard input and reads responses from its \
        standard output. `serve --http` and `serve --unix` serve several clients; \
        `bridge` joins a stdio client to a `serve --unix` server; `doctor` checks the set-up. \
        By default it drives its own tmux server on the socket `tmux -L tmux-mcp`, \
        started on first use; watch any terminal with `tmux -L tmux-mcp attach -t NAME`. \
        Diagnostics are written to standard error."
)]
pub struct Cli {
    /// What to do: serve (the default, over stdio), bridge or doctor.
    #[command(subcommand)]
    pub command: Option<Command>,

    /// The name this client is known by in the audit log and in replies
    /// that say who last typed into a terminal [default: the MCP client's
    /// name from `initialize`].
    #[arg(long, global = true, env = "TMUX_MCP_ACTOR")]
    pub actor: Option<String>,

    /// Most verbose level of diagnostics written to standard error.
    #[arg(long, global = true, value_enum, default_value_t = LogLevel::Warn, env = "TMUX_MCP_LOG_LEVEL")]
    pub log_level: LogLevel,

    /// Comma-separated toolsets to serve: inspect, manage, execute, teardown.
    #[arg(
        long,
        global = true,
        env = "TMUX_MCP_TOOLSETS",
        value_delimiter = ',',
        default_value = "inspect,manage,execute"
    )]
    pub toolsets: Vec<String>,

    /// Comma-separated tools to serve in addition to the toolsets.
    #[arg(long, global = true, env = "TMUX_MCP_TOOLS", value_delimiter = ',')]
    pub tools: Vec<String>,

    /// Comma-separated tools never to serve (wins over everything else).
    #[arg(
        long,
        global = true,
        env = "TMUX_MCP_EXCLUDE_TOOLS",
        value_delimiter = ','
    )]
    pub exclude_tools: Vec<String>,

    /// Use the tmux server on this socket name (`tmux -L NAME`) [default: tmux-mcp].
    #[arg(long, global = true, env = "TMUX_MCP_SOCKET_NAME")]
    pub socket_name: Option<String>,

    /// Use the tmux server on this socket path (`tmux -S PATH`).
    #[arg(long, global = true, env = "TMUX_MCP_SOCKET_PATH")]
    pub socket_path: Option<PathBuf>,

    /// Use the user's default tmux server (the one a bare `tmux` uses).
    /// Only with this explicit flag (or the variable set to true, 1, yes or on).
    #[arg(
        long, global = true,
        env = "TMUX_MCP_DEFAULT_SERVER",
        action = clap::ArgAction::SetTrue,
        value_parser = clap::builder::BoolishValueParser::new()
    )]
    pub default_server: bool,

    /// The tmux program to run.
    #[arg(
        long = "tmux",
        global = true,
        env = "TMUX_MCP_TMUX",
        default_value = "tmux"
    )]
    pub tmux_program: String,

    /// history-limit written to the configuration of a tmux server that
    /// tmux-mcp starts itself (not used for the default server): 100 to
    /// 2147483647 lines.
    #[arg(
        long,
        global = true,
        env = "TMUX_MCP_HISTORY_LIMIT",
        default_value_t = 50_000
    )]
    pub history_limit: u32,

    /// Size budget of a whole reply of run, read_output and the waits, in
    /// bytes (text content and structured content together, as sent):
    /// pane text is shaped to fit, with directions to read the rest.
    #[arg(
        long,
        global = true,
        env = "TMUX_MCP_MAX_REPLY_BYTES",
        default_value_t = 8192
    )]
    pub max_reply_bytes: usize,

    /// The largest budget a call may ask for with max_bytes, and the most
    /// bytes of pane text in one capture_screen or search_output reply.
    #[arg(
        long,
        global = true,
        env = "TMUX_MCP_MAX_OUTPUT_BYTES",
        default_value_t = 40_000
    )]
    pub max_output_bytes: usize,

    /// Seconds a wait lasts when the call names no timeout.
    #[arg(
        long,
        global = true,
        env = "TMUX_MCP_DEFAULT_WAIT_SECS",
        default_value_t = 30.0
    )]
    pub default_wait_secs: f64,

    /// The longest wait a call may ask for, in seconds.
    #[arg(
        long,
        global = true,
        env = "TMUX_MCP_MAX_WAIT_SECS",
        default_value_t = 60.0
    )]
    pub max_wait_secs: f64,

    /// Bytes of output remembered per followed pane.
    #[arg(long, global = true, env = "TMUX_MCP_PANE_LOG_BYTES", default_value_t = 2 << 20)]
    pub pane_log_bytes: usize,

    /// Bytes of cooked log kept per terminal, on disk in the state
    /// directory (so it outlives tmux's history-limit and a restart of
    /// tmux-mcp) and in memory; at least 65536.
    #[arg(long, global = true, env = "TMUX_MCP_LOG_BYTES", default_value_t = 8 << 20)]
    pub log_bytes: u64,

    /// Append one JSON line per tool call to this file (created with mode 0600).
    #[arg(long, global = true, env = "TMUX_MCP_AUDIT_LOG")]
    pub audit_log: Option<PathBuf>,

    /// A regular expression whose matches are masked in pane text returned
    /// to the model (repeatable; in the variable, one pattern per line). A
    /// group named `secret` masks only that group.
    #[arg(
        long = "redact",
        global = true,
        env = "TMUX_MCP_REDACT",
        value_delimiter = '\n'
    )]
    pub redact: Vec<String>,

    /// Do not apply the built-in secret patterns (API keys, tokens, bearer
    /// headers, passwords, private keys). Flag only: no environment variable.
    #[arg(long, global = true)]
    pub no_default_redactions: bool,

    /// Directory for the tmux configuration file tmux-mcp writes (created
    /// with mode 0700) [default: $XDG_RUNTIME_DIR/tmux-mcp or $TMPDIR/tmux-mcp-UID].
    #[arg(long, global = true, env = "TMUX_MCP_STATE_DIR")]
    pub state_dir: Option<PathBuf>,

    /// Do not install shell integration in the shells of new terminals
    /// (`run` then types its wrapped form, as for shells without hooks).
    #[arg(long, global = true, env = "TMUX_MCP_NO_SHELL_INTEGRATION")]
    pub no_shell_integration: bool,

    /// A tmux server on another machine, reached over ssh: `NAME=SSH_TARGET`,
    /// where SSH_TARGET is the destination, optionally after ssh options
    /// (`box=-p 2222 -i ~/.ssh/box me@box.example`; words split as a shell
    /// would). Repeatable; in the variable, one per line or comma-separated.
    /// Tools take the host as their `host` argument.
    #[arg(
        long = "host",
        global = true,
        env = "TMUX_MCP_HOSTS",
        value_name = "NAME=SSH_TARGET"
    )]
    pub hosts: Vec<String>,

    /// A file of hosts, one `NAME=SSH_TARGET` a line (blank lines and lines
    /// starting with `#` are skipped); added to the `--host` flags.
    #[arg(long, global = true, env = "TMUX_MCP_HOSTS_FILE")]
    pub hosts_file: Option<PathBuf>,

    /// The tmux program on the remote hosts (found on the remote PATH).
    #[arg(
        long,
        global = true,
        env = "TMUX_MCP_HOST_TMUX",
        default_value = "tmux"
    )]
    pub host_tmux: String,
}

/// The subcommands of `tmux-mcp`. With none, it serves MCP over stdio.
#[derive(Debug, Clone, clap::Subcommand)]
#[non_exhaustive]
pub enum Command {
    /// Serve MCP: over stdio (the default), loopback HTTP (`--http`) or a
    /// unix socket shared by several clients (`--unix`).
    Serve(ServeArgs),
    /// A stdio MCP server that forwards to a shared `serve --unix` server,
    /// so any stdio client can join it.
    Bridge(BridgeArgs),
    /// Check the set-up (tmux, sockets, shell integration, hosts, token) and
    /// say what is wrong.
    Doctor(DoctorArgs),
}

/// Flags of `tmux-mcp serve`.
#[derive(Debug, Clone, Default, clap::Args)]
#[non_exhaustive]
pub struct ServeArgs {
    /// Serve streamable HTTP on this address (loopback unless
    /// `--allow-remote`), e.g. 127.0.0.1:8765.
    #[arg(long, conflicts_with = "unix")]
    pub http: Option<String>,
    /// Serve MCP to several clients on this unix socket (see `bridge`).
    #[arg(long)]
    pub unix: Option<PathBuf>,
    /// The bearer token file for `--http` (created with mode 0600 on first use).
    #[arg(long, env = "TMUX_MCP_TOKEN_FILE")]
    pub token_file: Option<PathBuf>,
    /// Allow `--http` on an address that is not loopback (the token is
    /// still required).
    #[arg(long)]
    pub allow_remote: bool,
}

/// Flags of `tmux-mcp bridge`.
#[derive(Debug, Clone, clap::Args)]
#[non_exhaustive]
pub struct BridgeArgs {
    /// The shared server's unix socket (`tmux-mcp serve --unix PATH`).
    #[arg(long)]
    pub unix: PathBuf,
    /// How long a call waits for the server while it is not reachable
    /// (starting or restarting), in seconds, before it is answered with an
    /// error.
    #[arg(long, default_value_t = 10.0, env = "TMUX_MCP_BRIDGE_WAIT_SECS")]
    pub wait_secs: f64,
}

/// Flags of `tmux-mcp doctor`.
#[derive(Debug, Clone, Default, clap::Args)]
#[non_exhaustive]
pub struct DoctorArgs {
    /// Print the findings as one JSON object.
    #[arg(long)]
    pub json: bool,
    /// The bearer token file of `serve --http` whose mode to check (it must
    /// be 0600); nothing is checked without it, as there is no default path.
    #[arg(long, env = "TMUX_MCP_TOKEN_FILE")]
    pub token_file: Option<PathBuf>,
}

/// The validated configuration.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Config {
    /// The tools served.
    pub tools: ToolSelection,
    /// The tmux server the tools act on.
    pub socket: SocketChoice,
    /// The tmux program.
    pub tmux_program: String,
    /// history-limit for a server tmux-mcp starts.
    pub history_limit: u32,
    /// Default size budget of a whole reply (run, read_output, waits).
    pub max_reply_bytes: usize,
    /// Largest budget a call may ask for; pane text per capture reply.
    pub max_output_bytes: usize,
    /// Wait length when a call names none.
    pub default_wait: Duration,
    /// Longest wait a call may ask for.
    pub max_wait: Duration,
    /// Bytes of output remembered per followed pane.
    pub pane_log_bytes: usize,
    /// Bytes of cooked log kept per terminal (disk and memory).
    pub log_bytes: u64,
    /// Where the audit log goes, if anywhere.
    pub audit_log: Option<PathBuf>,
    /// Whether the built-in redaction patterns apply.
    pub default_redactions: bool,
    /// Operator redaction patterns.
    pub extra_redactions: Vec<String>,
    /// Directory for the generated tmux configuration.
    pub state_dir: Option<PathBuf>,
    /// Whether new terminals' shells get the shell integration hooks.
    pub shell_integration: bool,
    /// The remote hosts, in the order given.
    pub hosts: Vec<HostSpec>,
    /// The tmux program on the remote hosts.
    pub host_tmux: String,
    /// The actor name of sessions that name none themselves (`--actor`;
    /// see [`crate::actors`]).
    pub actor: Option<String>,
}

/// The name tools use for the machine tmux-mcp runs on (the `host`
/// argument left out means the same).
pub const LOCAL_HOST: &str = "local";

/// The longest host name accepted.
pub const MAX_HOST_NAME: usize = 32;

/// A remote host: a tmux server on another machine, reached over ssh.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct HostSpec {
    /// The name tools use for it (`host` argument).
    pub name: String,
    /// The ssh options, in order (may be empty).
    pub ssh_options: Vec<String>,
    /// The ssh destination (`[user@]host`, or an alias of the user's ssh
    /// configuration).
    pub destination: String,
}

impl HostSpec {
    /// Reads one `NAME=SSH_TARGET`.
    pub fn parse(spec: &str) -> Result<Self, ConfigError> {
        let bad = |reason: String| ConfigError::BadHost {
            spec: spec.trim().to_owned(),
            reason,
        };
        let (name, target) = spec
            .split_once('=')
            .ok_or_else(|| bad("it has no '=' (write NAME=SSH_TARGET)".into()))?;
        let name = name.trim();
        check_host_name(name).map_err(bad)?;
        let mut words = shlex::split(target.trim())
            .ok_or_else(|| bad("the ssh target has an unclosed quote".into()))?;
        let destination = words
            .pop()
            .ok_or_else(|| bad("the ssh target is empty".into()))?;
        if destination.starts_with('-') {
            return Err(bad(format!(
                "the ssh target must end with the destination, not the option {destination:?}"
            )));
        }
        if let Some(c) = target.chars().find(|c| c.is_control() && *c != '\t') {
            return Err(bad(format!(
                "the ssh target contains the control character {c:?}"
            )));
        }
        Ok(Self {
            name: name.to_owned(),
            ssh_options: words,
            destination,
        })
    }

    /// The ssh arguments: the options, then the destination.
    pub fn ssh_args(&self) -> Vec<String> {
        let mut args = self.ssh_options.clone();
        args.push(self.destination.clone());
        args
    }
}

/// A host name: a letter, then up to 31 letters, digits, `-` or `_`; not
/// `local`.
fn check_host_name(name: &str) -> Result<(), String> {
    let mut chars = name.chars();
    let shaped = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if !shaped || name.len() > MAX_HOST_NAME {
        return Err(format!(
            "the host name {name:?} must be a letter followed by at most {} letters, digits, '-' or '_'",
            MAX_HOST_NAME - 1
        ));
    }
    if name.eq_ignore_ascii_case(LOCAL_HOST) {
        return Err(format!(
            "the host name {name:?} is reserved for the machine tmux-mcp runs on"
        ));
    }
    Ok(())
}

/// Splits the values of `--host` / `TMUX_MCP_HOSTS` into single host
/// specs: at newlines, and at commas that start a new `NAME=` (a comma
/// inside ssh options, as in `-o Ciphers=a,b`, stays).
fn split_host_values(values: &[String]) -> Vec<String> {
    let starts_spec = |rest: &str| {
        let rest = rest.trim_start();
        rest.split_once('=').is_some_and(|(name, _)| {
            check_host_name(name.trim()).is_ok() && !name.trim().is_empty()
        })
    };
    let mut specs = Vec::new();
    for value in values {
        for line in value.lines() {
            let mut current = String::new();
            let mut rest = line;
            while let Some(at) = rest.find(',') {
                let (head, tail) = (&rest[..at], &rest[at + 1..]);
                current.push_str(head);
                if starts_spec(tail) {
                    specs.push(std::mem::take(&mut current));
                } else {
                    current.push(',');
                }
                rest = tail;
            }
            current.push_str(rest);
            specs.push(current);
        }
    }
    specs.into_iter().filter(|s| !s.trim().is_empty()).collect()
}

/// The hosts of the command line, the variable and the hosts file, checked
/// for duplicates.
fn hosts_from_cli(cli: &Cli) -> Result<Vec<HostSpec>, ConfigError> {
    let mut specs = split_host_values(&cli.hosts);
    if let Some(path) = &cli.hosts_file {
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError::HostsFile {
            path: path.display().to_string(),
            reason: e.to_string(),
        })?;
        specs.extend(
            text.lines()
                .map(str::trim)
                .filter(|l| !l.is_empty() && !l.starts_with('#'))
                .map(str::to_owned),
        );
    }
    let mut hosts: Vec<HostSpec> = Vec::new();
    for spec in specs {
        let host = HostSpec::parse(&spec)?;
        if hosts.iter().any(|h| h.name == host.name) {
            return Err(ConfigError::BadHost {
                spec: spec.trim().to_owned(),
                reason: format!("the host name {:?} is given twice", host.name),
            });
        }
        hosts.push(host);
    }
    Ok(hosts)
}

impl Default for Config {
    fn default() -> Self {
        Self {
            tools: ToolSelection::default(),
            socket: SocketChoice::Named(DEFAULT_SOCKET_NAME.to_owned()),
            tmux_program: "tmux".to_owned(),
            history_limit: 50_000,
            max_reply_bytes: 8192,
            max_output_bytes: 40_000,
            default_wait: Duration::from_secs(30),
            max_wait: Duration::from_secs(60),
            pane_log_bytes: 2 << 20,
            log_bytes: 8 << 20,
            audit_log: None,
            default_redactions: true,
            extra_redactions: Vec::new(),
            state_dir: None,
            shell_integration: true,
            hosts: Vec::new(),
            host_tmux: "tmux".to_owned(),
            actor: None,
        }
    }
}

impl Config {
    /// The defaults, acting on the server at socket `path` (`tmux -S`).
    pub fn for_socket_path(path: impl Into<PathBuf>) -> Self {
        Self {
            socket: SocketChoice::Path(path.into()),
            ..Self::default()
        }
    }

    /// Validates the command line.
    pub fn from_cli(cli: &Cli) -> Result<Self, ConfigError> {
        let tools = ToolSelection::resolve(&cli.toolsets, &cli.tools, &cli.exclude_tools)?;
        let socket = match (&cli.socket_name, &cli.socket_path, cli.default_server) {
            (Some(_), Some(_), _) | (Some(_), _, true) | (_, Some(_), true) => {
                return Err(ConfigError::Conflict(
                    "choose one of --socket-name, --socket-path and --default-server".into(),
                ));
            }
            (Some(name), None, false) => {
                if name.is_empty() || name.contains('/') {
                    return Err(ConfigError::OutOfRange(format!(
                        "--socket-name {name:?} must be a non-empty name without '/'; use --socket-path for a path"
                    )));
                }
                SocketChoice::Named(name.clone())
            }
            (None, Some(path), false) => SocketChoice::Path(path.clone()),
            (None, None, true) => SocketChoice::Default,
            (None, None, false) => SocketChoice::Named(DEFAULT_SOCKET_NAME.to_owned()),
        };
        let secs = |v: f64, flag: &str| {
            if v.is_finite() && v > 0.0 && v <= 3600.0 {
                Ok(Duration::from_secs_f64(v))
            } else {
                Err(ConfigError::OutOfRange(format!(
                    "{flag} must be between 0 and 3600 seconds, not {v}"
                )))
            }
        };
        let default_wait = secs(cli.default_wait_secs, "--default-wait-secs")?;
        let max_wait = secs(cli.max_wait_secs, "--max-wait-secs")?;
        if default_wait > max_wait {
            return Err(ConfigError::Conflict(format!(
                "--default-wait-secs ({}) is longer than --max-wait-secs ({})",
                cli.default_wait_secs, cli.max_wait_secs
            )));
        }
        if !(MIN_HISTORY_LIMIT..=MAX_HISTORY_LIMIT).contains(&cli.history_limit) {
            return Err(ConfigError::OutOfRange(format!(
                "--history-limit must be between {MIN_HISTORY_LIMIT} and {MAX_HISTORY_LIMIT} lines (tmux's maximum), not {}",
                cli.history_limit
            )));
        }
        if cli.max_output_bytes < 1024 {
            return Err(ConfigError::OutOfRange(
                "--max-output-bytes must be at least 1024".into(),
            ));
        }
        if cli.max_reply_bytes < 2048 {
            return Err(ConfigError::OutOfRange(
                "--max-reply-bytes must be at least 2048".into(),
            ));
        }
        if cli.pane_log_bytes < 64 * 1024 {
            return Err(ConfigError::OutOfRange(
                "--pane-log-bytes must be at least 65536".into(),
            ));
        }
        if cli.log_bytes < 64 * 1024 {
            return Err(ConfigError::OutOfRange(
                "--log-bytes must be at least 65536".into(),
            ));
        }
        let extra_redactions: Vec<String> = cli
            .redact
            .iter()
            .filter(|p| !p.trim().is_empty())
            .cloned()
            .collect();
        for pattern in &extra_redactions {
            if let Err(e) = regex::Regex::new(pattern) {
                return Err(ConfigError::BadRedaction {
                    pattern: pattern.clone(),
                    reason: e.to_string(),
                });
            }
        }
        Ok(Self {
            tools,
            socket,
            tmux_program: cli.tmux_program.clone(),
            history_limit: cli.history_limit,
            max_reply_bytes: cli.max_reply_bytes,
            max_output_bytes: cli.max_output_bytes,
            default_wait,
            max_wait,
            pane_log_bytes: cli.pane_log_bytes,
            log_bytes: cli.log_bytes,
            audit_log: cli.audit_log.clone(),
            default_redactions: !cli.no_default_redactions,
            extra_redactions,
            state_dir: cli.state_dir.clone(),
            shell_integration: !cli.no_shell_integration,
            hosts: hosts_from_cli(cli)?,
            host_tmux: cli.host_tmux.clone(),
            actor: cli.actor.as_deref().and_then(crate::actors::clean),
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Config, ConfigError> {
        let mut argv = vec!["tmux-mcp"];
        argv.extend_from_slice(args);
        Config::from_cli(&Cli::try_parse_from(argv).unwrap())
    }

    #[test]
    fn defaults() {
        let c = parse(&[]).unwrap();
        assert_eq!(c.socket, SocketChoice::Named("tmux-mcp".into()));
        assert!(c.tools.is_enabled("run"));
        assert!(!c.tools.is_enabled("kill_session"));
        assert_eq!(c.default_wait, Duration::from_secs(30));
        assert!(c.default_redactions);
    }

    #[test]
    fn sockets_and_conflicts() {
        assert_eq!(
            parse(&["--socket-path", "/tmp/x"]).unwrap().socket,
            SocketChoice::Path("/tmp/x".into())
        );
        assert_eq!(
            parse(&["--default-server"]).unwrap().socket,
            SocketChoice::Default
        );
        assert!(matches!(
            parse(&["--socket-name", "a", "--default-server"]),
            Err(ConfigError::Conflict(_))
        ));
        assert!(matches!(
            parse(&["--socket-name", "a", "--socket-path", "/x"]),
            Err(ConfigError::Conflict(_))
        ));
        assert!(parse(&["--socket-name", "a/b"]).is_err());
    }

    #[test]
    fn bad_values_are_refused() {
        assert!(matches!(
            parse(&["--toolsets", "inspect,bogus"]),
            Err(ConfigError::UnknownToolset { .. })
        ));
        assert!(matches!(
            parse(&["--redact", "(unclosed"]),
            Err(ConfigError::BadRedaction { .. })
        ));
        assert!(parse(&["--default-wait-secs", "90"]).is_err());
        assert!(parse(&["--max-output-bytes", "10"]).is_err());
        for bad in ["99", "0", "2147483648", "4294967295"] {
            let err = parse(&["--history-limit", bad]).unwrap_err();
            assert!(matches!(err, ConfigError::OutOfRange(_)), "{bad}: {err}");
            let message = err.to_string();
            assert!(message.contains("--history-limit"), "{message}");
            assert!(message.contains("100 and 2147483647"), "{message}");
            assert!(message.contains(&format!("not {bad}")), "{message}");
        }
        for good in ["100", "50000", "2147483647"] {
            let c = parse(&["--history-limit", good]).unwrap();
            assert_eq!(c.history_limit.to_string(), good);
        }
        assert!(parse(&["--max-reply-bytes", "1000"]).is_err());
        assert_eq!(parse(&[]).unwrap().max_reply_bytes, 8192);
        let c = parse(&[
            "--toolsets",
            "inspect,teardown",
            "--exclude-tools",
            "kill_server",
        ])
        .unwrap();
        assert!(c.tools.is_enabled("kill_pane"));
        assert!(!c.tools.is_enabled("kill_server"));
        assert!(!c.tools.is_enabled("run"));
        assert!(
            !parse(&["--no-default-redactions"])
                .unwrap()
                .default_redactions
        );
    }

    fn host_error(args: &[&str]) -> String {
        match parse(args) {
            Err(e @ ConfigError::BadHost { .. }) => e.to_string(),
            other => panic!("{args:?}: expected a BadHost error, got {other:?}"),
        }
    }

    #[test]
    fn hosts_are_parsed() {
        let c = parse(&[
            "--host",
            "box=me@box.example",
            "--host",
            "ci-2=-p 2222 -i '/keys/my key' -o Ciphers=a,b root@10.0.0.2",
        ])
        .unwrap();
        assert_eq!(c.hosts.len(), 2);
        assert_eq!(c.hosts[0].name, "box");
        assert_eq!(c.hosts[0].ssh_args(), ["me@box.example"]);
        assert_eq!(c.hosts[1].name, "ci-2");
        assert_eq!(
            c.hosts[1].ssh_args(),
            [
                "-p",
                "2222",
                "-i",
                "/keys/my key",
                "-o",
                "Ciphers=a,b",
                "root@10.0.0.2"
            ]
        );
        assert_eq!(c.host_tmux, "tmux");
        assert!(parse(&[]).unwrap().hosts.is_empty());
    }

    #[test]
    fn host_values_split_at_newlines_and_commas_before_a_name() {
        let specs = split_host_values(&["a=x,b=-o Ciphers=c,d y\nc=z".to_owned()]);
        assert_eq!(specs, ["a=x", "b=-o Ciphers=c,d y", "c=z"]);
    }

    #[test]
    fn bad_hosts_are_refused_clearly() {
        let e = host_error(&["--host", "box"]);
        assert!(e.contains("no '='"), "{e}");
        let e = host_error(&["--host", "local=me@x"]);
        assert!(e.contains("reserved"), "{e}");
        let e = host_error(&["--host", "LOCAL=me@x"]);
        assert!(e.contains("reserved"), "{e}");
        for bad in [
            "1box=x",
            "b.x=x",
            "=x",
            "a b=x",
            &format!("{}=x", "a".repeat(33)),
        ] {
            let e = host_error(&["--host", bad]);
            assert!(e.contains("must be a letter"), "{bad}: {e}");
        }
        let e = host_error(&["--host", "box=a@b", "--host", "box=c@d"]);
        assert!(e.contains("given twice"), "{e}");
        let e = host_error(&["--host", "box="]);
        assert!(e.contains("empty"), "{e}");
        let e = host_error(&["--host", "box=me@x -p"]);
        assert!(e.contains("end with the destination"), "{e}");
        let e = host_error(&["--host", "box=-i 'key me@x"]);
        assert!(e.contains("unclosed quote"), "{e}");
        assert!(e.contains("TMUX_MCP_HOSTS"), "{e}");
    }

    #[test]
    fn hosts_file_adds_hosts() {
        let dir = std::env::temp_dir().join(format!("tmux-mcp-hosts-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("hosts");
        std::fs::write(&file, "# my hosts\n\nbuild = -p 22 ci@build\n").unwrap();
        let f = file.to_str().unwrap();
        let c = parse(&["--hosts-file", f, "--host", "box=me@box"]).unwrap();
        let names: Vec<&str> = c.hosts.iter().map(|h| h.name.as_str()).collect();
        assert_eq!(names, ["box", "build"]);
        assert_eq!(c.hosts[1].ssh_args(), ["-p", "22", "ci@build"]);
        // A name in both the flags and the file is a duplicate.
        let e = host_error(&["--hosts-file", f, "--host", "build=x"]);
        assert!(e.contains("given twice"), "{e}");
        let missing = dir.join("missing");
        let e = parse(&["--hosts-file", missing.to_str().unwrap()]).unwrap_err();
        assert!(matches!(e, ConfigError::HostsFile { .. }), "{e}");
        assert!(e.to_string().contains("missing"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
