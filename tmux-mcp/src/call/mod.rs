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
//! - **Arguments** ([`arguments`]): a JSON object and/or `--NAME VALUE`
//!   pairs, checked against the tool's input schema; `call TOOL --help`
//!   shows the tool's description, arguments and documented result.
//! - **What it prints** ([`print`]): the structured result as JSON (the
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
use std::path::PathBuf;
use std::process::ExitCode;

use rmcp::ServiceExt as _;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientCapabilities, ClientConfig, Implementation,
    MetaObject, RequestMetaObject, Tool,
};
use serde_json::Value;

use crate::config::{CallArgs, Cli, Config};
use crate::mcp::actors::ACTOR_META_KEY;
use crate::mcp::server::TmuxMcp;
use arguments::{Asked, Usage};
use print::{Outcome, Style};

/// The exit status of bad usage (as clap uses for bad flags).
pub const USAGE: u8 = 2;

/// The client name the call gives the server when no `--actor` is set:
/// the actor its audit lines and replies name.
pub const CLIENT_NAME: &str = "tmux-mcp-call";

/// How long the runtime's last tasks may delay the exit (a true timer).
const EXIT_GRACE: std::time::Duration = std::time::Duration::from_millis(200);

/// Runs `tmux-mcp call`: returns the process's exit status.
pub fn main(cli: &Cli, args: &CallArgs) -> ExitCode {
    match call(cli, args) {
        Ok(code) => ExitCode::from(code),
        Err(Usage(message)) => {
            eprintln!("tmux-mcp call: {message}");
            ExitCode::from(USAGE)
        }
    }
}

fn call(cli: &Cli, args: &CallArgs) -> Result<u8, Usage> {
    let config = Config::from_cli(cli).map_err(|e| Usage(e.to_string()))?;
    let server = TmuxMcp::new(config).map_err(|e| Usage(e.to_string()))?;
    let tools = server.documented_tools();
    if args.help && args.tool.is_none() {
        use clap::CommandFactory as _;
        let mut command = Cli::command();
        if let Some(call) = command.find_subcommand_mut("call") {
            let _ = call.print_long_help();
        }
        return Ok(0);
    }
    if args.list {
        print!("{}", print::list(&tools));
        return Ok(0);
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
    let (words, args) = own_flags(tool, args)?;
    let args = &args;
    if args.help {
        print!("{}", arguments::help(tool));
        return Ok(0);
    }
    let arguments = match arguments::read(tool, &words)? {
        Asked::Help => {
            print!("{}", arguments::help(tool));
            return Ok(0);
        }
        Asked::Call(arguments) => arguments,
    };
    if args.exit_status && name != "run" {
        return Err(Usage(format!(
            "--exit-status is for run (a command's exit status), not {name}"
        )));
    }
    let style = Style {
        json: args.json || (!args.text && !std::io::stdout().is_terminal()),
        pretty: std::io::stdout().is_terminal(),
        exit_status: args.exit_status,
    };
    let actor = cli.actor.as_deref().and_then(crate::config::actor_name);
    let shared = args
        .unix
        .clone()
        .or_else(|| crate::transport::shared::serving(&server.state_dir()));
    let request = request(tool, arguments, actor.as_deref());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| Usage(format!("cannot start the async runtime: {e}")))?;
    let answer = runtime.block_on(async {
        match &shared {
            Some(socket) => {
                drop(server);
                through_socket(socket, actor.as_deref(), request).await
            }
            None => in_process(server, actor.as_deref(), request).await,
        }
    });
    // A true timer: a bound on the runtime's last tasks (the tmux
    // connection's reader) as the process ends.
    runtime.shutdown_timeout(EXIT_GRACE);
    let outcome = match answer {
        Ok(response) => print::outcome(response, &style, shared.is_some()),
        Err(failure) => failure,
    };
    Ok(outcome.finish())
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
    let all = TmuxMcp::documented_router();
    if all.map.contains_key(name) {
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
    tool: &Tool,
    arguments: serde_json::Map<String, Value>,
    actor: Option<&str>,
) -> CallToolRequestParams {
    let mut request = CallToolRequestParams::new(tool.name.clone()).with_arguments(arguments);
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

/// Makes the call on `server`, served in this process over an in-memory
/// duplex, and ends the session.
async fn in_process(
    server: TmuxMcp,
    actor: Option<&str>,
    request: CallToolRequestParams,
) -> Result<CallToolResponse, Outcome> {
    let (client_end, server_end) = tokio::io::duplex(1 << 20);
    let served = server.clone();
    let session = tokio::spawn(async move {
        let (read, write) = tokio::io::split(server_end);
        match served.serve((read, write)).await {
            Ok(running) => {
                let _ = running.waiting().await;
            }
            Err(e) => tracing::debug!("the in-process session did not start: {e}"),
        }
    });
    let (read, write) = tokio::io::split(client_end);
    let answer = exchange(client_config(actor).serve((read, write)).await, request).await;
    // The client's end is closed: the session ends and its task with it.
    let _ = session.await;
    crate::transport::stdio::sync_audit_log(&server);
    answer
}

/// Makes the call on the shared server at `socket`.
async fn through_socket(
    socket: &PathBuf,
    actor: Option<&str>,
    request: CallToolRequestParams,
) -> Result<CallToolResponse, Outcome> {
    let stream = tokio::net::UnixStream::connect(socket).await.map_err(|e| {
        Outcome::failed(format!(
            "cannot reach the shared server at {}: {e}; start it with `tmux-mcp serve --unix {}`",
            socket.display(),
            socket.display()
        ))
    })?;
    let (read, write) = stream.into_split();
    exchange(client_config(actor).serve((read, write)).await, request).await
}

/// The handshake's outcome, then the call, then the end of the session.
async fn exchange<E: std::fmt::Display>(
    client: Result<rmcp::service::RunningService<rmcp::RoleClient, ClientConfig>, E>,
    request: CallToolRequestParams,
) -> Result<CallToolResponse, Outcome> {
    let client =
        client.map_err(|e| Outcome::failed(format!("the MCP session did not start: {e}")))?;
    let answer = client.call_tool_once(request).await;
    let _ = client.cancel().await;
    answer.map_err(print::service_error)
}
