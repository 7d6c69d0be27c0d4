//! `tmux-mcp`: an MCP server that gives AI agents tmux terminals.
//!
//! It serves MCP over stdio (standard input and output carry
//! newline-delimited JSON-RPC), over streamable HTTP with `serve --http
//! ADDR` (see `tmux_control_mcp::transport::http`), or to several clients on a unix
//! socket (`serve --unix`, joined by `bridge`). `doctor` checks the set-up.
//! It starts or contacts tmux only when a tool call needs it. Diagnostics go
//! to standard error only, so they can never corrupt the protocol stream on
//! standard output.
//!
//! On SIGTERM or SIGINT, stdio and `serve --unix` read no more requests,
//! answer and audit every call in flight (stopping those still running
//! after `stdio::DRAIN`; a second signal stops them at once), sync the
//! audit log, remove `serve --unix`'s socket file, and exit 0.

use std::io::IsTerminal as _;
use std::process::ExitCode;

use clap::Parser as _;
use rmcp::ServiceExt as _;
use tmux_control_mcp::config::{Command, LogLevel};
use tmux_control_mcp::transport::http::{HttpError, HttpOptions, HttpServer};
use tmux_control_mcp::transport::stdio::Shutdown;
use tmux_control_mcp::transport::{bridge, shared, stdio};
use tmux_control_mcp::{Cli, Config, TmuxMcp};
use tracing::level_filters::LevelFilter;

/// Exit status for a configuration that cannot be used (as clap uses for
/// bad flags).
const CONFIG_ERROR: u8 = 2;

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging(cli.log_level);

    match &cli.command {
        // The doctor reports a bad configuration as one of its findings,
        // and opens nothing (no audit log, no tmux): it runs before the
        // server is made.
        Some(Command::Doctor(args)) => return tmux_control_mcp::doctor::main(&cli, args),
        // The bridge is a client of a shared server: no server of its own.
        Some(Command::Bridge(args)) => return run_bridge(&cli, args),
        // One tool call, through a shared server or in this process.
        Some(Command::Call(args)) => return tmux_control_mcp::call::main(&cli, args),
        // The web view's keys file: no server, no tmux.
        Some(Command::WebKey(args)) => {
            return tmux_control_mcp::transport::web::cli::web_key_main(&cli, args);
        }
        _ => {}
    }

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

    // Installed before anything is served, so that no signal finds its
    // default action (the process ending at once) any more.
    let shutdown = Shutdown::new();
    let signals = {
        let _runtime = runtime.enter();
        Signals::install()
    };
    let job = match &cli.command {
        Some(Command::Serve(args)) if args.http.is_some() => {
            let options = match HttpOptions::new(
                args.http.as_deref().unwrap_or_default(),
                args.token_file.as_deref(),
                cli.state_dir.as_deref(),
                args.allow_remote,
            ) {
                Ok(options) => options,
                Err(err) => {
                    eprintln!("tmux-mcp: {err}");
                    return ExitCode::from(CONFIG_ERROR);
                }
            };
            return match runtime.block_on(serve_http(server, options)) {
                Ok(()) => ExitCode::SUCCESS,
                Err(err) => {
                    tracing::error!("{err}");
                    eprintln!("tmux-mcp: {err}");
                    if err.is_config_error() {
                        ExitCode::from(CONFIG_ERROR)
                    } else {
                        ExitCode::FAILURE
                    }
                }
            };
        }
        Some(Command::Serve(args)) if args.unix.is_some() => {
            let path = args.unix.clone().unwrap_or_default();
            let bound = {
                let _runtime = runtime.enter();
                shared::bind(&path, &server.state_dir())
            };
            match bound {
                Ok(bound) => {
                    // The line a supervisor (or a test) waits for.
                    eprintln!(
                        "tmux-mcp: serving MCP on unix socket {} (pid {}, state directory {})",
                        bound.path().display(),
                        std::process::id(),
                        bound.state_dir().display()
                    );
                    Box::pin(shared::serve(bound, server.clone(), shutdown.clone()))
                }
                Err(err) => {
                    eprintln!("tmux-mcp: {err}");
                    return ExitCode::from(CONFIG_ERROR);
                }
            }
        }
        _ => serve_stdio(server.clone(), shutdown.clone()),
    };
    if let Some(web) = &cli.web
        && !matches!(&cli.command, Some(Command::Serve(args)) if args.http.is_some())
    {
        let Ok(addr) = web.parse::<std::net::SocketAddr>() else {
            eprintln!(
                "tmux-mcp: --web {web:?} is not an address to listen on (give an IP address and port, e.g. 127.0.0.1:8766)"
            );
            return ExitCode::from(CONFIG_ERROR);
        };
        match runtime.block_on(tmux_control_mcp::transport::web::serve(
            server.clone(),
            addr,
            cli.web_allow_remote,
        )) {
            Ok(bound) => eprintln!(
                "tmux-mcp: web view at {} (open it with the link the web_view tool gives, or a key from `tmux-mcp web-key add NAME`)",
                tmux_control_mcp::transport::web::page_url(bound)
            ),
            Err(err) => {
                eprintln!("tmux-mcp: {err}");
                return ExitCode::from(CONFIG_ERROR);
            }
        }
    }
    let outcome = runtime.block_on(async {
        tokio::spawn(follow_signals(signals, shutdown.clone()));
        tokio::select! {
            outcome = job => outcome,
            () = shutdown.given_up() => Err(format!(
                "stopped without writing every answer: the last ones were still unwritten {} s after the signal",
                (stdio::DRAIN + stdio::STOP_GRACE + stdio::WRITE_GRACE).as_secs()
            )),
        }
    });
    // A true timer: a bound on waiting for blocking reads that cannot be
    // interrupted (standard input that is not a pipe) as the runtime ends.
    runtime.shutdown_timeout(EXIT_GRACE);
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            tracing::error!("{message}");
            eprintln!("tmux-mcp: {message}");
            ExitCode::FAILURE
        }
    }
}

