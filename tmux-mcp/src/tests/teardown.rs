//! The kill tools and the self-kill guard.

use rmcp::handler::server::wrapper::Parameters;

use crate::mcp::server::TmuxMcp;
use crate::terminal::guard::Caller;
use crate::tools::Guarded;
use crate::tools::execute::input::SendTextArgs;
use crate::tools::inspect::list::ListTerminalsArgs;
use crate::tools::teardown::{KillArgs, KillServerArgs};

use super::{config_for, fixture, ok, shell};

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
            over_person: false,
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
async fn a_killed_terminal_leaves_no_record_behind() {
    let f = fixture();
    let keep = shell(&f, "keep").await;
    super::run(&f, &keep, "echo kept").await;
    let conn = f.mcp.conn().await.unwrap();
    let before = conn.records();
    for i in 1..=20u64 {
        let name = format!("gone{i}");
        let pane = shell(&f, &name).await;
        super::run(&f, &pane, "echo x").await;
        ok(f.mcp
            .kill_session(Parameters(KillArgs { target: name }))
            .await);
        // Forgotten once tmux says the pane is gone (a bounded wait).
        tokio::time::timeout(
            std::time::Duration::from_secs(10),
            conn.journals.forgotten(i),
        )
        .await
        .unwrap();
    }
    // One record, the kept terminal's, and in it its input, shell,
    // regions, actors and log.
    assert_eq!(conn.records(), before);
    assert!(before.iter().all(|&n| n <= 1), "{before:?}");
}
