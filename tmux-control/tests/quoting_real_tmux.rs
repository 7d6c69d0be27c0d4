//! Argument quoting (and the format escaping and `-F` row parsing built on
//! it) against the real tmux on `PATH`.
//!
//! A tiny self-contained control-mode driver (std::process, one reader
//! thread, the library's `proto::Decoder`) runs each test on its own tmux
//! server: a unique `-L` socket name inside a private `TMUX_TMPDIR`, `-f
//! /dev/null`, `-u`. A guard kills the server and removes the directory when
//! the test ends, pass or fail. A missing tmux fails the tests.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use tmux_control::command::{
    Command as TmuxCommand, CommandLine, DisplayMessage, Key, ListPanes, ListSessions, ListWindows,
    NewWindow, RenameSession, SelectPane, SendKeys, SetBuffer, ShowBuffer,
};
use tmux_control::proto::{DecodeError, Decoder, Frame, Reply};
use tmux_control::{Error, SessionId};

const REPLY_TIMEOUT: Duration = Duration::from_secs(20);

static NEXT: AtomicUsize = AtomicUsize::new(0);

/// One control client on a private tmux server.
struct Ctl {
    child: Child,
    stdin: Option<ChildStdin>,
    rx: Receiver<Option<Vec<u8>>>,
    decoder: Decoder,
    socket: String,
    dir: PathBuf,
}

impl Ctl {
    fn start() -> Ctl {
        let n = NEXT.fetch_add(1, Ordering::SeqCst);
        let pid = std::process::id();
        let dir = std::env::temp_dir().join(format!("tmux-control-quoting-{pid}-{n}"));
        std::fs::create_dir_all(&dir).unwrap();
        let socket = format!("tc-quoting-{pid}-{n}");
        let stderr = std::fs::File::create(dir.join("stderr")).unwrap();
        let mut child = std::process::Command::new("tmux")
            .args(["-L", &socket, "-f", "/dev/null", "-u", "-C"])
            .args(["new-session", "-s", "q", "-x", "80", "-y", "24"])
            .env("TMUX_TMPDIR", &dir)
            .env("SHELL", "/bin/sh")
            .env_remove("TMUX")
            .current_dir(&dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run tmux (is it installed?): {e}"));
        let mut stdout = child.stdout.take().unwrap();
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            let mut buf = vec![0u8; 65536];
            loop {
                match stdout.read(&mut buf) {
                    Ok(0) | Err(_) => {
                        let _ = tx.send(None);
                        return;
                    }
                    Ok(n) => {
                        if tx.send(Some(buf[..n].to_vec())).is_err() {
                            return;
                        }
                    }
                }
            }
        });
        let stdin = child.stdin.take();
        let mut ctl = Ctl {
            child,
            stdin,
            rx,
            decoder: Decoder::new(),
            socket,
            dir,
        };
        // The initial `new-session` block (flags 0).
        ctl.next_reply(0);
        ctl
    }

    fn dir(&self) -> &Path {
        &self.dir
    }

    fn next_reply(&mut self, flags: u32) -> Reply {
        let deadline = Instant::now() + REPLY_TIMEOUT;
        loop {
            match self.decoder.decode() {
                Ok(Frame::Reply(r)) if r.flags == flags => return r,
                Ok(_) => continue,
                Err(DecodeError::Incomplete) => {}
                Err(DecodeError::Failed(e)) => panic!("bad frame from tmux: {e}"),
            }
            let left = deadline.saturating_duration_since(Instant::now());
            match self.rx.recv_timeout(left) {
                Ok(Some(chunk)) => self.decoder.push(&chunk),
                Ok(None) => panic!(
                    "tmux closed the connection; stderr: {}",
                    std::fs::read_to_string(self.dir.join("stderr")).unwrap_or_default()
                ),
                Err(_) => panic!("no reply from tmux within {REPLY_TIMEOUT:?}"),
            }
        }
    }

    /// Sends one line and returns its reply block.
    fn line(&mut self, line: &[u8]) -> Reply {
        assert!(
            !line.iter().any(|&b| b == b'\n' || b == b'\r' || b == 0),
            "line carries LF, CR or NUL: {line:?}"
        );
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(line).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
        self.next_reply(1)
    }

    fn run<C: TmuxCommand>(&mut self, cmd: C) -> tmux_control::Result<C::Output> {
        let line = CommandLine::of(&cmd)?;
        let reply = self.line(line.as_bytes());
        cmd.parse(reply)
    }
}

