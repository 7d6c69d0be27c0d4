//! Every typed command through `Tmux::run` against the real tmux, each test
//! on its own isolated server (private `-S` socket in a private directory,
//! killed and removed afterwards). Every test checks the command's typed
//! result and then re-reads tmux's state (list-*, show-*, display-message,
//! capture-pane, or the bytes a pane's program received).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::future::Future;
use std::path::Path;
use std::time::{Duration, Instant};

use tmux_control::command::{
    CapturePane, ClientFlag, Created, DeleteBuffer, Direction, DisplayMessage, EnvValue,
    HasSession, Key, KillPane, KillSession, KillWindow, ListBuffers, ListPanes, ListSessions,
    ListWindows, NamedKey, NewSession, NewWindow, OptionScope, PaneInfo, PaneOutput, PasteBuffer,
    Raw, RefreshClient, RenameSession, RenameWindow, ResizePane, ResizeWindow, RespawnPane,
    SelectPane, SelectWindow, SendKeys, SessionInfo, SetBuffer, SetEnvironment, SetOption,
    ShowBuffer, ShowEnvironment, ShowOption, Size, SplitWindow, Subscription, WaitFor, WindowInfo,
};

use crate::common::{bounded, gated};
use tmux_control::proto::Notification;
use tmux_control::{
    Error, Event, IsolatedServer, PaneId, Pattern, PlainText, SessionId, Tmux, WindowId,
};

/// How long a poll for a state change may take.
const POLL: Duration = Duration::from_secs(15);

