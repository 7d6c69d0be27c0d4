//! Helpers shared by the integration test modules (not every module uses
//! every helper).
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::Duration;

use tmux_control::Tmux;
use tmux_control::proto::Reply;

/// Every test that talks to tmux is bounded: a hang fails instead of
/// blocking CI.
pub(crate) const LIMIT: Duration = Duration::from_secs(120);

/// Runs `f`, failing the test after [`LIMIT`].
pub(crate) async fn bounded<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(LIMIT, f)
        .await
        .expect("test timed out")
}

/// A reply's body as text, lines joined with `\n`.
pub(crate) fn body_text(reply: &Reply) -> String {
    reply
        .body
        .iter()
        .map(|l| String::from_utf8_lossy(l).into_owned())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Sends `line` and returns the body; fails the test on `%error`.
pub(crate) async fn ok(tmux: &Tmux, line: impl Into<Vec<u8>>) -> String {
    let line = line.into();
    let r = tmux.raw_line(line.clone()).await.unwrap();
    assert!(
        !r.error,
        "{}: {}",
        String::from_utf8_lossy(&line),
        body_text(&r)
    );
    body_text(&r)
}

/// A shell command that waits on the tmux channel `go-TAG` before running
/// `then`, so that following can start before any output. The pane's
/// `tmux` names its own server's socket explicitly: the first field of
/// `$TMUX`, which tmux sets in every pane.
pub(crate) fn gated(tag: &str, then: &str) -> String {
    format!("tmux -S \"${{TMUX%%,*}}\" wait-for go-{tag}; {then}")
}

/// Lets a [`gated`] command run.
pub(crate) async fn open_gate(tmux: &Tmux, tag: &str) {
    ok(tmux, format!("wait-for -S go-{tag}")).await;
}
