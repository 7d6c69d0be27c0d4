//! Options at every scope: `set-option`, `show-options` and unsetting.

use super::{command_error, connect, display, invalid};
use crate::common::bounded;
use tmux_control::IsolatedServer;
use tmux_control::command::{NewWindow, OptionScope, SetOption, ShowOption, SplitWindow};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn options_at_every_scope_set_show_and_unset() {
    let iso = IsolatedServer::new().unwrap();
    bounded(async {
        let (tmux, session) = connect(&iso).await;
        let created = tmux
            .run(NewWindow::new().command("exec sleep 600"))
            .await
            .unwrap();
        let other = tmux
            .run(
                SplitWindow::new()
                    .target(created.pane)
                    .command("exec sleep 600"),
            )
            .await
            .unwrap();
        let show = |cmd: ShowOption| {
            let tmux = tmux.clone();
            async move { tmux.run(cmd).await.unwrap() }
        };
        let value = |v: Option<tmux_control::command::OptionValue>| {
            v.map(|v| String::from_utf8(v.into_bytes().to_vec()).unwrap())
        };

        // Server.
        tmux.run(SetOption::new(OptionScope::Server, "escape-time", "42"))
            .await
            .unwrap();
        let v = show(ShowOption::new(OptionScope::Server, "escape-time")).await;
        assert_eq!(v.as_ref().and_then(|v| v.as_number()), Some(42));
        tmux.run(SetOption::new(OptionScope::Server, "@srv", "x y;z #{a}"))
            .await
            .unwrap();
        assert_eq!(
            value(show(ShowOption::new(OptionScope::Server, "@srv")).await).as_deref(),
            Some("x y;z #{a}")
        );
        tmux.run(SetOption::unset(OptionScope::Server, "escape-time"))
            .await
            .unwrap();
        // The default changed in tmux 3.5.
        let default = if tmux.version().at_least(3, 5) {
            "10"
        } else {
            "500"
        };
        assert_eq!(
            value(show(ShowOption::new(OptionScope::Server, "escape-time")).await).as_deref(),
            Some(default),
            "unset goes back to the default"
        );

        // Session: global, local, user options, unset and inheritance.
        tmux.run(SetOption::new(OptionScope::Session, "status", "off").global())
            .await
            .unwrap();
        let v = show(ShowOption::new(OptionScope::Session, "status").global()).await;
        assert_eq!(v.unwrap().as_bool(), Some(false));
        let hl = show(ShowOption::new(OptionScope::Session, "history-limit").global()).await;
        assert_eq!(
            value(hl).as_deref(),
            Some("50000"),
            "from the isolated config"
        );
        tmux.run(SetOption::new(OptionScope::Session, "history-limit", "1234").target(session))
            .await
            .unwrap();
        assert_eq!(
            value(
                show(ShowOption::new(OptionScope::Session, "history-limit").target(session)).await
            )
            .as_deref(),
            Some("1234")
        );
        tmux.run(SetOption::unset(OptionScope::Session, "history-limit").target(session))
            .await
            .unwrap();
        assert_eq!(
            show(ShowOption::new(OptionScope::Session, "history-limit").target(session)).await,
            None,
            "not set locally any more"
        );
        assert_eq!(
            value(
                show(
                    ShowOption::new(OptionScope::Session, "history-limit")
                        .target(session)
                        .inherited()
                )
                .await
            )
            .as_deref(),
            Some("50000")
        );
        let note = "a #b; c $HOME ~ 'q' \"d\" \\ ✓ #{session_name}";
        tmux.run(SetOption::new(OptionScope::Session, "@note", note).target(session))
            .await
            .unwrap();
        assert_eq!(
            value(show(ShowOption::new(OptionScope::Session, "@note").target(session)).await)
                .as_deref(),
            Some(note)
        );
        assert_eq!(
            show(ShowOption::new(OptionScope::Session, "@note").global()).await,
            None
        );
        tmux.run(SetOption::new(OptionScope::Session, "@lines", "a\nb\tc").target(session))
            .await
            .unwrap();
        assert_eq!(
            value(show(ShowOption::new(OptionScope::Session, "@lines").target(session)).await)
                .as_deref(),
            Some("a\nb\tc")
        );
        tmux.run(SetOption::new(OptionScope::Session, "@empty", "").target(session))
            .await
            .unwrap();
        assert_eq!(
            value(show(ShowOption::new(OptionScope::Session, "@empty").target(session)).await)
                .as_deref(),
            Some("")
        );
        tmux.run(SetOption::unset(OptionScope::Session, "@note").target(session))
            .await
            .unwrap();
        assert_eq!(
            show(ShowOption::new(OptionScope::Session, "@note").target(session)).await,
            None
        );
        assert_eq!(
            show(ShowOption::new(OptionScope::Session, "@never").target(session)).await,
            None
        );

        // Window.
        let w = created.window;
        let mk = show(ShowOption::new(OptionScope::Window, "mode-keys").global()).await;
        assert_eq!(value(mk).as_deref(), Some("emacs"));
        tmux.run(SetOption::new(OptionScope::Window, "mode-keys", "vi").target(w))
            .await
            .unwrap();
        assert_eq!(
            value(show(ShowOption::new(OptionScope::Window, "mode-keys").target(w)).await)
                .as_deref(),
            Some("vi")
        );
        assert_eq!(
            display(&tmux, created.pane, "#{mode-keys}").await,
            "vi",
            "the value is in effect"
        );
        tmux.run(SetOption::unset(OptionScope::Window, "mode-keys").target(w))
            .await
            .unwrap();
        assert_eq!(
            show(ShowOption::new(OptionScope::Window, "mode-keys").target(w)).await,
            None
        );
        assert_eq!(
            value(
                show(
                    ShowOption::new(OptionScope::Window, "mode-keys")
                        .target(w)
                        .inherited()
                )
                .await
            )
            .as_deref(),
            Some("emacs")
        );

        // Pane.
        tmux.run(SetOption::new(OptionScope::Pane, "remain-on-exit", "on").target(created.pane))
            .await
            .unwrap();
        assert_eq!(
            show(ShowOption::new(OptionScope::Pane, "remain-on-exit").target(created.pane))
                .await
                .unwrap()
                .as_bool(),
            Some(true)
        );
        assert_eq!(
            show(ShowOption::new(OptionScope::Pane, "remain-on-exit").target(other.pane)).await,
            None
        );
        assert_eq!(
            show(
                ShowOption::new(OptionScope::Pane, "remain-on-exit")
                    .target(other.pane)
                    .inherited()
            )
            .await
            .unwrap()
            .as_bool(),
            Some(false)
        );
        tmux.run(SetOption::new(OptionScope::Pane, "@tag", "pane tag").target(other.pane))
            .await
            .unwrap();
        assert_eq!(display(&tmux, other.pane, "#{@tag}").await, "pane tag");
        tmux.run(SetOption::unset(OptionScope::Pane, "remain-on-exit").target(created.pane))
            .await
            .unwrap();
        assert_eq!(
            show(ShowOption::new(OptionScope::Pane, "remain-on-exit").target(created.pane)).await,
            None
        );

        // An array option by index.
        tmux.run(SetOption::new(OptionScope::Server, "user-keys[3]", "\\e[99~").global())
            .await
            .unwrap();
        assert_eq!(
            value(show(ShowOption::new(OptionScope::Server, "user-keys[3]")).await).as_deref(),
            Some("\\e[99~")
        );

        // Errors.
        command_error(
            tmux.run(ShowOption::new(OptionScope::Session, "no-such-option"))
                .await,
            "show-options",
        );
        command_error(
            tmux.run(SetOption::new(OptionScope::Session, "status", "sideways").global())
                .await,
            "set-option",
        );
        invalid(
            tmux.run(SetOption::new(OptionScope::Session, "#{x}", "1"))
                .await,
        );
        invalid(tmux.run(ShowOption::new(OptionScope::Session, "a b")).await);
    })
    .await;
}
