//! The `manage` tools and the rest of `execute`: respawn, paste, options,
//! environment, layout, resize, select, rename, detach.

use rmcp::handler::server::wrapper::Parameters;

use crate::mcp::wait::CallCtx;
use crate::tools::execute::create::CreateTerminalArgs;
use crate::tools::execute::create::TerminalKind;
use crate::tools::execute::input::SendTextArgs;
use crate::tools::inspect::list::ListTerminalsArgs;
use crate::tools::manage::{RenameArgs, RenameWhat};
use crate::tools::waits::{WaitForExitArgs, WaitForOutputArgs};

use super::{fixture, ok, run, shell};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn manage_respawn_paste_options_and_environment() {
    use crate::tools::execute::create::SplitDirection;
    use crate::tools::execute::input::PasteTextArgs;
    use crate::tools::execute::options::OptionScopeArg;
    use crate::tools::execute::options::SetEnvironmentArgs;
    use crate::tools::execute::options::SetOptionArgs;
    use crate::tools::execute::respawn::RespawnArgs;
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
            over_person: false,
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
            over_person: false,
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
    assert_eq!(r.output_text, "yes it is\n");
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
