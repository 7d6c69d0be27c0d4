//! Panes: `split-window`, `select-pane` (titles too), `resize-pane`, zoom,
//! `kill-pane`, pane rows (paths with spaces, dead panes) and
//! `respawn-pane`.

use std::time::{Duration, Instant};

use super::{
    bytes_of, command_error, connect, display, eventually, invalid, pane_row, read_file, sq,
    wait_command, window_row,
};
use crate::common::bounded;
use tmux_control::command::{
    CapturePane, Created, Direction, DisplayMessage, KillPane, ListPanes, NewSession, NewWindow,
    OptionScope, PaneInfo, Raw, ResizePane, ResizeWindow, RespawnPane, SelectPane, SetOption, Size,
    SplitWindow,
};
use tmux_control::{IsolatedServer, PaneId, Tmux};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn panes_split_select_resize_zoom_and_kill() {
    let iso = IsolatedServer::new().unwrap();
    bounded(async {
        let (tmux, session) = connect(&iso).await;
        let win = tmux
            .run(NewWindow::new().command("exec sleep 600"))
            .await
            .unwrap();
        tmux.run(ResizeWindow::new(win.window).size(100, 40))
            .await
            .unwrap();
        let a = win.pane;

        // A pane to the right, 30 columns, its own directory and variable.
        let dir = iso.dir().join("split dir ✓ #{x}");
        std::fs::create_dir(&dir).unwrap();
        let out = iso.dir().join("split.out");
        let b: Created = tmux
            .run(
                SplitWindow::new()
                    .target(a)
                    .horizontal()
                    .size(Size::Cells(30))
                    .start_directory(bytes_of(&dir))
                    .env("TC_S", "s;1")
                    .command(format!(
                        "printf '%s|%s' \"$TC_S\" \"$(pwd)\" > {}; exec sleep 600",
                        sq(&out)
                    )),
            )
            .await
            .unwrap();
        assert_eq!((b.session, b.window), (session, win.window));
        assert_ne!(b.pane, a);
        let got = read_file(&out, 1).await;
        assert_eq!(
            String::from_utf8(got).unwrap(),
            format!("s;1|{}", dir.display())
        );
        let pb = pane_row(&tmux, b.pane).await.unwrap();
        let pa = pane_row(&tmux, a).await.unwrap();
        assert_eq!((pb.width, pb.height), (30, 40), "{pb:?}");
        assert_eq!(pa.width, 100 - 30 - 1, "{pa:?}");
        assert_eq!(pb.left, pa.width + 1);
        assert!(pa.active && !pb.active, "split-window must be detached");
        assert_eq!(pb.window, win.window);
        assert_eq!(pb.index, 1);

        // Above pane A, a quarter of its height; then one spanning the
        // whole width at the bottom.
        let c = tmux
            .run(
                SplitWindow::new()
                    .target(a)
                    .vertical()
                    .before()
                    .size(Size::Percent(25))
                    .command("exec sleep 600"),
            )
            .await
            .unwrap();
        let pc = pane_row(&tmux, c.pane).await.unwrap();
        assert_eq!((pc.left, pc.top), (0, 0), "{pc:?}");
        assert_eq!(pc.width, 69);
        assert_eq!(pc.height, 10, "{pc:?}");
        let d = tmux
            .run(
                SplitWindow::new()
                    .target(b.pane)
                    .full()
                    .size(Size::Cells(5))
                    .command("exec sleep 600"),
            )
            .await
            .unwrap();
        let pd = pane_row(&tmux, d.pane).await.unwrap();
        assert_eq!((pd.width, pd.height, pd.left), (100, 5, 0), "{pd:?}");
        let w = window_row(&tmux, win.window).await.unwrap();
        assert_eq!(w.panes, 4);
        command_error(
            tmux.run(SplitWindow::new().target(PaneId(9999))).await,
            "split-window",
        );
        invalid(
            tmux.run(SplitWindow::new().target(a).size(Size::Percent(101)))
                .await,
        );

        // Select; set a title (tmux 3.3a's `select-pane -T` only sets the
        // title, see `select_pane_with_a_title_also_selects_the_pane`).
        tmux.run(SelectPane::new(b.pane)).await.unwrap();
        let title = "title: #1 ✓ ## #[b] 50%";
        tmux.run(SelectPane::new(c.pane).title(title))
            .await
            .unwrap();
        let panes = tmux.run(ListPanes::in_window(win.window)).await.unwrap();
        assert_eq!(panes.len(), 4);
        for p in &panes {
            assert_eq!(p.active, p.id == b.pane, "{p:?}");
        }
        assert_eq!(panes.iter().find(|p| p.id == c.pane).unwrap().title, title);
        let active = tmux
            .run(DisplayMessage::format("#{pane_id}").target(win.window))
            .await
            .unwrap();
        assert_eq!(&active[..], b.pane.to_string().as_bytes());

        // Resize to a size, then by moving a border.
        tmux.run(ResizePane::new(b.pane).width(Size::Cells(50)))
            .await
            .unwrap();
        assert_eq!(pane_row(&tmux, b.pane).await.unwrap().width, 50);
        tmux.run(ResizePane::adjust(b.pane, Direction::Left, 5))
            .await
            .unwrap();
        assert_eq!(pane_row(&tmux, b.pane).await.unwrap().width, 55);
        tmux.run(ResizePane::adjust(b.pane, Direction::Right, 3))
            .await
            .unwrap();
        assert_eq!(pane_row(&tmux, b.pane).await.unwrap().width, 52);
        tmux.run(ResizePane::new(c.pane).height(Size::Cells(12)))
            .await
            .unwrap();
        assert_eq!(pane_row(&tmux, c.pane).await.unwrap().height, 12);
        tmux.run(ResizePane::adjust(c.pane, Direction::Down, 2))
            .await
            .unwrap();
        assert_eq!(pane_row(&tmux, c.pane).await.unwrap().height, 14);
        tmux.run(ResizePane::adjust(c.pane, Direction::Up, 4))
            .await
            .unwrap();
        assert_eq!(pane_row(&tmux, c.pane).await.unwrap().height, 10);
        tmux.run(
            ResizePane::new(b.pane)
                .width(Size::Percent(50))
                .height(Size::Cells(20)),
        )
        .await
        .unwrap();
        let pb = pane_row(&tmux, b.pane).await.unwrap();
        assert_eq!((pb.width, pb.height), (50, 20), "{pb:?}");
        invalid(tmux.run(ResizePane::new(b.pane)).await);

        // Zoom and unzoom.
        tmux.run(ResizePane::toggle_zoom(b.pane)).await.unwrap();
        let w = window_row(&tmux, win.window).await.unwrap();
        assert!(w.zoomed && w.flags.contains('Z'), "{w:?}");
        assert_ne!(w.layout, w.visible_layout);
        let pb = pane_row(&tmux, b.pane).await.unwrap();
        assert_eq!((pb.width, pb.height), (100, 40), "{pb:?}");
        assert_eq!(display(&tmux, b.pane, "#{window_zoomed_flag}").await, "1");
        tmux.run(ResizePane::toggle_zoom(b.pane)).await.unwrap();
        let w = window_row(&tmux, win.window).await.unwrap();
        assert!(!w.zoomed, "{w:?}");
        assert_eq!(w.layout, w.visible_layout);
        assert_eq!(pane_row(&tmux, b.pane).await.unwrap().width, 50);

        // Listing scopes.
        let in_session = tmux.run(ListPanes::in_session(session)).await.unwrap();
        assert_eq!(in_session.len(), 5, "{in_session:#?}");
        assert!(in_session.iter().all(|p| p.session == session));
        let other = tmux
            .run(NewSession::new().command("exec sleep 600"))
            .await
            .unwrap();
        let all = tmux.run(ListPanes::all()).await.unwrap();
        assert_eq!(all.len(), 6);
        assert!(
            all.iter()
                .any(|p| p.id == other.pane && p.session == other.session)
        );

        // Kill.
        tmux.run(KillPane::new(c.pane)).await.unwrap();
        assert!(pane_row(&tmux, c.pane).await.is_none());
        assert_eq!(window_row(&tmux, win.window).await.unwrap().panes, 3);
        command_error(tmux.run(KillPane::new(c.pane)).await, "kill-pane");
        for p in [a, b.pane, d.pane] {
            tmux.run(KillPane::new(p)).await.unwrap();
        }
        assert!(
            window_row(&tmux, win.window).await.is_none(),
            "the last pane took its window"
        );
    })
    .await;
}

