//! Property tests of argument quoting and format escaping against the real
//! tmux, through the library's control-mode connection.
//!
//! Each property runs all of its cases (256 unless `PROPTEST_CASES` asks
//! for more) on ONE isolated server through ONE connection: a [`Fixture`]
//! holding a tokio runtime, the `IsolatedServer` and the `Tmux`, owned by
//! the test function and handed to proptest's `TestRunner` by reference.
//! (A `static OnceLock` would share it too, but statics are never dropped,
//! so the server would outlive the test process and its private directory
//! would stay behind; nextest runs every test in a process of its own
//! anyway.) The fixture is dropped when the test ends, pass or fail: the
//! connection first, then the runtime, then the server, which is killed
//! and its directory removed.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::fmt::Debug;
use std::future::Future;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use tmux_control::command::{
    Command, DeleteBuffer, DisplayMessage, KillWindow, ListSessions, ListWindows, NewWindow,
    RenameSession, RenameWindow, SendKeys, SetBuffer, ShowBuffer,
};
use tmux_control::{Error, IsolatedServer, PaneId, Tmux};

/// The longest any single tmux round trip or wait may take.
const LIMIT: Duration = Duration::from_secs(20);

/// One isolated server and one connection, shared by every case of a
/// property. Fields drop in order: connection, runtime, server.
struct Fixture {
    tmux: Tmux,
    rt: tokio::runtime::Runtime,
    iso: IsolatedServer,
}

impl Fixture {
    fn new() -> Fixture {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let iso = IsolatedServer::new().unwrap();
        let tmux = rt.block_on(Tmux::connect(iso.server())).unwrap();
        Fixture { tmux, rt, iso }
    }

    fn block_on<T>(&self, f: impl Future<Output = T>) -> T {
        self.rt
            .block_on(async { tokio::time::timeout(LIMIT, f).await })
            .expect("tmux did not answer in time")
    }

    fn run<C: Command>(&self, cmd: C) -> tmux_control::Result<C::Output> {
        self.block_on(self.tmux.run(cmd))
    }
}

/// Runs `test` for 256 (or `PROPTEST_CASES`) values of `strategy`, panicking
/// with the shrunk counterexample on failure.
fn check<S>(strategy: S, test: impl Fn(S::Value) -> Result<(), TestCaseError>)
where
    S: Strategy,
    S::Value: Debug,
{
    let mut config = Config::default();
    config.cases = config.cases.max(256);
    // The shrunk input is in the panic message; no regression files are
    // written into the source tree.
    config.failure_persistence = None;
    // Shrinking replays cases against tmux: keep it bounded.
    config.max_shrink_iters = 2048;
    config.max_shrink_time = 30_000;
    let mut runner = TestRunner::new(config);
    if let Err(e) = runner.run(&strategy, test) {
        panic!("{e}");
    }
}

/// Pieces that mean something to tmux's command parser, its format
/// expansion, `strftime`, a shell or a terminal, and text that is wide,
/// combining or outside the BMP.
const SPECIAL: &[&str] = &[
    ";",
    ";;",
    " ;",
    "\\;",
    "#",
    "##",
    "###",
    "#{",
    "#{pane_id}",
    "#{l:x}",
    "#{?1,a,b}",
    "#[",
    "##[",
    "#[fg=red]",
    "#(echo x)",
    "#S",
    "#,",
    "#}",
    "$",
    "$HOME",
    "${HOME}",
    "$1",
    "\\$HOME",
    "~",
    "~root",
    "~/",
    "{",
    "}",
    "{ }",
    "'",
    "''",
    "\"",
    "\\",
    "\\\\",
    "\\n",
    "\\033",
    "\\'",
    "%",
    "%%",
    "%if",
    "%1",
    "%Y",
    "%-",
    "-",
    "--",
    "-t",
    "=",
    ":",
    ".",
    ",",
    " ",
    "  ",
    "é",
    "✓",
    "日本語",
    "😀",
    "👍🏽",
    "👨\u{200d}👩\u{200d}👧",
    "\u{200d}",
    "\u{fe0f}",
    "e\u{301}",
    "\u{ff57}",
    "\u{e000}",
    "\u{10ffff}",
];

/// Control characters, for the paths that take any byte.
const CONTROL: &[&str] = &[
    "\t", "\n", "\r", "\r\n", "\x1b", "\x1b[31m", "\x01", "\x07", "\x7f", "\u{85}", "\u{9b}",
];

