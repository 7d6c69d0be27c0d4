//! `run`, the waits and the reading tools: exit statuses, output from the
//! first byte, resuming after a time limit, bounded replies, masked secrets.

use rmcp::handler::server::wrapper::Parameters;

use crate::mcp::wait::CallCtx;
use crate::tools::WaitStatus;
use crate::tools::execute::create::CreateTerminalArgs;
use crate::tools::execute::input::SendTextArgs;
use crate::tools::inspect::list::PaneInfoArgs;
use crate::tools::inspect::read::CaptureScreenArgs;
use crate::tools::inspect::read::ReadOutputArgs;
use crate::tools::inspect::read::ScreenSource;
use crate::tools::inspect::read::SearchOutputArgs;
use crate::tools::run::{RunArgs, RunStatus};
use crate::tools::waits::{WaitForExitArgs, WaitForIdleArgs, WaitForOutputArgs};

use super::{fixture, ok, run, shell};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_run_and_read() {
    let f = fixture();
    let pane = shell(&f, "work").await;
    let r = run(&f, &pane, "echo hello; echo err >&2; false").await;
    assert_eq!(r.status, RunStatus::Completed, "{r:?}");
    assert_eq!(r.exit_status, Some(1));
    assert_eq!(r.output_text, "hello\nerr\n");
    let r = run(&f, &pane, "(exit 42)").await;
    assert_eq!(
        (r.status, r.exit_status, r.output_text.as_str()),
        (RunStatus::Completed, Some(42), "")
    );
    // State persists in the shell; quotes, trailing ; and comments are safe.
    run(&f, &pane, "cd /tmp; X='it'\\''s'").await;
    let r = run(&f, &pane, "pwd; echo \"$X\"; # a comment").await;
    assert_eq!(r.output_text, "/tmp\nit's\n");
    let r = run(
        &f,
        &pane,
        "printf 'a\\tb\\n'; for i in 1 2; do\n  echo line$i\ndone",
    )
    .await;
    assert_eq!(r.output_text, "a\tb\nline1\nline2\n", "{r:?}");
    // Read the log from the run's output cursor.
    let read = ok(f
        .mcp
        .read_output(Parameters(ReadOutputArgs {
            target: pane.clone(),
            cursor: r.output_cursor,
            last_lines: None,
            raw: false,
            max_bytes: None,
        }))
        .await);
    assert!(read.text.starts_with("a\tb\nline1\nline2\n"), "{read:?}");
    let scroll = ok(f
        .mcp
        .read_output(Parameters(ReadOutputArgs {
            target: pane.clone(),
            cursor: None,
            last_lines: Some(3),
            raw: false,
            max_bytes: None,
        }))
        .await);
    assert!(scroll.text.contains("line2"), "{scroll:?}");
    // Search finds lines with numbers capture_screen understands.
    let found = ok(f
        .mcp
        .search_output(Parameters(SearchOutputArgs {
            target: pane.clone(),
            pattern: "^line[0-9]$".into(),
            literal: false,
            ignore_case: false,
            context_lines: Some(1),
            max_matches: None,
        }))
        .await);
    assert_eq!(found.total_matches, 2, "{found:?}");
    let line = found.matches[1].line;
    let cap = ok(f
        .mcp
        .capture_screen(Parameters(CaptureScreenArgs {
            target: pane.clone(),
            start: Some(line.into()),
            end: Some(line.into()),
            whole_history: false,
            escapes: false,
            max_bytes: None,
        }))
        .await);
    assert_eq!(cap.text, "line2");
    assert_eq!(cap.source, ScreenSource::Tmux, "a range is tmux's");
    // The visible screen, plain, comes from the emulator, with the same
    // text as tmux's own capture of it.
    let args = |escapes| CaptureScreenArgs {
        target: pane.clone(),
        start: None,
        end: None,
        whole_history: false,
        escapes,
        max_bytes: None,
    };
    let emulated = ok(f.mcp.capture_screen(Parameters(args(false))).await);
    assert_eq!(emulated.source, ScreenSource::Emulator, "{emulated:?}");
    assert_eq!(emulated.history_lines, None);
    let escaped = ok(f.mcp.capture_screen(Parameters(args(true))).await);
    assert_eq!(escaped.source, ScreenSource::Tmux);
    let tmux_lines: Vec<String> = f
        .mcp
        .conn()
        .await
        .unwrap()
        .tmux
        .run(tmux_control::command::CapturePane::new(
            pane.parse::<tmux_control::PaneId>().unwrap(),
        ))
        .await
        .unwrap()
        .iter()
        .map(|l| String::from_utf8_lossy(l).trim_end().to_owned())
        .collect();
    // Both as a reply shows them: redacted (the wrapped lines' nonces).
    let tmux_text = tmux_lines.join("\n");
    let redactor = crate::text::redact::Redactor::new(true, &[]).unwrap();
    assert_eq!(
        emulated.text,
        redactor.redact(tmux_text.trim_end_matches('\n')),
        "the emulator's screen is tmux's"
    );
    let info = ok(f
        .mcp
        .pane_info(Parameters(PaneInfoArgs {
            target: pane.clone(),
        }))
        .await);
    assert_eq!(info.command, "sh");
    assert_eq!(info.session_name, "work");
    assert!(
        info.attach_command.ends_with("attach -t work"),
        "{}",
        info.attach_command
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nothing_printed_before_following_is_lost() {
    let f = fixture();
    let created = ok(f
        .mcp
        .create_terminal(Parameters(CreateTerminalArgs {
            command: Some("printf 'first line\\n'; exit 7".into()),
            ..CreateTerminalArgs::default()
        }))
        .await);
    assert_eq!(created.cursor, 0);
    let exit = ok(f
        .mcp
        .wait_for_exit(
            Parameters(WaitForExitArgs {
                target: created.pane.clone(),
                timeout_secs: Some(10.0),
            }),
            CallCtx::detached(),
        )
        .await);
    assert_eq!(
        (exit.status, exit.exit_status),
        (WaitStatus::Exited, Some(7)),
        "{exit:?}"
    );
    let read = ok(f
        .mcp
        .read_output(Parameters(ReadOutputArgs {
            target: created.pane.clone(),
            cursor: Some(0),
            last_lines: None,
            raw: false,
            max_bytes: None,
        }))
        .await);
    assert_eq!(read.text, "first line\n");
    // A wait without a cursor on a new terminal looks from its first byte.
    let w = ok(f
        .mcp
        .wait_for_output(
            Parameters(WaitForOutputArgs {
                target: created.pane,
                pattern: "first".into(),
                literal: true,
                ignore_case: false,
                cursor: None,
                timeout_secs: Some(5.0),
            }),
            CallCtx::detached(),
        )
        .await);
    assert_eq!(w.status, WaitStatus::Matched, "{w:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_runs_resume_and_waits_time_out_with_a_cursor() {
    let f = fixture();
    let pane = shell(&f, "slow").await;
    let first = ok(f
        .mcp
        .run(
            Parameters(RunArgs {
                target: Some(pane.clone()),
                command: Some("echo start; sleep 2; echo end".into()),
                timeout_secs: Some(0.5),
                ..RunArgs::default()
            }),
            CallCtx::detached(),
        )
        .await);
    assert_eq!(first.status, RunStatus::Running, "{first:?}");
    // A second command is refused while the first runs.
    let busy = f
        .mcp
        .run(
            Parameters(RunArgs {
                target: Some(pane.clone()),
                command: Some("true".into()),
                ..RunArgs::default()
            }),
            CallCtx::detached(),
        )
        .await
        .unwrap_err();
    assert!(busy.why.contains(&first.run_id), "{busy}");
    let done = ok(f
        .mcp
        .run(
            Parameters(RunArgs {
                run_id: Some(first.run_id.clone()),
                timeout_secs: Some(10.0),
                ..RunArgs::default()
            }),
            CallCtx::detached(),
        )
        .await);
    assert_eq!(done.status, RunStatus::Completed, "{done:?}");
    assert_eq!(done.output_text, "start\nend\n");
    // A timed-out wait returns a cursor from which a later wait still finds
    // output that arrives in between.
    let w = ok(f
        .mcp
        .wait_for_output(
            Parameters(WaitForOutputArgs {
                target: pane.clone(),
                pattern: "never-printed".into(),
                literal: true,
                ignore_case: false,
                cursor: Some(done.cursor),
                timeout_secs: Some(0.2),
            }),
            CallCtx::detached(),
        )
        .await);
    assert_eq!(w.status, WaitStatus::Timeout);
    ok(f.mcp
        .send_text(Parameters(SendTextArgs {
            target: pane.clone(),
            text: "echo ma''rker".into(),
            enter: true,
            force: false,
            over_person: false,
        }))
        .await);
    let w = ok(f
        .mcp
        .wait_for_output(
            Parameters(WaitForOutputArgs {
                target: pane.clone(),
                pattern: "^marker$".into(),
                literal: false,
                ignore_case: false,
                cursor: Some(w.cursor),
                timeout_secs: Some(5.0),
            }),
            CallCtx::detached(),
        )
        .await);
    assert_eq!(w.status, WaitStatus::Matched, "{w:?}");
    let idle = ok(f
        .mcp
        .wait_for_idle(
            Parameters(WaitForIdleArgs {
                target: pane,
                quiet_secs: Some(0.3),
                timeout_secs: Some(5.0),
            }),
            CallCtx::detached(),
        )
        .await);
    assert!(idle.idle, "{idle:?}");
    assert!(idle.screen_tail.iter().any(|l| l == "marker"), "{idle:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_output_is_bounded_with_directions_to_the_rest() {
    let f = fixture();
    let pane = shell(&f, "big").await;
    let r = ok(f
        .mcp
        .run(
            Parameters(RunArgs {
                target: Some(pane.clone()),
                command: Some("seq 1 20000".into()),
                max_bytes: Some(2000),
                timeout_secs: Some(20.0),
                ..RunArgs::default()
            }),
            CallCtx::detached(),
        )
        .await);
    assert_eq!(r.exit_status, Some(0), "{:?} {:?}", r.status, r.echo);
    // Too large to show whole: the text carries its head and tail, the
    // structured field none of it.
    assert_eq!(r.output, None);
    let text = &r.output_text;
    let head = text
        .split_once(":\n")
        .and_then(|(_, rest)| rest.split_once("--- [lines"))
        .map(|(head, _)| head)
        .unwrap_or_else(|| panic!("no head in {text}"));
    assert!(head.starts_with("1\n2\n"), "{text}");
    assert!(text.contains("19999\n20000\n--- To read"), "{text}");
    assert!(text.len() < 2000, "{}", text.len());
    let omitted = r.omitted.expect("a middle part left out");
    assert!(text.contains(&format!(
        "read_output target={pane} cursor={}",
        omitted.from_cursor
    )));
    let next = ok(f
        .mcp
        .read_output(Parameters(ReadOutputArgs {
            target: pane.clone(),
            cursor: Some(omitted.from_cursor),
            last_lines: None,
            raw: false,
            max_bytes: Some(1000),
        }))
        .await);
    assert!(next.more);
    let first_missing: u32 = head.lines().last().unwrap().parse().unwrap();
    assert!(
        next.text.starts_with(&format!("{}\n", first_missing + 1)),
        "{}",
        &next.text[..40]
    );
    assert!(next.text.ends_with('\n'), "pages end on a line boundary");
    let cap = ok(f
        .mcp
        .capture_screen(Parameters(CaptureScreenArgs {
            target: pane,
            start: None,
            end: None,
            whole_history: true,
            escapes: false,
            max_bytes: Some(1000),
        }))
        .await);
    assert!(cap.omitted_lines > 1000, "{}", cap.omitted_lines);
    assert!(cap.text.len() <= 1000);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn secrets_are_masked_in_what_the_model_reads() {
    let f = fixture();
    let pane = shell(&f, "secrets").await;
    let r = run(
        &f,
        &pane,
        "echo key=AKIA''IOSFODNN7EXAMPLE; echo 'password: hunter22'",
    )
    .await;
    assert_eq!(
        r.output_text,
        "key=[REDACTED:aws-access-key]\npassword: [REDACTED:password]\n"
    );
    let cap = ok(f
        .mcp
        .capture_screen(Parameters(CaptureScreenArgs {
            target: pane,
            start: None,
            end: None,
            whole_history: false,
            escapes: false,
            max_bytes: None,
        }))
        .await);
    assert!(!cap.text.contains("AKIAIOSFODNN7EXAMPLE"), "{}", cap.text);
    assert!(
        cap.text.contains("key=[REDACTED:aws-access-key]"),
        "{}",
        cap.text
    );
    assert!(!cap.text.contains("hunter22"), "{}", cap.text);
}
