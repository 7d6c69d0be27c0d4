//! `tmux-mcp call TOOL [JSON] [--NAME VALUE]…`: one tool call from the shell.
//!
//! The command line is an MCP client of this same server, so it cannot
//! drift from the MCP surface: the tools, their names and arguments are the
//! server's tool router's, read at run time; the call is a `tools/call`
//! request, answered by the same code that answers every MCP client.
//!
//! - **Where the call goes.** To the shared server of `--unix PATH`
//!   (`TMUX_MCP_UNIX`), or else to the `serve --unix` server that serves
//!   this state directory, if one runs (it writes its socket's path into
//!   its lock file, `crate::transport::shared`): that server's actors, audit
//!   log, runs and cursors. With neither, the server runs in this process,
//!   over an in-memory duplex, on tmux-mcp's own tmux server with the same
//!   flags and state directory as `tmux-mcp` itself: the terminals, regions
//!   and durable logs are the ones every other client sees. Byte cursors
//!   and run ids are a server's own: to resume a run or a wait in a later
//!   call, use a shared server (the reply says so when it matters).
//! - **Arguments** (`arguments`): a JSON object and/or `--NAME VALUE`
//!   pairs, checked against the tool's input schema; `call TOOL --help`
//!   shows the tool's description, arguments and documented result.
//! - **What it prints** (`print`): the structured result as JSON (the
//!   default when standard output is not a terminal) or the text reply.
//!   Exit status 0 on success, 1 on a tool error (its message on standard
//!   error), 2 on bad usage or arguments; `--exit-status` makes `run` exit
//!   with the command's own status.
//!
//! ```no_run
//! use clap::Parser as _;
//! let cli = tmux_control_mcp::Cli::parse_from(["tmux-mcp", "call", "list_terminals"]);
//! if let Some(tmux_control_mcp::config::Command::Call(args)) = &cli.command {
//!     let status = tmux_control_mcp::call::main(&cli, args);
//!     # let _ = status;
//! }
//! ```

mod arguments;
mod print;

use std::io::IsTerminal as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, ErrorCode, Implementation, MetaObject,
    RequestMetaObject, Tool,
};
use rmcp::service::RunningService;
use rmcp::{RoleClient, ServiceExt as _};
use serde_json::Value;

use crate::config::{CallArgs, Cli, Config};
use crate::mcp::actors::ACTOR_META_KEY;
use crate::mcp::server::TmuxMcp;
use crate::terminal::backend::Backend;
use arguments::{Asked, Usage};
use print::{Outcome, Style};

/// The exit status of bad usage (as clap uses for bad flags).
pub const USAGE: u8 = 2;

/// The client name the call gives the server when no `--actor` is set:
/// the actor its audit lines and replies name.
pub const CLIENT_NAME: &str = "tmux-mcp-call";

/// Runs `tmux-mcp call`: returns the process's exit status.
pub fn main(cli: &Cli, args: &CallArgs) -> ExitCode {
    let outcome = match call(cli, args) {
        Ok(outcome) => outcome,
        Err(usage) => usage.into(),
    };
    ExitCode::from(outcome.finish())
}

/// How long the runtime's tasks may take to end once the answer is in (a
/// true timer). They hold nothing that needs them: the audit log is synced,
/// the durable log written as the output came, and the tmux clients end
/// when their pipes close with this process.
const DROP_GRACE: std::time::Duration = std::time::Duration::from_millis(1);

fn call(cli: &Cli, args: &CallArgs) -> Result<Outcome, Usage> {
    if args.help && args.tool.is_none() {
        use clap::CommandFactory as _;
        let mut command = Cli::command();
        if let Some(call) = command.find_subcommand_mut("call") {
            let _ = call.print_long_help();
        }
        return Ok(Outcome::default());
    }
    let config = Config::from_cli(cli).map_err(|e| Usage(e.to_string()))?;
    let actor = cli.actor.as_deref().and_then(crate::config::actor_name);
    let state_dir = config
        .state_dir
        .clone()
        .unwrap_or_else(crate::terminal::backend::default_state_dir);
    // No tool has an argument named `unix`: it is the call's wherever it is.
    let shared = args
        .unix
        .clone()
        .or_else(|| unix_among(&args.arguments))
        .or_else(|| crate::transport::shared::serving(&state_dir));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| Usage(format!("cannot start the async runtime: {e}")))?;
    let outcome = runtime.block_on(async {
        let session = match &shared {
            Some(socket) => Session::shared(socket, actor.as_deref()).await,
            None => Session::in_process(config, actor.as_deref(), calls_a_tool(args)).await,
        };
        match session {
            Ok(session) => {
                let outcome = match session.conversation(args, actor.as_deref()).await {
                    Ok(outcome) => outcome,
                    Err(usage) => usage.into(),
                };
                session.close().await;
                outcome
            }
            Err(failure) => failure,
        }
    });
    // A true timer: see DROP_GRACE.
    runtime.shutdown_timeout(DROP_GRACE);
    Ok(outcome)
}

