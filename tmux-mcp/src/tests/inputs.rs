//! Numeric arguments at the edges: refused by name when they cannot mean
//! anything (negative, NaN, infinite, start after end), capped when they are
//! only larger than the server allows, and never a panic.

use std::time::{Duration, Instant};

use rmcp::handler::server::wrapper::Parameters;
use tmux_control::IsolatedServer;

use crate::mcp::server::TmuxMcp;
use crate::mcp::wait::CallCtx;
use crate::terminal::guard::Caller;
use crate::tools::WaitStatus;
use crate::tools::execute::create::CreateTerminalArgs;
use crate::tools::inspect::read::CaptureScreenArgs;
use crate::tools::inspect::read::ReadOutputArgs;
use crate::tools::inspect::read::SearchOutputArgs;
use crate::tools::run::RunArgs;
use crate::tools::waits::{WaitForExitArgs, WaitForIdleArgs, WaitForOutputArgs};

use super::{Fixture, config_for, ok, run, shell};

/// A fixture whose waits last at most `max_wait`.
fn short_waits(max_wait: Duration) -> Fixture {
    let iso = IsolatedServer::new().unwrap();
    let mut config = config_for(&iso);
    config.max_wait = max_wait;
    config.default_wait = max_wait;
    let mcp = TmuxMcp::with_caller(config, Caller::default()).unwrap();
    Fixture { mcp, iso }
}

