//! The environment: `set-environment`, `show-environment`, unsetting and
//! removing, and new processes seeing it.

use super::{command_error, connect, invalid, read_file, sq};
use crate::common::bounded;
use tmux_control::IsolatedServer;
use tmux_control::command::{EnvValue, NewWindow, SetEnvironment, ShowEnvironment};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn environment_set_show_unset_remove_and_new_processes_see_it() {
    let iso = IsolatedServer::new().unwrap();
    bounded(async {
        let (tmux, session) = connect(&iso).await;
        let value = "a b $HOME ;#x 'q' \"d\" \\ ✓ #{pane_id}";

        tmux.run(SetEnvironment::set("TC_G", value).global())
            .await
            .unwrap();
        assert_eq!(
            tmux.run(ShowEnvironment::new("TC_G").global()).await.unwrap(),
            Some(EnvValue::Set(value.into()))
        );
        assert_eq!(
            tmux.run(ShowEnvironment::new("TC_G").target(session))
                .await
                .unwrap(),
            None,
            "global only"
        );

        tmux.run(SetEnvironment::set("TC_S", "session value").target(session))
            .await
            .unwrap();
        tmux.run(SetEnvironment::set("TC_LINES", "a\nb\tc \u{1} \\").target(session))
            .await
            .unwrap();
        assert_eq!(
            tmux.run(ShowEnvironment::new("TC_LINES").target(session))
                .await
                .unwrap(),
            Some(EnvValue::Set("a\nb\tc \u{1} \\".into()))
        );
        tmux.run(SetEnvironment::set("TC_EMPTY", "").target(session))
            .await
            .unwrap();
        assert_eq!(
            tmux.run(ShowEnvironment::new("TC_S").target(session))
                .await
                .unwrap(),
            Some(EnvValue::Set("session value".into()))
        );
        assert_eq!(
            tmux.run(ShowEnvironment::new("TC_EMPTY").target(session))
                .await
                .unwrap(),
            Some(EnvValue::Set("".into()))
        );
        assert_eq!(
            tmux.run(ShowEnvironment::new("TC_S").global()).await.unwrap(),
            None
        );

        // Removal mark: hides the global value from the session's processes.
        tmux.run(SetEnvironment::set("TC_HIDDEN", "global").global())
            .await
            .unwrap();
        tmux.run(SetEnvironment::remove("TC_HIDDEN").target(session))
            .await
            .unwrap();
        assert_eq!(
            tmux.run(ShowEnvironment::new("TC_HIDDEN").target(session))
                .await
                .unwrap(),
            Some(EnvValue::Removed)
        );

        // New processes of the session see all of it.
        let out = iso.dir().join("env.out");
        tmux.run(NewWindow::new().target(session).command(format!(
            "printf '%s|%s|%s|%s' \"$TC_G\" \"$TC_S\" \"${{TC_HIDDEN-unset}}\" \"${{TC_EMPTY-unset}}\" > {}",
            sq(&out)
        )))
        .await
        .unwrap();
        let got = read_file(&out, 1).await;
        assert_eq!(
            String::from_utf8(got).unwrap(),
            format!("{value}|session value|unset|")
        );

        // Unset.
        tmux.run(SetEnvironment::unset("TC_S").target(session))
            .await
            .unwrap();
        assert_eq!(
            tmux.run(ShowEnvironment::new("TC_S").target(session))
                .await
                .unwrap(),
            None
        );
        tmux.run(SetEnvironment::unset("TC_G").global())
            .await
            .unwrap();
        assert_eq!(
            tmux.run(ShowEnvironment::new("TC_G").global()).await.unwrap(),
            None
        );
        command_error(
            tmux.run(ShowEnvironment::new("X").target("=no such session"))
                .await,
            "show-environment",
        );
        invalid(tmux.run(SetEnvironment::set("A=B", "1").global()).await);
        invalid(tmux.run(ShowEnvironment::new("").global()).await);
    })
    .await;
}