/// Whether the command line calls a tool (not only a list or a help).
fn calls_a_tool(args: &CallArgs) -> bool {
    args.tool.is_some()
        && !args.list
        && !args.help
        && !args.arguments.iter().any(|w| w == "--help" || w == "-h")
}

/// The path after a `--unix` among the tool's arguments, if any.
fn unix_among(words: &[String]) -> Option<PathBuf> {
    let mut words = words.iter();
    while let Some(word) = words.next() {
        if word == "--unix" {
            return words.next().map(PathBuf::from);
        }
        if let Some(path) = word.strip_prefix("--unix=") {
            return Some(PathBuf::from(path));
        }
    }
    None
}

/// An MCP session with the server that answers the call: a shared one, or
/// one made in this process.
struct Session {
    client: RunningService<RoleClient, ClientConfig>,
    /// In this process: the server (its audit log is synced at the end)
    /// and the task serving the session.
    local: Option<(TmuxMcp, tokio::task::JoinHandle<()>)>,
    shared: bool,
}

impl Session {
    /// A session with the shared server at `socket`.
    async fn shared(socket: &Path, actor: Option<&str>) -> Result<Self, Outcome> {
        let stream = tokio::net::UnixStream::connect(socket).await.map_err(|e| {
            Outcome::failed(format!(
                "cannot reach the shared server at {}: {e}; start it with `tmux-mcp serve --unix {}`",
                socket.display(),
                socket.display()
            ))
        })?;
        let (read, write) = stream.into_split();
        Ok(Self {
            client: handshake(client_config(actor).serve((read, write)).await)?,
            local: None,
            shared: true,
        })
    }

    /// A session with a server made here with `config`, served over an
    /// in-memory duplex.
    /// With `warm`, the connection to tmux is made meanwhile (the call will
    /// need it): the tmux client starts while the session is set up.
    async fn in_process(config: Config, actor: Option<&str>, warm: bool) -> Result<Self, Outcome> {
        let local = Arc::new(Backend::new(&config));
        if warm {
            let backend = local.clone();
            // The call's own request for the connection waits for this
            // one, or makes it again (and reports why) if it failed.
            tokio::spawn(async move { drop(backend.conn().await) });
        }
        // Made meanwhile (its tool schemas take a few milliseconds).
        let server =
            TmuxMcp::with_local(config, local).map_err(|e| Outcome::from(Usage(e.to_string())))?;
        let (client_end, server_end) = tokio::io::duplex(1 << 20);
        let served = server.clone();
        let task = tokio::spawn(async move {
            let (read, write) = tokio::io::split(server_end);
            match served.serve((read, write)).await {
                Ok(running) => {
                    let _ = running.waiting().await;
                }
                Err(e) => tracing::debug!("the in-process session did not start: {e}"),
            }
        });
        let (read, write) = tokio::io::split(client_end);
        Ok(Self {
            client: handshake(client_config(actor).serve((read, write)).await)?,
            local: Some((server, task)),
            shared: false,
        })
    }

    /// Ends the session (and, in this process, its server's work).
    async fn close(self) {
        let _ = self.client.cancel().await;
        if let Some((server, task)) = self.local {
            // The client's end is closed: the session ends, its task with it.
            let _ = task.await;
            // What this process saw goes on disk for the next one: the
            // output and the regions of the runs.
            crate::transport::stdio::settle(&server).await;
        }
    }

    /// Reads the tools from the server, the command line against them, and
    /// makes the call (or lists the tools, or shows a tool's help).
    async fn conversation(&self, args: &CallArgs, actor: Option<&str>) -> Result<Outcome, Usage> {
        // A call whose arguments are one JSON object (or none) needs no
        // schema here: it goes at once, and the server checks it. Only an
        // answer that the tool is unknown brings the list, to say more.
        let mut refused = None;
        if let Some(name) = args.tool.as_deref()
            && !args.list
            && !args.help
            && args.arguments.len() <= 1
            && args.arguments.iter().all(|word| !word.starts_with('-'))
        {
            let arguments = match args.arguments.first() {
                None => serde_json::Map::new(),
                Some(text) => arguments::object(name, text)?,
            };
            if args.exit_status && name != "run" {
                return Err(Usage(format!(
                    "--exit-status is for run (a command's exit status), not {name}"
                )));
            }
            let request = request(name, arguments, actor);
            match self.client.call_tool_once(request).await {
                Ok(response) => return Ok(print::outcome(response, &style(args), self.shared)),
                Err(rmcp::ServiceError::McpError(e)) if e.code == ErrorCode::INVALID_PARAMS => {
                    refused = Some(rmcp::ServiceError::McpError(e));
                }
                Err(e) => return Ok(print::service_error(e)),
            }
        }
        let tools = self
            .client
            .list_all_tools()
            .await
            .map_err(|e| Usage(format!("the server did not list its tools: {e}")))?;
        if args.list {
            return Ok(Outcome::printed(print::list(&tools)));
        }
        let Some(name) = args.tool.as_deref() else {
            return Err(Usage(format!(
                "name a tool: tmux-mcp call TOOL [JSON] [--NAME VALUE]... (`tmux-mcp call TOOL --help` for one)\n\n{}",
                print::list(&tools)
            )));
        };
        let Some(tool) = tools.iter().find(|t| t.name == name) else {
            return Err(Usage(unknown_tool(name, &tools)));
        };
        if let Some(refused) = refused {
            // The server knows the tool and refused the call: never twice.
            return Ok(print::service_error(refused));
        }
        let (words, args) = own_flags(tool, args)?;
        let asked = if args.help {
            Asked::Help
        } else {
            arguments::read(tool, &words)?
        };
        let arguments = match asked {
            Asked::Help => return Ok(Outcome::printed(arguments::help(&documented(tool)))),
            Asked::Call(arguments) => arguments,
        };
        if args.exit_status && name != "run" {
            return Err(Usage(format!(
                "--exit-status is for run (a command's exit status), not {name}"
            )));
        }
        let answer = self
            .client
            .call_tool_once(request(&tool.name, arguments, actor))
            .await;
        Ok(match answer {
            Ok(response) => print::outcome(response, &style(&args), self.shared),
            Err(e) => print::service_error(e),
        })
    }
}