impl Drop for Ctl {
    fn drop(&mut self) {
        // EOF first: the control client detaches and exits.
        drop(self.stdin.take());
        let _ = std::process::Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .env("TMUX_TMPDIR", &self.dir)
            .env_remove("TMUX")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
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

#[test]
fn set_buffer_round_trips_every_hard_case() {
    let mut tmux = Ctl::start();
    let out = tmux.dir().join("saved");
    let mut save = CommandLine::new();
    save.word("save-buffer")
        .unwrap()
        .word("-b")
        .unwrap()
        .arg("t")
        .unwrap()
        .end_of_flags()
        .arg(out.as_os_str().as_encoded_bytes())
        .unwrap();
    for case in hard_cases() {
        let shown = String::from_utf8_lossy(&case[..case.len().min(40)]).into_owned();
        if case.is_empty() {
            // tmux ignores `set-buffer ''`; the typed command refuses it.
            let err = tmux.run(SetBuffer::new(&case).buffer("t")).unwrap_err();
            assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
            continue;
        }
        tmux.run(SetBuffer::new(&case).buffer("t"))
            .unwrap_or_else(|e| panic!("set-buffer {shown:?}: {e}"));
        let _ = std::fs::remove_file(&out);
        let reply = tmux.line(save.as_bytes());
        assert!(!reply.error, "save-buffer failed for {shown:?}: {reply:?}");
        let saved = std::fs::read(&out).unwrap();
        assert_eq!(saved, case, "save-buffer bytes differ for {shown:?}");
        let back = tmux.run(ShowBuffer::named("t")).unwrap();
        assert_eq!(
            &back[..],
            &case[..],
            "show-buffer bytes differ for {shown:?}"
        );
    }
}

#[test]
fn nul_cannot_be_sent() {
    let err = CommandLine::of(&SetBuffer::new(b"a\0b")).unwrap_err();
    assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
}

#[test]
fn leading_dash_needs_end_of_flags() {
    let mut tmux = Ctl::start();
    // Without `--`, tmux takes a positional `-x` for flags.
    let reply = tmux.line(b"set-buffer -b t '-x'");
    assert!(reply.error, "{reply:?}");
    // The typed command writes `--`.
    tmux.run(SetBuffer::new("-x").buffer("t")).unwrap();
    assert_eq!(&tmux.run(ShowBuffer::named("t")).unwrap()[..], b"-x");
    // Flag values may start with `-`.
    tmux.run(SetBuffer::new("v").buffer("-b")).unwrap();
    assert_eq!(&tmux.run(ShowBuffer::named("-b")).unwrap()[..], b"v");
}

#[test]
fn raw_0xff_truncates_the_line_so_it_is_escaped() {
    let mut tmux = Ctl::start();
    // What the quoting avoids: 0xff read as end of input by tmux 3.3a.
    let reply = tmux.line(b"set-buffer -b t 'a\xffz'");
    let raw_ok = !reply.error && &tmux.run(ShowBuffer::named("t")).unwrap()[..] == b"a\xffz";
    let line = CommandLine::of(&SetBuffer::new(b"a\xffz").buffer("t")).unwrap();
    assert!(line.as_bytes().ends_with(br#"'a'"\377"'z'"#));
    tmux.run(SetBuffer::new(b"a\xffz").buffer("t")).unwrap();
    assert_eq!(&tmux.run(ShowBuffer::named("t")).unwrap()[..], b"a\xffz");
    eprintln!("raw 0xff accepted by this tmux: {raw_ok}");
}

#[test]
fn display_message_literal_round_trips() {
    let mut tmux = Ctl::start();
    for text in [
        &b"#{pane_id} ## # %H %% % %Y-%m"[..],
        b"#[fg=red]x ##[ ###[ #",
        b"#(echo hi) #, #} #{ }{",
        b"it's \"quoted\" \\ ; ~ $HOME",
        "é ✓ 😀".as_bytes(),
        b"-x",
        b"line1\nline2",
    ] {
        let got = tmux.run(DisplayMessage::literal(text)).unwrap();
        assert_eq!(&got[..], text, "{:?}", String::from_utf8_lossy(text));
    }
    let got = tmux.run(DisplayMessage::format("#{session_name}")).unwrap();
    assert_eq!(&got[..], b"q");
}

#[test]
fn names_and_titles_are_taken_literally() {
    let mut tmux = Ctl::start();
    let name = "#{pane_id} ##[x] #[y] a;b $HOME ~ 'q' \"d\" back\\slash é 100%";
    let created = tmux
        .run(NewWindow::new().window_name(name).command("sleep 600"))
        .unwrap();
    let windows = tmux.run(ListWindows::all()).unwrap();
    let w = windows.iter().find(|w| w.id == created.window).unwrap();
    assert_eq!(w.name, name);

    let session_name = "s #{session_id} a\\b ~x";
    tmux.run(RenameSession::new(SessionId(0), session_name))
        .unwrap();
    let sessions = tmux.run(ListSessions::new()).unwrap();
    assert_eq!(sessions.len(), 1);
    assert_eq!(sessions[0].name, session_name);
    assert_eq!(sessions[0].id, SessionId(0));

    let title = "build #3: 50% ## #[bold] a b";
    tmux.run(SelectPane::new(created.pane).title(title))
        .unwrap();
    let panes = tmux.run(ListPanes::in_window(created.window)).unwrap();
    assert_eq!(panes.len(), 1);
    assert_eq!(panes[0].title, title);
    assert_eq!(panes[0].id, created.pane);
}

#[test]
fn list_rows_survive_hostile_paths() {
    let mut tmux = Ctl::start();
    let hostile = tmux.dir().join("a b:1\n%9 0 x 3:y #{z}");
    std::fs::create_dir_all(&hostile).unwrap();
    let dir_bytes = hostile.as_os_str().as_encoded_bytes().to_vec();
    let created = tmux
        .run(
            NewWindow::new()
                .start_directory(&dir_bytes)
                .command("exec sleep 600"),
        )
        .unwrap();
    let panes = tmux.run(ListPanes::all()).unwrap();
    assert_eq!(panes.len(), 2, "{panes:#?}");
    let p = panes.iter().find(|p| p.id == created.pane).unwrap();
    assert_eq!(p.window, created.window);
    assert_eq!(p.current_path, hostile);
    assert!(!p.dead);
    assert!(p.pid.is_some());
    let sessions = tmux.run(ListSessions::new()).unwrap();
    assert_eq!(sessions[0].windows, 2);
}

#[test]
fn send_keys_literal_and_hex_arrive_exactly() {
    let mut tmux = Ctl::start();
    let out = tmux.dir().join("keys.bin");
    let mut cmd = b"stty raw -echo; exec cat > '".to_vec();
    cmd.extend_from_slice(out.as_os_str().as_encoded_bytes());
    cmd.push(b'\'');
    let created = tmux.run(NewWindow::new().command(&cmd)).unwrap();
    // Wait until `cat` runs, so that stty has switched the tty to raw mode.
    let deadline = Instant::now() + Duration::from_secs(10);
    while !out.exists() {
        assert!(Instant::now() < deadline, "cat did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut expected: Vec<u8> = (0..=255u8).collect();
    tmux.run(SendKeys::hex(created.pane, &expected)).unwrap();
    let text = "héllo ✓;#$~{}'\"\\ -x %1 #{pane_id}";
    tmux.run(SendKeys::literal(created.pane, text)).unwrap();
    expected.extend_from_slice(text.as_bytes());
    tmux.run(SendKeys::keys(
        created.pane,
        [Key::ctrl('a').unwrap(), Key::ENTER, Key::char(';').unwrap()],
    ))
    .unwrap();
    expected.extend_from_slice(b"\x01\r;");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let got = std::fs::read(&out).unwrap();
        if got.len() >= expected.len() || Instant::now() > deadline {
            assert_eq!(got, expected);
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