/// How long the runtime's last blocking tasks may delay the exit.
const EXIT_GRACE: std::time::Duration = std::time::Duration::from_millis(500);

/// SIGTERM and SIGINT, as they come. A handler that cannot be installed
/// leaves its signal with its default action (the process ends at once).
struct Signals {
    term: Option<tokio::signal::unix::Signal>,
    int: Option<tokio::signal::unix::Signal>,
}

impl Signals {
    /// Must be called inside a Tokio runtime.
    fn install() -> Self {
        use tokio::signal::unix::{SignalKind, signal};
        let install = |kind: SignalKind, name: &str| match signal(kind) {
            Ok(signal) => Some(signal),
            Err(e) => {
                tracing::warn!("cannot handle {name}: {e}");
                None
            }
        };
        Self {
            term: install(SignalKind::terminate(), "SIGTERM"),
            int: install(SignalKind::interrupt(), "SIGINT"),
        }
    }

    /// Completes on the next SIGTERM or SIGINT.
    async fn recv(&mut self) {
        async fn next(signal: Option<&mut tokio::signal::unix::Signal>) {
            match signal {
                Some(signal) => {
                    signal.recv().await;
                }
                None => std::future::pending::<()>().await,
            }
        }
        tokio::select! {
            () = next(self.term.as_mut()) => {}
            () = next(self.int.as_mut()) => {}
        }
    }
}

/// Moves `shutdown` on as the signals come: the first stops reading
/// requests; the calls still running after the drain time (or at a second
/// signal) are stopped; after the last bound, the process gives up waiting.
async fn follow_signals(mut signals: Signals, shutdown: Shutdown) {
    signals.recv().await;
    tracing::info!(
        "stopping: answering the calls in flight (those still running in {} s are stopped)",
        stdio::DRAIN.as_secs()
    );
    shutdown.stop();
    tokio::select! {
        // A true timer: the drain time.
        () = tokio::time::sleep(stdio::DRAIN) => {}
        () = signals.recv() => tracing::info!("a second signal: stopping the calls in flight now"),
    }
    shutdown.abort();
    // A true timer: how long stopped calls, and then their answers, may take.
    tokio::time::sleep(stdio::STOP_GRACE + stdio::WRITE_GRACE).await;
    shutdown.give_up();
}

