//! `refresh-client`: sizes, client flags, pane output on and off, and
//! format subscriptions.

use std::time::Duration;

use super::{POLL, connect, eventually, invalid, wait_command, window_row};
use crate::common::bounded;
use tmux_control::command::{
    CapturePane, ClientFlag, DisplayMessage, Key, ListWindows, NewWindow, OptionScope,
    OutputSwitch, Raw, RefreshClient, SendKeys, SetOption, SubscriptionScope,
};
use tmux_control::proto::Notification;
use tmux_control::{Event, IsolatedServer, PaneId, Pattern, Tmux};

/// The next value of the subscription `tc-sub`.
async fn next_value(events: &mut tmux_control::Subscription, pane: PaneId) -> String {
    loop {
        let e = tokio::time::timeout(POLL, events.recv())
            .await
            .unwrap()
            .unwrap();
        if let Event::Notification(Notification::SubscriptionChanged {
            name,
            pane: p,
            value,
            ..
        }) = e
            && &name[..] == b"tc-sub"
        {
            assert_eq!(p, Some(pane));
            return String::from_utf8(value.to_vec()).unwrap();
        }
    }
}

async fn client_flags(tmux: &Tmux) -> String {
    let out = tmux
        .run(Raw::new("list-clients").args(["-F", "#{client_flags}"]))
        .await
        .unwrap();
    assert_eq!(out.len(), 1, "{out:?}");
    String::from_utf8(out[0].to_vec()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refresh_client_sizes_flags_pane_output_and_subscriptions() {
    let iso = IsolatedServer::new().unwrap();
    bounded(async {
        let (tmux, session) = connect(&iso).await;
        let first = tmux.run(ListWindows::in_session(session)).await.unwrap()[0].id;
        let second = tmux
            .run(NewWindow::new().command("exec sleep 600"))
            .await
            .unwrap()
            .window;

        // -C: the client's size sizes the attached session's windows.
        tmux.run(RefreshClient::size(120, 40)).await.unwrap();
        let w = window_row(&tmux, first).await.unwrap();
        assert_eq!((w.width, w.height), (120, 40), "{w:?}");
        let width = tmux
            .run(DisplayMessage::format("#{client_width}"))
            .await
            .unwrap();
        assert_eq!(&width[..], b"120");
        // A size for one window only, then cleared.
        tmux.run(RefreshClient::window_size(second, 80, 24))
            .await
            .unwrap();
        let w2 = window_row(&tmux, second).await.unwrap();
        assert_eq!((w2.width, w2.height), (80, 24), "{w2:?}");
        assert_eq!(
            window_row(&tmux, first).await.unwrap().width,
            120,
            "other windows keep the client size"
        );
        tmux.run(RefreshClient::clear_window_size(second))
            .await
            .unwrap();
        let w2 = window_row(&tmux, second).await.unwrap();
        assert_eq!((w2.width, w2.height), (120, 40), "{w2:?}");

        // -f: flags on and off.
        let flags = client_flags(&tmux).await;
        assert!(flags.contains("pause-after=10"), "{flags}");
        tmux.run(RefreshClient::flags(
            [
                ClientFlag::NoOutput,
                ClientFlag::PauseAfter(7),
                ClientFlag::IgnoreSize,
            ],
            [],
        ))
        .await
        .unwrap();
        let flags = client_flags(&tmux).await;
        assert!(
            flags.contains("no-output")
                && flags.contains("pause-after=7")
                && flags.contains("ignore-size"),
            "{flags}"
        );
        tmux.run(RefreshClient::flags(
            [],
            [ClientFlag::NoOutput, ClientFlag::IgnoreSize],
        ))
        .await
        .unwrap();
        let flags = client_flags(&tmux).await;
        assert!(
            !flags.contains("no-output") && !flags.contains("ignore-size"),
            "{flags}"
        );
        assert!(flags.contains("pause-after=7"), "{flags}");
        tmux.run(RefreshClient::flags([ClientFlag::PauseAfter(10)], []))
            .await
            .unwrap();
        invalid(tmux.run(RefreshClient::flags([], [])).await);

        // -A: a pane's output off, then on again.
        let echo = tmux
            .run(NewWindow::new().command("stty -echo; exec cat"))
            .await
            .unwrap()
            .pane;
        wait_command(&tmux, echo, "cat").await;
        let out = tmux.follow(echo).await.unwrap();
        let start = out.end_offset();
        tmux.run(RefreshClient::pane_output(echo, OutputSwitch::Off))
            .await
            .unwrap();
        tmux.run(SendKeys::literal(echo, "HIDDEN")).await.unwrap();
        tmux.run(SendKeys::keys(echo, [Key::ENTER])).await.unwrap();
        // tmux 3.3a goes on reading the pane and drops its output for this
        // client; since 3.4, output off from the only client stops tmux
        // reading the pane until it is on again, so nothing is lost.
        let holds_output = tmux.version().at_least(3, 4);
        if !holds_output {
            // tmux has read the pane's output once it is on the screen.
            eventually("HIDDEN on the screen", || async {
                let lines = tmux.run(CapturePane::new(echo)).await.unwrap();
                lines.iter().any(|l| &l[..] == b"HIDDEN").then_some(())
            })
            .await;
        }
        let wait = out.expect(Pattern::literal("SHOWN"));
        tmux.run(RefreshClient::pane_output(echo, OutputSwitch::On))
            .await
            .unwrap();
        tmux.run(SendKeys::literal(echo, "SHOWN")).await.unwrap();
        tmux.run(SendKeys::keys(echo, [Key::ENTER])).await.unwrap();
        let m = wait.wait(Duration::from_secs(10)).await.unwrap();
        let (_, seen) = out.read_from(start, 1 << 20);
        let seen = String::from_utf8_lossy(&seen);
        if holds_output {
            let hidden = seen.find("HIDDEN");
            assert!(
                hidden.is_some_and(|h| seen.find("SHOWN").is_some_and(|s| h < s)),
                "tmux {} holds the output until it is on again: {seen:?} {m:?}",
                tmux.version()
            );
        } else {
            assert!(
                !seen.contains("HIDDEN"),
                "output sent while off: {seen:?} {m:?}"
            );
        }
        // pause: tmux says %pause; the connection resumes the pane itself.
        let mut events = tmux.subscribe();
        tmux.run(RefreshClient::pane_outputs([(echo, OutputSwitch::Pause)]))
            .await
            .unwrap();
        let mut paused = false;
        let mut resumed = false;
        while !(paused && resumed) {
            match tokio::time::timeout(POLL, events.recv())
                .await
                .unwrap()
                .unwrap()
            {
                Event::Notification(Notification::Pause { pane }) if pane == echo => {
                    paused = true;
                }
                Event::Notification(Notification::Continue { pane }) if pane == echo => {
                    resumed = true;
                }
                _ => {}
            }
        }
        let wait = out.expect(Pattern::literal("AFTER"));
        tmux.run(SendKeys::literal(echo, "AFTER")).await.unwrap();
        tmux.run(SendKeys::keys(echo, [Key::ENTER])).await.unwrap();
        wait.wait(Duration::from_secs(10)).await.unwrap();
        invalid(tmux.run(RefreshClient::pane_outputs([])).await);

        // -B: a subscription reports a format's value as it changes.
        tmux.run(
            RefreshClient::subscribe(
                "tc-sub",
                SubscriptionScope::Pane(echo),
                "#{pane_id}=#{@tc_val}",
            )
            .unwrap(),
        )
        .await
        .unwrap();
        assert_eq!(next_value(&mut events, echo).await, format!("{echo}="));
        tmux.run(SetOption::new(OptionScope::Pane, "@tc_val", "v 1").target(echo))
            .await
            .unwrap();
        assert_eq!(next_value(&mut events, echo).await, format!("{echo}=v 1"));
        tmux.run(RefreshClient::unsubscribe("tc-sub").unwrap())
            .await
            .unwrap();
        invalid(RefreshClient::subscribe("a:b", SubscriptionScope::Session, "x").map(drop));
    })
    .await;
}
