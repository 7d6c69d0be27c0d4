//! Handler-level tests: the tool methods called directly, without MCP,
//! against a real tmux server on a private socket (the library's
//! `IsolatedServer`, killed and removed when each test ends).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeSet;

use rmcp::handler::server::wrapper::Parameters;
use tmux_control::IsolatedServer;
use tmux_control::command::Raw;

use crate::config::Config;
use crate::guard::Caller;
use crate::reply::{Json, ToolError};
use crate::server::TmuxMcp;
use crate::tools::Guarded;
use crate::tools::WaitStatus;
use crate::tools::execute::{CreateTerminalArgs, SendKeysArgs, SendTextArgs, TerminalKind};
use crate::tools::inspect::{
    CaptureScreenArgs, ListTerminalsArgs, PaneInfoArgs, ReadOutputArgs, SearchOutputArgs,
};
use crate::tools::manage::{RenameArgs, RenameWhat};
use crate::tools::run::{RunArgs, RunResult, RunStatus};
use crate::tools::teardown::{KillArgs, KillServerArgs};
use crate::tools::waits::{WaitForExitArgs, WaitForIdleArgs, WaitForOutputArgs};
use crate::toolsets::{TOOLS, ToolSelection, Toolset, toolset_of};
use crate::wait::CallCtx;

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

#[test]
fn every_tool_is_classified_and_described() {
    let table: BTreeSet<&str> = TOOLS.iter().map(|(n, _)| *n).collect();
    let all: BTreeSet<String> = TmuxMcp::full_router()
        .list_all()
        .into_iter()
        .map(|t| t.name.into_owned())
        .collect();
    let all_refs: BTreeSet<&str> = all.iter().map(String::as_str).collect();
    assert_eq!(
        all_refs, table,
        "the router and the classification table differ"
    );
    for set in Toolset::ALL {
        for tool in TmuxMcp::toolset_router(set).list_all() {
            assert_eq!(
                toolset_of(&tool.name),
                Some(set),
                "{} is in the {set} router",
                tool.name
            );
            let desc = tool.description.as_deref().unwrap_or_default();
            assert!(
                !desc.is_empty() && desc.len() < 2048,
                "{}: {} chars",
                tool.name,
                desc.len()
            );
            assert!(
                tool.output_schema.is_some(),
                "{} has no output schema",
                tool.name
            );
            let ann = tool.annotations.as_ref().expect("annotations");
            assert_eq!(
                ann.read_only_hint,
                Some(set == Toolset::Inspect),
                "{}",
                tool.name
            );
        }
    }
}

