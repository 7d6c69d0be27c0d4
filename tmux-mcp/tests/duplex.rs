#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! The server driven by rmcp's own client over an in-memory duplex pipe,
//! against a real tmux server on a private socket (the library's
//! `IsolatedServer`, killed and removed when each test ends).
//!
//! Covers: listing tools, creating a terminal, typing, waiting, capturing,
//! running a command with its exit status, progress notifications,
//! cancellation, a tool denied by the toolsets, bad arguments, the audit
//! log, and input exactness checked in the pane with `od -c`.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::model::{CallToolRequestParams, CallToolResult, ErrorCode, ProgressNotificationParam};
use rmcp::service::{NotificationContext, RunningService, ServiceError};
use rmcp::{ClientHandler, RoleClient, ServiceExt as _};
use serde_json::{Map, Value, json};
use tmux_control::IsolatedServer;
use tmux_control_mcp::Caller;
use tmux_control_mcp::config::toolsets::ToolSelection;
use tmux_control_mcp::{Config, TmuxMcp};

/// Bound on each test.
const TEST_TIMEOUT: Duration = Duration::from_secs(60);

/// A client that records progress notifications.
#[derive(Clone, Default)]
struct Client {
    progress: Arc<Mutex<Vec<ProgressNotificationParam>>>,
}

impl ClientHandler for Client {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress.lock().unwrap().push(params);
    }
}

/// The client, the isolated tmux server and the server's scratch directory.
/// Field order: the client (and so the server session) ends first.
struct Harness {
    client: RunningService<RoleClient, Client>,
    progress: Arc<Mutex<Vec<ProgressNotificationParam>>>,
    iso: IsolatedServer,
}

async fn harness(configure: impl FnOnce(&mut Config, &Path)) -> Harness {
    let iso = IsolatedServer::new().unwrap();
    let mut config = Config::for_socket_path(iso.socket_path());
    config.state_dir = Some(iso.dir().join("state"));
    configure(&mut config, iso.dir());
    // Tests may run inside tmux: the caller is placed nowhere, so that the
    // self-kill guard does not depend on the environment.
    let server = TmuxMcp::with_caller(config, Caller::default()).unwrap();
    let (server_io, client_io) = tokio::io::duplex(1 << 20);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    let client = Client::default();
    let progress = client.progress.clone();
    let client = client.serve(client_io).await.unwrap();
    Harness {
        client,
        progress,
        iso,
    }
}

fn args(value: Value) -> Map<String, Value> {
    value.as_object().cloned().unwrap()
}

impl Harness {
    async fn call(&self, tool: &str, arguments: Value) -> Result<CallToolResult, ServiceError> {
        self.client
            .call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(args(arguments)))
            .await
    }

    /// Calls a tool that must succeed; returns its structured content.
    async fn ok(&self, tool: &str, arguments: Value) -> Value {
        let result = self.call(tool, arguments).await.unwrap();
        assert_ne!(
            result.is_error,
            Some(true),
            "{tool} failed: {}",
            text(&result)
        );
        assert!(!text(&result).is_empty(), "{tool}: no text content");
        result
            .structured_content
            .unwrap_or_else(|| panic!("{tool}: no structured content"))
    }

    /// Calls a tool that must fail as a tool result; returns its text.
    async fn tool_error(&self, tool: &str, arguments: Value) -> String {
        let result = self.call(tool, arguments).await.unwrap();
        assert_eq!(
            result.is_error,
            Some(true),
            "{tool} should fail: {}",
            text(&result)
        );
        text(&result)
    }

    async fn shell(&self, name: &str) -> String {
        let created = self
            .ok(
                "create_terminal",
                json!({"name": name, "command": "exec sh", "env": {"PS1": "$ "}}),
            )
            .await;
        let pane = created["pane"].as_str().unwrap().to_owned();
        // Wait for the first prompt, so that typed text is not echoed
        // ahead of it.
        let prompt = self
            .ok(
                "wait_for_output",
                json!({"target": pane, "pattern": "[#$] $", "cursor": 0, "timeout_secs": 10}),
            )
            .await;
        assert_eq!(prompt["status"], "matched", "{prompt}");
        pane
    }
}

fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

fn all_toolsets(config: &mut Config, _: &Path) {
    config.tools =
        ToolSelection::resolve(&["inspect", "manage", "execute", "teardown"], &[], &[]).unwrap();
}