/// Text built from [`SPECIAL`] pieces, plain words and arbitrary characters
/// (without control characters when `printable`), sometimes empty, with a
/// leading `-` and a trailing `;` more often than chance would give.
fn text(printable: bool) -> BoxedStrategy<String> {
    let any_char = any::<char>().prop_filter("no NUL or control", move |&c| {
        c != '\0' && !(printable && c.is_control())
    });
    let piece = if printable {
        prop_oneof![
            4 => prop::sample::select(SPECIAL).prop_map(String::from),
            2 => "[a-zA-Z0-9]{1,6}",
            2 => any_char.prop_map(String::from),
        ]
        .boxed()
    } else {
        prop_oneof![
            4 => prop::sample::select(SPECIAL).prop_map(String::from),
            2 => "[a-zA-Z0-9]{1,6}",
            2 => any_char.prop_map(String::from),
            1 => prop::sample::select(CONTROL).prop_map(String::from),
        ]
        .boxed()
    };
    let body = (
        prop::bool::weighted(0.2),
        vec(piece, 0..10),
        prop::bool::weighted(0.2),
    )
        .prop_map(|(dash, pieces, semicolon)| {
            let mut s = String::new();
            if dash {
                s.push('-');
            }
            s.extend(pieces);
            if semicolon {
                s.push(';');
            }
            s
        });
    prop_oneof![1 => Just(String::new()), 12 => body].boxed()
}

/// Byte strings without NUL: weighted text, arbitrary bytes, and text with
/// bytes that are not UTF-8 spliced in.
fn data() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        3 => text(false).prop_map(String::into_bytes),
        2 => vec(1u8..=255, 0..64),
        2 => (text(false), vec(0x80u8..=0xff, 1..4), text(false)).prop_map(|(a, bad, b)| {
            let mut v = a.into_bytes();
            v.extend(bad);
            v.extend(b.into_bytes());
            v
        }),
    ]
}

/// A buffer name: weighted text without control characters, never empty.
fn buffer_name() -> impl Strategy<Value = String> {
    text(true).prop_map(|n| if n.is_empty() { "b".to_owned() } else { n })
}

fn shown(bytes: &[u8]) -> String {
    format!("{:?}", String::from_utf8_lossy(bytes))
}

#[test]
fn any_bytes_round_trip_through_set_buffer_and_show_buffer() {
    let fx = Fixture::new();
    check((data(), buffer_name()), |(data, name)| {
        let set = fx.run(SetBuffer::new(&data).buffer(&name));
        if data.is_empty() {
            // tmux ignores empty data; the typed command refuses it.
            prop_assert!(matches!(set, Err(Error::InvalidArgument(_))), "{set:?}");
            return Ok(());
        }
        set.map_err(|e| TestCaseError::fail(format!("set-buffer {}: {e}", shown(&data))))?;
        let back = fx
            .run(ShowBuffer::named(&name))
            .map_err(|e| TestCaseError::fail(format!("show-buffer: {e}")))?;
        prop_assert_eq!(shown(&back), shown(&data));
        prop_assert_eq!(&back[..], &data[..]);
        fx.run(DeleteBuffer::new(&name))
            .map_err(|e| TestCaseError::fail(format!("delete-buffer: {e}")))?;
        Ok(())
    });
}

#[test]
fn any_text_round_trips_through_set_buffer_and_show_buffer() {
    let fx = Fixture::new();
    check(text(false), |text| {
        let set = fx.run(SetBuffer::new(&text).buffer("t"));
        if text.is_empty() {
            prop_assert!(matches!(set, Err(Error::InvalidArgument(_))), "{set:?}");
            return Ok(());
        }
        set.map_err(|e| TestCaseError::fail(format!("set-buffer: {e}")))?;
        let back = fx
            .run(ShowBuffer::named("t"))
            .map_err(|e| TestCaseError::fail(format!("show-buffer: {e}")))?;
        prop_assert_eq!(String::from_utf8_lossy(&back), text.as_str());
        prop_assert_eq!(&back[..], text.as_bytes());
        Ok(())
    });
}

#[test]
fn printable_text_round_trips_through_display_message_literal() {
    let fx = Fixture::new();
    check(text(true), |text| {
        let back = fx
            .run(DisplayMessage::literal(&text))
            .map_err(|e| TestCaseError::fail(format!("display-message: {e}")))?;
        prop_assert_eq!(String::from_utf8_lossy(&back), text.as_str());
        prop_assert_eq!(&back[..], text.as_bytes());
        Ok(())
    });
}

