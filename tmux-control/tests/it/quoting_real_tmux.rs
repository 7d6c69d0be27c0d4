//! Argument quoting (and the format escaping and `-F` row parsing built on
//! it) against the real tmux on `PATH`, through the library's own
//! control-mode connection.
//!
//! Each test runs on its own `IsolatedServer` (a private `-S` socket in a
//! private directory; the server is killed and the directory removed when
//! the test ends, pass or fail). A missing tmux fails the tests.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::future::Future;
use std::time::{Duration, Instant};

use tmux_control::command::{
    CommandLine, DisplayMessage, Key, ListPanes, ListSessions, ListWindows, NewWindow, Raw,
    RenameSession, SelectPane, SendKeys, SetBuffer, ShowBuffer,
};
use tmux_control::{ConnectOptions, Error, IsolatedServer, SessionId, Tmux};

/// Every test is bounded: a hang fails instead of blocking CI.
const LIMIT: Duration = Duration::from_secs(60);

async fn bounded<T>(f: impl Future<Output = T>) -> T {
    tokio::time::timeout(LIMIT, f)
        .await
        .expect("test timed out")
}

/// A connection to a fresh isolated server, attached to a session `q` whose
/// first window is 80x24.
async fn connect(iso: &IsolatedServer) -> Tmux {
    Tmux::connect_with(
        iso.server(),
        ConnectOptions::default().session("q").size(80, 24),
    )
    .await
    .unwrap()
}