/// What `od -c` prints for `bytes` (run here, in the C locale).
fn od_c(bytes: &[u8]) -> String {
    use std::io::Write as _;
    let mut child = std::process::Command::new("od")
        .arg("-c")
        .env("LC_ALL", "C")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(bytes).unwrap();
    let out = child.wait_with_output().unwrap();
    String::from_utf8(out.stdout).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lists_tools_with_schemas_and_runs_a_session() {
    tokio::time::timeout(TEST_TIMEOUT, async {
        let h = harness(|_, _| {}).await;
        let info = h.client.peer_info().unwrap();
        assert!(info.instructions.as_deref().unwrap().contains("create_terminal"));
        let tools = h.client.list_all_tools().await.unwrap();
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
        let in_default = tmux_control_mcp::config::toolsets::TOOLS
            .iter()
            .filter(|(_, set)| tmux_control_mcp::config::toolsets::Toolset::DEFAULT.contains(set))
            .count();
        assert_eq!(names.len(), in_default, "{names:?}");
        for expected in ["list_terminals", "capture_screen", "run", "send_text", "send_keys", "wait_for_output", "set_layout"] {
            assert!(names.contains(&expected), "{expected} missing from {names:?}");
        }
        assert!(!names.iter().any(|n| n.starts_with("kill_")), "teardown is off by default");
        for tool in &tools {
            assert!(tool.output_schema.is_some(), "{} has no output schema", tool.name);
            assert!(tool.description.as_deref().unwrap().len() < 2048, "{}", tool.name);
        }

        let pane = h.shell("demo").await;
        let created = h.ok("list_terminals", json!({})).await;
        let session = &created["sessions"][0];
        assert_eq!(session["name"], "demo");
        assert_eq!(session["attach_command"], format!("tmux -S {} attach -t demo", h.iso.socket_path().display()));

        // Type, wait (push-based), capture.
        let sent = h.ok("send_text", json!({"target": pane, "text": "echo hello-$((6*7))", "enter": true})).await;
        let waited = h
            .ok("wait_for_output", json!({"target": pane, "pattern": "^hello-42$", "cursor": sent["cursor"], "timeout_secs": 10}))
            .await;
        assert_eq!(waited["status"], "matched", "{waited}");
        assert_eq!(waited["text"], "hello-42");
        let screen = h.ok("capture_screen", json!({"target": pane})).await;
        assert!(screen["text"].as_str().unwrap().contains("hello-42"), "{screen}");

        // run: output and exit status, exactly.
        let ran = h.ok("run", json!({"target": pane, "command": "echo out; echo err >&2; exit_code() { return 3; }; exit_code"})).await;
        assert_eq!(ran["status"], "completed");
        assert_eq!(ran["exit_status"], 3);
        assert_eq!(ran["output"], "out\nerr\n");
        let result = h.call("run", json!({"target": pane, "command": "true"})).await.unwrap();
        assert!(text(&result).starts_with("Command finished in pane"), "{}", text(&result));
    })
    .await
    .expect("test timed out");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_is_reported_during_long_waits() {
    tokio::time::timeout(TEST_TIMEOUT, async {
        let h = harness(|_, _| {}).await;
        let pane = h.shell("progress").await;
        let started = Instant::now();
        let ran = h
            .ok(
                "run",
                json!({"target": pane, "command": "sleep 2.6; echo done", "timeout_secs": 20}),
            )
            .await;
        assert_eq!(ran["output"], "done\n");
        assert!(started.elapsed() >= Duration::from_millis(2500));
        let progress = h.progress.lock().unwrap().clone();
        assert!(
            progress.len() >= 2,
            "expected progress notifications, got {progress:?}"
        );
        assert!(
            progress.windows(2).all(|w| w[0].progress < w[1].progress),
            "{progress:?}"
        );
        assert_eq!(progress[0].total, Some(20.0));
        assert!(
            progress[0].message.as_deref().unwrap().contains("run"),
            "{progress:?}"
        );
        // A run that outlives its call returns a run_id, and resumes.
        let first = h
            .ok(
                "run",
                json!({"target": pane, "command": "sleep 1.5; echo late", "timeout_secs": 0.3}),
            )
            .await;
        assert_eq!(first["status"], "running", "{first}");
        let done = h
            .ok(
                "run",
                json!({"run_id": first["run_id"], "timeout_secs": 10}),
            )
            .await;
        assert_eq!(
            (done["status"].as_str(), done["output"].as_str()),
            (Some("completed"), Some("late\n"))
        );
    })
    .await
    .expect("test timed out");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancellation_ends_a_wait_and_the_session_stays_usable() {
    tokio::time::timeout(TEST_TIMEOUT, async {
        let audit = std::sync::OnceLock::new();
        let h = harness(|c, dir| {
            let path = dir.join("audit.jsonl");
            c.audit_log = Some(path.clone());
            audit.set(path).unwrap();
        })
        .await;
        let pane = h.shell("cancel").await;
        // Dropping the call's future makes rmcp's client send
        // notifications/cancelled for it.
        let abandoned = tokio::time::timeout(
            Duration::from_millis(400),
            h.call(
                "wait_for_output",
                json!({"target": pane, "pattern": "never", "timeout_secs": 50}),
            ),
        )
        .await;
        assert!(
            abandoned.is_err(),
            "the wait should still have been running"
        );
        // The server saw the cancellation: the call's audit record shows an
        // error well before its 50 s limit.
        let path = audit.get().unwrap();
        let mut record = None;
        for _ in 0..50 {
            let log = std::fs::read_to_string(path).unwrap();
            record = log
                .lines()
                .map(|l| serde_json::from_str::<Value>(l).unwrap())
                .find(|r| r["tool"] == "wait_for_output" && r["arguments"]["pattern"] == "never");
            if record.is_some() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let record = record.expect("an audit record for the cancelled wait");
        assert_eq!(record["outcome"], "error", "{record}");
        assert!(
            record["message"].as_str().unwrap().contains("cancelled"),
            "{record}"
        );
        assert!(record["duration_ms"].as_u64().unwrap() < 5_000, "{record}");
        // Still usable.
        let ran = h
            .ok("run", json!({"target": pane, "command": "echo still-here"}))
            .await;
        assert_eq!(ran["output"], "still-here\n");
    })
    .await
    .expect("test timed out");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn denied_tools_and_bad_arguments_are_clear() {
    tokio::time::timeout(TEST_TIMEOUT, async {
        let h = harness(|c, _| {
            c.tools = ToolSelection::resolve(&["inspect", "execute"], &[], &["send_keys"]).unwrap();
        })
        .await;
        let names: Vec<String> = h
            .client
            .list_all_tools()
            .await
            .unwrap()
            .into_iter()
            .map(|t| t.name.into_owned())
            .collect();
        assert!(!names.contains(&"rename".to_owned()) && !names.contains(&"send_keys".to_owned()));
        for denied in ["kill_server", "send_keys", "rename", "no_such_tool"] {
            match h.call(denied, json!({"target": "%0"})).await {
                Err(ServiceError::McpError(e)) => {
                    assert_eq!(e.code, ErrorCode::INVALID_PARAMS, "{e:?}");
                    assert_eq!(e.message, "tool not found");
                }
                other => panic!("{denied} should be refused, got {other:?}"),
            }
        }
        // Bad arguments come back as a tool error the model can act on.
        let e = h
            .tool_error("create_terminal", json!({"kind": "bogus"}))
            .await;
        assert!(
            e.contains("do not match its input schema") && e.contains("bogus"),
            "{e}"
        );
        let e = h.tool_error("send_text", json!({"target": "%0"})).await;
        assert!(e.contains("missing field `text`"), "{e}");
        let e = h
            .tool_error(
                "send_text",
                json!({"target": "%0", "text": "x", "bogus": 1}),
            )
            .await;
        assert!(e.contains("unknown field `bogus`"), "{e}");
        let e = h
            .tool_error("capture_screen", json!({"target": "nope"}))
            .await;
        assert!(e.contains("list_terminals"), "{e}");
        let e = h
            .tool_error(
                "wait_for_output",
                json!({"target": "%0", "pattern": "(unclosed"}),
            )
            .await;
        assert!(e.contains("literal=true"), "{e}");
        let e = h
            .tool_error("create_terminal", json!({"name": "bad:name"}))
            .await;
        assert!(
            e.contains("':'") && e.contains("Choose another name"),
            "{e}"
        );
    })
    .await
    .expect("test timed out");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn audit_log_digests_sensitive_arguments() {
    tokio::time::timeout(TEST_TIMEOUT, async {
        let audit = std::sync::OnceLock::new();
        let h = harness(|c, dir| {
            all_toolsets(c, dir);
            let path = dir.join("audit.jsonl");
            c.audit_log = Some(path.clone());
            audit.set(path).unwrap();
        })
        .await;
        let pane = h.shell("audit").await;
        h.ok("send_text", json!({"target": pane, "text": "hunter2-secret", "enter": false})).await;
        h.ok("send_keys", json!({"target": pane, "keys": ["C-u"]})).await;
        h.ok("run", json!({"target": pane, "command": "echo TOPSECRET-CMD >/dev/null"})).await;
        h.tool_error("kill_pane", json!({"target": "%999"})).await;
        let path = audit.get().unwrap();
        use std::os::unix::fs::PermissionsExt as _;
        assert_eq!(std::fs::metadata(path).unwrap().permissions().mode() & 0o777, 0o600);
        let log = std::fs::read_to_string(path).unwrap();
        assert!(!log.contains("hunter2") && !log.contains("TOPSECRET") && !log.contains("C-u"), "{log}");
        let records: Vec<Value> = log.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        let tools: Vec<&str> = records.iter().map(|r| r["tool"].as_str().unwrap()).collect();
        assert_eq!(tools, [
                "create_terminal",
                "wait_for_output",
                "send_text",
                "send_keys",
                "run",
                "kill_pane"
            ]);
        let send = &records[2];
        assert_eq!(send["arguments"]["target"], pane.as_str());
        assert_eq!(send["arguments"]["text"]["len"], 14);
        assert_eq!(send["arguments"]["text"]["sha256"].as_str().unwrap().len(), 12);
        assert_eq!(send["outcome"], "ok");
        assert!(records[0]["arguments"]["env"]["PS1"]["len"].is_number(), "{}", records[0]);
        assert_eq!(records[5]["outcome"], "error");
        assert!(records.iter().all(|r| r["time"].as_str().unwrap().ends_with('Z') && r["duration_ms"].is_number()));
    })
    .await
    .expect("test timed out");
}

/// Text with everything that tmux's parser or a shell could reinterpret.
const TRICKY: &str = "semi;colon 'single' \"double\" $HOME ${x} `date` back\\slash \\n #{pane_id} #[fg=red] %1 ~ {a,b} \u{2705}\u{1F680} \u{65E5}\u{672C}\u{8A9E} \u{D55C}\u{AE00}\n second line\t tab;";

/// A terminal running `od -c` on its own input, with the terminal's echo
/// turned off (so the pane shows only od's dump), ready to read.
async fn od_pane(h: &Harness, name: &str) -> String {
    ready_pane(h, name, "stty -echo; echo od-ready; LC_ALL=C od -c").await
}

/// A terminal running `command`, once it has printed `od-ready`.
async fn ready_pane(h: &Harness, name: &str, command: &str) -> String {
    let created = h
        .ok("create_terminal", json!({"name": name, "command": command}))
        .await;
    let pane = created["pane"].as_str().unwrap().to_owned();
    let ready = h
        .ok("wait_for_output", json!({"target": pane, "pattern": "od-ready", "literal": true, "cursor": 0, "timeout_secs": 10}))
        .await;
    assert_eq!(ready["status"], "matched", "{ready}");
    pane
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn input_arrives_exactly_checked_with_od_in_the_pane() {
    tokio::time::timeout(TEST_TIMEOUT, async {
        let h = harness(|_, _| {}).await;
        // 1. send_text into a pane whose program is `od -c` (echo off, so the
        //    pane shows only od's dump), then Enter and Ctrl-D.
        let pane = od_pane(&h, "od").await;
        let sent = h.ok("send_text", json!({"target": pane, "text": TRICKY, "enter": true})).await;
        assert_eq!(sent["delivery"], "bytes", "text with a newline goes as exact bytes");
        h.ok("send_keys", json!({"target": pane, "keys": ["C-d"]})).await;
        let exit = h.ok("wait_for_exit", json!({"target": pane, "timeout_secs": 10})).await;
        assert_eq!((exit["status"].as_str(), exit["exit_status"].as_i64()), (Some("exited"), Some(0)), "{exit}");
        let dump = h.ok("read_output", json!({"target": pane, "cursor": sent["cursor"]})).await;
        let expected = od_c(format!("{TRICKY}\n").as_bytes());
        assert_eq!(dump["text"].as_str().unwrap(), expected);

        // 2. The same text without its newline and tab goes as literal keys
        //    (trailing ';' included).
        let one_line = TRICKY.replace(['\n', '\t'], " ");
        let pane = od_pane(&h, "od-literal").await;
        let sent = h.ok("send_text", json!({"target": pane, "text": one_line, "enter": true})).await;
        assert_eq!(sent["delivery"], "literal");
        h.ok("send_keys", json!({"target": pane, "keys": ["C-d"]})).await;
        h.ok("wait_for_exit", json!({"target": pane, "timeout_secs": 10})).await;
        let dump = h.ok("read_output", json!({"target": pane, "cursor": sent["cursor"]})).await;
        assert_eq!(dump["text"].as_str().unwrap(), od_c(format!("{one_line}\n").as_bytes()));

        // 3. run: the command line (multi-line, quotes, a here-document)
        //    reaches the shell exactly.
        let pane = h.shell("od-run").await;
        let body = TRICKY.replace('\'', "'\\''");
        let ran = h
            .ok("run", json!({"target": pane, "command": format!("printf '%s\\n' '{body}' | LC_ALL=C od -c")}))
            .await;
        assert_eq!(ran["exit_status"], 0, "{ran}");
        assert_eq!(ran["output"].as_str().unwrap(), expected);

        // 4. A session name with shell metacharacters is handled; one that
        //    tmux would rewrite is refused with a reason.
        let name = "we;ird 'name' \"q\" `x` |&* #{y} \u{65E5}\u{1F680};";
        let created = h.ok("create_terminal", json!({"name": name})).await;
        assert_eq!(created["session_name"], name);
        let info = h.ok("pane_info", json!({"target": name})).await;
        assert_eq!(info["pane"], created["pane"]);
        let e = h.tool_error("create_terminal", json!({"name": "cost $5"})).await;
        assert!(e.contains("rewrites") && e.contains("'$'"), "{e}");
    })
    .await
    .expect("test timed out");
}

/// Bytes that tmux 3.7's `paste-buffer` turns into visible `^[`, `^A`, `^?`
/// unless it is given `-S`, and that a terminal's line discipline would act
/// on unless it is raw.
const CONTROL: &str = "esc\x1b[31m ctl-a\x01 ctl-c\x03 ctl-d\x04 del\x7f bs\x08 bell\x07 tab\t cr\r \u{ff}\u{7f}\u{1F680} back\\slash ^[ end\nline two\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paste_is_byte_exact_with_control_bytes_checked_with_od() {
    tokio::time::timeout(TEST_TIMEOUT, async {
        let h = harness(|_, _| {}).await;
        // A raw terminal (no echo, no signals, no line editing, CR kept) with
        // output processing left on, and `head -c` reading exactly the
        // pasted bytes, so od shows every byte that reached the program.
        let n = CONTROL.len();
        let command = format!("stty raw -echo opost; echo od-ready; head -c {n} | LC_ALL=C od -c");
        let pane = ready_pane(&h, "od-paste", &command).await;
        let pasted = h
            .ok(
                "paste_text",
                json!({"target": pane, "text": CONTROL, "bracketed": false}),
            )
            .await;
        assert_eq!(
            (pasted["delivery"].as_str(), pasted["bytes"].as_u64()),
            (Some("paste"), Some(n as u64)),
            "{pasted}"
        );
        let exit = h
            .ok("wait_for_exit", json!({"target": pane, "timeout_secs": 10}))
            .await;
        assert_eq!(
            (exit["status"].as_str(), exit["exit_status"].as_i64()),
            (Some("exited"), Some(0)),
            "{exit}"
        );
        let dump = h
            .ok(
                "read_output",
                json!({"target": pane, "cursor": pasted["cursor"]}),
            )
            .await;
        // A paste delivers each newline as a carriage return, as a terminal
        // paste does; every other byte arrives as it was given. (The text is
        // the lines the screen showed: without od's trailing padding.)
        let expected = od_c(CONTROL.replace('\n', "\r").as_bytes());
        let expected: Vec<&str> = expected.split('\n').map(str::trim_end).collect();
        assert_eq!(dump["text"].as_str().unwrap(), expected.join("\n"));
    })
    .await
    .expect("test timed out");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn teardown_when_enabled() {
    tokio::time::timeout(TEST_TIMEOUT, async {
        let h = harness(all_toolsets).await;
        let pane = h.shell("doomed").await;
        let killed = h.ok("kill_session", json!({"target": "doomed"})).await;
        assert_eq!(killed["killed"], "session");
        let e = h.tool_error("pane_info", json!({"target": pane})).await;
        assert!(e.contains("list_terminals"), "{e}");
        let e = h
            .tool_error(
                "kill_session",
                json!({"target": tmux_control_mcp::HOME_SESSION}),
            )
            .await;
        assert!(e.contains("control session"), "{e}");
        h.ok("kill_server", json!({})).await;
        // The next call starts a fresh server.
        let list = h.ok("list_terminals", json!({})).await;
        assert_eq!(list["sessions"], json!([]));
    })
    .await
    .expect("test timed out");
}