/// Window names (escaped for format expansion, and for `-n` also in tmux's
/// vis form) and session names (tmux turns `:` and `.` into `_`) come back
/// exactly through `list-windows` / `list-sessions`, control characters
/// included.
#[test]
fn any_text_round_trips_as_window_and_session_names() {
    let fx = Fixture::new();
    let renamed = fx
        .run(NewWindow::new().command("exec sleep 600"))
        .unwrap()
        .window;
    let session = fx.tmux.attached_session().unwrap();
    let fail = |what: &str, e: Error| TestCaseError::fail(format!("{what}: {e}"));
    // tmux 3.7 refuses names with control characters and keeps `:` and `.`
    // in session names; before, it stored control characters escaped (they
    // come back raw) and turned `:` and `.` into `_`.
    let v3_7 = fx.tmux.version().at_least(3, 7);
    let refused = |r: Result<(), Error>, what: &str| match r {
        Err(Error::Command { message, .. }) if message.contains("invalid") => Ok(()),
        other => Err(TestCaseError::fail(format!(
            "{what} should be refused: {other:?}"
        ))),
    };
    check((text(false), text(false)), |(name, session_name)| {
        let has_control = |s: &str| s.chars().any(|c| c < ' ' || c == '\u{7f}');
        if v3_7 && has_control(&name) {
            refused(fx.run(RenameWindow::new(renamed, &name)), "rename-window")?;
            let new = fx.run(
                NewWindow::new()
                    .window_name(&name)
                    .command("exec sleep 600"),
            );
            refused(new.map(drop), "new-window")?;
            return Ok(());
        }
        fx.run(RenameWindow::new(renamed, &name))
            .map_err(|e| fail("rename-window", e))?;
        let created = fx
            .run(
                NewWindow::new()
                    .window_name(&name)
                    .command("exec sleep 600"),
            )
            .map_err(|e| fail("new-window", e))?
            .window;
        let rows = fx
            .run(ListWindows::all())
            .map_err(|e| fail("list-windows", e))?;
        for id in [renamed, created] {
            let row = rows.iter().find(|r| r.id == id).unwrap();
            prop_assert_eq!(&row.name, &name, "window {}", id);
        }
        fx.run(KillWindow::new(created))
            .map_err(|e| fail("kill-window", e))?;
        if session_name.is_empty() {
            // tmux refuses empty session names.
            return Ok(());
        }
        if v3_7 && has_control(&session_name) {
            return refused(
                fx.run(RenameSession::new(session, &session_name)),
                "rename-session",
            );
        }
        fx.run(RenameSession::new(session, &session_name))
            .map_err(|e| fail("rename-session", e))?;
        let rows = fx
            .run(ListSessions::new())
            .map_err(|e| fail("list-sessions", e))?;
        let kept = if v3_7 {
            session_name.clone()
        } else {
            session_name.replace([':', '.'], "_")
        };
        prop_assert_eq!(&rows[0].name, &kept);
        Ok(())
    });
}

/// A pane whose terminal is in raw mode without echo, running
/// `cat >> FILE`: every byte tmux writes to the pane lands in the file
/// untranslated, in order. `>>` opens the file with `O_APPEND`, so the test
/// can truncate it between cases and `cat` keeps writing at the (new) end.
struct Sink {
    pane: PaneId,
    file: PathBuf,
}

impl Sink {
    fn new(fx: &Fixture) -> Sink {
        let file = fx.iso.dir().join("literal.bin");
        let path = file.to_str().unwrap().replace('\'', r"'\''");
        let pane = fx
            .run(NewWindow::new().command(format!("stty raw -echo; exec cat >> '{path}'")))
            .unwrap()
            .pane;
        // The shell creates the file after `stty` has returned.
        let deadline = Instant::now() + LIMIT;
        while !file.exists() {
            assert!(Instant::now() < deadline, "the sink did not start");
            std::thread::sleep(Duration::from_millis(5));
        }
        Sink { pane, file }
    }

    /// Waits for the terminator byte (BEL, which literal text cannot
    /// contain) and returns everything before it; anything after it, or a
    /// second BEL, is returned too so that the comparison fails.
    fn received(&self) -> Result<Vec<u8>, TestCaseError> {
        let deadline = Instant::now() + LIMIT;
        loop {
            let got = std::fs::read(&self.file).unwrap();
            if let Some(end) = got.iter().position(|&b| b == 0x07) {
                // Give stray bytes after the terminator a moment to show.
                std::thread::sleep(Duration::from_millis(2));
                let mut got = std::fs::read(&self.file).unwrap();
                if got.len() == end + 1 {
                    got.truncate(end);
                }
                return Ok(got);
            }
            if Instant::now() > deadline {
                return Err(TestCaseError::fail(format!(
                    "no terminator after {}",
                    shown(&got)
                )));
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }
}

#[test]
fn printable_text_arrives_exactly_through_send_keys_literal() {
    let fx = Fixture::new();
    let sink = Sink::new(&fx);
    check(text(true), |text| {
        std::fs::OpenOptions::new()
            .write(true)
            .open(&sink.file)
            .unwrap()
            .set_len(0)
            .unwrap();
        fx.run(SendKeys::literal(sink.pane, &text))
            .map_err(|e| TestCaseError::fail(format!("send-keys -l: {e}")))?;
        fx.run(SendKeys::hex(sink.pane, [0x07]))
            .map_err(|e| TestCaseError::fail(format!("send-keys -H: {e}")))?;
        let got = sink.received()?;
        prop_assert_eq!(String::from_utf8_lossy(&got), text.as_str());
        prop_assert_eq!(&got[..], text.as_bytes());
        Ok(())
    });
}
