//! `Tmux::spawn` (a program followed from its first byte, in a new
//! session, window or split, in any session) and `Tmux::resolve`, against
//! real tmux on isolated servers.

use std::time::Duration;

use crate::common::bounded;
use tmux_control::command::{NewSession, NewWindow, SplitWindow};
use tmux_control::{IsolatedServer, Pattern, Spawned, Tmux};

const WAIT: Duration = Duration::from_secs(10);

/// Waits until `text` has arrived, then returns everything the program
/// wrote (from its start offset).
async fn written(spawned: &Spawned, text: &str) -> Vec<u8> {
    spawned
        .output
        .expect_from(Pattern::literal(text), spawned.start)
        .wait(WAIT)
        .await
        .unwrap();
    let (from, bytes) = spawned.output.read_from(spawned.start, 1 << 20);
    assert_eq!(from, spawned.start);
    bytes.to_vec()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn programs_are_followed_from_their_first_byte_in_sessions_windows_and_splits() {
    let iso = IsolatedServer::new().unwrap();
    bounded(async {
        let tmux = Tmux::connect(iso.server()).await.unwrap();
        let dir = iso.dir().join("work dir");
        std::fs::create_dir(&dir).unwrap();
        let dir_text = dir.to_str().unwrap();
        // Each program writes at once, before anything else could look.
        let program = "printf 'first:%s|%s\\n' \"$SPAWN_VAR\" \"$PWD\"; exec sleep 60";
        let expected = format!("first:a b|{dir_text}\r\n");

        // A new session: its panes' output reaches an observer connection.
        let session = tmux
            .spawn(
                NewSession::new()
                    .session_name("spawned")
                    .start_directory(dir_text)
                    .env("SPAWN_VAR", "a b")
                    .command(program),
            )
            .await
            .unwrap();
        assert_ne!(Some(session.session), tmux.attached_session());
        assert_eq!(
            String::from_utf8(written(&session, "first:").await).unwrap(),
            expected
        );

        // A window in the connection's own session, and a split of it.
        let window = tmux
            .spawn(
                NewWindow::new()
                    .start_directory(dir_text)
                    .env("SPAWN_VAR", "a b")
                    .command(program),
            )
            .await
            .unwrap();
        assert_eq!(Some(window.session), tmux.attached_session());
        assert_eq!(
            String::from_utf8(written(&window, "first:").await).unwrap(),
            expected
        );
        let split = tmux
            .spawn(
                SplitWindow::new()
                    .target(window.pane)
                    .start_directory(dir_text)
                    .env("SPAWN_VAR", "a b")
                    .command(program),
            )
            .await
            .unwrap();
        assert_eq!(split.window, window.window);
        assert_eq!(
            String::from_utf8(written(&split, "first:").await).unwrap(),
            expected
        );

        // The pane's start command is the program, not a placeholder.
        let start = tmux
            .run(
                tmux_control::command::DisplayMessage::format("#{pane_start_command}")
                    .target(window.pane),
            )
            .await
            .unwrap();
        assert!(
            String::from_utf8_lossy(&start).contains("first:"),
            "{start:?}"
        );

        // The same pane resolves from its id and from its session's name.
        let by_id = tmux.resolve(session.pane).await.unwrap();
        let by_name = tmux.resolve("=spawned:").await.unwrap();
        assert_eq!(by_id, by_name);
        assert_eq!(
            (by_id.session, by_id.window, by_id.pane),
            (session.session, session.window, session.pane)
        );
        assert_eq!(by_id.session_name, "spawned");
        assert_eq!((by_id.window_index, by_id.pane_index), (0, 0));
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_command_the_pane_runs_what_tmux_would() {
    // default-command when it is set.
    let iso = IsolatedServer::with_config(&format!(
        "{}set -g default-command 'echo from-default-command; exec sleep 60'\n",
        IsolatedServer::CONFIG
    ))
    .unwrap();
    bounded(async {
        let tmux = Tmux::connect(iso.server()).await.unwrap();
        let spawned = tmux.spawn(NewWindow::new()).await.unwrap();
        assert_eq!(
            written(&spawned, "from-default-command").await,
            b"from-default-command\r\n"
        );
    })
    .await;

    // Else the default shell, as a login shell. This one is a script that
    // says how it was run (and runs `-c` commands with /bin/sh, as tmux
    // runs every command through the default shell).
    let iso = IsolatedServer::new().unwrap();
    let shell = iso.dir().join("shell");
    std::fs::write(
        &shell,
        "#!/bin/sh\nif [ \"$1\" = -c ]; then exec /bin/sh -c \"$2\"; fi\necho \"login shell:$*\"\nexec sleep 60\n",
    )
    .unwrap();
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&shell, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    bounded(async {
        let tmux = Tmux::connect(iso.server()).await.unwrap();
        tmux.raw_line(format!("set -g default-shell '{}'", shell.display()))
            .await
            .unwrap();
        let spawned = tmux.spawn(NewWindow::new()).await.unwrap();
        assert_eq!(
            written(&spawned, "login shell:").await,
            b"login shell:-l\r\n"
        );
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_spawn_leaves_no_pane_and_missing_targets_do_not_resolve() {
    let iso = IsolatedServer::new().unwrap();
    bounded(async {
        let tmux = Tmux::connect(iso.server()).await.unwrap();
        let before = tmux
            .run(tmux_control::command::ListPanes::all())
            .await
            .unwrap();
        // Arguments that cannot be sent fail before anything is created:
        // no placeholder pane is left behind.
        let result = tmux
            .spawn(NewWindow::new().env("=bad", "x").command("true"))
            .await;
        assert!(result.is_err(), "an invalid environment name must fail");
        let after = tmux
            .run(tmux_control::command::ListPanes::all())
            .await
            .unwrap();
        assert_eq!(before.len(), after.len(), "{after:?}");

        for missing in ["%9999", "@9999", "$9999", "=no-such-session:"] {
            match tmux.resolve(missing).await {
                Err(e) => assert_eq!(
                    e.kind(),
                    tmux_control::ErrorKind::NotFound,
                    "{missing}: {e}"
                ),
                Ok(found) => panic!("{missing} resolved to {found:?}"),
            }
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_program_that_exits_at_once_is_kept_with_its_status() {
    let iso = IsolatedServer::new().unwrap();
    bounded(async {
        let tmux = Tmux::connect(iso.server()).await.unwrap();
        // The isolated server's remain-on-exit is off: only the pane's own
        // option, set before the program starts, keeps it.
        let what = tmux_control::command::NewPane::from(
            NewWindow::new().command("printf 'last words\\n'; exit 3"),
        )
        .remain_on_exit();
        let spawned = tmux.spawn(what).await.unwrap();
        let exit = spawned.output.wait_exit(WAIT).await.unwrap();
        assert_eq!((exit.status, exit.gone), (Some(3), false));
        assert!(
            String::from_utf8_lossy(&written(&spawned, "last words").await)
                .starts_with("last words")
        );
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kept_panes_stay_followed_without_a_handle_until_they_are_gone() {
    let iso = IsolatedServer::new().unwrap();
    bounded(async {
        let options = tmux_control::ConnectOptions::default().keep_followed();
        let tmux = Tmux::connect_with(iso.server(), options).await.unwrap();
        // One pane in the connection's session, one in another session
        // (followed through an observer).
        let here = tmux
            .spawn(NewWindow::new().command("exec cat"))
            .await
            .unwrap();
        let there = tmux
            .spawn(NewSession::new().session_name("other").command("exec cat"))
            .await
            .unwrap();
        let (here_pane, there_pane) = (here.pane, there.pane);
        drop(here);
        drop(there);
        let mut panes: Vec<_> = tmux.followed().await.iter().map(|o| o.pane()).collect();
        panes.sort_by_key(|p| p.0);
        assert_eq!(panes, vec![here_pane, there_pane]);

        // Output written while no caller held a handle is in the log.
        tmux.run(tmux_control::command::SendKeys::literal(here_pane, "kept"))
            .await
            .unwrap();
        let again = tmux.follow(here_pane).await.unwrap();
        again
            .expect_from(Pattern::literal("kept"), 0)
            .wait(WAIT)
            .await
            .unwrap();

        // A killed pane leaves the list once tmux says it is gone.
        let mut ended = again.state_changes();
        tmux.run(tmux_control::command::KillPane::new(here_pane))
            .await
            .unwrap();
        while ended.next().await.is_some() {}
        assert!(again.ended().is_some());
        let panes: Vec<_> = tmux.followed().await.iter().map(|o| o.pane()).collect();
        assert_eq!(panes, vec![there_pane]);

        // Without the option, dropping the last handle stops following.
        let plain = Tmux::connect_with(
            iso.server(),
            tmux_control::ConnectOptions::default().session("plain"),
        )
        .await
        .unwrap();
        let spawned = plain
            .spawn(NewWindow::new().command("exec cat"))
            .await
            .unwrap();
        assert_eq!(plain.followed().await.len(), 1);
        drop(spawned);
        assert!(plain.followed().await.is_empty());
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pane_in_another_session_ends_when_its_session_is_killed() {
    let iso = IsolatedServer::new().unwrap();
    bounded(async {
        let tmux = Tmux::connect(iso.server()).await.unwrap();
        for name in ["gone-1", "gone-2"] {
            let there = tmux
                .spawn(NewSession::new().session_name(name).command("exec cat"))
                .await
                .unwrap();
            let mut changes = there.output.state_changes();
            tmux.run(tmux_control::command::KillSession::new(name))
                .await
                .unwrap();
            // Its output ends (it is gone), and it is no longer followed.
            while changes.next().await.is_some() {}
            assert_eq!(there.output.ended(), Some(tmux_control::PaneEnd::Gone));
        }
        assert!(tmux.followed().await.is_empty());
    })
    .await;
}
