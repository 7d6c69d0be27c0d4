//! `display-message`: formats and literals.

use super::connect;
use crate::common::bounded;
use tmux_control::IsolatedServer;
use tmux_control::command::{DisplayMessage, NewWindow};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn display_message_formats_and_literals() {
    let iso = IsolatedServer::new().unwrap();
    bounded(async {
        let (tmux, session) = connect(&iso).await;
        let created = tmux
            .run(
                NewWindow::new()
                    .window_name("disp")
                    .command("exec sleep 600"),
            )
            .await
            .unwrap();
        let got = tmux
            .run(
                DisplayMessage::format("#{session_id}|#{window_id}|#{pane_id}|#{window_name}")
                    .target(created.pane),
            )
            .await
            .unwrap();
        assert_eq!(
            String::from_utf8(got.to_vec()).unwrap(),
            format!("{session}|{}|{}|disp", created.window, created.pane)
        );
        // Without a target: the connection's own session and window.
        let got = tmux
            .run(DisplayMessage::format("#{session_name}"))
            .await
            .unwrap();
        assert_eq!(&got[..], b"tmux-control");
        // display-message also runs strftime.
        let year = tmux.run(DisplayMessage::format("%Y")).await.unwrap();
        assert!(
            year.len() == 4 && year.iter().all(u8::is_ascii_digit),
            "{year:?}"
        );
        let got = tmux
            .run(DisplayMessage::format("#{?#{==:1,1},yes,no} ## %%"))
            .await
            .unwrap();
        assert_eq!(&got[..], b"yes # %");

        for text in [
            "#{pane_id} ## # %H %% % #[bold] ##[ #(echo x)",
            "it's \"quoted\" \\ ; ~ $HOME {}",
            "é ✓ 😀 日本",
            "-x",
            "",
            " padded ",
        ] {
            let got = tmux
                .run(DisplayMessage::literal(text).target(created.pane))
                .await
                .unwrap();
            assert_eq!(String::from_utf8_lossy(&got), text);
        }
    })
    .await;
}
