//! Creating and addressing terminals, and typing into them: names, exact
//! targets, windows and splits, copy mode and key names.

use rmcp::handler::server::wrapper::Parameters;
use tmux_control::command::Raw;

use crate::mcp::wait::CallCtx;
use crate::tools::execute::create::CreateTerminalArgs;
use crate::tools::execute::create::TerminalKind;
use crate::tools::execute::input::SendKeysArgs;
use crate::tools::execute::input::SendTextArgs;
use crate::tools::inspect::list::ListTerminalsArgs;
use crate::tools::inspect::list::PaneInfoArgs;
use crate::tools::manage::{RenameArgs, RenameWhat};
use crate::tools::waits::WaitForOutputArgs;

use super::{fixture, ok, run, shell};

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
            over_person: false,
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
    assert_eq!(r.output_text, "back\n");
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
            .ends_with(&format!("attach -t {}", tmux_control::shell::quote(weird)))
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
            split: Some(crate::tools::execute::create::SplitDirection::Right),
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
