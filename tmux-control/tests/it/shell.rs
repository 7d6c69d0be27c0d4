//! Shell integration on real shells (bash, zsh and fish, each as Debian
//! installs it) in real tmux: the hooks mark prompts and commands, and
//! `ShellTracker` reads back each command's output, exit status and
//! pipeline statuses, including after an interrupt. Every shell gets a
//! private, empty `HOME`, so no start-up file of the machine's user is read.

use std::time::Duration;

use tmux_control::command::{Key, NewPane, NewWindow, SendKeys};
use tmux_control::shell::{
    FinishedCommand, ShellEvent, ShellIntegration, ShellKind, ShellPhase, ShellTracker, shell_nonce,
};
use tmux_control::{IsolatedServer, PaneChunk, PaneOutput, Tmux};

use crate::common::bounded;

/// Feeds `tracker` from where it stopped until `done` says so.
async fn feed_until(
    out: &PaneOutput,
    tracker: &mut ShellTracker,
    mut done: impl FnMut(&ShellEvent) -> bool,
) -> ShellEvent {
    let mut stream = out.stream_from(tracker.resume_offset());
    loop {
        match stream.next().await {
            Some(PaneChunk::Output { offset, data }) => {
                for event in tracker.feed(offset, &data) {
                    if done(&event) {
                        return event;
                    }
                }
            }
            Some(PaneChunk::Missed { to, .. }) => tracker.skip_to(to),
            Some(_) => {}
            None => panic!("the pane ended"),
        }
    }
}

/// Waits until the shell reads a command line.
async fn ready(out: &PaneOutput, tracker: &mut ShellTracker) {
    if tracker.phase() != ShellPhase::Ready {
        feed_until(out, tracker, |e| matches!(e, ShellEvent::Ready(_))).await;
    }
}

/// Types `line` and Enter, and returns how the shell finished it.
async fn run(tmux: &Tmux, out: &PaneOutput, t: &mut ShellTracker, line: &str) -> FinishedCommand {
    ready(out, t).await;
    tmux.type_text(out.pane(), line).await.unwrap();
    t.typed(out.end_offset());
    tmux.run(SendKeys::keys(out.pane(), [Key::ENTER]))
        .await
        .unwrap();
    match feed_until(out, t, |e| matches!(e, ShellEvent::Finished(_))).await {
        ShellEvent::Finished(f) => f,
        _ => unreachable!(),
    }
}

/// The command's output as plain text: escape sequences (a shell's title
/// and mode changes) and carriage returns removed, trailing space trimmed.
fn text(out: &PaneOutput, f: &FinishedCommand) -> String {
    let len = usize::try_from(f.output_end - f.output_start).unwrap();
    let (at, bytes) = out.read_from(f.output_start, len);
    assert_eq!(at, f.output_start);
    let mut plain = Vec::new();
    tmux_control::PlainText::new().feed(&bytes, &mut plain);
    let text = String::from_utf8_lossy(&plain).replace(['\r', '\x0f'], "");
    text.trim_end().to_owned()
}

/// Where [`check_shell`]'s shell reads its hooks from.
#[derive(Clone, Copy, PartialEq, Debug)]
enum From {
    /// Files in a directory.
    Files,
    /// The server's options, published over the connection.
    Tmux,
}

