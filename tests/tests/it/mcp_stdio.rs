#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! The built `tmux-mcp` binary answers MCP over stdio.
//!
//! Two independent peers drive the real binary as a child process: rmcp's own
//! client, and hand-written JSON-RPC lines (so wire-level correctness does not
//! depend on rmcp agreeing with itself). Most children run with `PATH`
//! pointing at a fake `tmux` that records any call and with an empty
//! `TMUX_TMPDIR`, and those tests check afterwards that neither was touched:
//! the server must not start or contact tmux for the handshake, for listing
//! tools, for refused calls or for a bad configuration. One test gives the
//! binary a real tmux server on a private socket (the library's
//! `IsolatedServer`) and runs a command in it.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rmcp::ServiceExt as _;
use rmcp::model::{CallToolRequestParams, ErrorCode, ProtocolVersion};
use rmcp::service::{QuitReason, ServiceError};
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};
use tmux_control_tests::tmux_mcp_bin;
use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::process::Command;

/// Bound on each test's interaction with the server (building the binary
/// happens before it starts).
const TEST_TIMEOUT: Duration = Duration::from_secs(30);

/// The newest protocol version that still has an `initialize` handshake.
const PROTOCOL_VERSION: &str = "2025-11-25";

/// A private scratch directory holding a fake `tmux` on `PATH` and an empty
/// `TMUX_TMPDIR`, removed on drop.
struct NoTmux {
    root: PathBuf,
}

impl NoTmux {
    fn new(test: &str) -> Self {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_nanos();
        let root = std::env::temp_dir().join(format!(
            "tmux-mcp-test-{test}-{}-{nanos}",
            std::process::id()
        ));
        std::fs::create_dir_all(root.join("bin")).unwrap();
        std::fs::create_dir_all(root.join("tmux-tmpdir")).unwrap();
        let fake = root.join("bin").join("tmux"); // a stand-in that only logs its calls
        std::fs::write(
            &fake,
            format!(
                "#!/bin/sh\necho \"$@\" >> '{}'\nexit 1\n",
                root.join("tmux-calls").display()
            ),
        )
        .unwrap();
        {
            use std::os::unix::fs::PermissionsExt as _;
            std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        Self { root }
    }

    /// A command for `bin` in this sandbox, with piped stdin and stdout.
    fn command(&self, bin: &Path) -> Command {
        let mut cmd = Command::new(bin);
        cmd.env("PATH", self.root.join("bin"))
            .env("TMUX_TMPDIR", self.root.join("tmux-tmpdir"))
            .env_remove("TMUX")
            .env_remove("TMUX_PANE")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true);
        cmd
    }

    /// Asserts that nothing ran `tmux` and nothing created a tmux socket
    /// directory.
    fn assert_untouched(&self) {
        let calls = self.root.join("tmux-calls");
        assert!(
            !calls.exists(),
            "tmux-mcp ran tmux: {}",
            std::fs::read_to_string(&calls).unwrap_or_default()
        );
        let entries: Vec<_> = std::fs::read_dir(self.root.join("tmux-tmpdir"))
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .collect();
        assert!(
            entries.is_empty(),
            "tmux-mcp created {entries:?} in TMUX_TMPDIR"
        );
    }
}

