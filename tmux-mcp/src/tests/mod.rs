//! Handler-level tests: the tool methods called directly, without MCP,
//! against a real tmux server on a private socket (the library's
//! `IsolatedServer`, killed and removed when each test ends).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod inputs;
mod manage;
mod router;
mod run_and_read;
mod teardown;
mod terminals;

use rmcp::handler::server::wrapper::Parameters;
use tmux_control::IsolatedServer;

use crate::config::Config;
use crate::config::toolsets::ToolSelection;
use crate::mcp::server::TmuxMcp;
use crate::mcp::wait::CallCtx;
use crate::reply::{Json, ToolError};
use crate::terminal::guard::Caller;
use crate::tools::execute::create::CreateTerminalArgs;
use crate::tools::run::{RunArgs, RunResult};
use crate::tools::waits::WaitForOutputArgs;

/// A server on a private tmux socket. Field order matters: the server (and
/// its connection) goes first, then the isolated tmux server is killed.
struct Fixture {
    mcp: TmuxMcp,
    iso: IsolatedServer,
}

fn config_for(iso: &IsolatedServer) -> Config {
    let mut config = Config::for_socket_path(iso.socket_path());
    config.state_dir = Some(iso.dir().join("state"));
    config.tools =
        ToolSelection::resolve(&["inspect", "manage", "execute", "teardown"], &[], &[]).unwrap();
    config
}

fn fixture() -> Fixture {
    let iso = IsolatedServer::new().unwrap();
    let mcp = TmuxMcp::with_caller(config_for(&iso), Caller::default()).unwrap();
    Fixture { mcp, iso }
}

fn ok<T>(r: Result<Json<T>, ToolError>) -> T {
    match r {
        Ok(Json(v)) => v,
        Err(e) => panic!("tool failed: {e}"),
    }
}

async fn shell(f: &Fixture, name: &str) -> String {
    let created = ok(f
        .mcp
        .create_terminal(Parameters(CreateTerminalArgs {
            name: Some(name.into()),
            command: Some("exec sh".into()),
            env: Some([("PS1".to_owned(), "$ ".to_owned())].into()),
            ..CreateTerminalArgs::default()
        }))
        .await);
    // Wait for the first prompt, so that typed text is not echoed ahead of it.
    let prompt = ok(f
        .mcp
        .wait_for_output(
            Parameters(WaitForOutputArgs {
                target: created.pane.clone(),
                pattern: "[#$] $".into(),
                literal: false,
                ignore_case: false,
                cursor: Some(0),
                timeout_secs: Some(10.0),
            }),
            CallCtx::detached(),
        )
        .await);
    assert!(prompt.matched, "{prompt:?}");
    created.pane
}

async fn run(f: &Fixture, pane: &str, command: &str) -> RunResult {
    ok(f.mcp
        .run(
            Parameters(RunArgs {
                target: Some(pane.into()),
                command: Some(command.into()),
                timeout_secs: Some(20.0),
                ..RunArgs::default()
            }),
            CallCtx::detached(),
        )
        .await)
}
