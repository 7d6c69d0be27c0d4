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
//! The report and its renderings are in `report`; the checks, one per part
//! of the set-up, each with its advice, in `tmux` (tmux, the socket
//! directory, the server), `state` (the state directory, the token file),
//! `shell` and `hosts`; running a program within a deadline in `command`.

mod command;
mod hosts;
mod report;
mod shell;
mod state;
mod tmux;

use std::path::PathBuf;

use crate::config::{Cli, Config, DEFAULT_SOCKET_NAME, DoctorArgs, SocketChoice};
use hosts::host_checks;
pub use report::{Check, Report, Status};
use shell::shell_check;
use state::{state_dir_check, token_check};
use tmux::{server_check, socket_dir_check, tmux_check};

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
        .unwrap_or_else(crate::terminal::backend::default_state_dir);
    checks.push(state_dir_check(&state_dir));
    checks.push(shell_check(
        std::env::var_os("SHELL").map(PathBuf::from),
        !cli.no_shell_integration,
    ));
    let token_file = args
        .token_file
        .clone()
        .unwrap_or_else(|| state_dir.join(crate::transport::http::DEFAULT_TOKEN_FILE));
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

fn mode_text(mode: u32) -> String {
    format!("{:04o}", mode & 0o7777)
}
