//! Configuration: command-line flags, the environment variables that mirror
//! them, and the validated [`Config`] the server runs with.
//!
//! The bottom layer of the crate: it imports nothing else of it. Split by
//! concern: the clap types of the command line are in `cli.rs`, the
//! `--host` specs and their parsing in `hosts.rs`, the toolsets (which
//! tools exist and which are enabled) in [`toolsets`], why a configuration
//! cannot be used in [`error`]; here the [`Config`] is built from them and
//! checked, the socket is chosen, and an actor name is cleaned.

use std::path::PathBuf;
use std::time::Duration;

use toolsets::ToolSelection;

mod cli;
pub mod error;
mod host_list;
mod hosts;
mod secret;
pub mod toolsets;

pub use cli::{
    BridgeArgs, CallArgs, Channel, Cli, Command, DoctorArgs, HumanInput, LogLevel, ServeArgs,
    WebKeyAction, WebKeyArgs, WebKeyScope,
};
use host_list::hosts_from_cli;
pub use hosts::{Engine, HostKind, HostSpec, LOCAL_HOST, MAX_HOST_NAME};
pub(crate) use secret::webhook_secret;

/// The socket name used when nothing else is configured (`tmux -L tmux-mcp`).
pub const DEFAULT_SOCKET_NAME: &str = "tmux-mcp";

/// The fewest scrollback lines `--history-limit` accepts.
pub const MIN_HISTORY_LIMIT: u32 = 100;

/// The most scrollback lines `--history-limit` accepts: tmux's own maximum
/// for `history-limit` (`INT_MAX`); a larger value would make tmux refuse
/// the configuration file tmux-mcp writes.
pub const MAX_HISTORY_LIMIT: u32 = i32::MAX as u32;

pub use error::ConfigError;

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
    /// Whether `run` loads the hooks into shells that run without them
    /// (`--integrate-existing`).
    pub integrate_existing: bool,
    /// What the tools that type do when a person is at the terminal
    /// (`--human-input`).
    pub human_input: HumanInput,
    /// How many attention events are kept (`--attention-events`).
    pub attention_events: usize,
    /// Whether people's tmux clients are shown attention events.
    pub notify_clients: bool,
    /// Where attention events are pushed as client notifications.
    pub channel: Option<Channel>,
    /// The webhook attention events are posted to, and its secret.
    pub notify_webhook: Option<(String, Vec<u8>)>,
    /// The remote hosts, in the order given.
    pub hosts: Vec<HostSpec>,
    /// The tmux program on the remote hosts.
    pub host_tmux: String,
    /// The actor name of sessions that name none themselves (`--actor`;
    /// see `crate::mcp::actors`).
    pub actor: Option<String>,
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
            integrate_existing: false,
            human_input: HumanInput::Refuse,
            attention_events: 1000,
            notify_clients: true,
            channel: None,
            notify_webhook: None,
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
        if cli.attention_events < 16 {
            return Err(ConfigError::OutOfRange(
                "--attention-events must be at least 16".into(),
            ));
        }
        let notify_webhook = match &cli.notify_webhook {
            None => None,
            Some(url) => {
                let secret = std::env::var("TMUX_MCP_WEBHOOK_SECRET").map_err(|_| {
                    ConfigError::OutOfRange(
                        "--notify-webhook needs its signing secret in TMUX_MCP_WEBHOOK_SECRET (whsec_ and base64)".into(),
                    )
                })?;
                let key = webhook_secret(&secret).map_err(|e| {
                    ConfigError::OutOfRange(format!("TMUX_MCP_WEBHOOK_SECRET: {e}"))
                })?;
                Some((url.clone(), key))
            }
        };
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
            integrate_existing: cli.integrate_existing && !cli.no_shell_integration,
            human_input: cli.human_input,
            attention_events: cli.attention_events,
            notify_clients: !cli.no_notify_clients,
            channel: cli.channel,
            notify_webhook,
            hosts: hosts_from_cli(cli)?,
            host_tmux: cli.host_tmux.clone(),
            actor: cli.actor.as_deref().and_then(actor_name),
        })
    }
}

/// The most characters of an actor name kept.
pub const MAX_ACTOR_CHARS: usize = 64;

/// An actor name as kept: control characters dropped, blanks trimmed, at
/// most [`MAX_ACTOR_CHARS`] characters; `None` when nothing is left.
pub fn actor_name(name: &str) -> Option<String> {
    let kept: String = name
        .chars()
        .filter(|c| !c.is_control())
        .collect::<String>()
        .trim()
        .chars()
        .take(MAX_ACTOR_CHARS)
        .collect();
    let kept = kept.trim_end().to_owned();
    (!kept.is_empty()).then_some(kept)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn actor_names_are_cleaned() {
        assert_eq!(actor_name("  alice "), Some("alice".into()));
        assert_eq!(actor_name("a\nb\x1b[31m"), Some("ab[31m".into()));
        assert_eq!(actor_name(" \t "), None);
        assert_eq!(actor_name(&"x".repeat(100)).unwrap().len(), MAX_ACTOR_CHARS);
    }
    use clap::Parser as _;

    pub(super) fn parse(args: &[&str]) -> Result<Config, ConfigError> {
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
}
