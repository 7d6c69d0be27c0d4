//! The command line: the clap types of `tmux-mcp`, its subcommands and their flags.

use std::path::PathBuf;

use clap::{Parser, ValueEnum};

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

/// What the tools that type do when a person is at the terminal
/// (`--human-input`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum HumanInput {
    /// Type nothing while a person types into the pane, or while its shell
    /// holds a command line tmux-mcp did not type; answer `human_typing`.
    #[default]
    Refuse,
    /// Wait (within the call's time limit) until the person is done: no
    /// key for 3 seconds and no line of theirs left on the prompt; then
    /// type, or answer `human_typing` if they are not done in time.
    Wait,
    /// Type anyway (the person's line and the agent's input are joined).
    Allow,
}

/// Where attention events are pushed as client notifications
/// (`--channel`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Channel {
    /// Claude Code's channel: `notifications/claude/channel`, with the
    /// `claude/channel` experimental capability declared.
    Claude,
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

    /// Load shell integration into a bash, zsh or fish that runs without it
    /// (in a pane tmux-mcp did not start) the first time `run` types into
    /// it, as `run`'s `integrate: true` does for one call. Off by default:
    /// it types a line into the shell and changes its prompt hooks.
    #[arg(long, global = true, env = "TMUX_MCP_INTEGRATE_EXISTING")]
    pub integrate_existing: bool,

    /// What run, send_text and paste_text do when a person is typing into
    /// the pane (a key from a human tmux client in the last 3 seconds) or
    /// its shell holds a command line tmux-mcp did not type: refuse (type
    /// nothing, answer human_typing), wait (until the person is done,
    /// within the call's time limit) or allow (type anyway).
    #[arg(long, global = true, value_enum, default_value_t = HumanInput::Refuse, env = "TMUX_MCP_HUMAN_INPUT")]
    pub human_input: HumanInput,

    /// How many attention events the server keeps (the log that
    /// wait_for_attention, tmux://events and every reply's `attention`
    /// read by cursor); a reader further behind is told its cursor was
    /// truncated. At least 16.
    #[arg(
        long,
        global = true,
        env = "TMUX_MCP_ATTENTION_EVENTS",
        default_value_t = 1000
    )]
    pub attention_events: usize,

    /// Do not show attention events (a command left running finished, a
    /// program waits for input or a secret, a pane exited, output lost) on
    /// the status line of the people's tmux clients that show the terminal
    /// (`display-message`).
    #[arg(long, global = true, env = "TMUX_MCP_NO_NOTIFY_CLIENTS")]
    pub no_notify_clients: bool,

    /// Push attention events into an MCP client's channel: `claude` sends
    /// Claude Code's `notifications/claude/channel` (coalesced per
    /// terminal, after `initialized`), so that an event can start a turn.
    #[arg(long, global = true, value_enum, env = "TMUX_MCP_CHANNEL")]
    pub channel: Option<Channel>,

    /// POST every attention event as JSON to this http:// URL, signed in the
    /// Standard Webhooks way (webhook-id, webhook-timestamp and
    /// webhook-signature headers: HMAC-SHA256 with the secret of
    /// TMUX_MCP_WEBHOOK_SECRET, a `whsec_` base64 key). Retried with backoff;
    /// the id stays the same across retries.
    #[arg(
        long,
        global = true,
        env = "TMUX_MCP_NOTIFY_WEBHOOK",
        value_name = "URL"
    )]
    pub notify_webhook: Option<String>,

    /// A tmux server elsewhere: `NAME=SSH_TARGET` (over ssh: the
    /// destination, optionally after ssh options, as in
    /// `box=-p 2222 -i ~/.ssh/box me@box.example`; also `ssh:SSH_TARGET`),
    /// `NAME=docker:CONTAINER`, `NAME=podman:CONTAINER`,
    /// `NAME=kubectl:[NAMESPACE/]POD[:CONTAINER]`, or `NAME=exec:COMMAND
    /// ARGS…` (a command that stands for tmux and hands its arguments on).
    /// Words are split as a shell would. Repeatable; in the variable, one
    /// per line or comma-separated. Tools take the host as their `host`
    /// argument.
    #[arg(
        long = "host",
        global = true,
        env = "TMUX_MCP_HOSTS",
        value_name = "NAME=TARGET"
    )]
    pub hosts: Vec<String>,

    /// A file of hosts, one `NAME=TARGET` a line (blank lines and lines
    /// starting with `#` are skipped); added to the `--host` flags.
    #[arg(long, global = true, env = "TMUX_MCP_HOSTS_FILE")]
    pub hosts_file: Option<PathBuf>,

    /// The tmux program on the remote hosts (found on the remote PATH; in
    /// a container, on its PATH). An `exec:` host's command names its own.
    #[arg(
        long,
        global = true,
        env = "TMUX_MCP_HOST_TMUX",
        default_value = "tmux"
    )]
    pub host_tmux: String,

    /// Serve the web view (a live view of every terminal in the browser,
    /// with take-over) on this loopback address, like 127.0.0.1:8766, for
    /// the stdio server and `serve --unix` (`serve --http` serves it at
    /// /ui/ on its own port). A person opens it with a link from the
    /// web_view tool or a key from `tmux-mcp web-key add`.
    #[arg(long, global = true, env = "TMUX_MCP_WEB", value_name = "ADDR")]
    pub web: Option<String>,

    /// Let `--web` listen on an address that is not loopback (other
    /// machines could reach it; a key is still required).
    #[arg(long, global = true, env = "TMUX_MCP_WEB_ALLOW_REMOTE")]
    pub web_allow_remote: bool,
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
    /// Call one tool from the shell: `tmux-mcp call run '{"target":"%3","command":"make"}'`
    /// or `tmux-mcp call run --target %3 --command make`; `call TOOL --help`
    /// for its arguments, `call --list` for the tools.
    Call(CallArgs),
    /// Make, list and revoke the named keys of the web view (`/ui/`):
    /// `web-key add NAME [--scope view|input]`, `web-key list`,
    /// `web-key revoke NAME`.
    WebKey(WebKeyArgs),
}

