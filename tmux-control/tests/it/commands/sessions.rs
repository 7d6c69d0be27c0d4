//! Sessions: `new-session` with every option, names (kept, cleaned or
//! refused per version), `list-sessions`, grouped sessions,
//! `has-session`, `rename-session` and `kill-session`.

use super::{bytes_of, command_error, connect, pane_row, read_file, session_row, sq, wait_command};
use crate::common::bounded;
use tmux_control::command::{
    DisplayMessage, EnvValue, HasSession, KillSession, ListPanes, ListSessions, ListWindows,
    NewSession, Raw, RenameSession, ShowEnvironment,
};
use tmux_control::{Error, IsolatedServer, SessionId};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn new_session_honours_name_window_directory_size_env_and_command() {
    let iso = IsolatedServer::new().unwrap();
    bounded(async {
        let (tmux, attached) = connect(&iso).await;
        let dir = iso.dir().join("work dir ✓ #1 $HOME");
        std::fs::create_dir(&dir).unwrap();
        let out = iso.dir().join("new-session.out");
        let name = "tc sess ✓ #{session_id} ## 😀";
        let created = tmux
            .run(
                NewSession::new()
                    .session_name(name)
                    .window_name("first: win #1 ✓")
                    .start_directory(bytes_of(&dir))
                    .size(100, 30)
                    .env("TC_FOO", "bar baz;$x #{y}")
                    .command(format!(
                        "printf '%s|%s' \"$TC_FOO\" \"$(pwd)\" > {}; exec sleep 600",
                        sq(&out)
                    )),
            )
            .await
            .unwrap();
        assert_ne!(created.session, attached, "new-session must stay detached");
        // The connection is still attached where it was.
        assert_eq!(tmux.attached_session(), Some(attached));
        let here = tmux
            .run(DisplayMessage::format("#{session_id}"))
            .await
            .unwrap();
        assert_eq!(&here[..], attached.to_string().as_bytes());

        let s = session_row(&tmux, created.session).await.unwrap();
        assert_eq!(s.name, name);
        assert_eq!(s.windows, 1);
        assert_eq!(s.attached, 0);
        assert_eq!(s.group, None);
        assert_eq!(s.path, dir);
        assert!(
            s.created > 1_600_000_000 && s.activity >= s.created,
            "{s:?}"
        );

        let windows = tmux
            .run(ListWindows::in_session(created.session))
            .await
            .unwrap();
        assert_eq!(windows.len(), 1, "{windows:?}");
        let w = &windows[0];
        assert_eq!(w.id, created.window);
        assert_eq!(w.session, created.session);
        assert_eq!(w.name, "first: win #1 ✓");
        assert_eq!((w.width, w.height), (100, 30));
        assert_eq!(w.panes, 1);
        assert!(w.active);

        let panes = tmux
            .run(ListPanes::in_window(created.window))
            .await
            .unwrap();
        assert_eq!(panes.len(), 1);
        assert_eq!(panes[0].id, created.pane);
        assert_eq!((panes[0].width, panes[0].height), (100, 30));

        // The command ran in the directory with the variable set.
        let got = read_file(&out, 1).await;
        let want = format!("bar baz;$x #{{y}}|{}", dir.display());
        assert_eq!(String::from_utf8(got).unwrap(), want);
        wait_command(&tmux, created.pane, "sleep").await;
        let p = pane_row(&tmux, created.pane).await.unwrap();
        assert_eq!(p.current_path, dir);
        assert_eq!(p.current_command, "sleep");
        assert!(p.pid.is_some() && !p.dead);
        // `-e` went into the session's environment.
        assert_eq!(
            tmux.run(ShowEnvironment::new("TC_FOO").target(created.session))
                .await
                .unwrap(),
            Some(EnvValue::Set("bar baz;$x #{y}".into()))
        );
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_names_list_rename_has_and_kill() {
    let iso = IsolatedServer::new().unwrap();
    bounded(async {
        let (tmux, attached) = connect(&iso).await;
        // (name given, name tmux keeps): before 3.7 tmux turns `:` and `.`
        // into `_`; 3.7 keeps them.
        let v3_7 = tmux.version().at_least(3, 7);
        let colon = if v3_7 {
            "colon:and.dot"
        } else {
            "colon_and_dot"
        };
        let mut names = vec![
            ("with space", "with space"),
            ("colon:and.dot", colon),
            ("hash #{session_id} ## #[x]", "hash #{session_id} ## #[x]"),
            ("日本語 ✓ 😀 é", "日本語 ✓ 😀 é"),
            ("-leading dash", "-leading dash"),
            ("quote's \"d\" \\ $HOME ~ ;", "quote's \"d\" \\ $HOME ~ ;"),
        ];
        let control = "ctl\there\nnl \u{1} \u{7f} \\x";
        if v3_7 {
            // 3.7 refuses names with control characters.
            let refused = tmux
                .run(NewSession::new().session_name(control).command("exec sleep 600"))
                .await;
            assert!(
                matches!(&refused, Err(Error::Command { message, .. }) if message.contains("invalid session name")),
                "{refused:?}"
            );
        } else {
            // tmux stores control characters escaped; they come back raw.
            names.push((control, control));
        }
        let mut ids = Vec::new();
        for &(given, kept) in &names {
            let c = tmux
                .run(
                    NewSession::new()
                        .session_name(given)
                        .command("exec sleep 600"),
                )
                .await
                .unwrap();
            let row = session_row(&tmux, c.session).await.unwrap();
            assert_eq!(row.name, kept, "given {given:?}");
            assert!(tmux.run(HasSession::new(c.session)).await.unwrap());
            ids.push((c.session, kept));
        }
        let all = tmux.run(ListSessions::new()).await.unwrap();
        assert_eq!(all.len(), names.len() + 1, "{all:#?}");
        assert!(
            all.iter()
                .any(|s| s.id == attached && s.name == "tmux-control")
        );
        assert_eq!(
            all.iter().find(|s| s.id == attached).unwrap().attached,
            1,
            "the control client counts as attached"
        );

        // A grouped session (made with Raw: the typed NewSession has no -t).
        let (base, base_name) = ids[0];
        let grouped = tmux
            .run(Raw::new("new-session").args([
                "-d",
                "-P",
                "-F",
                "#{session_id}",
                "-t",
                &base.to_string(),
                "-s",
                "grouped",
            ]))
            .await
            .unwrap();
        let grouped: SessionId = String::from_utf8_lossy(&grouped[0]).parse().unwrap();
        let g = session_row(&tmux, grouped).await.unwrap();
        let b = session_row(&tmux, base).await.unwrap();
        assert_eq!(g.group.as_deref(), Some(base_name), "{g:?}");
        assert_eq!(b.group, g.group, "{b:?}");
        assert_eq!(g.windows, b.windows);
        tmux.run(KillSession::new(grouped)).await.unwrap();

        // Exact-name targets.
        assert!(tmux.run(HasSession::new("=with space")).await.unwrap());
        if v3_7 {
            // The name keeps its `:`, which a target reads as the window
            // separator: such a session is reached by its id.
            assert!(!tmux.run(HasSession::new("=colon:and.dot")).await.unwrap());
            assert!(tmux.run(HasSession::new(ids[1].0)).await.unwrap());
        } else {
            assert!(tmux.run(HasSession::new("=colon_and_dot")).await.unwrap());
        }
        assert!(!tmux.run(HasSession::new("=with")).await.unwrap());
        assert!(!tmux.run(HasSession::new("=no such session")).await.unwrap());
        assert!(!tmux.run(HasSession::new(SessionId(999))).await.unwrap());

        // Rename, by id and by name.
        let (first, _) = ids[0];
        tmux.run(RenameSession::new(first, "renamed: ✓ #{x} -y"))
            .await
            .unwrap();
        let renamed = if v3_7 {
            "renamed: ✓ #{x} -y"
        } else {
            "renamed_ ✓ #{x} -y"
        };
        assert_eq!(session_row(&tmux, first).await.unwrap().name, renamed);
        tmux.run(RenameSession::new("=日本語 ✓ 😀 é", "plain"))
            .await
            .unwrap();
        assert_eq!(session_row(&tmux, ids[3].0).await.unwrap().name, "plain");
        command_error(
            tmux.run(RenameSession::new("=plain", renamed)).await,
            "rename-session",
        );

        // Kill by id and by exact name.
        tmux.run(KillSession::new(first)).await.unwrap();
        assert!(!tmux.run(HasSession::new(first)).await.unwrap());
        if v3_7 {
            tmux.run(KillSession::new(ids[1].0)).await.unwrap();
        } else {
            tmux.run(KillSession::new("=colon_and_dot")).await.unwrap();
        }
        assert!(!tmux.run(HasSession::new(ids[1].0)).await.unwrap());
        let left: Vec<SessionId> = tmux
            .run(ListSessions::new())
            .await
            .unwrap()
            .iter()
            .map(|s| s.id)
            .collect();
        assert_eq!(left.len(), names.len() - 1);
        assert!(!left.contains(&first) && !left.contains(&ids[1].0));
        command_error(tmux.run(KillSession::new(first)).await, "kill-session");
    })
    .await;
}