impl Drop for NoTmux {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// The version `bin --version` reports (`tmux-mcp <version>`).
async fn reported_version(bin: &Path) -> String {
    let output = Command::new(bin)
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .await
        .unwrap();
    assert!(output.status.success(), "--version failed: {output:?}");
    let stdout = String::from_utf8(output.stdout).unwrap();
    stdout
        .trim_end()
        .strip_prefix("tmux-mcp ")
        .unwrap_or_else(|| panic!("unexpected --version output {stdout:?}"))
        .to_owned()
}

#[tokio::test]
async fn rmcp_client_initializes_lists_tools_and_refuses_without_touching_tmux() {
    let bin = tmux_mcp_bin().expect("tmux-mcp binary");
    let sandbox = NoTmux::new("rmcp");
    let mut cmd = sandbox.command(&bin);
    cmd.arg("--log-level").arg("error");

    tokio::time::timeout(TEST_TIMEOUT, async {
        let version = reported_version(&bin).await;
        let client =
            ().serve(TokioChildProcess::new(cmd).expect("spawn tmux-mcp"))
                .await
                .expect("initialize handshake");

        let info = client.peer_info().expect("server info after initialize");
        let server = info.server_info.as_ref().expect("serverInfo");
        assert_eq!(server.name, "tmux-mcp");
        assert_eq!(server.version, version);
        assert_eq!(info.protocol_version, ProtocolVersion::V_2025_11_25);
        assert!(info.capabilities.tools.is_some(), "tools capability");
        let instructions = info.instructions.as_deref().expect("instructions");
        assert!(
            instructions.contains("create_terminal")
                && instructions.contains("tmux -L tmux-mcp attach"),
            "instructions should explain the tools: {instructions:?}"
        );
        assert!(instructions.len() < 2048, "{}", instructions.len());

        let tools = client.list_all_tools().await.expect("tools/list");
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
        assert_eq!(
            names.len(),
            tmux_control_mcp::config::toolsets::TOOLS
                .iter()
                .filter(
                    |(_, set)| tmux_control_mcp::config::toolsets::Toolset::DEFAULT.contains(set)
                )
                .count(),
            "default toolsets inspect, manage, execute: {names:?}"
        );
        for name in [
            "list_terminals",
            "run",
            "send_text",
            "send_keys",
            "wait_for_output",
            "create_terminal",
        ] {
            assert!(names.contains(&name), "{name} missing: {names:?}");
        }
        assert!(
            tools.iter().all(|t| t.output_schema.is_some()),
            "every tool has an output schema"
        );

        // Unknown and not-enabled tools are protocol errors; nothing runs.
        for missing in ["no_such_tool", "kill_server"] {
            match client.call_tool(CallToolRequestParams::new(missing)).await {
                Err(ServiceError::McpError(err)) => {
                    assert_eq!(err.code, ErrorCode::INVALID_PARAMS, "{err:?}");
                    assert_eq!(err.message, "tool not found");
                }
                other => panic!("calling {missing} should fail, got {other:?}"),
            }
        }
        // Bad arguments are a tool result the model can read, caught before
        // tmux is contacted.
        let bad = client
            .call_tool(CallToolRequestParams::new("send_text"))
            .await
            .expect("a tool result");
        assert_eq!(bad.is_error, Some(true));
        let text = bad.content[0].as_text().expect("text").text.clone();
        assert!(text.contains("missing field `target`"), "{text}");

        let reason = client.cancel().await.expect("clean cancel");
        assert!(matches!(reason, QuitReason::Cancelled), "{reason:?}");
    })
    .await
    .expect("test timed out");

    sandbox.assert_untouched();
}

#[tokio::test]
async fn raw_json_rpc_initialize_over_stdio() {
    let bin = tmux_mcp_bin().expect("tmux-mcp binary");
    let sandbox = NoTmux::new("raw");
    let mut cmd = sandbox.command(&bin);
    cmd.stderr(Stdio::piped());

    tokio::time::timeout(TEST_TIMEOUT, async {
        let version = reported_version(&bin).await;
        let mut child = cmd.spawn().expect("spawn tmux-mcp");
        let mut stdin = child.stdin.take().unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut stderr = child.stderr.take().unwrap();
        let stderr_task = tokio::spawn(async move {
            let mut text = String::new();
            stderr.read_to_string(&mut text).await.map(|_| text)
        });

        let mut send = async move |message: Value| {
            let mut line = serde_json::to_vec(&message).unwrap();
            line.push(b'\n');
            stdin.write_all(&line).await.unwrap();
            stdin.flush().await.unwrap();
        };

        send(json!({
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": { "name": "raw-json-rpc-test", "version": "0.0.0" }
            }
        }))
        .await;

        let line = stdout
            .next_line()
            .await
            .unwrap()
            .expect("a response line to initialize");
        let response: Value = serde_json::from_str(&line)
            .unwrap_or_else(|err| panic!("response is not one JSON line ({err}): {line:?}"));
        assert_eq!(response["jsonrpc"], "2.0", "{response}");
        assert_eq!(response["id"], 1, "{response}");
        assert!(response.get("error").is_none(), "{response}");
        let result = &response["result"];
        assert_eq!(result["protocolVersion"], PROTOCOL_VERSION, "{response}");
        assert_eq!(result["serverInfo"]["name"], "tmux-mcp", "{response}");
        assert_eq!(
            result["serverInfo"]["version"],
            version.as_str(),
            "{response}"
        );
        assert!(result["capabilities"]["tools"].is_object(), "{response}");
        assert!(result["instructions"].is_string(), "{response}");

        send(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" })).await;
        send(json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/list" })).await;

        let line = stdout
            .next_line()
            .await
            .unwrap()
            .expect("a response line to tools/list");
        let response: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(response["id"], 2, "{response}");
        let tools = response["result"]["tools"].as_array().expect("a tool list");
        // The default toolsets: every tool of the classification table
        // that is not in teardown.
        let in_default = tmux_control_mcp::config::toolsets::TOOLS
            .iter()
            .filter(|(_, set)| tmux_control_mcp::config::toolsets::Toolset::DEFAULT.contains(set))
            .count();
        assert_eq!(tools.len(), in_default, "{response}");
        for tool in tools {
            assert!(tool["name"].is_string(), "{tool}");
            assert_eq!(tool["inputSchema"]["type"], "object", "{tool}");
            assert_eq!(tool["outputSchema"]["type"], "object", "{tool}");
            assert!(
                tool["description"].as_str().is_some_and(|d| d.len() < 2048),
                "{tool}"
            );
        }

        // Closing stdin ends the session: the server must exit cleanly and
        // write nothing more to stdout.
        drop(send); // owns stdin
        let extra = stdout.next_line().await.unwrap();
        assert_eq!(extra, None, "unexpected output after the last response");
        let status = child.wait().await.unwrap();
        let stderr = stderr_task.await.unwrap().unwrap();
        assert!(status.success(), "exit status {status}, stderr:\n{stderr}");
    })
    .await
    .expect("test timed out");

    sandbox.assert_untouched();
}

#[tokio::test]
async fn cli_version_help_and_unknown_flag() {
    let bin = tmux_mcp_bin().expect("tmux-mcp binary");
    let sandbox = NoTmux::new("cli");

    tokio::time::timeout(TEST_TIMEOUT, async {
        // Every package in the workspace shares `workspace.package.version`.
        assert_eq!(reported_version(&bin).await, env!("CARGO_PKG_VERSION"));

        let help = sandbox
            .command(&bin)
            .arg("--help")
            .stdin(Stdio::null())
            .output()
            .await
            .unwrap();
        assert!(help.status.success(), "{help:?}");
        let help = String::from_utf8(help.stdout).unwrap();
        assert!(help.contains("Usage: tmux-mcp"), "{help}");
        for flag in [
            "--log-level",
            "--toolsets",
            "--exclude-tools",
            "--socket-name",
            "--audit-log",
            "--redact",
        ] {
            assert!(help.contains(flag), "{flag} missing from --help:\n{help}");
        }

        let bad = sandbox
            .command(&bin)
            .arg("--no-such-flag")
            .stdin(Stdio::null())
            .stderr(Stdio::piped())
            .output()
            .await
            .unwrap();
        assert_eq!(bad.status.code(), Some(2), "{bad:?}");
        assert!(bad.stdout.is_empty(), "{bad:?}");
    })
    .await
    .expect("test timed out");

    sandbox.assert_untouched();
}

#[tokio::test]
async fn unknown_names_in_the_configuration_stop_start_up() {
    let bin = tmux_mcp_bin().expect("tmux-mcp binary");
    let sandbox = NoTmux::new("config");

    tokio::time::timeout(TEST_TIMEOUT, async {
        for (var, value, expected) in [
            (
                "TMUX_MCP_TOOLSETS",
                "inspect,exec",
                "unknown toolset \"exec\"",
            ),
            ("TMUX_MCP_TOOLS", "kill-pane", "unknown tool \"kill-pane\""),
            ("TMUX_MCP_EXCLUDE_TOOLS", "nope", "unknown tool \"nope\""),
        ] {
            let out = sandbox
                .command(&bin)
                .env(var, value)
                .stdin(Stdio::null())
                .stderr(Stdio::piped())
                .output()
                .await
                .unwrap();
            assert_eq!(out.status.code(), Some(2), "{var}={value}: {out:?}");
            assert!(out.stdout.is_empty(), "{out:?}");
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(stderr.contains(expected), "{var}={value}: {stderr}");
            assert!(
                stderr.contains("inspect") || stderr.contains("list_terminals"),
                "{stderr}"
            );
        }
        let out = sandbox
            .command(&bin)
            .args(["--redact", "(unclosed"])
            .stdin(Stdio::null())
            .stderr(Stdio::piped())
            .output()
            .await
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("not a valid regular expression"));
    })
    .await
    .expect("test timed out");

    sandbox.assert_untouched();
}

#[tokio::test]
async fn runs_a_command_in_a_private_tmux_server() {
    let bin = tmux_mcp_bin().expect("tmux-mcp binary");
    let isolated = tmux_control::IsolatedServer::new().unwrap();
    let mut cmd = Command::new(&bin);
    cmd.arg("--socket-path")
        .arg(isolated.socket_path())
        .env("TMUX_MCP_STATE_DIR", isolated.dir().join("state"))
        .env_remove("TMUX")
        .env_remove("TMUX_PANE")
        .stderr(Stdio::null());

    tokio::time::timeout(TEST_TIMEOUT, async {
        let client =
            ().serve(TokioChildProcess::new(cmd).expect("spawn tmux-mcp"))
                .await
                .expect("initialize handshake");
        let call = |name: &'static str, args: Value| {
            CallToolRequestParams::new(name).with_arguments(args.as_object().unwrap().clone())
        };
        let created = client
            .call_tool(call(
                "create_terminal",
                json!({"name": "stdio", "command": "exec sh"}),
            ))
            .await
            .unwrap();
        assert_ne!(created.is_error, Some(true), "{created:?}");
        let created = created.structured_content.unwrap();
        assert_eq!(
            created["attach_command"],
            format!(
                "tmux -S {} attach -t stdio",
                isolated.socket_path().display()
            )
        );
        let ran = client
            .call_tool(call(
                "run",
                json!({"target": created["pane"], "command": "echo via-stdio; (exit 5)"}),
            ))
            .await
            .unwrap();
        let ran = ran.structured_content.unwrap();
        assert_eq!(ran["status"], "completed", "{ran}");
        assert_eq!(ran["exit_status"], 5, "{ran}");
        assert_eq!(ran["output"], "via-stdio\n", "{ran}");
        client.cancel().await.expect("clean cancel");
    })
    .await
    .expect("test timed out");
}