/// How the result is printed.
fn style(args: &CallArgs) -> Style {
    Style {
        json: args.json || (!args.text && !std::io::stdout().is_terminal()),
        pretty: std::io::stdout().is_terminal(),
        exit_status: args.exit_status,
    }
}

/// `tool` with its output schema documented (this binary's documentation
/// of it: `tools/list` sends output schemas without prose).
fn documented(tool: &Tool) -> Tool {
    let mut tool = tool.clone();
    if let Some(route) = TmuxMcp::documented_router().map.get(tool.name.as_ref()) {
        tool.output_schema = route.attr.output_schema.clone();
    }
    tool
}

/// The handshake's outcome.
fn handshake<E: std::fmt::Display>(
    client: Result<RunningService<RoleClient, ClientConfig>, E>,
) -> Result<RunningService<RoleClient, ClientConfig>, Outcome> {
    client.map_err(|e| Outcome::failed(format!("the MCP session did not start: {e}")))
}

/// Takes the call's own flags (`--json`, `--text`, `--exit-status`,
/// `--help`, `--unix PATH`) out of the words after the tool's name, where
/// the tool has no argument of that name: what is left is the tool's.
fn own_flags(tool: &Tool, args: &CallArgs) -> Result<(Vec<String>, CallArgs), Usage> {
    let properties = tool
        .input_schema
        .get("properties")
        .and_then(Value::as_object);
    let is_argument =
        |flag: &str| properties.is_some_and(|p| p.contains_key(&flag.replace('-', "_")));
    let mut own = args.clone();
    let mut words = Vec::new();
    let mut rest = args.arguments.iter();
    while let Some(word) = rest.next() {
        let flag = word.strip_prefix("--").unwrap_or_default();
        match flag {
            _ if flag.is_empty() || is_argument(flag.split('=').next().unwrap_or(flag)) => {
                words.push(word.clone());
            }
            "json" => own.json = true,
            "text" => own.text = true,
            "exit-status" => own.exit_status = true,
            "help" => own.help = true,
            "unix" => {
                let path = rest
                    .next()
                    .ok_or_else(|| Usage("--unix needs the shared server's socket".into()))?;
                own.unix = Some(PathBuf::from(path));
            }
            _ => match flag.strip_prefix("unix=") {
                Some(path) => own.unix = Some(PathBuf::from(path)),
                None => words.push(word.clone()),
            },
        }
    }
    if own.json && own.text {
        return Err(Usage("choose one of --json and --text".into()));
    }
    Ok((words, own))
}

/// The error for a name that is not a tool here, with the tools there are.
fn unknown_tool(name: &str, tools: &[Tool]) -> String {
    if TmuxMcp::full_router().map.contains_key(name) {
        format!(
            "the tool {name} is not enabled: add it with --tools {name} (or its toolset to --toolsets)"
        )
    } else {
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
        format!("there is no tool {name:?}; the tools: {}", names.join(", "))
    }
}

/// The `tools/call` request, labelled with the actor if one is named.
fn request(
    tool: &str,
    arguments: serde_json::Map<String, Value>,
    actor: Option<&str>,
) -> CallToolRequestParams {
    let mut request = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
    request.meta = actor.map(actor_meta);
    request
}

fn actor_meta(actor: &str) -> RequestMetaObject {
    let mut meta = serde_json::Map::new();
    meta.insert(ACTOR_META_KEY.to_owned(), Value::String(actor.to_owned()));
    RequestMetaObject(MetaObject(meta))
}

/// What the call says of itself in `initialize`.
fn client_config(actor: Option<&str>) -> ClientConfig {
    let mut config = ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new(actor.unwrap_or(CLIENT_NAME), env!("CARGO_PKG_VERSION")),
    );
    config.meta = actor.map(actor_meta);
    config
}
