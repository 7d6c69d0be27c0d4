//! Error kinds: a missing pane, window, session or buffer is
//! `ErrorKind::NotFound` on every version, other refusals are `Refused`.

use super::{command_error, connect, window_row};
use crate::common::bounded;
use tmux_control::command::{
    CapturePane, DeleteBuffer, KillPane, KillSession, KillWindow, ListPanes, ListWindows,
    NewSession, NewWindow, OptionScope, PasteBuffer, Raw, RenameSession, SelectWindow, SendKeys,
    SetBuffer, SetEnvironment, SetOption, ShowBuffer,
};
use tmux_control::{IsolatedServer, PaneId, SessionId, WindowId};

/// Asserts that `r` is tmux's refusal of `command` with the given kind, and
/// returns tmux's message.
fn command_error_kind<T: std::fmt::Debug>(
    r: tmux_control::Result<T>,
    command: &str,
    kind: tmux_control::ErrorKind,
) -> String {
    match r {
        Err(e) => {
            assert_eq!(e.kind(), kind, "{e}");
            command_error(Err::<T, _>(e), command)
        }
        Ok(v) => panic!("expected a `{command}` error, got {v:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_targets_and_buffers_are_not_found_on_every_version() {
    use tmux_control::ErrorKind::{NotFound, Refused};
    use tmux_control::command::Target;
    let iso = IsolatedServer::new().unwrap();
    bounded(async {
        let (tmux, session) = connect(&iso).await;
        // Ids no server has handed out yet, and a pane, a window and a
        // session that existed and are gone.
        let created = tmux
            .run(NewWindow::new().command("sleep 100"))
            .await
            .unwrap();
        let gone = tmux
            .run(NewSession::new().session_name("tc-gone"))
            .await
            .unwrap();
        tmux.run(KillSession::new(gone.session)).await.unwrap();

        for pane in [PaneId(9999), gone.pane] {
            command_error_kind(tmux.run(KillPane::new(pane)).await, "kill-pane", NotFound);
            command_error_kind(
                tmux.run(CapturePane::new(pane)).await,
                "capture-pane",
                NotFound,
            );
            command_error_kind(
                tmux.run(SendKeys::literal(pane, "x")).await,
                "send-keys",
                NotFound,
            );
            command_error_kind(
                tmux.run(ListPanes::in_window(pane)).await,
                "list-panes",
                NotFound,
            );
            // The options table of a missing pane: `no such pane: …`.
            command_error_kind(
                tmux.run(SetOption::new(OptionScope::Pane, "@x", "1").target(pane))
                    .await,
                "set-option",
                NotFound,
            );
        }
        for window in [WindowId(9999), gone.window] {
            command_error_kind(
                tmux.run(KillWindow::new(window)).await,
                "kill-window",
                NotFound,
            );
            command_error_kind(
                tmux.run(SelectWindow::new(window)).await,
                "select-window",
                NotFound,
            );
            command_error_kind(
                tmux.run(SetOption::new(OptionScope::Window, "@x", "1").target(window))
                    .await,
                "set-option",
                NotFound,
            );
        }
        for target in [
            Target::from(SessionId(9999)),
            gone.session.into(),
            "=tc-gone".into(),
        ] {
            command_error_kind(
                tmux.run(KillSession::new(&target)).await,
                "kill-session",
                NotFound,
            );
            command_error_kind(
                tmux.run(RenameSession::new(&target, "x")).await,
                "rename-session",
                NotFound,
            );
            command_error_kind(
                tmux.run(ListWindows::in_session(&target)).await,
                "list-windows",
                NotFound,
            );
            // The environment of a missing session: `no such session: …`.
            command_error_kind(
                tmux.run(SetEnvironment::set("A", "1").target(&target))
                    .await,
                "set-environment",
                NotFound,
            );
        }
        // Buffers: none at all, then a missing one next to an existing one.
        command_error_kind(
            tmux.run(ShowBuffer::latest()).await,
            "show-buffer",
            NotFound,
        );
        command_error_kind(
            tmux.run(Raw::new("delete-buffer")).await,
            "delete-buffer",
            NotFound,
        );
        tmux.run(SetBuffer::new("kept").buffer("tc-kept"))
            .await
            .unwrap();
        command_error_kind(
            tmux.run(ShowBuffer::named("tc-missing")).await,
            "show-buffer",
            NotFound,
        );
        command_error_kind(
            tmux.run(DeleteBuffer::new("tc-missing")).await,
            "delete-buffer",
            NotFound,
        );
        command_error_kind(
            tmux.run(PasteBuffer::new(created.pane).buffer("tc-missing"))
                .await,
            "paste-buffer",
            NotFound,
        );
        assert_eq!(
            &tmux.run(ShowBuffer::named("tc-kept")).await.unwrap()[..],
            b"kept"
        );

        // Ordinary refusals are not NotFound, even next to a target that
        // exists.
        let message = command_error_kind(
            tmux.run(Raw::new("kill-pane").args(["-Q", "-t", &created.pane.to_string()]))
                .await,
            "kill-pane",
            Refused,
        );
        assert!(message.contains("-Q"), "{message}");
        let message = command_error_kind(
            tmux.run(Raw::new("tc-no-such-command")).await,
            "raw",
            Refused,
        );
        assert!(message.contains("unknown command"), "{message}");
        let index = window_row(&tmux, created.window).await.unwrap().index;
        command_error_kind(
            tmux.run(NewWindow::new().target(format!("{session}:{index}")))
                .await,
            "new-window",
            Refused,
        );
        // The library's own refusals have their own kind.
        let e = tmux.run(SetBuffer::new("")).await.unwrap_err();
        assert_eq!(e.kind(), tmux_control::ErrorKind::InvalidArgument, "{e}");

        // A followed pane that is gone refreshes to its last state instead
        // of failing: refresh_state reads the NotFound kind.
        let pane = tmux.follow(created.pane).await.unwrap();
        tmux.run(KillPane::new(created.pane)).await.unwrap();
        pane.refresh_state().await.unwrap();
        assert!(pane.ended().is_some());
        assert!(!tmux.is_closed());
    })
    .await;
}
