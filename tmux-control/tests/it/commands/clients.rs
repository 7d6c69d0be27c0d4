//! `list-clients` and `detach-client`: this library's own control clients
//! are listed, and detaching one ends that connection.

use super::connect;
use crate::common::bounded;
use tmux_control::command::{DetachClient, ListClients};
use tmux_control::{ConnectOptions, IsolatedServer, Tmux};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clients_are_listed_and_one_is_detached() {
    let iso = IsolatedServer::new().unwrap();
    bounded(async {
        let (tmux, session) = connect(&iso).await;
        let mine = tmux.run(ListClients::in_session(session)).await.unwrap();
        assert_eq!(mine.len(), 1, "{mine:?}");
        assert!(
            mine[0].control_mode && mine[0].session == Some(session),
            "{mine:?}"
        );
        assert!(!mine[0].name.is_empty());

        // A second connection to the same session is a second client.
        let other = Tmux::connect_with(
            iso.server(),
            ConnectOptions::default()
                .session(session.to_string())
                .attach_only(),
        )
        .await
        .unwrap();
        let both = tmux.run(ListClients::all()).await.unwrap();
        assert_eq!(both.len(), 2, "{both:?}");
        let second = both.iter().find(|c| c.name != mine[0].name).unwrap();
        tmux.run(DetachClient::client(second.name.clone()))
            .await
            .unwrap();
        // The detached client's connection ends (tmux sends it %exit).
        let why = other.closed().await;
        assert!(other.is_closed(), "{why}");
        assert_eq!(tmux.run(ListClients::all()).await.unwrap().len(), 1);
    })
    .await;
}