async fn check_shell(kind: ShellKind, program: &str, from: From) {
    let iso = IsolatedServer::new().unwrap();
    bounded(async {
        let tmux = Tmux::connect(iso.server()).await.unwrap();
        let home = iso.dir().join("home");
        std::fs::create_dir(&home).unwrap();
        let hooks = match from {
            From::Files => ShellIntegration::install(iso.dir().join("hooks")).unwrap(),
            From::Tmux => {
                let hooks = ShellIntegration::through_tmux("tmux");
                hooks.publish(&tmux).await.unwrap();
                hooks
            }
        };
        let nonce = shell_nonce();
        let launch = hooks.launch(kind, program, &nonce).unwrap();
        let mut what = NewPane::from(NewWindow::new())
            .command(&launch.command)
            .env("HOME", home.to_str().unwrap());
        for (k, v) in &launch.env {
            what = what.env(k.clone(), v);
        }
        let spawned = tmux.spawn(what).await.unwrap();
        let out = spawned.output.clone();
        let mut t = ShellTracker::new(&nonce, spawned.start);
        let name = kind.name();

        let f = run(&tmux, &out, &mut t, "false | true").await;
        assert_eq!(
            (f.status, f.pipestatus.clone()),
            (Some(0), vec![1, 0]),
            "{name}"
        );
        assert!(f.ran, "{name}");

        let f = run(&tmux, &out, &mut t, "sh -c 'exit 42'").await;
        assert_eq!(f.status, Some(42), "{name}");

        let sum = if kind == ShellKind::Fish {
            "math 1 + 1"
        } else {
            "echo $((1+1))"
        };
        let f = run(&tmux, &out, &mut t, sum).await;
        assert_eq!(text(&out, &f), "2", "{name}");
        assert_eq!(f.status, Some(0), "{name}");

        let f = run(&tmux, &out, &mut t, "cd /tmp").await;
        assert_eq!(f.status, Some(0), "{name}");
        ready(&out, &mut t).await;
        assert_eq!(t.directory(), Some(std::path::Path::new("/tmp")), "{name}");
        let f = run(&tmux, &out, &mut t, "pwd").await;
        assert_eq!(text(&out, &f), "/tmp", "{name}");

        // An interrupt ends the command like any other: 130, and the shell
        // runs the next line.
        ready(&out, &mut t).await;
        // The interrupt is sent once the program runs (a shell that is still
        // starting the job reads a C-c as a key for its line editor).
        // (The pattern is not in the typed line, which the shell echoes.)
        let started = out.expect(tmux_control::Pattern::literal("running-42"));
        tmux.type_text(
            out.pane(),
            "sh -c 'echo running-$((6*7)); exec sleep 30'; echo after",
        )
        .await
        .unwrap();
        tmux.run(SendKeys::keys(out.pane(), [Key::ENTER]))
            .await
            .unwrap();
        started.wait(Duration::from_secs(10)).await.unwrap();
        tmux.run(SendKeys::keys(out.pane(), [Key::ctrl('c').unwrap()]))
            .await
            .unwrap();
        let ended = tokio::time::timeout(
            Duration::from_secs(10),
            feed_until(&out, &mut t, |e| matches!(e, ShellEvent::Finished(_))),
        )
        .await
        .unwrap_or_else(|_| {
            let (_, log) = out.read_from(0, 1 << 20);
            panic!(
                "{name}: no end mark after C-c in {:?}",
                String::from_utf8_lossy(&log)
            )
        });
        let ShellEvent::Finished(f) = ended else {
            unreachable!()
        };
        assert_eq!(f.status, Some(130), "{name}");
        assert!(!text(&out, &f).contains("after"), "{name}");
        let f = run(&tmux, &out, &mut t, "echo next").await;
        assert_eq!(text(&out, &f), "next", "{name}");

        // A line the shell does not run still ends.
        let f = run(&tmux, &out, &mut t, "").await;
        assert!(!f.ran, "{name}");

        if from == From::Tmux && kind != ShellKind::Fish {
            // The temporary start-up files were removed as they were read.
            let f = run(&tmux, &out, &mut t, "echo \"rc=${TMUX_CONTROL_RC:-unset}\"").await;
            assert_eq!(text(&out, &f), "rc=unset", "{name}");
        }
    })
    .await;
}

