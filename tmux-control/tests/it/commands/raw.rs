//! `Raw`: allowed commands run; refused ones never touch the connection.

use super::{command_error, connect, invalid, text};
use crate::common::bounded;
use tmux_control::IsolatedServer;
use tmux_control::command::{DisplayMessage, HasSession, Raw};

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
