//! `tmux-mcp`: an MCP server that gives AI agents tmux terminals.
//!
//! It serves MCP over stdio (standard input and output carry
//! newline-delimited JSON-RPC). It starts or contacts tmux only when a tool
//! call needs it. Diagnostics go to standard error only, so they can never
//! corrupt the protocol stream on standard output.

use std::io::IsTerminal as _;
use std::process::ExitCode;

use clap::Parser as _;
use rmcp::ServiceExt as _;
use tmux_control_mcp::config::LogLevel;
use tmux_control_mcp::{Cli, Config, TmuxMcp, stdio};
use tracing::level_filters::LevelFilter;

/// Exit status for a configuration that cannot be used (as clap uses for
/// bad flags).
const CONFIG_ERROR: u8 = 2;

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging(cli.log_level);

    let server = match Config::from_cli(&cli)
        .map_err(tmux_control_mcp::StartError::from)
        .and_then(TmuxMcp::new)
    {
        Ok(server) => server,
        Err(err) => {
            eprintln!("tmux-mcp: {err}");
            return ExitCode::from(CONFIG_ERROR);
        }
    };

    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("tmux-mcp: cannot start the async runtime: {err}");
            return ExitCode::FAILURE;
        }
    };

    match runtime.block_on(serve_stdio(server)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            tracing::error!("{message}");
            eprintln!("tmux-mcp: {message}");
            ExitCode::FAILURE
        }
    }
}

fn level(level: LogLevel) -> LevelFilter {
    match level {
        LogLevel::Off => LevelFilter::OFF,
        LogLevel::Error => LevelFilter::ERROR,
        LogLevel::Warn => LevelFilter::WARN,
        LogLevel::Info => LevelFilter::INFO,
        LogLevel::Debug => LevelFilter::DEBUG,
        LogLevel::Trace => LevelFilter::TRACE,
    }
}

/// Sends `tracing` output to standard error, never to standard output.
fn init_logging(log_level: LogLevel) {
    let stderr = std::io::stderr();
    let ansi = stderr.is_terminal();
    // Ignoring the error is right: it only says a global subscriber is
    // already installed, and then that one keeps working.
    let _ = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(ansi)
        .with_max_level(level(log_level))
        .try_init();
}

/// Serves one MCP session over stdio until the client closes standard input
/// or the session ends. Every line the client writes is answered, also one
/// that is not JSON (see `tmux_control_mcp::stdio`).
async fn serve_stdio(server: TmuxMcp) -> Result<(), String> {
    tracing::info!(
        version = env!("CARGO_PKG_VERSION"),
        tools = server.tool_names().len(),
        "tmux-mcp starting on stdio"
    );
    let (stdin, stdout) = rmcp::transport::stdio_pipes();
    let (transport, pumps) = stdio::guard(stdin, stdout);
    let session = async {
        let running = server
            .serve(transport)
            .await
            .map_err(|err| format!("MCP session did not start: {err}"))?;
        running
            .waiting()
            .await
            .map_err(|err| format!("MCP session task failed: {err}"))
    };
    let reason = session.await;
    // The session is over (rmcp dropped its end): write what is left.
    pumps.finish().await;
    tracing::info!(?reason, "tmux-mcp stopped");
    reason.map(drop)
}