#[test]
fn toolsets_filter_the_router() {
    let config = Config {
        tools: ToolSelection::resolve(&["inspect"], &["kill_pane"], &["search_output"]).unwrap(),
        ..Config::default()
    };
    let mcp = TmuxMcp::with_caller(config, Caller::default()).unwrap();
    let names = mcp.tool_names();
    assert!(names.contains(&"capture_screen".to_owned()));
    assert!(names.contains(&"kill_pane".to_owned()));
    assert!(!names.contains(&"search_output".to_owned()));
    assert!(!names.contains(&"run".to_owned()));
    let default = TmuxMcp::with_caller(Config::default(), Caller::default()).unwrap();
    assert_eq!(default.tool_names().len(), 21);
    assert!(!default.tool_names().iter().any(|n| n.starts_with("kill_")));
    use rmcp::ServerHandler as _;
    let info = default.get_info();
    let instructions = info.instructions.unwrap_or_default();
    assert!(instructions.len() < 2048, "{}", instructions.len());
    assert!(instructions.contains("tmux -L tmux-mcp attach -t NAME"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_run_and_read() {
    let f = fixture();
    let pane = shell(&f, "work").await;
    let r = run(&f, &pane, "echo hello; echo err >&2; false").await;
    assert_eq!(r.status, RunStatus::Completed, "{r:?}");
    assert_eq!(r.exit_status, Some(1));
    assert_eq!(r.output, "hello\nerr\n");
    let r = run(&f, &pane, "(exit 42)").await;
    assert_eq!(
        (r.status, r.exit_status, r.output.as_str()),
        (RunStatus::Completed, Some(42), "")
    );
    // State persists in the shell; quotes, trailing ; and comments are safe.
    run(&f, &pane, "cd /tmp; X='it'\\''s'").await;
    let r = run(&f, &pane, "pwd; echo \"$X\"; # a comment").await;
    assert_eq!(r.output, "/tmp\nit's\n");
    let r = run(
        &f,
        &pane,
        "printf 'a\\tb\\n'; for i in 1 2; do\n  echo line$i\ndone",
    )
    .await;
    assert_eq!(r.output, "a\tb\nline1\nline2\n", "{r:?}");
    // Read the log from the run's output cursor.
    let read = ok(f
        .mcp
        .read_output(Parameters(ReadOutputArgs {
            target: pane.clone(),
            cursor: r.output_cursor,
            last_lines: None,
            raw: false,
            max_bytes: None,
        }))
        .await);
    assert!(read.text.starts_with("a\tb\nline1\nline2\n"), "{read:?}");
    let scroll = ok(f
        .mcp
        .read_output(Parameters(ReadOutputArgs {
            target: pane.clone(),
            cursor: None,
            last_lines: Some(3),
            raw: false,
            max_bytes: None,
        }))
        .await);
    assert!(scroll.text.contains("line2"), "{scroll:?}");
    // Search finds lines with numbers capture_screen understands.
    let found = ok(f
        .mcp
        .search_output(Parameters(SearchOutputArgs {
            target: pane.clone(),
            pattern: "^line[0-9]$".into(),
            literal: false,
            ignore_case: false,
            context_lines: Some(1),
            max_matches: None,
        }))
        .await);
    assert_eq!(found.total_matches, 2, "{found:?}");
    let line = found.matches[1].line;
    let cap = ok(f
        .mcp
        .capture_screen(Parameters(CaptureScreenArgs {
            target: pane.clone(),
            start: Some(line),
            end: Some(line),
            whole_history: false,
            escapes: false,
            max_bytes: None,
        }))
        .await);
    assert_eq!(cap.text, "line2");
    let info = ok(f
        .mcp
        .pane_info(Parameters(PaneInfoArgs {
            target: pane.clone(),
        }))
        .await);
    assert_eq!(info.command, "sh");
    assert_eq!(info.session_name, "work");
    assert!(
        info.attach_command.ends_with("attach -t work"),
        "{}",
        info.attach_command
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nothing_printed_before_following_is_lost() {
    let f = fixture();
    let created = ok(f
        .mcp
        .create_terminal(Parameters(CreateTerminalArgs {
            command: Some("printf 'first line\\n'; exit 7".into()),
            ..CreateTerminalArgs::default()
        }))
        .await);
    assert_eq!(created.cursor, 0);
    let exit = ok(f
        .mcp
        .wait_for_exit(
            Parameters(WaitForExitArgs {
                target: created.pane.clone(),
                timeout_secs: Some(10.0),
            }),
            CallCtx::detached(),
        )
        .await);
    assert_eq!(
        (exit.status, exit.exit_status),
        (WaitStatus::Exited, Some(7)),
        "{exit:?}"
    );
    let read = ok(f
        .mcp
        .read_output(Parameters(ReadOutputArgs {
            target: created.pane.clone(),
            cursor: Some(0),
            last_lines: None,
            raw: false,
            max_bytes: None,
        }))
        .await);
    assert_eq!(read.text, "first line\n");
    // A wait without a cursor on a new terminal looks from its first byte.
    let w = ok(f
        .mcp
        .wait_for_output(
            Parameters(WaitForOutputArgs {
                target: created.pane,
                pattern: "first".into(),
                literal: true,
                ignore_case: false,
                cursor: None,
                timeout_secs: Some(5.0),
            }),
            CallCtx::detached(),
        )
        .await);
    assert_eq!(w.status, WaitStatus::Matched, "{w:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_runs_resume_and_waits_time_out_with_a_cursor() {
    let f = fixture();
    let pane = shell(&f, "slow").await;
    let first = ok(f
        .mcp
        .run(
            Parameters(RunArgs {
                target: Some(pane.clone()),
                command: Some("echo start; sleep 2; echo end".into()),
                timeout_secs: Some(0.5),
                ..RunArgs::default()
            }),
            CallCtx::detached(),
        )
        .await);
    assert_eq!(first.status, RunStatus::Running, "{first:?}");
    // A second command is refused while the first runs.
    let busy = f
        .mcp
        .run(
            Parameters(RunArgs {
                target: Some(pane.clone()),
                command: Some("true".into()),
                ..RunArgs::default()
            }),
            CallCtx::detached(),
        )
        .await
        .unwrap_err();
    assert!(busy.why.contains(&first.run_id), "{busy}");
    let done = ok(f
        .mcp
        .run(
            Parameters(RunArgs {
                run_id: Some(first.run_id.clone()),
                timeout_secs: Some(10.0),
                ..RunArgs::default()
            }),
            CallCtx::detached(),
        )
        .await);
    assert_eq!(done.status, RunStatus::Completed, "{done:?}");
    assert_eq!(done.output, "start\nend\n");
    // A timed-out wait returns a cursor from which a later wait still finds
    // output that arrives in between.
    let w = ok(f
        .mcp
        .wait_for_output(
            Parameters(WaitForOutputArgs {
                target: pane.clone(),
                pattern: "never-printed".into(),
                literal: true,
                ignore_case: false,
                cursor: Some(done.cursor),
                timeout_secs: Some(0.2),
            }),
            CallCtx::detached(),
        )
        .await);
    assert_eq!(w.status, WaitStatus::Timeout);
    ok(f.mcp
        .send_text(Parameters(SendTextArgs {
            target: pane.clone(),
            text: "echo ma''rker".into(),
            enter: true,
            force: false,
        }))
        .await);
    let w = ok(f
        .mcp
        .wait_for_output(
            Parameters(WaitForOutputArgs {
                target: pane.clone(),
                pattern: "^marker$".into(),
                literal: false,
                ignore_case: false,
                cursor: Some(w.cursor),
                timeout_secs: Some(5.0),
            }),
            CallCtx::detached(),
        )
        .await);
    assert_eq!(w.status, WaitStatus::Matched, "{w:?}");
    let idle = ok(f
        .mcp
        .wait_for_idle(
            Parameters(WaitForIdleArgs {
                target: pane,
                quiet_secs: Some(0.3),
                timeout_secs: Some(5.0),
            }),
            CallCtx::detached(),
        )
        .await);
    assert!(idle.idle, "{idle:?}");
    assert!(idle.screen_tail.iter().any(|l| l == "marker"), "{idle:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copy_mode_is_refused_unless_forced_and_keys_are_named() {
    let f = fixture();
    let pane = shell(&f, "copy").await;
    let conn = f.mcp.conn().await.unwrap();
    conn.tmux
        .run(Raw::new("copy-mode").args(["-t", pane.as_str()]))
        .await
        .unwrap();
    let refused = f
        .mcp
        .send_text(Parameters(SendTextArgs {
            target: pane.clone(),
            text: "ls".into(),
            enter: false,
            force: false,
        }))
        .await
        .unwrap_err();
    assert!(refused.why.contains("copy mode"), "{refused}");
    assert!(refused.next.contains("\"q\""), "{refused}");
    let bad = f
        .mcp
        .send_keys(Parameters(SendKeysArgs {
            target: pane.clone(),
            keys: vec!["Entr".into()],
        }))
        .await
        .unwrap_err();
    assert!(bad.why.contains("Entr"), "{bad}");
    let keys = ok(f
        .mcp
        .send_keys(Parameters(SendKeysArgs {
            target: pane.clone(),
            keys: vec!["q".into()],
        }))
        .await);
    assert!(keys.in_mode);
    let r = run(&f, &pane, "echo back").await;
    assert_eq!(r.output, "back\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn names_are_checked_and_targets_are_exact() {
    let f = fixture();
    let bad = f
        .mcp
        .create_terminal(Parameters(CreateTerminalArgs {
            name: Some("a:b".into()),
            ..CreateTerminalArgs::default()
        }))
        .await
        .unwrap_err();
    assert!(bad.why.contains("':'"), "{bad}");
    for bad in ["a$b", "back\\slash"] {
        let e = f
            .mcp
            .create_terminal(Parameters(CreateTerminalArgs {
                name: Some(bad.into()),
                ..CreateTerminalArgs::default()
            }))
            .await
            .unwrap_err();
        assert!(e.why.contains("rewrites"), "{e}");
    }
    let weird = "we;ird name 'q\" `x` | & * #{y} 日本 🚀;";
    let created = ok(f
        .mcp
        .create_terminal(Parameters(CreateTerminalArgs {
            name: Some(weird.into()),
            ..CreateTerminalArgs::default()
        }))
        .await);
    assert_eq!(created.session_name, weird);
    assert!(
        created
            .attach_command
            .ends_with(&format!("attach -t {}", crate::text::shell_quote(weird)))
    );
    let info = ok(f
        .mcp
        .pane_info(Parameters(PaneInfoArgs {
            target: weird.into(),
        }))
        .await);
    assert_eq!(info.pane, created.pane);
    // A prefix of a name is not a match.
    ok(f.mcp
        .create_terminal(Parameters(CreateTerminalArgs {
            name: Some("workshop".into()),
            ..CreateTerminalArgs::default()
        }))
        .await);
    let e = f
        .mcp
        .pane_info(Parameters(PaneInfoArgs {
            target: "work".into(),
        }))
        .await
        .unwrap_err();
    assert!(e.next.contains("list_terminals"), "{e}");
    ok(f.mcp
        .rename(Parameters(RenameArgs {
            target: created.session.clone(),
            what: RenameWhat::Session,
            name: "plain".into(),
        }))
        .await);
    let list = ok(f
        .mcp
        .list_terminals(Parameters(ListTerminalsArgs::default()))
        .await);
    let names: Vec<&str> = list.sessions.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["plain", "workshop"]);
    let all = ok(f
        .mcp
        .list_terminals(Parameters(ListTerminalsArgs {
            include_internal: true,
        }))
        .await);
    assert!(
        all.sessions
            .iter()
            .any(|s| s.internal && s.name == crate::HOME_SESSION)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn teardown_refuses_the_callers_own_terminal_and_the_home_session() {
    let f = fixture();
    let mine = shell(&f, "mine").await;
    let other = shell(&f, "other").await;
    let conn = f.mcp.conn().await.unwrap();
    let my = conn.resolve(&mine).await.unwrap();
    // A second server that believes it runs in pane `mine` of this server.
    let socket = conn.socket_path.clone().unwrap();
    let caller = Caller::from_values(
        Some(&format!("{},1,{}", socket.display(), my.session.0)),
        Some(&mine),
    );
    let inside = TmuxMcp::with_caller(config_for(&f.iso), caller).unwrap();
    for (action, target) in [
        (Guarded::KillPane, mine.clone()),
        (Guarded::KillWindow, mine.clone()),
        (Guarded::KillSession, "mine".to_owned()),
    ] {
        let args = Parameters(KillArgs { target });
        let e = match action {
            Guarded::KillPane => inside.kill_pane(args).await,
            Guarded::KillWindow => inside.kill_window(args).await,
            _ => inside.kill_session(args).await,
        }
        .unwrap_err();
        assert!(e.next.contains("protect the MCP client"), "{action:?}: {e}");
    }
    let e = inside
        .kill_server(Parameters(KillServerArgs {}))
        .await
        .unwrap_err();
    assert!(e.why.contains("runs inside"), "{e}");
    let e = inside
        .send_text(Parameters(SendTextArgs {
            target: mine.clone(),
            text: "x".into(),
            enter: false,
            force: false,
        }))
        .await
        .unwrap_err();
    assert!(e.next.contains("protect"), "{e}");
    // Others are fine, and the home session is never a target.
    ok(inside
        .kill_pane(Parameters(KillArgs {
            target: other.clone(),
        }))
        .await);
    let e = f
        .mcp
        .kill_session(Parameters(KillArgs {
            target: crate::HOME_SESSION.into(),
        }))
        .await
        .unwrap_err();
    assert!(e.why.contains("control session"), "{e}");
    // A caller on another server does not block anything.
    let elsewhere = Caller::from_values(Some("/tmp/some-other-socket,1,0"), Some(&mine));
    let outside = TmuxMcp::with_caller(config_for(&f.iso), elsewhere).unwrap();
    ok(outside
        .kill_session(Parameters(KillArgs {
            target: "mine".into(),
        }))
        .await);
    // Killing the server, then the next call starts a fresh one.
    ok(f.mcp.kill_server(Parameters(KillServerArgs {})).await);
    let list = ok(f
        .mcp
        .list_terminals(Parameters(ListTerminalsArgs::default()))
        .await);
    assert!(list.sessions.is_empty(), "{list:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn secrets_are_masked_in_what_the_model_reads() {
    let f = fixture();
    let pane = shell(&f, "secrets").await;
    let r = run(
        &f,
        &pane,
        "echo key=AKIA''IOSFODNN7EXAMPLE; echo 'password: hunter22'",
    )
    .await;
    assert_eq!(
        r.output,
        "key=[REDACTED:aws-access-key]\npassword: [REDACTED:password]\n"
    );
    let cap = ok(f
        .mcp
        .capture_screen(Parameters(CaptureScreenArgs {
            target: pane,
            start: None,
            end: None,
            whole_history: false,
            escapes: false,
            max_bytes: None,
        }))
        .await);
    assert!(!cap.text.contains("AKIAIOSFODNN7EXAMPLE"), "{}", cap.text);
    assert!(
        cap.text.contains("key=[REDACTED:aws-access-key]"),
        "{}",
        cap.text
    );
    assert!(!cap.text.contains("hunter22"), "{}", cap.text);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn windows_and_splits() {
    let f = fixture();
    let pane = shell(&f, "multi").await;
    let w = ok(f
        .mcp
        .create_terminal(Parameters(CreateTerminalArgs {
            kind: TerminalKind::Window,
            target: Some("multi".into()),
            name: Some("logs".into()),
            command: Some("echo in-window; exec sh".into()),
            ..CreateTerminalArgs::default()
        }))
        .await);
    assert_eq!(w.session_name, "multi");
    assert_eq!(w.window_index, 1);
    let s = ok(f
        .mcp
        .create_terminal(Parameters(CreateTerminalArgs {
            kind: TerminalKind::Split,
            target: Some(pane.clone()),
            split: Some(crate::tools::execute::SplitDirection::Right),
            ..CreateTerminalArgs::default()
        }))
        .await);
    assert_ne!(s.pane, pane);
    let e = f
        .mcp
        .create_terminal(Parameters(CreateTerminalArgs {
            kind: TerminalKind::Split,
            ..CreateTerminalArgs::default()
        }))
        .await
        .unwrap_err();
    assert!(e.why.contains("need a target"), "{e}");
    let read = ok(f
        .mcp
        .wait_for_output(
            Parameters(WaitForOutputArgs {
                target: w.pane,
                pattern: "in-window".into(),
                literal: true,
                ignore_case: false,
                cursor: Some(0),
                timeout_secs: Some(5.0),
            }),
            CallCtx::detached(),
        )
        .await);
    assert!(read.matched);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_output_is_bounded_with_directions_to_the_rest() {
    let f = fixture();
    let pane = shell(&f, "big").await;
    let r = ok(f
        .mcp
        .run(
            Parameters(RunArgs {
                target: Some(pane.clone()),
                command: Some("seq 1 20000".into()),
                max_bytes: Some(2000),
                timeout_secs: Some(20.0),
                ..RunArgs::default()
            }),
            CallCtx::detached(),
        )
        .await);
    assert_eq!(r.exit_status, Some(0));
    assert!(r.output.starts_with("1\n2\n3\n"), "{}", &r.output[..50]);
    assert!(
        r.output.ends_with("19999\n20000\n"),
        "{}",
        &r.output[r.output.len() - 50..]
    );
    assert!(r.output.len() < 2200, "{}", r.output.len());
    let omitted = r.omitted.expect("a middle part left out");
    assert!(
        r.output
            .contains(&format!("read_output cursor={}", omitted.from_cursor))
    );
    let next = ok(f
        .mcp
        .read_output(Parameters(ReadOutputArgs {
            target: pane.clone(),
            cursor: Some(omitted.from_cursor),
            last_lines: None,
            raw: false,
            max_bytes: Some(1000),
        }))
        .await);
    assert!(next.more);
    let first_missing: u32 = r
        .output
        .lines()
        .take_while(|l| !l.starts_with('['))
        .last()
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        next.text.starts_with(&format!("{}\n", first_missing + 1)),
        "{}",
        &next.text[..40]
    );
    assert!(next.text.ends_with('\n'), "pages end on a line boundary");
    let cap = ok(f
        .mcp
        .capture_screen(Parameters(CaptureScreenArgs {
            target: pane,
            start: None,
            end: None,
            whole_history: true,
            escapes: false,
            max_bytes: Some(1000),
        }))
        .await);
    assert!(cap.omitted_lines > 1000, "{}", cap.omitted_lines);
    assert!(cap.text.len() <= 1000);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn manage_respawn_paste_options_and_environment() {
    use crate::tools::execute::{
        OptionScopeArg, PasteTextArgs, RespawnArgs, SetEnvironmentArgs, SetOptionArgs,
        SplitDirection,
    };
    use crate::tools::manage::{
        DetachClientsArgs, ResizeArgs, ResizeWhat, SelectArgs, SetLayoutArgs,
    };
    let f = fixture();
    // Respawn a pane that ran a command: it runs it again, without the gate.
    let created = ok(f
        .mcp
        .create_terminal(Parameters(CreateTerminalArgs {
            name: Some("again".into()),
            command: Some("echo round; exit 3".into()),
            ..CreateTerminalArgs::default()
        }))
        .await);
    let pane = created.pane.clone();
    let exit = ok(f
        .mcp
        .wait_for_exit(
            Parameters(WaitForExitArgs {
                target: pane.clone(),
                timeout_secs: Some(10.0),
            }),
            CallCtx::detached(),
        )
        .await);
    assert_eq!(exit.exit_status, Some(3));
    let e = f
        .mcp
        .send_text(Parameters(SendTextArgs {
            target: pane.clone(),
            text: "x".into(),
            enter: false,
            force: false,
        }))
        .await
        .unwrap_err();
    assert!(e.next.contains("respawn"), "{e}");
    let respawned = ok(f
        .mcp
        .respawn(Parameters(RespawnArgs {
            target: pane.clone(),
            command: None,
            cwd: None,
            env: None,
            kill: None,
        }))
        .await);
    assert_eq!(respawned.command.as_deref(), Some("echo round; exit 3"));
    let again = ok(f
        .mcp
        .wait_for_output(
            Parameters(WaitForOutputArgs {
                target: pane.clone(),
                pattern: "round".into(),
                literal: true,
                ignore_case: false,
                cursor: Some(respawned.cursor),
                timeout_secs: Some(10.0),
            }),
            CallCtx::detached(),
        )
        .await);
    assert!(again.matched, "{again:?}");
    // A shell pane: paste, environment, options, layout, resize, select.
    let sh = shell(&f, "tools").await;
    let pasted = ok(f
        .mcp
        .paste_text(Parameters(PasteTextArgs {
            target: sh.clone(),
            text: "echo pasted-1\necho pasted-2".into(),
            enter: true,
            bracketed: None,
            force: false,
        }))
        .await);
    let w = ok(f
        .mcp
        .wait_for_output(
            Parameters(WaitForOutputArgs {
                target: sh.clone(),
                pattern: "pasted-2$".into(),
                literal: false,
                ignore_case: false,
                cursor: Some(pasted.cursor),
                timeout_secs: Some(10.0),
            }),
            CallCtx::detached(),
        )
        .await);
    assert!(w.matched, "{w:?}");
    let env = ok(f
        .mcp
        .set_environment(Parameters(SetEnvironmentArgs {
            name: "FROM_MCP".into(),
            value: Some("yes it is".into()),
            unset: false,
            target: Some("tools".into()),
            global: false,
        }))
        .await);
    assert!(env.set && env.scope.starts_with('$'));
    let split = ok(f
        .mcp
        .create_terminal(Parameters(CreateTerminalArgs {
            kind: TerminalKind::Split,
            target: Some(sh.clone()),
            split: Some(SplitDirection::Right),
            command: Some("exec sh".into()),
            ..CreateTerminalArgs::default()
        }))
        .await);
    let r = run(&f, &split.pane, "echo \"$FROM_MCP\"").await;
    assert_eq!(r.output, "yes it is\n");
    let opt = ok(f
        .mcp
        .set_option(Parameters(SetOptionArgs {
            scope: OptionScopeArg::Window,
            name: "mode-keys".into(),
            value: Some("vi".into()),
            unset: false,
            target: Some(sh.clone()),
            global: false,
        }))
        .await);
    assert_eq!(opt.value.as_deref(), Some("vi"));
    let e = f
        .mcp
        .set_option(Parameters(SetOptionArgs {
            scope: OptionScopeArg::Window,
            name: "mode-keys".into(),
            value: None,
            unset: false,
            target: None,
            global: false,
        }))
        .await
        .unwrap_err();
    assert!(e.why.contains("value or unset"), "{e}");
    let layout = ok(f
        .mcp
        .set_layout(Parameters(SetLayoutArgs {
            target: sh.clone(),
            layout: "even-vertical".into(),
        }))
        .await);
    assert!(layout.layout.contains('['), "{layout:?}");
    let resized = ok(f
        .mcp
        .resize(Parameters(ResizeArgs {
            target: sh.clone(),
            what: ResizeWhat::Window,
            width: Some(100),
            height: Some(30),
        }))
        .await);
    assert_eq!(resized.pane_width, 100);
    let selected = ok(f
        .mcp
        .select(Parameters(SelectArgs {
            target: split.pane.clone(),
        }))
        .await);
    assert_eq!(selected.pane, split.pane);
    let renamed = ok(f
        .mcp
        .rename(Parameters(RenameArgs {
            target: sh.clone(),
            what: RenameWhat::Window,
            name: "editor".into(),
        }))
        .await);
    assert_eq!(renamed.name, "editor");
    let detached = ok(f
        .mcp
        .detach_clients(Parameters(DetachClientsArgs {
            target: "tools".into(),
        }))
        .await);
    assert!(
        detached.detached.is_empty(),
        "tmux-mcp's own control clients are never detached"
    );
    let list = ok(f
        .mcp
        .list_terminals(Parameters(ListTerminalsArgs::default()))
        .await);
    let tools = list.sessions.iter().find(|s| s.name == "tools").unwrap();
    assert_eq!(tools.windows[0].name, "editor");
    assert_eq!(tools.windows[0].panes.len(), 2);
}
