//! `respawn`: start a pane's program again in the same pane.

use std::collections::BTreeMap;

use rmcp::handler::server::wrapper::Parameters;
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tmux_control::command::RespawnPane;

use crate::mcp::server::TmuxMcp;
use crate::reply::{Json, Summary, ToolError};
use crate::tools::Guarded;
use crate::tools::execute::{check_cwd, check_env};

const RESPAWN: &str = "Restart the program in a pane, keeping the pane (same id, place and output log): after its program exited, or to replace a stuck one (kill, default true, ends it first). command replaces what it runs. Returns the output cursor from just before the restart.";

/// Arguments of `respawn`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RespawnArgs {
    /// The pane: `%3` or an exact name.
    pub target: String,
    /// Shell command to run (default: what the pane ran before).
    pub command: Option<String>,
    /// Working directory (must exist).
    pub cwd: Option<String>,
    /// Environment variables for the new process.
    pub env: Option<BTreeMap<String, String>>,
    /// End a still-running program first (default true; false fails on one).
    pub kill: Option<bool>,
}

/// Result of `respawn`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct RespawnResult {
    /// The pane.
    pub pane: String,
    /// What it runs now (none: the default shell).
    pub command: Option<String>,
    /// Output cursor from just before the restart.
    pub cursor: u64,
}

impl Summary for RespawnResult {
    fn summary(&self) -> String {
        format!(
            "Restarted pane {} running {}; its new output starts at cursor={}.",
            self.pane,
            self.command.as_deref().unwrap_or("the default shell"),
            self.cursor
        )
    }
}

#[tool_router(router = respawn_router, vis = "pub(super)")]
impl TmuxMcp {
    #[tool(description = RESPAWN, annotations(title = "Respawn pane", read_only_hint = false, destructive_hint = true, idempotent_hint = false, open_world_hint = true))]
    pub(crate) async fn respawn(
        &self,
        Parameters(args): Parameters<RespawnArgs>,
    ) -> Result<Json<RespawnResult>, ToolError> {
        let conn = self.conn().await?;
        let r = conn.resolve(&args.target).await?;
        let what = format!("Respawning pane {}", r.pane);
        conn.refuse_home(&r, &what)?;
        self.guard(&conn, &r, Guarded::Respawn).await?;
        check_cwd(args.cwd.as_deref(), &what)?;
        check_env(args.env.as_ref(), &what)?;
        let po = conn.follow(r.pane).await?;
        let given = args.command.clone().filter(|c| !c.trim().is_empty());
        // Without a command tmux runs the pane's start command again: for a
        // terminal tmux-mcp created, the program it was created with.
        let mut cmd = RespawnPane::new(r.pane);
        if args.kill.unwrap_or(true) {
            cmd = cmd.kill();
        }
        if let Some(dir) = &args.cwd {
            cmd = cmd.start_directory(dir);
        }
        for (k, v) in args.env.clone().unwrap_or_default() {
            cmd = cmd.env(k, v);
        }
        if let Some(p) = &given {
            cmd = cmd.command(p);
        }
        let cursor = po.end_offset();
        // Its own start command again, an integrated shell tmux-mcp
        // started: the new one gets the hooks' nonce it needs.
        let relaunch = match given {
            None => conn.shells.relaunch(&conn.tmux, &po).await,
            Some(_) => None,
        };
        if let Some((_, nonce)) = &relaunch {
            cmd = cmd.env(tmux_control::shell::NONCE_VARIABLE, nonce);
        }
        // The new program is not the integrated shell the pane ran.
        conn.shells.forget(&conn.tmux, r.pane).await;
        conn.tmux
            .respawn(cmd)
            .await
            .map_err(|e| ToolError::tmux(what.clone(), &e))?;
        // A run still in progress there ended with the program it ran in.
        crate::terminal::runs::abandon(&conn.runs, r.pane, "the pane was respawned");
        if let Some((kind, nonce)) = relaunch {
            conn.shells
                .adopt(&conn.tmux, r.pane, kind, &nonce, cursor)
                .await;
        }
        // What it runs now: the command given, else its start command
        // without tmux-mcp's own wrapper.
        let shown = match given {
            Some(c) => Some(c),
            None => conn
                .tmux
                .start_command(r.pane)
                .await
                .ok()
                .filter(|c| !c.is_empty()),
        };
        Ok(Json(RespawnResult {
            pane: r.pane.to_string(),
            command: shown,
            cursor,
        }))
    }
}
