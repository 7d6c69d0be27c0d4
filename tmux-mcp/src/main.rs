//! `tmux-mcp`: an MCP server that gives AI agents tmux terminals.
//!
//! This build serves MCP over stdio (standard input and output carry
//! newline-delimited JSON-RPC) and has no tools yet. It never starts or
//! contacts a tmux server. Diagnostics go to standard error only, so they can
//! never corrupt the protocol stream on standard output.

mod server;

use std::io::IsTerminal as _;
use std::process::ExitCode;

use clap::{Parser, ValueEnum};
use rmcp::ServiceExt as _;
use tracing::level_filters::LevelFilter;

use crate::server::TmuxMcp;

/// Command-line interface of `tmux-mcp`.
#[derive(Debug, Parser)]
#[command(
    name = "tmux-mcp",
    version,
    about = "An MCP server that gives AI agents tmux terminals (this build has no tools yet).",
    long_about = "An MCP server that gives AI agents tmux terminals.\n\n\
        It speaks MCP over stdio: start it from an MCP client, which writes JSON-RPC \
        requests to its standard input and reads responses from its standard output. \
        This build answers the handshake and lists no tools; it does not start or \
        contact any tmux server. Diagnostics are written to standard error."
)]
struct Cli {
    /// Most verbose level of diagnostics written to standard error.
    #[arg(long, value_enum, default_value_t = LogLevel::Warn)]
    log_level: LogLevel,
}

/// Diagnostic verbosity accepted by `--log-level`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum LogLevel {
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

impl From<LogLevel> for LevelFilter {
    fn from(level: LogLevel) -> Self {
        match level {
            LogLevel::Off => LevelFilter::OFF,
            LogLevel::Error => LevelFilter::ERROR,
            LogLevel::Warn => LevelFilter::WARN,
            LogLevel::Info => LevelFilter::INFO,
            LogLevel::Debug => LevelFilter::DEBUG,
            LogLevel::Trace => LevelFilter::TRACE,
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging(cli.log_level);

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

    match runtime.block_on(serve_stdio()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            tracing::error!("{message}");
            eprintln!("tmux-mcp: {message}");
            ExitCode::FAILURE
        }
    }
}

/// Sends `tracing` output to standard error, never to standard output.
fn init_logging(level: LogLevel) {
    let stderr = std::io::stderr();
    let ansi = stderr.is_terminal();
    // Ignoring the error is right: it only says a global subscriber is
    // already installed, and then that one keeps working.
    let _ = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(ansi)
        .with_max_level(LevelFilter::from(level))
        .try_init();
}

/// Serves one MCP session over stdio until the client closes standard input
/// or the session ends.
async fn serve_stdio() -> Result<(), String> {
    tracing::info!(
        version = env!("CARGO_PKG_VERSION"),
        "tmux-mcp starting on stdio"
    );
    let running = TmuxMcp
        .serve(rmcp::transport::stdio_pipes())
        .await
        .map_err(|err| format!("MCP session did not start: {err}"))?;
    let reason = running
        .waiting()
        .await
        .map_err(|err| format!("MCP session task failed: {err}"))?;
    tracing::info!(?reason, "tmux-mcp stopped");
    Ok(())
}
