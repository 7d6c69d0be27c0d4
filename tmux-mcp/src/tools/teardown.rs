//! The `teardown` toolset: kill panes, windows, sessions and the server.
//! Off by default. Each tool refuses tmux-mcp's own control session and the
//! pane, window, session or server the MCP client itself runs in.

use rmcp::handler::server::wrapper::Parameters;
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tmux_control::command::{KillPane, KillSession, KillWindow};

use crate::mcp::server::TmuxMcp;
use crate::reply::{Json, Summary, ToolError};
use crate::tools::Guarded;

const KILL_PANE: &str = "Close one pane and end its program (the window closes with its last pane, the session with its last window). Irreversible: its scrollback is gone. \
Refuses the pane the MCP client itself runs in and tmux-mcp's own control session. Returns the ids of what was closed.";

const KILL_WINDOW: &str = "Close a window and every pane in it, ending their programs. Irreversible. \
Refuses the window the MCP client itself runs in and tmux-mcp's own control session. Returns the ids of what was closed.";

const KILL_SESSION: &str = "Close a session with all its windows and panes, ending their programs. Irreversible. \
Refuses the session the MCP client itself runs in and tmux-mcp's own control session. Returns the id and name of the session closed.";

const KILL_SERVER: &str = "Stop the whole tmux server tmux-mcp drives, closing every session on it (every agent's terminals, and anything humans run there). Irreversible. The next tool call starts a fresh server. \
Refuses when the MCP client itself runs inside that server. \
Returns which server was stopped.";

/// Arguments of `kill_pane`, `kill_window` and `kill_session`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct KillArgs {
    /// What to close (or anything in it): an id like `%3`, `@2`, `$1` or an exact name.
    pub target: String,
}

/// Arguments of `kill_server` (none).
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct KillServerArgs {}

/// Result of the kill tools.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct KillResult {
    /// pane, window, session or server.
    pub killed: String,
    /// The id closed (or the server's description).
    pub id: String,
    /// The session name, for a session.
    pub name: Option<String>,
}

impl Summary for KillResult {
    fn summary(&self) -> String {
        match &self.name {
            Some(name) => format!("Closed {} {} ({name:?})", self.killed, self.id),
            None => format!("Closed {} {}", self.killed, self.id),
        }
    }
}

#[tool_router(router = teardown_router, vis = "pub(crate)")]
impl TmuxMcp {
    #[tool(description = KILL_PANE, annotations(title = "Kill pane", read_only_hint = false, destructive_hint = true, idempotent_hint = false, open_world_hint = false))]
    pub(crate) async fn kill_pane(
        &self,
        Parameters(args): Parameters<KillArgs>,
    ) -> Result<Json<KillResult>, ToolError> {
        self.kill(&args.target, Guarded::KillPane).await
    }

    #[tool(description = KILL_WINDOW, annotations(title = "Kill window", read_only_hint = false, destructive_hint = true, idempotent_hint = false, open_world_hint = false))]
    pub(crate) async fn kill_window(
        &self,
        Parameters(args): Parameters<KillArgs>,
    ) -> Result<Json<KillResult>, ToolError> {
        self.kill(&args.target, Guarded::KillWindow).await
    }

    #[tool(description = KILL_SESSION, annotations(title = "Kill session", read_only_hint = false, destructive_hint = true, idempotent_hint = false, open_world_hint = false))]
    pub(crate) async fn kill_session(
        &self,
        Parameters(args): Parameters<KillArgs>,
    ) -> Result<Json<KillResult>, ToolError> {
        self.kill(&args.target, Guarded::KillSession).await
    }

    #[tool(description = KILL_SERVER, annotations(title = "Kill server", read_only_hint = false, destructive_hint = true, idempotent_hint = false, open_world_hint = false))]
    pub(crate) async fn kill_server(
        &self,
        Parameters(_args): Parameters<KillServerArgs>,
    ) -> Result<Json<KillResult>, ToolError> {
        let conn = self.conn().await?;
        let what = "Killing the tmux server";
        let home = conn.resolve(&conn.home.2.to_string()).await?;
        self.guard(&conn, &home, Guarded::KillServer).await?;
        match conn.tmux.run(tmux_control::command::KillServer).await {
            Ok(_) | Err(tmux_control::Error::Closed(_)) => {}
            Err(e) => return Err(ToolError::tmux(what, &e)),
        }
        let _ = tokio::time::timeout(std::time::Duration::from_secs(5), conn.tmux.closed()).await;
        self.backend.reset().await;
        Ok(Json(KillResult {
            killed: "server".to_owned(),
            id: self.backend.describe(),
            name: None,
        }))
    }
}

impl TmuxMcp {
    /// What `kill_pane`, `kill_window` and `kill_session` share: resolve
    /// `target`, refuse the home session and (by `action`) the caller's own
    /// terminal, then kill the pane, window or session it names.
    async fn kill(&self, target: &str, action: Guarded) -> Result<Json<KillResult>, ToolError> {
        let conn = self.conn().await?;
        let r = conn.resolve(target).await?;
        let (kind, what) = match action {
            Guarded::KillPane => ("pane", format!("Killing pane {}", r.pane)),
            Guarded::KillWindow => ("window", format!("Killing window {}", r.window)),
            _ => ("session", format!("Killing session {}", r.session)),
        };
        conn.refuse_home(&r, &what)?;
        self.guard(&conn, &r, action).await?;
        let err = |e: tmux_control::Error| ToolError::tmux(what.clone(), &e);
        let (id, name) = match action {
            Guarded::KillPane => {
                conn.tmux.run(KillPane::new(r.pane)).await.map_err(err)?;
                (r.pane.to_string(), None)
            }
            Guarded::KillWindow => {
                conn.tmux
                    .run(KillWindow::new(r.window))
                    .await
                    .map_err(err)?;
                (r.window.to_string(), None)
            }
            _ => {
                conn.tmux
                    .run(KillSession::new(r.session))
                    .await
                    .map_err(err)?;
                (r.session.to_string(), Some(r.session_name.clone()))
            }
        };
        Ok(Json(KillResult {
            killed: kind.to_owned(),
            id,
            name,
        }))
    }
}
