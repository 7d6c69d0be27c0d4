//! The library's tracing events, captured from one command on a real tmux.

use std::io::Write;
use std::sync::{Arc, Mutex};

use crate::common::bounded;
use tmux_control::command::{DisplayMessage, KillPane};
use tmux_control::{Event, IsolatedServer, PaneId, Tmux};

/// Collects what the fmt subscriber writes.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Captured {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

// A current-thread runtime: the connection's task runs on this thread too,
// so the thread's default subscriber sees its events as well.
#[tokio::test(flavor = "current_thread")]
async fn one_command_is_traced_from_connect_to_close() {
    let captured = Captured::default();
    let sink = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::DEBUG)
        .with_ansi(false)
        .without_time()
        .with_writer(move || sink.clone())
        .finish();
    let _default = tracing::subscriber::set_default(subscriber);
    let iso = IsolatedServer::new().unwrap();
    bounded(async {
        let tmux = Tmux::connect(iso.server()).await.unwrap();
        let before = captured.text();
        assert!(before.contains("connected to tmux"), "{before}");
        assert!(
            before.contains(&format!("version={}", tmux.version())),
            "{before}"
        );

        let answer = tmux.run(DisplayMessage::format("traced")).await.unwrap();
        assert_eq!(&answer[..], b"traced");
        let during = captured.text()[before.len()..].to_owned();
        let lines: Vec<&str> = during.lines().collect();
        assert_eq!(
            lines.len(),
            2,
            "one event when sent, one when answered: {during}"
        );
        assert!(
            lines[0].contains("command sent") && lines[0].contains("command=\"display-message\""),
            "{during}"
        );
        assert!(
            lines[1].contains("command answered") && lines[1].contains("micros="),
            "{during}"
        );
        assert!(lines[1].contains("refused=false"), "{during}");

        // A refused command says so.
        assert!(tmux.run(KillPane::new(PaneId(9999))).await.is_err());
        let after = captured.text();
        let refusal = after.lines().last().unwrap();
        assert!(
            refusal.contains("command answered") && refusal.contains("refused=true"),
            "{after}"
        );

        // The task reports the close (before it ends the subscriptions).
        let mut events = tmux.subscribe();
        drop(tmux);
        while let Some(event) = events.recv().await {
            if matches!(event, Event::Closed(_)) {
                break;
            }
        }
        assert!(
            captured.text().contains("connection closed"),
            "{}",
            captured.text()
        );
    })
    .await;
}