/// The path of `name` on PATH; a shell the set-up script installs.
fn shell(name: &str) -> String {
    std::env::split_paths(&std::env::var_os("PATH").unwrap())
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("{name} is not installed (scripts/setup installs it)"))
        .display()
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bash_marks_commands_statuses_and_interrupts() {
    check_shell(ShellKind::Bash, &shell("bash"), From::Files).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zsh_marks_commands_statuses_and_interrupts() {
    check_shell(ShellKind::Zsh, &shell("zsh"), From::Files).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fish_marks_commands_statuses_and_interrupts() {
    check_shell(ShellKind::Fish, &shell("fish"), From::Files).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bash_reads_its_hooks_through_tmux() {
    check_shell(ShellKind::Bash, &shell("bash"), From::Tmux).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zsh_reads_its_hooks_through_tmux() {
    check_shell(ShellKind::Zsh, &shell("zsh"), From::Tmux).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fish_reads_its_hooks_through_tmux() {
    check_shell(ShellKind::Fish, &shell("fish"), From::Tmux).await;
}

/// A pane opened without a command, by anyone, runs the server's
/// `default-command`: each supported shell starts with the hooks and
/// announces its nonce in the pane's option; another shell starts plainly.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_default_command_integrates_and_announces_every_new_shell() {
    use tmux_control::command::{OptionScope, SetOption, ShowOption};
    let iso = IsolatedServer::new().unwrap();
    bounded(async {
        let tmux = Tmux::connect(iso.server()).await.unwrap();
        let home = iso.dir().join("home");
        std::fs::create_dir(&home).unwrap();
        for from in [From::Files, From::Tmux] {
            let hooks = match from {
                From::Files => ShellIntegration::install(iso.dir().join("hooks")).unwrap(),
                From::Tmux => ShellIntegration::through_tmux("tmux"),
            };
            hooks.publish(&tmux).await.unwrap();
            let command = hooks.default_command("@test-shell").unwrap();
            tmux.run(SetOption::new(OptionScope::Session, "default-command", command).global())
                .await
                .unwrap();
            for (kind, program) in [
                (Some(ShellKind::Bash), shell("bash")),
                (Some(ShellKind::Zsh), shell("zsh")),
                (Some(ShellKind::Fish), shell("fish")),
                (None, shell("dash")),
            ] {
                // tmux gives each pane its default-shell as $SHELL.
                tmux.run(SetOption::new(OptionScope::Session, "default-shell", &program).global())
                    .await
                    .unwrap();
                let spawned = tmux
                    .spawn(NewPane::from(NewWindow::new()).env("HOME", home.to_str().unwrap()))
                    .await
                    .unwrap();
                let out = spawned.output.clone();
                let Some(kind) = kind else {
                    // dash: no hooks, no announcement; it runs commands.
                    let seen = out.expect(tmux_control::Pattern::literal("plain-6"));
                    tmux.type_text(out.pane(), "echo plain-$((2*3))")
                        .await
                        .unwrap();
                    tmux.run(SendKeys::keys(out.pane(), [Key::ENTER]))
                        .await
                        .unwrap();
                    seen.wait(Duration::from_secs(10)).await.unwrap();
                    let option = tmux
                        .run(ShowOption::new(OptionScope::Pane, "@test-shell").target(out.pane()))
                        .await
                        .unwrap();
                    assert!(option.is_none(), "{option:?}");
                    continue;
                };
                // The shell announces itself before it starts; the first
                // prompt's marks carry the nonce it announced.
                let mut t = ShellTracker::new("0", spawned.start);
                let announced = loop {
                    let option = tmux
                        .run(ShowOption::new(OptionScope::Pane, "@test-shell").target(out.pane()))
                        .await
                        .unwrap();
                    if let Some(value) = option.and_then(|v| v.as_str().map(str::to_owned)) {
                        break value;
                    }
                    // Not announced yet: wait for the pane's next output
                    // (the prompt comes after the announcement).
                    let mut more = out.stream_from(out.end_offset());
                    let _ = tokio::time::timeout(Duration::from_secs(1), more.next()).await;
                };
                let (name, nonce) = announced.trim().split_once(' ').unwrap();
                assert_eq!(name, kind.name());
                assert_eq!(nonce.len(), 16, "{announced:?}");
                t = ShellTracker::new(nonce, t.resume_offset());
                let f = run(&tmux, &out, &mut t, "false | true").await;
                assert_eq!(
                    (f.status, f.pipestatus.clone()),
                    (Some(0), vec![1, 0]),
                    "{name} {from:?}"
                );
            }
        }
    })
    .await;
}