/// Flags of `tmux-mcp call`. Its own flags may also come among the tool's
/// arguments (`call run --command false --exit-status`) where the tool has
/// no argument of that name.
#[derive(Debug, Clone, Default, clap::Args)]
#[non_exhaustive]
#[command(
    disable_help_flag = true,
    long_about = "Call one tool from the shell, with exactly the tool's name and arguments.\n\n\
        The arguments are a JSON object, `--NAME VALUE` pairs (a boolean may stand alone, \
        an array may be given by repeating its flag), or both. `tmux-mcp call TOOL --help` \
        shows a tool's description, arguments and result; `tmux-mcp call --list` lists the tools.\n\n\
        The call goes to the shared server of `--unix PATH` (or the `serve --unix` server \
        running on this state directory, found by itself), with its actors and audit log; \
        otherwise it runs in this process, on tmux-mcp's own tmux server, so its terminals, \
        regions and logs are the ones every other client sees. Byte cursors and run ids \
        belong to the server that gave them: to resume a run or a wait in a later call, use \
        a shared server.\n\n\
        Prints the result's structured content as JSON (the default when standard output is \
        not a terminal) or its text. Exit status: 0 success, 1 a tool error (the message on \
        standard error), 2 bad usage or arguments; with `--exit-status`, `run`'s own exit \
        status (124 while the command still runs)."
)]
pub struct CallArgs {
    /// The shared server's unix socket (`tmux-mcp serve --unix PATH`)
    /// [default: the one serving this state directory, if any].
    #[arg(long, env = "TMUX_MCP_UNIX")]
    pub unix: Option<PathBuf>,
    /// Print the structured result as JSON (the default when standard
    /// output is not a terminal).
    #[arg(long, conflicts_with = "text")]
    pub json: bool,
    /// Print the text reply (the default on a terminal).
    #[arg(long)]
    pub text: bool,
    /// With `run`: exit with the command's own exit status (124 while it
    /// still runs, 1 when it has none).
    #[arg(long)]
    pub exit_status: bool,
    /// List the tools this server serves, one a line with its summary.
    #[arg(long)]
    pub list: bool,
    /// Print help: this, or after a tool's name the tool's description,
    /// arguments and result.
    #[arg(short, long)]
    pub help: bool,
    /// The tool to call.
    pub tool: Option<String>,
    /// The tool's arguments: a JSON object and/or `--NAME VALUE` pairs;
    /// `--help` after the tool's name shows them.
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "ARGUMENTS"
    )]
    pub arguments: Vec<String>,
}

/// `tmux-mcp web-key`: the named keys of the web view, kept as SHA-256
/// digests in the state directory's `web-keys` file (mode 0600).
#[derive(Debug, Clone, clap::Args)]
#[non_exhaustive]
#[command(
    long_about = "Make, list and revoke the named keys of the web view (`/ui/`).\n\n\
        A key opens the view as the link `http://HOST:PORT/ui/#key=KEY`. `add` prints the new \
        key once; the state directory's `web-keys` file (mode 0600) keeps only its SHA-256 \
        digest. `revoke` ends the key's sessions at their next request. Scopes: `view` reads, \
        `input` also takes over terminals and types. Exit status: 0 done, 1 failure (as a \
        key of that name already there, or none to revoke), 2 bad usage or name."
)]
pub struct WebKeyArgs {
    /// What to do.
    #[command(subcommand)]
    pub action: WebKeyAction,
}

/// What `tmux-mcp web-key` does.
#[derive(Debug, Clone, clap::Subcommand)]
#[non_exhaustive]
pub enum WebKeyAction {
    /// Make a key and print it (the only time it is shown).
    Add {
        /// The key's name (1 to 64 of A-Z a-z 0-9 . _ -; `link` is the
        /// server's own), shown in the audit log for what it does.
        name: String,
        /// What the key may do: `view` reads, `input` also takes over and
        /// types.
        #[arg(long, value_enum, default_value_t = WebKeyScope::View)]
        scope: WebKeyScope,
    },
    /// List the keys: name, scope and when it was made (never the key).
    List {
        /// Print a JSON array instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Revoke a key (exit status 1 when there is none of that name).
    Revoke {
        /// The key's name.
        name: String,
    },
}

/// The scope of a web key, as `web-key add --scope` takes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
#[non_exhaustive]
pub enum WebKeyScope {
    /// Sees the terminals.
    View,
    /// Sees them, takes them over and types.
    Input,
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
