//! Windows: `new-window`, `list-windows`, `select-window`,
//! `rename-window`, `resize-window` and `kill-window`.

use super::{bytes_of, command_error, connect, invalid, pane_row, read_file, sq, window_row};
use crate::common::bounded;
use tmux_control::command::{
    DisplayMessage, KillWindow, ListWindows, NewWindow, OptionScope, RenameWindow, ResizeWindow,
    SelectWindow, ShowOption,
};
use tmux_control::{Error, IsolatedServer};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn windows_new_list_select_rename_resize_and_kill() {
    let iso = IsolatedServer::new().unwrap();
    bounded(async {
        let (tmux, session) = connect(&iso).await;
        let first = tmux.run(ListWindows::in_session(session)).await.unwrap();
        assert_eq!(first.len(), 1);
        let first = first[0].clone();
        assert!(first.active && first.flags.contains('*'), "{first:?}");

        let dir = iso.dir().join("win dir: ✓");
        std::fs::create_dir(&dir).unwrap();
        let out = iso.dir().join("window.out");
        // Control characters in a window name: stored escaped and given back
        // raw before 3.7, refused since.
        let v3_7 = tmux.version().at_least(3, 7);
        let control = "w: #1 ✓ 日本 $HOME \\ ; 'q' #[x] \t\n\u{1}";
        let name = if v3_7 {
            let refused = tmux
                .run(NewWindow::new().target(session).window_name(control))
                .await;
            assert!(
                matches!(&refused, Err(Error::Command { message, .. }) if message.contains("invalid window name")),
                "{refused:?}"
            );
            "w: #1 ✓ 日本 $HOME \\ ; 'q' #[x] \\t"
        } else {
            control
        };
        let created = tmux
            .run(
                NewWindow::new()
                    .target(session)
                    .window_name(name)
                    .start_directory(bytes_of(&dir))
                    .env("TC_W", "w v")
                    .command(format!(
                        "printf '%s|%s' \"$TC_W\" \"$(pwd)\" > {}; exec sleep 600",
                        sq(&out)
                    )),
            )
            .await
            .unwrap();
        assert_eq!(created.session, session);
        let w = window_row(&tmux, created.window).await.unwrap();
        assert_eq!(w.name, name);
        assert_eq!(w.session, session);
        assert!(!w.active, "new-window must be detached: {w:?}");
        assert_eq!(w.panes, 1);
        assert_eq!(w.index, first.index + 1);
        let got = read_file(&out, 1).await;
        assert_eq!(
            String::from_utf8(got).unwrap(),
            format!("w v|{}", dir.display())
        );

        // A chosen index.
        let at7 = tmux
            .run(
                NewWindow::new()
                    .target(format!("{session}:7"))
                    .command("exec sleep 600"),
            )
            .await
            .unwrap();
        assert_eq!(window_row(&tmux, at7.window).await.unwrap().index, 7);
        command_error(
            tmux.run(
                NewWindow::new()
                    .target(format!("{session}:7"))
                    .command("exec sleep 600"),
            )
            .await,
            "new-window",
        );

        // Select.
        tmux.run(SelectWindow::new(created.window)).await.unwrap();
        let w = window_row(&tmux, created.window).await.unwrap();
        assert!(w.active && w.flags.contains('*'), "{w:?}");
        let old = window_row(&tmux, first.id).await.unwrap();
        assert!(!old.active && old.flags.contains('-'), "{old:?}");
        let current = tmux
            .run(DisplayMessage::format("#{window_id}").target(session))
            .await
            .unwrap();
        assert_eq!(&current[..], created.window.to_string().as_bytes());

        // Rename (automatic renaming goes off).
        let control = "renamed #{window_id} ## ✓ a:b \t\n\u{1b} \\x";
        let renamed = if v3_7 {
            command_error(
                tmux.run(RenameWindow::new(created.window, control)).await,
                "rename-window",
            );
            "renamed #{window_id} ## ✓ a:b \\x $HOME"
        } else {
            control
        };
        tmux.run(RenameWindow::new(created.window, renamed))
            .await
            .unwrap();
        assert_eq!(
            window_row(&tmux, created.window).await.unwrap().name,
            renamed
        );
        let auto = tmux
            .run(ShowOption::new(OptionScope::Window, "automatic-rename").target(created.window))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(auto.as_bool(), Some(false));

        // Resize: the size sticks (window-size becomes manual).
        tmux.run(ResizeWindow::new(created.window).size(90, 20))
            .await
            .unwrap();
        let w = window_row(&tmux, created.window).await.unwrap();
        assert_eq!((w.width, w.height), (90, 20));
        let ws = tmux
            .run(ShowOption::new(OptionScope::Window, "window-size").target(created.window))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(ws.as_str(), Some("manual"));
        tmux.run(ResizeWindow::new(created.window).width(70))
            .await
            .unwrap();
        let w = window_row(&tmux, created.window).await.unwrap();
        assert_eq!((w.width, w.height), (70, 20));
        tmux.run(ResizeWindow::new(created.window).height(15))
            .await
            .unwrap();
        let w = window_row(&tmux, created.window).await.unwrap();
        assert_eq!((w.width, w.height), (70, 15));
        let p = pane_row(&tmux, created.pane).await.unwrap();
        assert_eq!((p.width, p.height), (70, 15));
        tmux.run(ResizeWindow::new(created.window).largest())
            .await
            .unwrap();
        tmux.run(ResizeWindow::new(created.window).smallest())
            .await
            .unwrap();
        invalid(tmux.run(ResizeWindow::new(created.window)).await);

        // Kill.
        tmux.run(KillWindow::new(created.window)).await.unwrap();
        assert!(window_row(&tmux, created.window).await.is_none());
        assert!(pane_row(&tmux, created.pane).await.is_none());
        command_error(
            tmux.run(KillWindow::new(created.window)).await,
            "kill-window",
        );
        tmux.run(KillWindow::new(format!("{session}:7")))
            .await
            .unwrap();
        let left = tmux.run(ListWindows::in_session(session)).await.unwrap();
        assert_eq!(left.len(), 1);
        assert_eq!(left[0].id, first.id);
        assert!(left[0].active, "the last window is current again");
    })
    .await;
}
