//! Whether a running command waits for input, from the kernel's evidence
//! ([`crate::terminal::probe`]), taken when its output pauses and at the heartbeat.

use std::time::Duration;

use tmux_control::command::DisplayMessage;
use tmux_control::{PaneId, PaneOutput};

use crate::mcp::wait::PROGRESS_EVERY;
use crate::terminal::backend::Conn;
use crate::terminal::probe::{Evidence, foreground_exited, probe};

/// How long a run's output must pause before `run` asks the kernel whether
/// the command waits for input (a true timer: a debounce after output).
const QUIET_BEFORE_PROBE: Duration = Duration::from_millis(150);

/// Resolves once the running command (`running` set: its start is marked)
/// is blocked reading the terminal, with the kernel's evidence. It looks
/// when the output has paused for [`QUIET_BEFORE_PROBE`], again after more
/// output, when the foreground process it saw exits (its pidfd: `sleep 1;
/// read x` reads once `sleep` is gone, printing nothing), and at the
/// progress heartbeat ([`PROGRESS_EVERY`], a true timer: a program that
/// goes quiet and only later reads gives nothing to wake on). Never
/// resolves for a server on another machine (no evidence).
pub(super) async fn waiting_for_input(
    conn: &Conn,
    po: &PaneOutput,
    pane: PaneId,
    running: &std::sync::atomic::AtomicBool,
    limit: Duration,
) -> Evidence {
    let place = conn
        .pane_row(pane)
        .await
        .ok()
        .and_then(|row| row.pid.map(|pid| (pid, row.tty)));
    let Some((pid, tty)) = place else {
        return std::future::pending().await;
    };
    // Set when the foreground process exited and the terminal settled:
    // look at once, without waiting for quiet again.
    let mut settled = false;
    loop {
        let mut more = po.stream_from(po.end_offset());
        let mut foreground = None;
        if running.load(std::sync::atomic::Ordering::Relaxed)
            && (std::mem::take(&mut settled)
                || po.wait_idle(QUIET_BEFORE_PROBE, limit).await.is_ok())
        {
            let evidence = probe(pid, &tty);
            foreground = evidence.foreground.filter(|fg| *fg != pid);
            if evidence.reading_terminal == Some(true) {
                // The command may have ended already, the shell back at its
                // prompt with the end mark still on its way through tmux
                // (a loaded machine): tmux delivers all the pane output it
                // has read ahead of a command's reply, so one round trip
                // brings it. Output that came means: not waiting, look again.
                let before = po.end_offset();
                let _ = conn
                    .tmux
                    .run(DisplayMessage::format("#{pane_id}").target(pane))
                    .await;
                if po.end_offset() == before {
                    return evidence;
                }
            }
            more = po.stream_from(po.end_offset());
        }
        let exit = async {
            match foreground {
                Some(fg) => foreground_exited(fg, pid, &tty).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            _ = more.next() => {}
            () = exit => settled = true,
            // A true timer: the progress heartbeat (see the doc comment).
            () = tokio::time::sleep(PROGRESS_EVERY) => {}
        }
    }
}