fn wait_args(pane: &str, timeout_secs: f64) -> WaitForOutputArgs {
    WaitForOutputArgs {
        target: pane.into(),
        pattern: "never printed".into(),
        literal: true,
        ignore_case: false,
        cursor: None,
        timeout_secs: Some(timeout_secs),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn huge_waits_are_capped_and_impossible_ones_refused_by_name() {
    let f = short_waits(Duration::from_millis(400));
    let pane = shell(&f, "waits").await;

    // 1e308 seconds overflows a Duration: it counts as the server's maximum.
    for huge in [1e308, f64::MAX, 1e19] {
        let started = Instant::now();
        let w = ok(f
            .mcp
            .wait_for_output(Parameters(wait_args(&pane, huge)), CallCtx::detached())
            .await);
        assert_eq!(w.status, WaitStatus::Timeout, "{w:?}");
        assert!(started.elapsed() < Duration::from_secs(5), "{huge}");
    }
    let idle = ok(f
        .mcp
        .wait_for_idle(
            Parameters(WaitForIdleArgs {
                target: pane.clone(),
                quiet_secs: Some(1e308),
                timeout_secs: Some(1e308),
            }),
            CallCtx::detached(),
        )
        .await);
    assert!(matches!(
        idle.status,
        WaitStatus::Idle | WaitStatus::Timeout
    ));
    let exit = ok(f
        .mcp
        .wait_for_exit(
            Parameters(WaitForExitArgs {
                target: pane.clone(),
                timeout_secs: Some(1e308),
            }),
            CallCtx::detached(),
        )
        .await);
    assert_eq!(exit.status, WaitStatus::Timeout);

    // Negative, NaN and infinite numbers are refused, naming the argument
    // and the range, instead of turning into the default.
    for bad in [-1.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        let err = f
            .mcp
            .wait_for_output(Parameters(wait_args(&pane, bad)), CallCtx::detached())
            .await
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with(
                "wait_for_output failed: timeout_secs must be a number of seconds from 0 to 0.4"
            ),
            "{err}"
        );
        let err = f
            .mcp
            .run(
                Parameters(RunArgs {
                    target: Some(pane.clone()),
                    command: Some("echo never run".into()),
                    timeout_secs: Some(bad),
                    ..RunArgs::default()
                }),
                CallCtx::detached(),
            )
            .await
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("run failed: timeout_secs"), "{err}");
    }
    let err = f
        .mcp
        .wait_for_idle(
            Parameters(WaitForIdleArgs {
                target: pane.clone(),
                quiet_secs: Some(-0.5),
                timeout_secs: None,
            }),
            CallCtx::detached(),
        )
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("wait_for_idle failed: quiet_secs must be a number of seconds from 0 to"),
        "{err}"
    );
    // The refused run typed nothing: the next one is the first in the pane.
    let r = run(&f, &pane, "echo still free").await;
    assert_eq!(r.output.as_deref(), Some("still free\n"), "{r:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn line_numbers_and_counts_at_the_edges() {
    let f = super::fixture();
    let pane = shell(&f, "edges").await;
    // More lines than the screen has (50), so that some are scrollback.
    run(&f, &pane, "seq 1 60 | sed 's/^/l/'").await;

    // Line numbers far beyond the scrollback and the screen count as its
    // first and last lines, and the reply numbers the lines it returns.
    let cap = ok(f
        .mcp
        .capture_screen(Parameters(CaptureScreenArgs {
            target: pane.clone(),
            start: Some(-1_000_000_000_000),
            end: Some(1_000_000_000_000),
            whole_history: false,
            escapes: false,
            max_bytes: Some(usize::MAX),
        }))
        .await);
    assert_eq!(
        i64::from(cap.first_line),
        -i64::from(cap.history_lines.unwrap()),
        "{cap:?}"
    );
    assert!(
        cap.last_line < i32::try_from(cap.height).unwrap(),
        "{cap:?}"
    );
    assert!(cap.text.contains("l1\nl2"), "{cap:?}");
    let err = f
        .mcp
        .capture_screen(Parameters(CaptureScreenArgs {
            target: pane.clone(),
            start: Some(3),
            end: Some(1),
            whole_history: false,
            escapes: false,
            max_bytes: None,
        }))
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("start (3) is after end (1)"), "{err}");
    let err = f
        .mcp
        .capture_screen(Parameters(CaptureScreenArgs {
            target: pane.clone(),
            start: None,
            end: Some(-1),
            whole_history: false,
            escapes: false,
            max_bytes: None,
        }))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("start (0, the default) is after end (-1)"),
        "{err}"
    );

    // 0 lines is an empty read that still gives the cursor; any larger
    // count than the cap is the cap.
    let none = ok(f
        .mcp
        .read_output(Parameters(ReadOutputArgs {
            target: pane.clone(),
            cursor: None,
            last_lines: Some(0),
            raw: false,
            max_bytes: Some(0),
        }))
        .await);
    assert_eq!(none.text, "", "{none:?}");
    assert!(none.next_cursor > 0);
    let lines = ok(f
        .mcp
        .read_output(Parameters(ReadOutputArgs {
            target: pane.clone(),
            cursor: None,
            last_lines: Some(u64::MAX),
            raw: false,
            max_bytes: None,
        }))
        .await);
    assert!(lines.text.contains("l1\nl2\n"), "{lines:?}");
    let past = f
        .mcp
        .read_output(Parameters(ReadOutputArgs {
            target: pane.clone(),
            cursor: Some(u64::MAX),
            last_lines: None,
            raw: false,
            max_bytes: None,
        }))
        .await;
    assert!(past.is_err(), "a cursor past the end is refused: {past:?}");

    // max_matches 0 only counts; huge context is the cap.
    let counted = ok(f
        .mcp
        .search_output(Parameters(SearchOutputArgs {
            target: pane.clone(),
            pattern: "^l[0-9]+$".into(),
            literal: false,
            ignore_case: false,
            context_lines: Some(u64::MAX),
            max_matches: Some(0),
        }))
        .await);
    assert_eq!(counted.total_matches, 60, "{counted:?}");
    assert!(
        counted.matches.is_empty() && counted.truncated,
        "{counted:?}"
    );
    let found = ok(f
        .mcp
        .search_output(Parameters(SearchOutputArgs {
            target: pane,
            pattern: "^l30$".into(),
            literal: false,
            ignore_case: false,
            context_lines: Some(u64::MAX),
            max_matches: Some(u64::MAX),
        }))
        .await);
    assert_eq!(found.matches.len(), 1, "{found:?}");
    assert_eq!(found.matches[0].before.len(), 20, "{found:?}");
    assert_eq!(found.matches[0].after.len(), 20, "{found:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nul_is_typed_as_a_byte_and_refused_where_no_argument_can_hold_it() {
    use crate::tools::execute::input::PasteTextArgs;
    use crate::tools::execute::input::SendTextArgs;

    let f = super::fixture();
    let pane = shell(&f, "nul").await;
    let err = f
        .mcp
        .paste_text(Parameters(PasteTextArgs {
            target: pane.clone(),
            text: "echo pasted\0".into(),
            enter: true,
            bracketed: None,
            force: false,
            over_person: false,
        }))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("paste_text failed: text contains a NUL byte (byte 12), which a tmux paste buffer cannot hold"),
        "{err}"
    );
    assert!(err.contains("send_text"), "{err}");
    let err = f
        .mcp
        .run(
            Parameters(RunArgs {
                target: Some(pane.clone()),
                command: Some("echo \0ran".into()),
                ..RunArgs::default()
            }),
            CallCtx::detached(),
        )
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("run failed: the command contains a NUL byte (byte 6)"),
        "{err}"
    );
    // Nothing of either reached the shell.
    let r = run(&f, &pane, "echo next").await;
    assert_eq!(r.output.as_deref(), Some("next\n"), "{r:?}");
    // send_text delivers NUL as the byte 0: od sees it (echo off, so the
    // pane shows only od's dump; Ctrl-D ends od's input).
    let od = ok(f
        .mcp
        .create_terminal(Parameters(CreateTerminalArgs {
            command: Some("stty -echo; echo od-ready; LC_ALL=C od -c".into()),
            ..CreateTerminalArgs::default()
        }))
        .await);
    let ready = ok(f
        .mcp
        .wait_for_output(
            Parameters(WaitForOutputArgs {
                target: od.pane.clone(),
                pattern: "od-ready".into(),
                literal: true,
                ignore_case: false,
                cursor: Some(0),
                timeout_secs: Some(10.0),
            }),
            CallCtx::detached(),
        )
        .await);
    assert_eq!(ready.status, WaitStatus::Matched, "{ready:?}");
    let sent = ok(f
        .mcp
        .send_text(Parameters(SendTextArgs {
            target: od.pane.clone(),
            text: "a\0b\n\x04".into(),
            enter: false,
            force: false,
            over_person: false,
        }))
        .await);
    assert_eq!(sent.bytes, 5);
    let dump = ok(f
        .mcp
        .wait_for_output(
            Parameters(WaitForOutputArgs {
                target: od.pane,
                pattern: r"a  \0   b  \n".into(),
                literal: true,
                ignore_case: false,
                cursor: Some(sent.cursor),
                timeout_secs: Some(10.0),
            }),
            CallCtx::detached(),
        )
        .await);
    assert_eq!(dump.status, WaitStatus::Matched, "{dump:?}");
}
