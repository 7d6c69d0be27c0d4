//! `wait-for`: a signal wakes a waiter; lock and unlock do not block.

use super::{command_error, connect, read_file, sq, wait_command};
use crate::common::bounded;
use tmux_control::IsolatedServer;
use tmux_control::command::{DisplayMessage, NewWindow, WaitFor};

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
