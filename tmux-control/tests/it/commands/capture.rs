//! `capture-pane`: the screen, history, line ranges, escapes and joined
//! lines.

use super::{command_error, connect, eventually, pane_row, text};
use crate::common::{bounded, gated};
use tmux_control::command::{CapturePane, NewWindow, ResizeWindow, WaitFor};
use tmux_control::{IsolatedServer, PaneId, PlainText};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn capture_pane_screen_history_ranges_escapes_and_joins() {
    let iso = IsolatedServer::new().unwrap();
    bounded(async {
        let (tmux, _) = connect(&iso).await;
        let program = gated(
            "cap",
            "seq 1 30; printf 'plain 日本 \\\\033\\n\\033[1mbold\\033[0m \\\\\\\\b\\n'; \
             printf 'trail   \\n'; printf '%070d\\n' 0; printf 'END'; exec sleep 600",
        );
        let created = tmux.run(NewWindow::new().command(program)).await.unwrap();
        let pane = created.pane;
        tmux.run(ResizeWindow::new(created.window).size(60, 10))
            .await
            .unwrap();
        tmux.run(WaitFor::signal("go-cap")).await.unwrap();
        eventually("END on the screen", || async {
            let lines = tmux.run(CapturePane::new(pane)).await.unwrap();
            (lines.last().map(|l| &l[..]) == Some(b"END")).then_some(())
        })
        .await;
        let zeros60 = "0".repeat(60);
        let zeros70 = "0".repeat(70);

        // The visible screen, trailing spaces trimmed.
        let screen = tmux.run(CapturePane::new(pane)).await.unwrap();
        assert_eq!(
            text(&screen),
            [
                "27",
                "28",
                "29",
                "30",
                "plain 日本 \\033",
                "bold \\\\b",
                "trail",
                &zeros60,
                "0000000000",
                "END"
            ]
        );
        let p = pane_row(&tmux, pane).await.unwrap();
        assert_eq!(p.history_size, 26);
        assert_eq!((p.cursor_x, p.cursor_y), (3, 9));

        // Colours and attributes as escape sequences.
        let esc = tmux.run(CapturePane::new(pane).escapes()).await.unwrap();
        // tmux writes its own sequences (3.3a adds default colours after
        // the reset); what matters is that ESC arrives as a byte.
        assert!(esc[5].starts_with(b"\x1b[1mbold\x1b[0m"), "{:?}", esc[5]);
        let mut plain = Vec::new();
        PlainText::new().feed(&esc[5], &mut plain);
        assert_eq!(plain, b"bold \\\\b");
        assert_eq!(String::from_utf8_lossy(&esc[4]), "plain 日本 \\033");

        // Wrapped lines joined (-J keeps trailing spaces).
        let joined = tmux
            .run(CapturePane::new(pane).join_wrapped())
            .await
            .unwrap();
        assert_eq!(joined.len(), 9, "{:?}", text(&joined));
        assert_eq!(String::from_utf8_lossy(&joined[7]), zeros70);
        assert_eq!(&joined[6][..], b"trail   ");

        // The screen as the followed pane's helper sees it agrees.
        let seen = tmux.follow(pane).await.unwrap().screen().await.unwrap();
        assert_eq!(seen.lines, text(&screen));

        // Trailing spaces kept.
        let kept = tmux
            .run(CapturePane::new(pane).trailing_spaces())
            .await
            .unwrap();
        assert_eq!(&kept[6][..], b"trail   ");
        assert_eq!(String::from_utf8_lossy(&kept[4]), "plain 日本 \\033");

        // Ranges: history lines are negative.
        let hist = tmux
            .run(CapturePane::new(pane).start(-3).end(-1))
            .await
            .unwrap();
        assert_eq!(text(&hist), ["24", "25", "26"]);
        let top = tmux
            .run(CapturePane::new(pane).start(0).end(0))
            .await
            .unwrap();
        assert_eq!(text(&top), ["27"]);
        let from_start = tmux
            .run(CapturePane::new(pane).from_history_start().end(-24))
            .await
            .unwrap();
        assert_eq!(text(&from_start), ["1", "2", "3"]);
        let to_end = tmux
            .run(CapturePane::new(pane).start(8).to_visible_end())
            .await
            .unwrap();
        assert_eq!(text(&to_end), ["0000000000", "END"]);
        let all = tmux
            .run(CapturePane::new(pane).whole_history())
            .await
            .unwrap();
        assert_eq!(all.len(), 36);
        assert_eq!(&all[0][..], b"1");
        assert_eq!(&all[35][..], b"END");

        command_error(
            tmux.run(CapturePane::new(PaneId(9999))).await,
            "capture-pane",
        );
    })
    .await;
}
