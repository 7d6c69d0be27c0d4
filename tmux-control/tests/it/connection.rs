//! The connection against real tmux, always on isolated servers (private
//! `-S` sockets in private directories, removed afterwards).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::Duration;

use crate::common::{body_text, bounded};
use tmux_control::{ConnectOptions, Error, Event, IsolatedServer, Server, Tmux};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connects_runs_commands_and_reports_errors() {
    let iso = IsolatedServer::new().unwrap();
    bounded(async {
        let tmux = Tmux::connect(iso.server()).await.unwrap();
        let r = tmux
            .raw_line("display-message -p 'hello #{session_name}'")
            .await
            .unwrap();
        assert!(!r.error);
        assert_eq!(body_text(&r), "hello tmux-control");
        let r = tmux.raw_line("bogus-command").await.unwrap();
        assert!(r.error);
        assert!(
            body_text(&r).contains("unknown command"),
            "{}",
            body_text(&r)
        );
        // The connection stays usable after an error.
        let r = tmux
            .raw_line("list-sessions -F '#{session_name}'")
            .await
            .unwrap();
        assert_eq!(body_text(&r), "tmux-control");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refuses_lines_that_would_break_reply_matching() {
    let iso = IsolatedServer::new().unwrap();
    bounded(async {
        let tmux = Tmux::connect(iso.server()).await.unwrap();
        for bad in [
            &b""[..],
            b"   ",
            b"# comment",
            b"display -p a\nb",
            b"display -p a\rb",
            b"x\0y",
        ] {
            assert!(
                matches!(tmux.raw_line(bad).await, Err(Error::InvalidArgument(_))),
                "{bad:?} accepted"
            );
        }
        // Still attached and answering in order.
        let r = tmux.raw_line("display-message -p ok").await.unwrap();
        assert_eq!(body_text(&r), "ok");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_pipelined_commands_from_eight_tasks_reach_their_callers() {
    let iso = IsolatedServer::new().unwrap();
    bounded(async {
        let tmux = Tmux::connect(iso.server()).await.unwrap();
        let mut tasks = Vec::new();
        for t in 0..8 {
            let tmux = tmux.clone();
            tasks.push(tokio::spawn(async move {
                let mut futures = Vec::new();
                for i in 0..125 {
                    let tmux = tmux.clone();
                    futures.push(async move {
                        let r = tmux
                            .raw_line(format!("display-message -p 'task{t}-cmd{i}'"))
                            .await?;
                        Ok::<_, Error>((format!("task{t}-cmd{i}"), body_text(&r)))
                    });
                }
                // All 125 in flight at once.
                let mut results = Vec::new();
                let joined = futures_join_all(futures).await;
                for r in joined {
                    results.push(r.unwrap());
                }
                results
            }));
        }
        let mut n = 0;
        for t in tasks {
            for (want, got) in t.await.unwrap() {
                assert_eq!(want, got);
                n += 1;
            }
        }
        assert_eq!(n, 1000);
    })
    .await;
}

/// Polls all futures concurrently (a tiny join_all, to avoid a dependency).
async fn futures_join_all<F: std::future::Future>(futures: Vec<F>) -> Vec<F::Output> {
    let mut set = Vec::new();
    for f in futures {
        set.push(Box::pin(f));
    }
    let mut out: Vec<Option<F::Output>> = (0..set.len()).map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut done = true;
        for (i, f) in set.iter_mut().enumerate() {
            if out[i].is_none() {
                match f.as_mut().poll(cx) {
                    std::task::Poll::Ready(v) => out[i] = Some(v),
                    std::task::Poll::Pending => done = false,
                }
            }
        }
        if done {
            std::task::Poll::Ready(())
        } else {
            std::task::Poll::Pending
        }
    })
    .await;
    out.into_iter().map(Option::unwrap).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscriber_that_never_reads_delays_nobody() {
    let iso = IsolatedServer::new().unwrap();
    bounded(async {
        let tmux = Tmux::connect(iso.server()).await.unwrap();
        let mut stalled = tmux.subscribe_with_capacity(4);
        let mut reader = tmux.subscribe();
        // Flood the attached session's pane with output.
        let r = tmux
            .raw_line(
                "respawn-pane -k -t tmux-control 'head -c 3000000 /dev/zero | od -v; sleep 30'",
            )
            .await
            .unwrap();
        assert!(!r.error, "{}", body_text(&r));
        // While the flood runs, commands keep being answered.
        for i in 0..200 {
            let r = tmux
                .raw_line(format!("display-message -p {i}"))
                .await
                .unwrap();
            assert_eq!(body_text(&r), i.to_string());
        }
        // The reading subscriber sees the output; the stalled one lost events
        // and is told how many.
        let mut output_bytes = 0usize;
        while output_bytes < 100_000 {
            match reader.recv().await.unwrap() {
                // With pause-after (on by default) output arrives as %extended-output.
                Event::Notification(
                    tmux_control::proto::Notification::Output { data, .. }
                    | tmux_control::proto::Notification::ExtendedOutput { data, .. },
                ) => {
                    output_bytes += data.len();
                }
                Event::Gap { missed } => panic!("the reading subscriber missed {missed} events"),
                Event::Closed(c) => panic!("the connection closed: {c}"),
                _ => {}
            }
        }
        let mut gap = 0;
        for _ in 0..8 {
            if let Event::Gap { missed } = stalled.recv().await.unwrap() {
                gap += missed;
                break;
            }
        }
        assert!(
            gap > 0,
            "the stalled subscriber was not told about dropped events"
        );
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_server_fails_pending_and_later_calls() {
    let iso = IsolatedServer::new().unwrap();
    bounded(async {
        let tmux = Tmux::connect(iso.server()).await.unwrap();
        let mut events = tmux.subscribe();
        // kill-server's own reply may or may not arrive before %exit.
        let _ = tmux.raw_line("kill-server").await;
        let closed = tmux.closed().await;
        assert_eq!(closed.exit_status, Some(0), "{closed}");
        match tmux.raw_line("display-message -p x").await {
            Err(Error::Closed(c)) => assert_eq!(c, closed),
            other => panic!("{other:?}"),
        }
        let mut saw_exit = false;
        while let Some(e) = events.recv().await {
            match e {
                Event::Notification(tmux_control::proto::Notification::Exit { .. }) => {
                    saw_exit = true
                }
                Event::Closed(c) => {
                    assert_eq!(c, closed);
                    break;
                }
                _ => {}
            }
        }
        assert!(saw_exit);
        assert!(events.recv().await.is_none());
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killing_the_client_process_is_reported() {
    let iso = IsolatedServer::new().unwrap();
    bounded(async {
        let tmux = Tmux::connect(iso.server()).await.unwrap();
        let r = tmux
            .raw_line("display-message -p '#{client_pid}'")
            .await
            .unwrap();
        let pid: i32 = body_text(&r).parse().unwrap();
        let status = std::process::Command::new("kill")
            .arg("-KILL")
            .arg(pid.to_string())
            .status()
            .unwrap();
        assert!(status.success());
        let closed = tmux.closed().await;
        assert_eq!(
            closed.exit_status, None,
            "killed by a signal has no exit code: {closed}"
        );
        assert!(matches!(
            tmux.raw_line("display-message -p x").await,
            Err(Error::Closed(_))
        ));
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_tmux_binary_is_a_spawn_error() {
    let iso = IsolatedServer::new().unwrap();
    let server = iso.server().clone().program("/nonexistent/tmux-binary");
    match bounded(Tmux::connect(&server)).await {
        Err(Error::Spawn { program, source }) => {
            assert_eq!(program, "/nonexistent/tmux-binary");
            assert_eq!(source.kind(), std::io::ErrorKind::NotFound);
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attaching_to_a_missing_session_fails_with_tmux_reason() {
    let iso = IsolatedServer::new().unwrap();
    bounded(async {
        // No server yet: attach-session starts one, finds no session, exits.
        let err = Tmux::connect_with(
            iso.server(),
            ConnectOptions::default().session("absent").attach_only(),
        )
        .await
        .unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("no sessions") || text.contains("can't find session"),
            "{text}"
        );
        // With a server running and another session, the error names the
        // target. On a server of its own: the one the first attach started
        // may still be exiting, and a client that reaches it then is told
        // "server exited unexpectedly" (seen on tmux 3.4 under load).
        let running = IsolatedServer::new().unwrap();
        let _keep = Tmux::connect(running.server()).await.unwrap();
        let err = Tmux::connect_with(
            running.server(),
            ConnectOptions::default().session("absent").attach_only(),
        )
        .await
        .unwrap_err();
        assert!(err.to_string().contains("can't find session"), "{err}");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_last_handle_detaches_and_reaps() {
    let iso = IsolatedServer::new().unwrap();
    bounded(async {
        let watcher = Tmux::connect(iso.server()).await.unwrap();
        let tmux = Tmux::connect_with(iso.server(), ConnectOptions::default().session("second"))
            .await
            .unwrap();
        let r = tmux
            .raw_line("display-message -p '#{client_pid}'")
            .await
            .unwrap();
        let pid = body_text(&r);
        let count = |w: Tmux| async move {
            let r = w.raw_line("list-clients -F '#{client_pid}'").await.unwrap();
            r.body.len()
        };
        // Subscribed before the round trip below, so the subscription is in
        // place (it is registered in order with commands) before the other
        // client leaves: the detach cannot arrive ahead of it.
        let mut events = watcher.subscribe();
        assert_eq!(count(watcher.clone()).await, 2);
        drop(tmux);
        // The other client sees the detach.
        loop {
            if let Event::Notification(tmux_control::proto::Notification::ClientDetached {
                ..
            }) = events.recv().await.unwrap()
            {
                break;
            }
        }
        assert_eq!(count(watcher.clone()).await, 1);
        // The client process is gone (reaped, not a zombie).
        let proc_path = format!("/proc/{pid}");
        for _ in 0..100 {
            if !std::path::Path::new(&proc_path).exists() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        panic!("client process {pid} still exists");
    })
    .await;
}

#[test]
fn isolated_servers_clean_up_on_drop_and_on_panic() {
    let dir;
    {
        let iso = IsolatedServer::new().unwrap();
        dir = iso.dir().to_owned();
        let rt = tokio::runtime::Runtime::new().unwrap();
        rt.block_on(async {
            let _tmux = Tmux::connect(iso.server()).await.unwrap();
        });
        assert!(iso.socket_path().exists());
    }
    assert!(!dir.exists(), "{} left behind", dir.display());

    let result = std::panic::catch_unwind(|| {
        let iso = IsolatedServer::new().unwrap();
        let rt = tokio::runtime::Runtime::new().unwrap();
        rt.block_on(async {
            let _tmux = Tmux::connect(iso.server()).await.unwrap();
        });
        std::fs::write("/dev/null", iso.dir().to_string_lossy().as_bytes()).unwrap();
        panic!("{}", iso.dir().display());
    });
    let msg = result.unwrap_err();
    let panicked_dir = msg.downcast_ref::<String>().unwrap();
    assert!(!std::path::Path::new(panicked_dir).exists());
    let _ = Server::named("unused"); // constructing an address starts nothing
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_never_answers_times_out() {
    // A "tmux" that accepts the connection but never says anything.
    let silent = Server::custom(["sh", "-c", "exec sleep 60"]).unwrap();
    let started = std::time::Instant::now();
    let err = bounded(Tmux::connect_with(
        &silent,
        ConnectOptions::default().timeout(Duration::from_millis(300)),
    ))
    .await
    .unwrap_err();
    assert!(matches!(err, Error::Timeout(_)), "{err}");
    assert!(started.elapsed() < Duration::from_secs(5));
}

/// A `tmux -C` client started here, its pipes handed to the library as
/// plain byte streams (as one reached through `docker exec -i` or an ssh
/// channel would be).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_reached_over_plain_streams_runs_commands_and_follows_panes() {
    use std::process::Stdio;
    use tmux_control::Pattern;
    use tmux_control::command::{NewSession, NewWindow, SendKeys};
    let iso = IsolatedServer::new().unwrap();
    bounded(async {
        // The isolated server's private socket (-S), never the default one.
        let mut child = tokio::process::Command::new("tmux") // -S: the private socket
            .arg("-S")
            .arg(iso.socket_path())
            .args([
                "-f",
                "/dev/null",
                "-C",
                "new-session",
                "-A",
                "-s",
                "streamed",
            ])
            .env("HOME", iso.dir())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let (stdout, stdin) = (child.stdout.take().unwrap(), child.stdin.take().unwrap());
        let tmux = Tmux::connect_stream(stdout, stdin, "piped client", ConnectOptions::default())
            .await
            .unwrap();
        assert_eq!(tmux.describe(), "piped client");
        assert!(tmux.server().is_none());
        let reply = tmux
            .raw_line("display-message -p '#{session_name}'")
            .await
            .unwrap();
        assert_eq!(body_text(&reply), "streamed");
        assert!(!tmux.version().to_string().is_empty());

        // Output of a pane in the attached session is routed and waited on.
        let created = tmux
            .run(NewWindow::new().command("exec cat"))
            .await
            .unwrap();
        let out = tmux.follow(created.pane).await.unwrap();
        let echoed = out.expect(Pattern::literal("over a pipe"));
        tmux.run(SendKeys::literal(created.pane, "over a pipe"))
            .await
            .unwrap();
        echoed.wait(Duration::from_secs(10)).await.unwrap();

        // A pane of another session would need a client of its own.
        let other = tmux
            .run(NewSession::new().session_name("elsewhere"))
            .await
            .unwrap();
        match tmux.follow(other.pane).await {
            Err(Error::InvalidArgument(why)) => assert!(why.contains("over a stream"), "{why}"),
            other => panic!("expected InvalidArgument, got {other:?}"),
        }

        // Dropping the last handle closes the streams: the client exits.
        drop((out, tmux));
        let status = tokio::time::timeout(Duration::from_secs(10), child.wait())
            .await
            .unwrap()
            .unwrap();
        assert!(status.success(), "{status:?}");
    })
    .await;
}