/// Waits until the pane, running `command`, is dead and tmux knows the exit
/// status. tmux marks a pane dead when its pty closes and records the
/// status when it reaps the process, a moment later; tmux 3.3a now and then
/// (a few runs in a hundred here) never records it at all. Then the pane is
/// respawned with `command` and the wait starts again.
async fn dead_with_status(tmux: &Tmux, pane: PaneId, command: &str) -> PaneInfo {
    for attempt in 0..5 {
        if attempt > 0 {
            tmux.run(RespawnPane::new(pane).kill().command(command))
                .await
                .unwrap();
        }
        let deadline = Instant::now() + Duration::from_secs(3);
        while Instant::now() < deadline {
            let row = pane_row(tmux, pane).await.unwrap();
            if row.dead && row.dead_status.is_some() {
                return row;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    panic!("{pane} running {command:?} never showed an exit status");
}

/// With a title, `SelectPane` sets the title only: tmux's `-T` returns
/// before selecting (documented on `SelectPane::title`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn select_pane_with_a_title_sets_the_title_only() {
    let iso = IsolatedServer::new().unwrap();
    bounded(async {
        let (tmux, _) = connect(&iso).await;
        let a = tmux
            .run(NewWindow::new().command("exec sleep 600"))
            .await
            .unwrap();
        let b = tmux
            .run(SplitWindow::new().target(a.pane).command("exec sleep 600"))
            .await
            .unwrap();
        assert!(pane_row(&tmux, a.pane).await.unwrap().active);
        tmux.run(SelectPane::new(b.pane).title("t")).await.unwrap();
        let pb = pane_row(&tmux, b.pane).await.unwrap();
        assert_eq!(pb.title, "t");
        assert!(!pb.active, "select-pane -T also selected {}", b.pane);
        assert!(pane_row(&tmux, a.pane).await.unwrap().active);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pane_rows_paths_with_spaces_dead_panes_and_respawn() {
    let iso = IsolatedServer::new().unwrap();
    bounded(async {
        let (tmux, _) = connect(&iso).await;
        // A current path with spaces, a colon, a `#` and non-ASCII.
        let dir = iso.dir().join("path with spaces: ✓ #1 %2");
        std::fs::create_dir(&dir).unwrap();
        let live = tmux
            .run(
                NewWindow::new()
                    .start_directory(bytes_of(&dir))
                    .command("exec sleep 600"),
            )
            .await
            .unwrap();
        wait_command(&tmux, live.pane, "sleep").await;
        let p = pane_row(&tmux, live.pane).await.unwrap();
        assert_eq!(p.current_path, dir);
        assert_eq!(p.current_command, "sleep");
        assert!(
            !p.dead && p.dead_status.is_none() && p.pid.is_some(),
            "{p:?}"
        );
        assert!(p.tty.starts_with("/dev/pts/"), "{p:?}");
        assert!(!p.in_mode && !p.alternate_on);

        // Copy mode and the alternate screen show in the row.
        tmux.run(Raw::new("copy-mode").args(["-t", &live.pane.to_string()]))
            .await
            .unwrap();
        assert!(pane_row(&tmux, live.pane).await.unwrap().in_mode);
        tmux.run(Raw::new("send-keys").args(["-t", &live.pane.to_string(), "-X", "cancel"]))
            .await
            .unwrap();
        assert!(!pane_row(&tmux, live.pane).await.unwrap().in_mode);
        let alt = tmux
            .run(NewWindow::new().command("printf '\\033[?1049hALT'; exec sleep 600"))
            .await
            .unwrap();
        let row = eventually("ALT on the alternate screen", || async {
            pane_row(&tmux, alt.pane)
                .await
                .filter(|p| p.alternate_on && p.cursor_x == 3)
        })
        .await;
        assert_eq!(row.cursor_y, 0, "{row:?}");
        let screen = tmux.run(CapturePane::new(alt.pane)).await.unwrap();
        assert_eq!(&screen[0][..], b"ALT");

        // A dead pane kept by remain-on-exit, with its exit status.
        tmux.run(SetOption::new(OptionScope::Window, "remain-on-exit", "on").global())
            .await
            .unwrap();
        let dead = tmux.run(NewWindow::new().command("exit 3")).await.unwrap();
        let row = dead_with_status(&tmux, dead.pane, "exit 3").await;
        assert_eq!(row.dead_status, Some(3), "{row:?}");

        // Respawn the dead pane (no -k needed), with a new command.
        let out = iso.dir().join("respawn.out");
        tmux.run(
            RespawnPane::new(dead.pane)
                .command(format!("printf respawned > {}; exec sleep 600", sq(&out))),
        )
        .await
        .unwrap();
        assert_eq!(read_file(&out, 9).await, b"respawned");
        let row = pane_row(&tmux, dead.pane).await.unwrap();
        assert!(!row.dead && row.dead_status.is_none(), "{row:?}");

        // A live pane refuses without -k …
        let message = command_error(
            tmux.run(RespawnPane::new(live.pane).command("exec sleep 600"))
                .await,
            "respawn-pane",
        );
        assert!(message.contains("still active"), "{message}");
        // … and is replaced with -k, in a new directory with a new variable.
        let old_pid = pane_row(&tmux, live.pane).await.unwrap().pid;
        let out = iso.dir().join("respawn-k.out");
        tmux.run(
            RespawnPane::new(live.pane)
                .kill()
                .start_directory(bytes_of(iso.dir()))
                .env("TC_R", "r r")
                .command(format!(
                    "printf '%s|%s' \"$TC_R\" \"$(pwd)\" > {}; exec sleep 600",
                    sq(&out)
                )),
        )
        .await
        .unwrap();
        let got = read_file(&out, 1).await;
        assert_eq!(
            String::from_utf8(got).unwrap(),
            format!("r r|{}", iso.dir().display())
        );
        let row = pane_row(&tmux, live.pane).await.unwrap();
        assert_ne!(row.pid, old_pid);
        assert!(!row.dead);

        // A respawned pane that exits is dead again, with the new status.
        tmux.run(RespawnPane::new(live.pane).kill().command("exit 0"))
            .await
            .unwrap();
        let row = dead_with_status(&tmux, live.pane, "exit 0").await;
        assert_eq!(row.dead_status, Some(0));
    })
    .await;
}