/// `tmux-mcp bridge`: forwards stdio to a `serve --unix` server.
fn run_bridge(cli: &Cli, args: &tmux_control_mcp::config::BridgeArgs) -> ExitCode {
    if !(args.wait_secs.is_finite() && args.wait_secs >= 0.0 && args.wait_secs <= 3600.0) {
        eprintln!(
            "tmux-mcp: --wait-secs must be between 0 and 3600 seconds, not {}",
            args.wait_secs
        );
        return ExitCode::from(CONFIG_ERROR);
    }
    let mut options = bridge::BridgeOptions::new(args.unix.clone());
    options.actor = cli
        .actor
        .as_deref()
        .and_then(tmux_control_mcp::config::actor_name);
    options.wait = std::time::Duration::from_secs_f64(args.wait_secs);
    match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => {
            runtime.block_on(bridge::run(options));
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("tmux-mcp: cannot start the async runtime: {err}");
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

/// Standard error for diagnostics, where a failed write (nobody reads
/// standard error any more) loses the diagnostic and nothing else: the
/// subscriber's own report of the failure would panic the thread that
/// logged, and leave its request unanswered.
struct Diagnostics;

impl std::io::Write for Diagnostics {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        // Each event comes in one write; a web key in it (a `web_view`
        // reply at the debug level) is masked.
        let masked = tmux_control_mcp::transport::web::mask_keys(bytes);
        let _ = std::io::stderr().write_all(&masked);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let _ = std::io::stderr().flush();
        Ok(())
    }
}

/// Sends `tracing` output to standard error, never to standard output.
fn init_logging(log_level: LogLevel) {
    let stderr = std::io::stderr();
    let ansi = stderr.is_terminal();
    // Ignoring the error is right: it only says a global subscriber is
    // already installed, and then that one keeps working.
    let _ = tracing_subscriber::fmt()
        .with_writer(|| Diagnostics)
        .with_ansi(ansi)
        .with_max_level(level(log_level))
        .try_init();
}

/// Serves one MCP session over stdio until the client closes standard input
/// or the session ends. Every line the client writes is answered, also one
/// that is not JSON (see `tmux_control_mcp::transport::stdio`).
fn serve_stdio(
    server: TmuxMcp,
    shutdown: Shutdown,
) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<(), String>>>> {
    Box::pin(serve_stdio_session(server, shutdown))
}

async fn serve_stdio_session(server: TmuxMcp, shutdown: Shutdown) -> Result<(), String> {
    tracing::info!(
        version = env!("CARGO_PKG_VERSION"),
        tools = server.tool_names().len(),
        "tmux-mcp starting on stdio"
    );
    let (stdin, stdout) = rmcp::transport::stdio_pipes();
    let (transport, pumps) = stdio::guard_until(stdin, stdout, shutdown.clone());
    let session = async {
        let running = stdio::Draining::new(server.clone(), shutdown)
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
    stdio::settle(&server).await;
    tracing::info!(?reason, "tmux-mcp stopped");
    reason.map(drop)
}

/// Serves MCP over streamable HTTP until SIGINT or SIGTERM. Says on
/// standard error where it listens (once listening, so a client may connect
/// as soon as it reads the line) and, when it made a new token file, the
/// token.
async fn serve_http(server: TmuxMcp, options: HttpOptions) -> Result<(), HttpError> {
    let tools = server.tool_names().len();
    let http = HttpServer::bind(server, options).await?;
    let url = http.url();
    if http.token_created() {
        eprintln!(
            "tmux-mcp: created the bearer token file {} (mode 0600); clients send the header\n\
             tmux-mcp:   Authorization: Bearer {}\n\
             tmux-mcp: (this is the only time the token is printed; it stays in that file)",
            http.token_file().display(),
            http.token().as_str()
        );
    }
    tracing::info!(
        version = env!("CARGO_PKG_VERSION"),
        tools,
        address = %http.local_addr(),
        "tmux-mcp starting on HTTP"
    );
    eprintln!(
        "tmux-mcp: serving MCP at {url} (bearer token in {})",
        http.token_file().display()
    );
    let result = http.serve(shutdown_signal()).await;
    tracing::info!(?result, "tmux-mcp stopped");
    result
}

/// Completes on SIGINT or SIGTERM. If a handler cannot be installed, that
/// signal keeps its default action (the process ends at once).
async fn shutdown_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate()).ok();
    let terminated = async {
        match term.as_mut() {
            Some(term) => {
                term.recv().await;
            }
            None => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        () = terminated => {}
    }
}