/// Polls `f` until it returns `Some`, at most [`POLL`].
async fn eventually<T, F, Fut>(what: &str, mut f: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = Instant::now() + POLL;
    loop {
        if let Some(v) = f().await {
            return v;
        }
        assert!(Instant::now() < deadline, "gave up waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A path as a single-quoted shell word.
fn sq(path: &Path) -> String {
    format!("'{}'", path.to_str().unwrap().replace('\'', r"'\''"))
}

fn bytes_of(path: &Path) -> &[u8] {
    path.as_os_str().as_encoded_bytes()
}

async fn connect(iso: &IsolatedServer) -> (Tmux, SessionId) {
    let tmux = Tmux::connect(iso.server()).await.unwrap();
    let session = tmux.attached_session().unwrap();
    (tmux, session)
}

async fn session_row(tmux: &Tmux, id: SessionId) -> Option<SessionInfo> {
    tmux.run(ListSessions::new())
        .await
        .unwrap()
        .into_iter()
        .find(|s| s.id == id)
}

async fn window_row(tmux: &Tmux, id: WindowId) -> Option<WindowInfo> {
    tmux.run(ListWindows::all())
        .await
        .unwrap()
        .into_iter()
        .find(|w| w.id == id)
}

async fn pane_row(tmux: &Tmux, id: PaneId) -> Option<PaneInfo> {
    tmux.run(ListPanes::all())
        .await
        .unwrap()
        .into_iter()
        .find(|p| p.id == id)
}

async fn display(tmux: &Tmux, target: PaneId, format: &str) -> String {
    let out = tmux
        .run(DisplayMessage::format(format).target(target))
        .await
        .unwrap();
    String::from_utf8(out.to_vec()).unwrap()
}

/// Waits until the pane's foreground program is `command`, as tmux reads
/// it from `/proc`. (Before that tmux shows the start command's first word,
/// `exec` skipped; the path, which has no such fallback, tells them apart.)
///
/// tmux names a pane's command from its argv until the child has taken the
/// terminal, then from the terminal's foreground process: `exec sleep` is
/// "sleep", then briefly "bash", then "sleep" again. So the pane's own
/// process must be running `command` too (read from `/proc` where there is
/// one).
async fn wait_command(tmux: &Tmux, pane: PaneId, command: &str) {
    eventually(&format!("{pane} to run {command}"), || async {
        let now = display(
            tmux,
            pane,
            "#{pane_current_command}|#{pane_current_path}|#{pane_pid}",
        )
        .await;
        let mut fields = now.splitn(3, '|');
        let (cmd, path, pid) = (fields.next()?, fields.next()?, fields.next()?);
        let process = std::fs::read(format!("/proc/{pid}/cmdline"));
        let exec_done = match &process {
            Ok(argv) => {
                let argv0 = argv.split(|&b| b == 0).next().unwrap_or_default();
                argv0.rsplit(|&b| b == b'/').next() == Some(command.as_bytes())
            }
            Err(_) => !Path::new("/proc/self").exists(),
        };
        (cmd == command && !path.is_empty() && exec_done).then_some(())
    })
    .await;
}

/// Waits until the file exists and holds at least `len` bytes, then checks
/// that nothing more arrives for a moment and returns its contents.
async fn read_file(path: &Path, len: usize) -> Vec<u8> {
    let got = eventually(&format!("{len} bytes in {}", path.display()), || async {
        std::fs::read(path).ok().filter(|b| b.len() >= len)
    })
    .await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    let again = std::fs::read(path).unwrap();
    assert_eq!(again, got, "more bytes arrived late");
    got
}

/// A window whose program appends every byte its terminal receives to
/// `file`, untranslated (raw mode, no echo). Returns its pane once the
/// terminal is in raw mode.
async fn sink(tmux: &Tmux, file: &Path) -> PaneId {
    sink_with(tmux, file, "").await
}

/// Like [`sink`], running `before` (after `stty`) first.
async fn sink_with(tmux: &Tmux, file: &Path, before: &str) -> PaneId {
    let cmd = format!("stty raw -echo; {before} exec cat >> {}", sq(file));
    let created = tmux.run(NewWindow::new().command(cmd)).await.unwrap();
    // The shell creates the file after `stty` returned.
    eventually("the sink to start", || async {
        file.exists().then_some(())
    })
    .await;
    created.pane
}

fn command_error<T: std::fmt::Debug>(r: tmux_control::Result<T>, command: &str) -> String {
    match r {
        Err(Error::Command {
            command: c,
            message,
        }) => {
            assert_eq!(c, command, "{message}");
            message
        }
        other => panic!("expected a `{command}` error, got {other:?}"),
    }
}

fn invalid<T: std::fmt::Debug>(r: tmux_control::Result<T>) -> String {
    match r {
        Err(Error::InvalidArgument(why)) => why,
        other => panic!("expected InvalidArgument, got {other:?}"),
    }
}

fn text(lines: &[bytes::Bytes]) -> Vec<String> {
    lines
        .iter()
        .map(|l| String::from_utf8_lossy(l).into_owned())
        .collect()
}

// ---------------------------------------------------------------- sessions

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn new_session_honours_name_window_directory_size_env_and_command() {
    let iso = IsolatedServer::new().unwrap();
    bounded(async {
        let (tmux, attached) = connect(&iso).await;
        let dir = iso.dir().join("work dir ✓ #1 $HOME");
        std::fs::create_dir(&dir).unwrap();
        let out = iso.dir().join("new-session.out");
        let name = "tc sess ✓ #{session_id} ## 😀";
        let created = tmux
            .run(
                NewSession::new()
                    .session_name(name)
                    .window_name("first: win #1 ✓")
                    .start_directory(bytes_of(&dir))
                    .size(100, 30)
                    .env("TC_FOO", "bar baz;$x #{y}")
                    .command(format!(
                        "printf '%s|%s' \"$TC_FOO\" \"$(pwd)\" > {}; exec sleep 600",
                        sq(&out)
                    )),
            )
            .await
            .unwrap();
        assert_ne!(created.session, attached, "new-session must stay detached");
        // The connection is still attached where it was.
        assert_eq!(tmux.attached_session(), Some(attached));
        let here = tmux
            .run(DisplayMessage::format("#{session_id}"))
            .await
            .unwrap();
        assert_eq!(&here[..], attached.to_string().as_bytes());

        let s = session_row(&tmux, created.session).await.unwrap();
        assert_eq!(s.name, name);
        assert_eq!(s.windows, 1);
        assert_eq!(s.attached, 0);
        assert_eq!(s.group, None);
        assert_eq!(s.path, dir);
        assert!(
            s.created > 1_600_000_000 && s.activity >= s.created,
            "{s:?}"
        );

        let windows = tmux
            .run(ListWindows::in_session(created.session))
            .await
            .unwrap();
        assert_eq!(windows.len(), 1, "{windows:?}");
        let w = &windows[0];
        assert_eq!(w.id, created.window);
        assert_eq!(w.session, created.session);
        assert_eq!(w.name, "first: win #1 ✓");
        assert_eq!((w.width, w.height), (100, 30));
        assert_eq!(w.panes, 1);
        assert!(w.active);

        let panes = tmux
            .run(ListPanes::in_window(created.window))
            .await
            .unwrap();
        assert_eq!(panes.len(), 1);
        assert_eq!(panes[0].id, created.pane);
        assert_eq!((panes[0].width, panes[0].height), (100, 30));

        // The command ran in the directory with the variable set.
        let got = read_file(&out, 1).await;
        let want = format!("bar baz;$x #{{y}}|{}", dir.display());
        assert_eq!(String::from_utf8(got).unwrap(), want);
        wait_command(&tmux, created.pane, "sleep").await;
        let p = pane_row(&tmux, created.pane).await.unwrap();
        assert_eq!(p.current_path, dir);
        assert_eq!(p.current_command, "sleep");
        assert!(p.pid.is_some() && !p.dead);
        // `-e` went into the session's environment.
        assert_eq!(
            tmux.run(ShowEnvironment::new("TC_FOO").target(created.session))
                .await
                .unwrap(),
            Some(EnvValue::Set("bar baz;$x #{y}".into()))
        );
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_names_list_rename_has_and_kill() {
    let iso = IsolatedServer::new().unwrap();
    bounded(async {
        let (tmux, attached) = connect(&iso).await;
        // (name given, name tmux keeps): before 3.7 tmux turns `:` and `.`
        // into `_`; 3.7 keeps them.
        let v3_7 = tmux.version().at_least(3, 7);
        let colon = if v3_7 {
            "colon:and.dot"
        } else {
            "colon_and_dot"
        };
        let mut names = vec![
            ("with space", "with space"),
            ("colon:and.dot", colon),
            ("hash #{session_id} ## #[x]", "hash #{session_id} ## #[x]"),
            ("日本語 ✓ 😀 é", "日本語 ✓ 😀 é"),
            ("-leading dash", "-leading dash"),
            ("quote's \"d\" \\ $HOME ~ ;", "quote's \"d\" \\ $HOME ~ ;"),
        ];
        let control = "ctl\there\nnl \u{1} \u{7f} \\x";
        if v3_7 {
            // 3.7 refuses names with control characters.
            let refused = tmux
                .run(NewSession::new().session_name(control).command("exec sleep 600"))
                .await;
            assert!(
                matches!(&refused, Err(Error::Command { message, .. }) if message.contains("invalid session name")),
                "{refused:?}"
            );
        } else {
            // tmux stores control characters escaped; they come back raw.
            names.push((control, control));
        }
        let mut ids = Vec::new();
        for &(given, kept) in &names {
            let c = tmux
                .run(
                    NewSession::new()
                        .session_name(given)
                        .command("exec sleep 600"),
                )
                .await
                .unwrap();
            let row = session_row(&tmux, c.session).await.unwrap();
            assert_eq!(row.name, kept, "given {given:?}");
            assert!(tmux.run(HasSession::new(c.session)).await.unwrap());
            ids.push((c.session, kept));
        }
        let all = tmux.run(ListSessions::new()).await.unwrap();
        assert_eq!(all.len(), names.len() + 1, "{all:#?}");
        assert!(
            all.iter()
                .any(|s| s.id == attached && s.name == "tmux-control")
        );
        assert_eq!(
            all.iter().find(|s| s.id == attached).unwrap().attached,
            1,
            "the control client counts as attached"
        );

        // A grouped session (made with Raw: the typed NewSession has no -t).
        let (base, base_name) = ids[0];
        let grouped = tmux
            .run(Raw::new("new-session").args([
                "-d",
                "-P",
                "-F",
                "#{session_id}",
                "-t",
                &base.to_string(),
                "-s",
                "grouped",
            ]))
            .await
            .unwrap();
        let grouped: SessionId = String::from_utf8_lossy(&grouped[0]).parse().unwrap();
        let g = session_row(&tmux, grouped).await.unwrap();
        let b = session_row(&tmux, base).await.unwrap();
        assert_eq!(g.group.as_deref(), Some(base_name), "{g:?}");
        assert_eq!(b.group, g.group, "{b:?}");
        assert_eq!(g.windows, b.windows);
        tmux.run(KillSession::new(grouped)).await.unwrap();

        // Exact-name targets.
        assert!(tmux.run(HasSession::new("=with space")).await.unwrap());
        if v3_7 {
            // The name keeps its `:`, which a target reads as the window
            // separator: such a session is reached by its id.
            assert!(!tmux.run(HasSession::new("=colon:and.dot")).await.unwrap());
            assert!(tmux.run(HasSession::new(ids[1].0)).await.unwrap());
        } else {
            assert!(tmux.run(HasSession::new("=colon_and_dot")).await.unwrap());
        }
        assert!(!tmux.run(HasSession::new("=with")).await.unwrap());
        assert!(!tmux.run(HasSession::new("=no such session")).await.unwrap());
        assert!(!tmux.run(HasSession::new(SessionId(999))).await.unwrap());

        // Rename, by id and by name.
        let (first, _) = ids[0];
        tmux.run(RenameSession::new(first, "renamed: ✓ #{x} -y"))
            .await
            .unwrap();
        let renamed = if v3_7 {
            "renamed: ✓ #{x} -y"
        } else {
            "renamed_ ✓ #{x} -y"
        };
        assert_eq!(session_row(&tmux, first).await.unwrap().name, renamed);
        tmux.run(RenameSession::new("=日本語 ✓ 😀 é", "plain"))
            .await
            .unwrap();
        assert_eq!(session_row(&tmux, ids[3].0).await.unwrap().name, "plain");
        command_error(
            tmux.run(RenameSession::new("=plain", renamed)).await,
            "rename-session",
        );

        // Kill by id and by exact name.
        tmux.run(KillSession::new(first)).await.unwrap();
        assert!(!tmux.run(HasSession::new(first)).await.unwrap());
        if v3_7 {
            tmux.run(KillSession::new(ids[1].0)).await.unwrap();
        } else {
            tmux.run(KillSession::new("=colon_and_dot")).await.unwrap();
        }
        assert!(!tmux.run(HasSession::new(ids[1].0)).await.unwrap());
        let left: Vec<SessionId> = tmux
            .run(ListSessions::new())
            .await
            .unwrap()
            .iter()
            .map(|s| s.id)
            .collect();
        assert_eq!(left.len(), names.len() - 1);
        assert!(!left.contains(&first) && !left.contains(&ids[1].0));
        command_error(tmux.run(KillSession::new(first)).await, "kill-session");
    })
    .await;
}

// ----------------------------------------------------------------- windows

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

// ------------------------------------------------------------------- panes

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

// -------------------------------------------------------------------- keys

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn send_keys_literal_named_and_hex_arrive_exactly() {
    let iso = IsolatedServer::new().unwrap();
    bounded(async {
        let (tmux, _) = connect(&iso).await;
        let file = iso.dir().join("keys.bin");
        let pane = sink(&tmux, &file).await;
        let mut expected = Vec::new();

        let text = "-x ;#{pane_id} $HOME ~ 'q' \"d\" \\ é ✓ 日本 😀 %1 ;";
        tmux.run(SendKeys::literal(pane, text)).await.unwrap();
        expected.extend_from_slice(text.as_bytes());

        let keys: Vec<(Key, &[u8])> = vec![
            (Key::ENTER, b"\r"),
            (Key::TAB, b"\t"),
            (Key::ESCAPE, b"\x1b"),
            (Key::BACKSPACE, b"\x7f"),
            (Key::SPACE, b" "),
            (Key::char(';').unwrap(), b";"),
            (Key::char('é').unwrap(), "é".as_bytes()),
            (Key::ctrl('c').unwrap(), b"\x03"),
            (Key::ctrl('A').unwrap(), b"\x01"),
            (Key::meta('x').unwrap(), b"\x1bx"),
            (Key::UP, b"\x1b[A"),
            (Key::DOWN, b"\x1b[B"),
            (Key::RIGHT, b"\x1b[C"),
            (Key::LEFT, b"\x1b[D"),
            (NamedKey::Home.into(), b"\x1b[1~"),
            (NamedKey::End.into(), b"\x1b[4~"),
            (NamedKey::Insert.into(), b"\x1b[2~"),
            (NamedKey::Delete.into(), b"\x1b[3~"),
            (NamedKey::PageUp.into(), b"\x1b[5~"),
            (NamedKey::PageDown.into(), b"\x1b[6~"),
            (NamedKey::BackTab.into(), b"\x1b[Z"),
            (NamedKey::F1.into(), b"\x1bOP"),
            (NamedKey::F4.into(), b"\x1bOS"),
            (NamedKey::F5.into(), b"\x1b[15~"),
            (NamedKey::F12.into(), b"\x1b[24~"),
            (Key::UP.with_shift(), b"\x1b[1;2A"),
            (Key::LEFT.with_ctrl().unwrap(), b"\x1b[1;5D"),
            ("M-Right".parse().unwrap(), b"\x1b[1;3C"),
            ("C-M-x".parse().unwrap(), b"\x1b\x18"),
        ];
        for (key, bytes) in &keys {
            // One command per key, so a wrong byte sequence names its key.
            let from = expected.len();
            tmux.run(SendKeys::keys(pane, [*key])).await.unwrap();
            expected.extend_from_slice(bytes);
            let got = read_file(&file, expected.len()).await;
            assert_eq!(
                String::from_utf8_lossy(&got[from..]),
                String::from_utf8_lossy(bytes),
                "key {key}"
            );
        }
        // Every printable ASCII character and some others as a key, alone
        // and with Meta, in one command.
        let chars: Vec<char> = (b'!'..=b'~')
            .map(char::from)
            .chain("é日😀".chars())
            .collect();
        let mut keys_sent = Vec::new();
        let from = expected.len();
        for &c in &chars {
            let key = Key::char(c).unwrap();
            keys_sent.extend([key, key.with_meta()]);
            let mut utf8 = [0; 4];
            let utf8 = c.encode_utf8(&mut utf8).as_bytes();
            expected.extend_from_slice(utf8);
            expected.push(0x1b);
            expected.extend_from_slice(utf8);
        }
        tmux.run(SendKeys::keys(pane, keys_sent)).await.unwrap();
        let got = read_file(&file, expected.len()).await;
        assert_eq!(
            String::from_utf8_lossy(&got[from..]),
            String::from_utf8_lossy(&expected[from..])
        );
        // Ctrl with the characters that have a control byte.
        let ctrl: &[(char, u8)] = &[
            ('@', 0x00),
            (' ', 0x00),
            ('2', 0x00),
            ('[', 0x1b),
            ('\\', 0x1c),
            (']', 0x1d),
            ('^', 0x1e),
            ('6', 0x1e),
            ('_', 0x1f),
            ('-', 0x1f),
            ('/', 0x1f),
            ('?', 0x7f),
            ('z', 0x1a),
            ('M', 0x0d),
        ];
        let from = expected.len();
        tmux.run(SendKeys::keys(
            pane,
            ctrl.iter().map(|&(c, _)| Key::ctrl(c).unwrap()),
        ))
        .await
        .unwrap();
        expected.extend(ctrl.iter().map(|&(_, b)| b));
        let got = read_file(&file, expected.len()).await;
        assert_eq!(got[from..], expected[from..]);

        // Several keys in one command.
        tmux.run(SendKeys::keys(pane, keys.iter().map(|(k, _)| *k)))
            .await
            .unwrap();
        for (_, bytes) in &keys {
            expected.extend_from_slice(bytes);
        }

        // Exact bytes, invalid UTF-8 and controls included, also chunked.
        let raw = b"\x00\x01\r\n\xff\xfe\xc3(\x1b[31m\x7f".to_vec();
        tmux.run(SendKeys::hex(pane, &raw)).await.unwrap();
        expected.extend_from_slice(&raw);
        let long: Vec<u8> = (0..=255u8).rev().collect();
        for cmd in SendKeys::hex_chunks(pane, &long, 100) {
            tmux.run(cmd).await.unwrap();
        }
        expected.extend_from_slice(&long);

        assert_eq!(read_file(&file, expected.len()).await, expected);

        // Refused before anything is sent.
        invalid(tmux.run(SendKeys::literal(pane, "a\nb")).await);
        invalid(tmux.run(SendKeys::literal(pane, "tab\there")).await);
        invalid(tmux.run(SendKeys::keys(pane, [])).await);
        invalid(tmux.run(SendKeys::hex(pane, b"")).await);
        command_error(
            tmux.run(SendKeys::literal(PaneId(9999), "x")).await,
            "send-keys",
        );
        assert_eq!(read_file(&file, expected.len()).await, expected);
    })
    .await;
}

/// Every Ctrl key the library accepts reaches the pane as a byte; the
/// characters tmux would silently drop are refused up front.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_ctrl_key_the_library_accepts_reaches_the_pane() {
    let iso = IsolatedServer::new().unwrap();
    bounded(async {
        let (tmux, _) = connect(&iso).await;
        let file = iso.dir().join("ctrl.bin");
        let pane = sink(&tmux, &file).await;
        let mut len = 0;
        let mut lost = Vec::new();
        let mut refused = Vec::new();
        for c in "abz@[\\]^_? !#()+,-.:;<=>'`/0123456789".chars() {
            let key = match Key::ctrl(c) {
                Ok(key) => key,
                Err(tmux_control::Error::InvalidArgument(_)) => {
                    refused.push(c);
                    continue;
                }
                Err(e) => panic!("{e}"),
            };
            // The key, then a marker byte.
            tmux.run(SendKeys::keys(pane, [key])).await.unwrap();
            tmux.run(SendKeys::hex(pane, b"|")).await.unwrap();
            let got = eventually("the marker", || async {
                std::fs::read(&file)
                    .ok()
                    .filter(|b| b.len() > len && b.ends_with(b"|"))
            })
            .await;
            if got.len() == len + 1 {
                lost.push(key.to_string());
            }
            len = got.len();
        }
        assert!(
            lost.is_empty(),
            "accepted but nothing reached the pane: {lost:?}"
        );
        assert_eq!(refused.iter().collect::<String>(), "!#()+,.:;<=>'`01345789");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn send_keys_seen_through_the_followed_output() {
    let iso = IsolatedServer::new().unwrap();
    bounded(async {
        let (tmux, _) = connect(&iso).await;
        // `cat -vT` prints what it reads once a line is complete, control
        // characters (TAB included) in ^X notation; the terminal does not
        // echo.
        let created = tmux
            .run(NewWindow::new().command("stty -echo; exec cat -vT"))
            .await
            .unwrap();
        let pane = created.pane;
        wait_command(&tmux, pane, "cat").await;
        let out = tmux.follow(pane).await.unwrap();

        let text = "lit ;#{pane_id} $HOME 'q' \"d\" \\ ~";
        let wait = out.expect(Pattern::literal(&format!("{text}^A^[[A^I|")).unwrap());
        tmux.run(SendKeys::literal(pane, text)).await.unwrap();
        tmux.run(SendKeys::keys(
            pane,
            [Key::ctrl('a').unwrap(), Key::UP, Key::TAB],
        ))
        .await
        .unwrap();
        tmux.run(SendKeys::hex(pane, b"|\r")).await.unwrap();
        let m = wait.wait(Duration::from_secs(10)).await.unwrap();
        assert!(m.after.starts_with('\n') || m.after.is_empty(), "{m:?}");

        // The same line is on the screen.
        let screen = tmux.run(CapturePane::new(pane)).await.unwrap();
        assert_eq!(
            String::from_utf8_lossy(&screen[0]),
            format!("{text}^A^[[A^I|")
        );
    })
    .await;
}

// ----------------------------------------------------------------- buffers

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn buffers_set_show_append_list_and_delete() {
    let iso = IsolatedServer::new().unwrap();
    bounded(async {
        let (tmux, _) = connect(&iso).await;
        assert!(tmux.run(ListBuffers::new()).await.unwrap().is_empty());

        let name = "buf one: ✓ #{x} ;";
        tmux.run(SetBuffer::new("first").buffer(name))
            .await
            .unwrap();
        assert_eq!(
            &tmux.run(ShowBuffer::named(name)).await.unwrap()[..],
            b"first"
        );
        tmux.run(
            SetBuffer::new(" + more\n\ttab \\ $HOME")
                .buffer(name)
                .append(),
        )
        .await
        .unwrap();
        let want = b"first + more\n\ttab \\ $HOME";
        assert_eq!(&tmux.run(ShowBuffer::named(name)).await.unwrap()[..], want);
        // Appending nothing is allowed and changes nothing.
        tmux.run(SetBuffer::new("").buffer(name).append())
            .await
            .unwrap();
        assert_eq!(&tmux.run(ShowBuffer::named(name)).await.unwrap()[..], want);

        // Automatic names; `latest` is the most recent automatic buffer.
        tmux.run(SetBuffer::new("auto 1")).await.unwrap();
        tmux.run(SetBuffer::new(b"auto 2 \xff\x01")).await.unwrap();
        assert_eq!(
            &tmux.run(ShowBuffer::latest()).await.unwrap()[..],
            b"auto 2 \xff\x01"
        );

        let list = tmux.run(ListBuffers::new()).await.unwrap();
        let names: Vec<&str> = list.iter().map(|b| b.name.as_str()).collect();
        assert_eq!(names, ["buffer1", "buffer0", name], "{list:?}");
        assert_eq!(list[2].size, want.len() as u64);
        assert_eq!(list[1].size, 6);
        assert_eq!(list[0].size, 9);
        assert!(list.iter().all(|b| b.created > 1_600_000_000));

        tmux.run(DeleteBuffer::new(name)).await.unwrap();
        command_error(tmux.run(ShowBuffer::named(name)).await, "show-buffer");
        command_error(tmux.run(DeleteBuffer::new(name)).await, "delete-buffer");
        tmux.run(DeleteBuffer::new("buffer1")).await.unwrap();
        assert_eq!(
            &tmux.run(ShowBuffer::latest()).await.unwrap()[..],
            b"auto 1"
        );
        let names: Vec<String> = tmux
            .run(ListBuffers::new())
            .await
            .unwrap()
            .into_iter()
            .map(|b| b.name)
            .collect();
        assert_eq!(names, ["buffer0"]);
        invalid(tmux.run(SetBuffer::new("")).await);
        invalid(tmux.run(SetBuffer::new("a\0b")).await);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paste_buffer_newlines_separator_delete_and_bracketed_paste() {
    let iso = IsolatedServer::new().unwrap();
    bounded(async {
        let (tmux, _) = connect(&iso).await;
        let file = iso.dir().join("paste.bin");
        let pane = sink(&tmux, &file).await;
        let mut expected = Vec::new();
        tmux.run(SetBuffer::new("l1 ;#\nl2 \\\n").buffer("p"))
            .await
            .unwrap();

        // LF becomes CR by default.
        tmux.run(PasteBuffer::new(pane).buffer("p")).await.unwrap();
        expected.extend_from_slice(b"l1 ;#\rl2 \\\r");
        assert_eq!(read_file(&file, expected.len()).await, expected);
        tmux.run(PasteBuffer::new(pane).buffer("p").keep_newlines())
            .await
            .unwrap();
        expected.extend_from_slice(b"l1 ;#\nl2 \\\n");
        assert_eq!(read_file(&file, expected.len()).await, expected);
        tmux.run(PasteBuffer::new(pane).buffer("p").separator("\r\n;"))
            .await
            .unwrap();
        expected.extend_from_slice(b"l1 ;#\r\n;l2 \\\r\n;");
        assert_eq!(read_file(&file, expected.len()).await, expected);
        // The program did not ask for bracketed paste: no markers.
        tmux.run(PasteBuffer::new(pane).buffer("p").bracketed())
            .await
            .unwrap();
        expected.extend_from_slice(b"l1 ;#\rl2 \\\r");
        assert_eq!(read_file(&file, expected.len()).await, expected);
        // The latest automatic buffer, deleted after pasting.
        tmux.run(SetBuffer::new(b"auto\xff")).await.unwrap();
        tmux.run(PasteBuffer::new(pane).delete()).await.unwrap();
        expected.extend_from_slice(b"auto\xff");
        assert_eq!(read_file(&file, expected.len()).await, expected);
        let names: Vec<String> = tmux
            .run(ListBuffers::new())
            .await
            .unwrap()
            .into_iter()
            .map(|b| b.name)
            .collect();
        assert_eq!(names, ["p"]);
        command_error(
            tmux.run(PasteBuffer::new(pane).buffer("nope")).await,
            "paste-buffer",
        );

        // A program that turned bracketed paste on gets the markers.
        let file2 = iso.dir().join("bracketed.bin");
        let pane2 = sink_with(&tmux, &file2, "printf '\\033[?2004hREADY';").await;
        // tmux handles a pane's output in order: once READY is on the
        // screen, the mode change before it was seen too.
        eventually("READY on the screen", || async {
            let lines = tmux.run(CapturePane::new(pane2)).await.unwrap();
            (&lines[0][..] == b"READY").then_some(())
        })
        .await;
        assert_eq!(
            display(&tmux, pane2, "#{pane_current_command}").await,
            "cat"
        );
        tmux.run(PasteBuffer::new(pane2).buffer("p").bracketed())
            .await
            .unwrap();
        let want = b"\x1b[200~l1 ;#\rl2 \\\r\x1b[201~".to_vec();
        assert_eq!(read_file(&file2, want.len()).await, want);
        // Without -p, even then no markers.
        tmux.run(PasteBuffer::new(pane2).buffer("p").delete())
            .await
            .unwrap();
        let mut want2 = want.clone();
        want2.extend_from_slice(b"l1 ;#\rl2 \\\r");
        assert_eq!(read_file(&file2, want2.len()).await, want2);
        assert!(tmux.run(ListBuffers::new()).await.unwrap().is_empty());
    })
    .await;
}

// ----------------------------------------------------------------- capture

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

// ----------------------------------------------------- options, environment

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn options_at_every_scope_set_show_and_unset() {
    let iso = IsolatedServer::new().unwrap();
    bounded(async {
        let (tmux, session) = connect(&iso).await;
        let created = tmux
            .run(NewWindow::new().command("exec sleep 600"))
            .await
            .unwrap();
        let other = tmux
            .run(
                SplitWindow::new()
                    .target(created.pane)
                    .command("exec sleep 600"),
            )
            .await
            .unwrap();
        let show = |cmd: ShowOption| {
            let tmux = tmux.clone();
            async move { tmux.run(cmd).await.unwrap() }
        };
        let value = |v: Option<tmux_control::command::OptionValue>| {
            v.map(|v| String::from_utf8(v.into_bytes().to_vec()).unwrap())
        };

        // Server.
        tmux.run(SetOption::new(OptionScope::Server, "escape-time", "42"))
            .await
            .unwrap();
        let v = show(ShowOption::new(OptionScope::Server, "escape-time")).await;
        assert_eq!(v.as_ref().and_then(|v| v.as_number()), Some(42));
        tmux.run(SetOption::new(OptionScope::Server, "@srv", "x y;z #{a}"))
            .await
            .unwrap();
        assert_eq!(
            value(show(ShowOption::new(OptionScope::Server, "@srv")).await).as_deref(),
            Some("x y;z #{a}")
        );
        tmux.run(SetOption::unset(OptionScope::Server, "escape-time"))
            .await
            .unwrap();
        // The default changed in tmux 3.5.
        let default = if tmux.version().at_least(3, 5) {
            "10"
        } else {
            "500"
        };
        assert_eq!(
            value(show(ShowOption::new(OptionScope::Server, "escape-time")).await).as_deref(),
            Some(default),
            "unset goes back to the default"
        );

        // Session: global, local, user options, unset and inheritance.
        tmux.run(SetOption::new(OptionScope::Session, "status", "off").global())
            .await
            .unwrap();
        let v = show(ShowOption::new(OptionScope::Session, "status").global()).await;
        assert_eq!(v.unwrap().as_bool(), Some(false));
        let hl = show(ShowOption::new(OptionScope::Session, "history-limit").global()).await;
        assert_eq!(
            value(hl).as_deref(),
            Some("50000"),
            "from the isolated config"
        );
        tmux.run(SetOption::new(OptionScope::Session, "history-limit", "1234").target(session))
            .await
            .unwrap();
        assert_eq!(
            value(
                show(ShowOption::new(OptionScope::Session, "history-limit").target(session)).await
            )
            .as_deref(),
            Some("1234")
        );
        tmux.run(SetOption::unset(OptionScope::Session, "history-limit").target(session))
            .await
            .unwrap();
        assert_eq!(
            show(ShowOption::new(OptionScope::Session, "history-limit").target(session)).await,
            None,
            "not set locally any more"
        );
        assert_eq!(
            value(
                show(
                    ShowOption::new(OptionScope::Session, "history-limit")
                        .target(session)
                        .inherited()
                )
                .await
            )
            .as_deref(),
            Some("50000")
        );
        let note = "a #b; c $HOME ~ 'q' \"d\" \\ ✓ #{session_name}";
        tmux.run(SetOption::new(OptionScope::Session, "@note", note).target(session))
            .await
            .unwrap();
        assert_eq!(
            value(show(ShowOption::new(OptionScope::Session, "@note").target(session)).await)
                .as_deref(),
            Some(note)
        );
        assert_eq!(
            show(ShowOption::new(OptionScope::Session, "@note").global()).await,
            None
        );
        tmux.run(SetOption::new(OptionScope::Session, "@lines", "a\nb\tc").target(session))
            .await
            .unwrap();
        assert_eq!(
            value(show(ShowOption::new(OptionScope::Session, "@lines").target(session)).await)
                .as_deref(),
            Some("a\nb\tc")
        );
        tmux.run(SetOption::new(OptionScope::Session, "@empty", "").target(session))
            .await
            .unwrap();
        assert_eq!(
            value(show(ShowOption::new(OptionScope::Session, "@empty").target(session)).await)
                .as_deref(),
            Some("")
        );
        tmux.run(SetOption::unset(OptionScope::Session, "@note").target(session))
            .await
            .unwrap();
        assert_eq!(
            show(ShowOption::new(OptionScope::Session, "@note").target(session)).await,
            None
        );
        assert_eq!(
            show(ShowOption::new(OptionScope::Session, "@never").target(session)).await,
            None
        );

        // Window.
        let w = created.window;
        let mk = show(ShowOption::new(OptionScope::Window, "mode-keys").global()).await;
        assert_eq!(value(mk).as_deref(), Some("emacs"));
        tmux.run(SetOption::new(OptionScope::Window, "mode-keys", "vi").target(w))
            .await
            .unwrap();
        assert_eq!(
            value(show(ShowOption::new(OptionScope::Window, "mode-keys").target(w)).await)
                .as_deref(),
            Some("vi")
        );
        assert_eq!(
            display(&tmux, created.pane, "#{mode-keys}").await,
            "vi",
            "the value is in effect"
        );
        tmux.run(SetOption::unset(OptionScope::Window, "mode-keys").target(w))
            .await
            .unwrap();
        assert_eq!(
            show(ShowOption::new(OptionScope::Window, "mode-keys").target(w)).await,
            None
        );
        assert_eq!(
            value(
                show(
                    ShowOption::new(OptionScope::Window, "mode-keys")
                        .target(w)
                        .inherited()
                )
                .await
            )
            .as_deref(),
            Some("emacs")
        );

        // Pane.
        tmux.run(SetOption::new(OptionScope::Pane, "remain-on-exit", "on").target(created.pane))
            .await
            .unwrap();
        assert_eq!(
            show(ShowOption::new(OptionScope::Pane, "remain-on-exit").target(created.pane))
                .await
                .unwrap()
                .as_bool(),
            Some(true)
        );
        assert_eq!(
            show(ShowOption::new(OptionScope::Pane, "remain-on-exit").target(other.pane)).await,
            None
        );
        assert_eq!(
            show(
                ShowOption::new(OptionScope::Pane, "remain-on-exit")
                    .target(other.pane)
                    .inherited()
            )
            .await
            .unwrap()
            .as_bool(),
            Some(false)
        );
        tmux.run(SetOption::new(OptionScope::Pane, "@tag", "pane tag").target(other.pane))
            .await
            .unwrap();
        assert_eq!(display(&tmux, other.pane, "#{@tag}").await, "pane tag");
        tmux.run(SetOption::unset(OptionScope::Pane, "remain-on-exit").target(created.pane))
            .await
            .unwrap();
        assert_eq!(
            show(ShowOption::new(OptionScope::Pane, "remain-on-exit").target(created.pane)).await,
            None
        );

        // An array option by index.
        tmux.run(SetOption::new(OptionScope::Server, "user-keys[3]", "\\e[99~").global())
            .await
            .unwrap();
        assert_eq!(
            value(show(ShowOption::new(OptionScope::Server, "user-keys[3]")).await).as_deref(),
            Some("\\e[99~")
        );

        // Errors.
        command_error(
            tmux.run(ShowOption::new(OptionScope::Session, "no-such-option"))
                .await,
            "show-options",
        );
        command_error(
            tmux.run(SetOption::new(OptionScope::Session, "status", "sideways").global())
                .await,
            "set-option",
        );
        invalid(
            tmux.run(SetOption::new(OptionScope::Session, "#{x}", "1"))
                .await,
        );
        invalid(tmux.run(ShowOption::new(OptionScope::Session, "a b")).await);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn environment_set_show_unset_remove_and_new_processes_see_it() {
    let iso = IsolatedServer::new().unwrap();
    bounded(async {
        let (tmux, session) = connect(&iso).await;
        let value = "a b $HOME ;#x 'q' \"d\" \\ ✓ #{pane_id}";

        tmux.run(SetEnvironment::set("TC_G", value).global())
            .await
            .unwrap();
        assert_eq!(
            tmux.run(ShowEnvironment::new("TC_G").global()).await.unwrap(),
            Some(EnvValue::Set(value.into()))
        );
        assert_eq!(
            tmux.run(ShowEnvironment::new("TC_G").target(session))
                .await
                .unwrap(),
            None,
            "global only"
        );

        tmux.run(SetEnvironment::set("TC_S", "session value").target(session))
            .await
            .unwrap();
        tmux.run(SetEnvironment::set("TC_LINES", "a\nb\tc \u{1} \\").target(session))
            .await
            .unwrap();
        assert_eq!(
            tmux.run(ShowEnvironment::new("TC_LINES").target(session))
                .await
                .unwrap(),
            Some(EnvValue::Set("a\nb\tc \u{1} \\".into()))
        );
        tmux.run(SetEnvironment::set("TC_EMPTY", "").target(session))
            .await
            .unwrap();
        assert_eq!(
            tmux.run(ShowEnvironment::new("TC_S").target(session))
                .await
                .unwrap(),
            Some(EnvValue::Set("session value".into()))
        );
        assert_eq!(
            tmux.run(ShowEnvironment::new("TC_EMPTY").target(session))
                .await
                .unwrap(),
            Some(EnvValue::Set("".into()))
        );
        assert_eq!(
            tmux.run(ShowEnvironment::new("TC_S").global()).await.unwrap(),
            None
        );

        // Removal mark: hides the global value from the session's processes.
        tmux.run(SetEnvironment::set("TC_HIDDEN", "global").global())
            .await
            .unwrap();
        tmux.run(SetEnvironment::remove("TC_HIDDEN").target(session))
            .await
            .unwrap();
        assert_eq!(
            tmux.run(ShowEnvironment::new("TC_HIDDEN").target(session))
                .await
                .unwrap(),
            Some(EnvValue::Removed)
        );

        // New processes of the session see all of it.
        let out = iso.dir().join("env.out");
        tmux.run(NewWindow::new().target(session).command(format!(
            "printf '%s|%s|%s|%s' \"$TC_G\" \"$TC_S\" \"${{TC_HIDDEN-unset}}\" \"${{TC_EMPTY-unset}}\" > {}",
            sq(&out)
        )))
        .await
        .unwrap();
        let got = read_file(&out, 1).await;
        assert_eq!(
            String::from_utf8(got).unwrap(),
            format!("{value}|session value|unset|")
        );

        // Unset.
        tmux.run(SetEnvironment::unset("TC_S").target(session))
            .await
            .unwrap();
        assert_eq!(
            tmux.run(ShowEnvironment::new("TC_S").target(session))
                .await
                .unwrap(),
            None
        );
        tmux.run(SetEnvironment::unset("TC_G").global())
            .await
            .unwrap();
        assert_eq!(
            tmux.run(ShowEnvironment::new("TC_G").global()).await.unwrap(),
            None
        );
        command_error(
            tmux.run(ShowEnvironment::new("X").target("=no such session"))
                .await,
            "show-environment",
        );
        invalid(tmux.run(SetEnvironment::set("A=B", "1").global()).await);
        invalid(tmux.run(ShowEnvironment::new("").global()).await);
    })
    .await;
}

// ------------------------------------------------------ wait-for, display

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wait_for_signal_wakes_a_waiter_and_lock_unlock_do_not_block() {
    let iso = IsolatedServer::new().unwrap();
    bounded(async {
        let (tmux, _) = connect(&iso).await;
        let out = iso.dir().join("woke.out");
        let channel = "tc chan;#1 ✓";
        let created = tmux
            .run(NewWindow::new().command(format!(
                "tmux -S \"${{TMUX%%,*}}\" wait-for 'tc chan;#1 ✓' && printf woke > {}; exec sleep 600",
                sq(&out)
            )))
            .await
            .unwrap();
        // The pane's client is waiting (or will return at once: a signal
        // with no waiter is remembered).
        tmux.run(WaitFor::signal(channel)).await.unwrap();
        assert_eq!(read_file(&out, 4).await, b"woke");
        wait_command(&tmux, created.pane, "sleep").await;

        // Uncontended locks never block the connection.
        tmux.run(WaitFor::lock("tc-lock")).await.unwrap();
        tmux.run(WaitFor::unlock("tc-lock")).await.unwrap();
        tmux.run(WaitFor::lock("tc-lock")).await.unwrap();
        tmux.run(WaitFor::unlock("tc-lock")).await.unwrap();
        let r = tmux.run(DisplayMessage::literal("still here")).await.unwrap();
        assert_eq!(&r[..], b"still here");
        command_error(tmux.run(WaitFor::unlock("never-locked")).await, "wait-for");
    })
    .await;
}

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

// ----------------------------------------------------------- refresh-client

/// The next value of the subscription `tc-sub`.
async fn next_value(events: &mut tmux_control::Subscription, pane: PaneId) -> String {
    loop {
        let e = tokio::time::timeout(POLL, events.recv())
            .await
            .unwrap()
            .unwrap();
        if let Event::Notification(Notification::SubscriptionChanged {
            name,
            pane: p,
            value,
            ..
        }) = e
            && &name[..] == b"tc-sub"
        {
            assert_eq!(p, Some(pane));
            return String::from_utf8(value.to_vec()).unwrap();
        }
    }
}

async fn client_flags(tmux: &Tmux) -> String {
    let out = tmux
        .run(Raw::new("list-clients").args(["-F", "#{client_flags}"]))
        .await
        .unwrap();
    assert_eq!(out.len(), 1, "{out:?}");
    String::from_utf8(out[0].to_vec()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refresh_client_sizes_flags_pane_output_and_subscriptions() {
    let iso = IsolatedServer::new().unwrap();
    bounded(async {
        let (tmux, session) = connect(&iso).await;
        let first = tmux.run(ListWindows::in_session(session)).await.unwrap()[0].id;
        let second = tmux
            .run(NewWindow::new().command("exec sleep 600"))
            .await
            .unwrap()
            .window;

        // -C: the client's size sizes the attached session's windows.
        tmux.run(RefreshClient::size(120, 40)).await.unwrap();
        let w = window_row(&tmux, first).await.unwrap();
        assert_eq!((w.width, w.height), (120, 40), "{w:?}");
        let width = tmux
            .run(DisplayMessage::format("#{client_width}"))
            .await
            .unwrap();
        assert_eq!(&width[..], b"120");
        // A size for one window only, then cleared.
        tmux.run(RefreshClient::window_size(second, 80, 24))
            .await
            .unwrap();
        let w2 = window_row(&tmux, second).await.unwrap();
        assert_eq!((w2.width, w2.height), (80, 24), "{w2:?}");
        assert_eq!(
            window_row(&tmux, first).await.unwrap().width,
            120,
            "other windows keep the client size"
        );
        tmux.run(RefreshClient::clear_window_size(second))
            .await
            .unwrap();
        let w2 = window_row(&tmux, second).await.unwrap();
        assert_eq!((w2.width, w2.height), (120, 40), "{w2:?}");

        // -f: flags on and off.
        let flags = client_flags(&tmux).await;
        assert!(flags.contains("pause-after=10"), "{flags}");
        tmux.run(RefreshClient::flags(
            [
                ClientFlag::NoOutput,
                ClientFlag::PauseAfter(7),
                ClientFlag::IgnoreSize,
            ],
            [],
        ))
        .await
        .unwrap();
        let flags = client_flags(&tmux).await;
        assert!(
            flags.contains("no-output")
                && flags.contains("pause-after=7")
                && flags.contains("ignore-size"),
            "{flags}"
        );
        tmux.run(RefreshClient::flags(
            [],
            [ClientFlag::NoOutput, ClientFlag::IgnoreSize],
        ))
        .await
        .unwrap();
        let flags = client_flags(&tmux).await;
        assert!(
            !flags.contains("no-output") && !flags.contains("ignore-size"),
            "{flags}"
        );
        assert!(flags.contains("pause-after=7"), "{flags}");
        tmux.run(RefreshClient::flags([ClientFlag::PauseAfter(10)], []))
            .await
            .unwrap();
        invalid(tmux.run(RefreshClient::flags([], [])).await);

        // -A: a pane's output off, then on again.
        let echo = tmux
            .run(NewWindow::new().command("stty -echo; exec cat"))
            .await
            .unwrap()
            .pane;
        wait_command(&tmux, echo, "cat").await;
        let out = tmux.follow(echo).await.unwrap();
        let start = out.end_offset();
        tmux.run(RefreshClient::pane_output(echo, PaneOutput::Off))
            .await
            .unwrap();
        tmux.run(SendKeys::literal(echo, "HIDDEN")).await.unwrap();
        tmux.run(SendKeys::keys(echo, [Key::ENTER])).await.unwrap();
        // tmux 3.3a goes on reading the pane and drops its output for this
        // client; since 3.4, output off from the only client stops tmux
        // reading the pane until it is on again, so nothing is lost.
        let holds_output = tmux.version().at_least(3, 4);
        if !holds_output {
            // tmux has read the pane's output once it is on the screen.
            eventually("HIDDEN on the screen", || async {
                let lines = tmux.run(CapturePane::new(echo)).await.unwrap();
                lines.iter().any(|l| &l[..] == b"HIDDEN").then_some(())
            })
            .await;
        }
        let wait = out.expect(Pattern::literal("SHOWN").unwrap());
        tmux.run(RefreshClient::pane_output(echo, PaneOutput::On))
            .await
            .unwrap();
        tmux.run(SendKeys::literal(echo, "SHOWN")).await.unwrap();
        tmux.run(SendKeys::keys(echo, [Key::ENTER])).await.unwrap();
        let m = wait.wait(Duration::from_secs(10)).await.unwrap();
        let (_, seen) = out.read_from(start, 1 << 20);
        let seen = String::from_utf8_lossy(&seen);
        if holds_output {
            let hidden = seen.find("HIDDEN");
            assert!(
                hidden.is_some_and(|h| seen.find("SHOWN").is_some_and(|s| h < s)),
                "tmux {} holds the output until it is on again: {seen:?} {m:?}",
                tmux.version()
            );
        } else {
            assert!(
                !seen.contains("HIDDEN"),
                "output sent while off: {seen:?} {m:?}"
            );
        }
        // pause: tmux says %pause; the connection resumes the pane itself.
        let mut events = tmux.subscribe();
        tmux.run(RefreshClient::pane_outputs([(echo, PaneOutput::Pause)]))
            .await
            .unwrap();
        let mut paused = false;
        let mut resumed = false;
        while !(paused && resumed) {
            match tokio::time::timeout(POLL, events.recv())
                .await
                .unwrap()
                .unwrap()
            {
                Event::Notification(Notification::Pause { pane }) if pane == echo => {
                    paused = true;
                }
                Event::Notification(Notification::Continue { pane }) if pane == echo => {
                    resumed = true;
                }
                _ => {}
            }
        }
        let wait = out.expect(Pattern::literal("AFTER").unwrap());
        tmux.run(SendKeys::literal(echo, "AFTER")).await.unwrap();
        tmux.run(SendKeys::keys(echo, [Key::ENTER])).await.unwrap();
        wait.wait(Duration::from_secs(10)).await.unwrap();
        invalid(tmux.run(RefreshClient::pane_outputs([])).await);

        // -B: a subscription reports a format's value as it changes.
        tmux.run(
            RefreshClient::subscribe("tc-sub", Subscription::Pane(echo), "#{pane_id}=#{@tc_val}")
                .unwrap(),
        )
        .await
        .unwrap();
        assert_eq!(next_value(&mut events, echo).await, format!("{echo}="));
        tmux.run(SetOption::new(OptionScope::Pane, "@tc_val", "v 1").target(echo))
            .await
            .unwrap();
        assert_eq!(next_value(&mut events, echo).await, format!("{echo}=v 1"));
        tmux.run(RefreshClient::unsubscribe("tc-sub").unwrap())
            .await
            .unwrap();
        invalid(RefreshClient::subscribe("a:b", Subscription::Session, "x").map(drop));
    })
    .await;
}

// --------------------------------------------------------------------- raw

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn raw_runs_allowed_commands_and_refuses_others_without_touching_the_connection() {
    let iso = IsolatedServer::new().unwrap();
    bounded(async {
        let (tmux, session) = connect(&iso).await;
        let out = tmux
            .run(Raw::new("list-clients").args(["-F", "#{client_control_mode} #{session_id}"]))
            .await
            .unwrap();
        assert_eq!(text(&out), [format!("1 {session}")]);
        let out = tmux
            .run(Raw::new("display").args(["-p", "--", "a;b 'c' #{session_name}"]))
            .await
            .unwrap();
        assert_eq!(text(&out), ["a;b 'c' tmux-control"]);
        // A detached new-session is allowed.
        let out = tmux
            .run(Raw::new("new-session").args(["-d", "-P", "-F", "#{session_name}", "-s", "raw s"]))
            .await
            .unwrap();
        assert_eq!(text(&out), ["raw s"]);
        assert!(tmux.run(HasSession::new("=raw s")).await.unwrap());
        tmux.run(Raw::new("wait-for").args(["-S", "raw-chan"]))
            .await
            .unwrap();
        let message = command_error(tmux.run(Raw::new("bogus-command")).await, "raw");
        assert!(message.contains("unknown command"), "{message}");
        command_error(
            tmux.run(Raw::new("kill-window").args(["-t", "@999"])).await,
            "kill-window",
        );

        let refused = [
            Raw::new("if-shell").args(["true", "kill-server"]),
            Raw::new("if").args(["-F", "1", "kill-server"]),
            Raw::new("source-file").arg("/dev/null"),
            Raw::new("source").arg("/dev/null"),
            Raw::new("run-shell").arg("true"),
            Raw::new("run").arg("true"),
            Raw::new("wait-for").arg("never-signalled"),
            Raw::new("wait").args(["--", "-S"]),
            Raw::new("new-session").args(["-s", "attached"]),
            Raw::new("new").args(["-d", "-A", "-s", "x"]),
            Raw::new("attach-session").args(["-t", "raw s"]),
            Raw::new("switch-client").args(["-t", "raw s"]),
            Raw::new("confirm-before").arg("kill-server"),
            Raw::new("command-prompt"),
            Raw::new("display-menu").args(["x", "x", "kill-server"]),
            Raw::new("display-popup"),
            Raw::new("display-panes"),
            Raw::new("Has-session"),
            Raw::new(""),
            Raw::new("display").arg("nul\0byte"),
        ];
        for cmd in refused {
            let shown = format!("{cmd:?}");
            // Each refusal sits between two real commands sent at the same
            // time; both must get their own answers, in order.
            let before = tmux.run(DisplayMessage::literal(format!("before {shown}")));
            let bad = tmux.run(cmd);
            let after = tmux.run(DisplayMessage::literal(format!("after {shown}")));
            let (before, bad, after) = tokio::join!(before, bad, after);
            invalid(bad);
            assert_eq!(
                String::from_utf8_lossy(&before.unwrap()),
                format!("before {shown}")
            );
            assert_eq!(
                String::from_utf8_lossy(&after.unwrap()),
                format!("after {shown}")
            );
        }
        // Nothing reached tmux: the connection is still in this session,
        // the server and the other session are alive, nothing was sent out
        // of turn (command numbers are consecutive around a refusal).
        assert_eq!(tmux.attached_session(), Some(session));
        assert!(tmux.run(HasSession::new("=raw s")).await.unwrap());
        let r1 = tmux.raw_line("display-message -p one").await.unwrap();
        invalid(tmux.run(Raw::new("run-shell").arg("true")).await);
        let r2 = tmux.raw_line("display-message -p two").await.unwrap();
        assert_eq!(r2.number, r1.number + 1, "{r1:?} {r2:?}");
        assert_eq!(text(&r2.body), ["two"]);
        assert!(!tmux.is_closed());
    })
    .await;
}