/// The hard cases of the brief, plus every single byte and some mixes.
fn hard_cases() -> Vec<Vec<u8>> {
    let mut cases: Vec<Vec<u8>> = [
        &b";"[..],
        b"a;",
        b"a ;",
        b";b",
        b"a \\;",
        b"#",
        b"a #b",
        b"#{pane_id}",
        b"$HOME",
        b"${X}",
        b"$",
        b"~",
        b"~root",
        b"~/x",
        b"{",
        b"}",
        b"{ }",
        b"'",
        b"\"",
        b"''",
        b"a'b\"c",
        b"\\",
        b"\\\\",
        b"\\n",
        b"\\033",
        b"",
        b" ",
        b" lead and trail ",
        b"-x",
        b"--",
        b"-",
        b"A=b",
        b"%if",
        b"%3",
        b"%3:on",
        b"x\ny",
        b"\n",
        b"a\n\nb\n",
        b"\r\n",
        b"\t",
        "é ✓ 😀".as_bytes(),
        b"caf\xc3\xa9 \xff\xfe",
        b"\xe2\x82",
    ]
    .iter()
    .map(|c| c.to_vec())
    .collect();
    for b in 1..=255u8 {
        cases.push(vec![b]);
        cases.push(vec![b'a', b, b'z']);
    }
    cases.push((1..=255u8).collect());
    cases.push(b"0123456789;#'\"\\\n\xff".repeat(6000));
    cases
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn set_buffer_round_trips_every_hard_case() {
    let iso = IsolatedServer::new().unwrap();
    bounded(async {
        let tmux = connect(&iso).await;
        let out = iso.dir().join("saved");
        let save = Raw::new("save-buffer")
            .args(["-b", "t", "--"])
            .arg(out.as_os_str().as_encoded_bytes());
        for case in hard_cases() {
            let shown = String::from_utf8_lossy(&case[..case.len().min(40)]).into_owned();
            if case.is_empty() {
                // tmux ignores `set-buffer ''`; the typed command refuses it.
                let err = tmux
                    .run(SetBuffer::new(&case).buffer("t"))
                    .await
                    .unwrap_err();
                assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
                continue;
            }
            tmux.run(SetBuffer::new(&case).buffer("t"))
                .await
                .unwrap_or_else(|e| panic!("set-buffer {shown:?}: {e}"));
            let _ = std::fs::remove_file(&out);
            tmux.run(save.clone())
                .await
                .unwrap_or_else(|e| panic!("save-buffer failed for {shown:?}: {e}"));
            let saved = std::fs::read(&out).unwrap();
            assert_eq!(saved, case, "save-buffer bytes differ for {shown:?}");
            let back = tmux.run(ShowBuffer::named("t")).await.unwrap();
            assert_eq!(
                &back[..],
                &case[..],
                "show-buffer bytes differ for {shown:?}"
            );
        }
    })
    .await;
}

#[test]
fn nul_cannot_be_sent() {
    let err = CommandLine::of(&SetBuffer::new(b"a\0b")).unwrap_err();
    assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leading_dash_needs_end_of_flags() {
    let iso = IsolatedServer::new().unwrap();
    bounded(async {
        let tmux = connect(&iso).await;
        // Without `--`, tmux takes a positional `-x` for flags.
        let reply = tmux.raw_line("set-buffer -b t '-x'").await.unwrap();
        assert!(reply.error, "{reply:?}");
        // The typed command writes `--`.
        tmux.run(SetBuffer::new("-x").buffer("t")).await.unwrap();
        assert_eq!(&tmux.run(ShowBuffer::named("t")).await.unwrap()[..], b"-x");
        // Flag values may start with `-`.
        tmux.run(SetBuffer::new("v").buffer("-b")).await.unwrap();
        assert_eq!(&tmux.run(ShowBuffer::named("-b")).await.unwrap()[..], b"v");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn raw_0xff_truncates_the_line_so_it_is_escaped() {
    let iso = IsolatedServer::new().unwrap();
    bounded(async {
        let tmux = connect(&iso).await;
        // What the quoting avoids: 0xff read as end of input by tmux 3.3a.
        let reply = tmux
            .raw_line(&b"set-buffer -b t 'a\xffz'"[..])
            .await
            .unwrap();
        let raw_ok =
            !reply.error && &tmux.run(ShowBuffer::named("t")).await.unwrap()[..] == b"a\xffz";
        let line = CommandLine::of(&SetBuffer::new(b"a\xffz").buffer("t")).unwrap();
        assert!(line.as_bytes().ends_with(br#"'a'"\377"'z'"#));
        tmux.run(SetBuffer::new(b"a\xffz").buffer("t"))
            .await
            .unwrap();
        assert_eq!(
            &tmux.run(ShowBuffer::named("t")).await.unwrap()[..],
            b"a\xffz"
        );
        eprintln!("raw 0xff accepted by this tmux: {raw_ok}");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn display_message_literal_round_trips() {
    let iso = IsolatedServer::new().unwrap();
    bounded(async {
        let tmux = connect(&iso).await;
        for text in [
            &b"#{pane_id} ## # %H %% % %Y-%m"[..],
            b"#[fg=red]x ##[ ###[ #",
            b"#(echo hi) #, #} #{ }{",
            b"it's \"quoted\" \\ ; ~ $HOME",
            "é ✓ 😀".as_bytes(),
            b"-x",
            b"line1\nline2",
        ] {
            let got = tmux.run(DisplayMessage::literal(text)).await.unwrap();
            assert_eq!(&got[..], text, "{:?}", String::from_utf8_lossy(text));
        }
        let got = tmux
            .run(DisplayMessage::format("#{session_name}"))
            .await
            .unwrap();
        assert_eq!(&got[..], b"q");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn names_and_titles_are_taken_literally() {
    let iso = IsolatedServer::new().unwrap();
    bounded(async {
        let tmux = connect(&iso).await;
        let name = "#{pane_id} ##[x] #[y] a;b $HOME ~ 'q' \"d\" back\\slash é 100%";
        let created = tmux
            .run(NewWindow::new().window_name(name).command("sleep 600"))
            .await
            .unwrap();
        let windows = tmux.run(ListWindows::all()).await.unwrap();
        let w = windows.iter().find(|w| w.id == created.window).unwrap();
        assert_eq!(w.name, name);

        let session_name = "s #{session_id} a\\b ~x";
        assert_eq!(tmux.attached_session(), Some(SessionId(0)));
        tmux.run(RenameSession::new(SessionId(0), session_name))
            .await
            .unwrap();
        let sessions = tmux.run(ListSessions::new()).await.unwrap();
        assert_eq!(sessions.len(), 1);
        assert_eq!(sessions[0].name, session_name);
        assert_eq!(sessions[0].id, SessionId(0));

        let title = "build #3: 50% ## #[bold] a b";
        tmux.run(SelectPane::new(created.pane).title(title))
            .await
            .unwrap();
        let panes = tmux
            .run(ListPanes::in_window(created.window))
            .await
            .unwrap();
        assert_eq!(panes.len(), 1);
        assert_eq!(panes[0].title, title);
        assert_eq!(panes[0].id, created.pane);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_rows_survive_hostile_paths() {
    let iso = IsolatedServer::new().unwrap();
    bounded(async {
        let tmux = connect(&iso).await;
        let hostile = iso.dir().join("a b:1\n%9 0 x 3:y #{z}");
        std::fs::create_dir_all(&hostile).unwrap();
        let dir_bytes = hostile.as_os_str().as_encoded_bytes().to_vec();
        let created = tmux
            .run(
                NewWindow::new()
                    .start_directory(&dir_bytes)
                    .command("exec sleep 600"),
            )
            .await
            .unwrap();
        // tmux reads the path from /proc once the program runs.
        let deadline = Instant::now() + Duration::from_secs(10);
        let panes = loop {
            let panes = tmux.run(ListPanes::all()).await.unwrap();
            let ready = panes
                .iter()
                .any(|p| p.id == created.pane && !p.current_path.as_os_str().is_empty());
            if ready || Instant::now() > deadline {
                break panes;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        };
        assert_eq!(panes.len(), 2, "{panes:#?}");
        let p = panes.iter().find(|p| p.id == created.pane).unwrap();
        assert_eq!(p.window, created.window);
        assert_eq!(p.current_path, hostile);
        assert!(!p.dead);
        assert!(p.pid.is_some());
        let sessions = tmux.run(ListSessions::new()).await.unwrap();
        assert_eq!(sessions[0].windows, 2);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn send_keys_literal_and_hex_arrive_exactly() {
    let iso = IsolatedServer::new().unwrap();
    bounded(async {
        let tmux = connect(&iso).await;
        let out = iso.dir().join("keys.bin");
        let mut cmd = b"stty raw -echo; exec cat > '".to_vec();
        cmd.extend_from_slice(out.as_os_str().as_encoded_bytes());
        cmd.push(b'\'');
        let created = tmux.run(NewWindow::new().command(&cmd)).await.unwrap();
        // Wait until `cat` runs, so that stty has switched the tty to raw mode.
        let deadline = Instant::now() + Duration::from_secs(10);
        while !out.exists() {
            assert!(Instant::now() < deadline, "cat did not start");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let mut expected: Vec<u8> = (0..=255u8).collect();
        tmux.run(SendKeys::hex(created.pane, &expected))
            .await
            .unwrap();
        let text = "héllo ✓;#$~{}'\"\\ -x %1 #{pane_id}";
        tmux.run(SendKeys::literal(created.pane, text))
            .await
            .unwrap();
        expected.extend_from_slice(text.as_bytes());
        tmux.run(SendKeys::keys(
            created.pane,
            [Key::ctrl('a').unwrap(), Key::ENTER, Key::char(';').unwrap()],
        ))
        .await
        .unwrap();
        expected.extend_from_slice(b"\x01\r;");
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let got = std::fs::read(&out).unwrap();
            if got.len() >= expected.len() || Instant::now() > deadline {
                assert_eq!(got, expected);
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
}
