//! Every typed command through `Tmux::run` against the real tmux, each test
//! on its own isolated server (private `-S` socket in a private directory,
//! killed and removed afterwards). Every test checks the command's typed
//! result and then re-reads tmux's state (list-*, show-*, display-message,
//! capture-pane, or the bytes a pane's program received).
//!
//! One module per topic; the helpers they share are here.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::future::Future;
use std::path::Path;
use std::time::{Duration, Instant};

use tmux_control::command::{
    DisplayMessage, ListPanes, ListSessions, ListWindows, NewWindow, PaneInfo, SessionInfo,
    WindowInfo,
};
use tmux_control::{Error, IsolatedServer, PaneId, SessionId, Tmux, WindowId};

mod buffers;
mod capture;
mod clients;
mod display;
mod environment;
mod error_kinds;
mod keys;
mod options;
mod panes;
mod raw;
mod refresh_client;
mod sessions;
mod wait_for;
mod windows;

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
