//! The `manage` toolset: names, sizes, selection, layout and attached
//! clients. Nothing here starts a process or sends input.

use rmcp::handler::server::wrapper::Parameters;
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tmux_control::command::{
    DetachClient, ListClients, RenameSession, RenameWindow, ResizePane, ResizeWindow, SelectLayout,
    SelectPane, SelectWindow, Size,
};

use crate::mcp::server::TmuxMcp;
use crate::reply::{Json, Summary, ToolError};
use crate::terminal::backend::{check_session_name, check_window_name};

const RENAME: &str = "Rename a session (what=session; the reply gives the new attach command) or a window (what=window), or set a pane's title (what=pane). Ids never change, so prefer them as targets.";

const RESIZE: &str = "Resize a window (what=window, the default; a lone pane grows with it) or one pane inside its window (what=pane): give width, height or both. Programs see the new size at once. Returns the pane's and the window's size.";

const SELECT: &str = "Make a pane the active pane of its window, and its window the current one: what a human attached to the session sees. Returns the selected ids.";

const SET_LAYOUT: &str = "Arrange a window's panes with a tmux layout: even-horizontal (side by side), even-vertical (stacked), main-horizontal, main-vertical, tiled, or a layout string as tmux prints it (#{window_layout}). Returns the layout string afterwards.";

const DETACH_CLIENTS: &str = "Detach every human client attached to a session, e.g. to stop someone watching or to let the window take its own size. tmux-mcp's own connections stay. Returns the clients detached (none is no error).";

/// What `rename` renames.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum RenameWhat {
    /// The target's session.
    Session,
    /// The target's window.
    Window,
    /// The target pane's title.
    Pane,
}

/// Arguments of `rename`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RenameArgs {
    /// `%3`, `@2`, `$1` or an exact name.
    pub target: String,
    /// session, window or pane (its title).
    pub what: RenameWhat,
    /// The new name or title.
    pub name: String,
}

/// Result of `rename`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct RenameResult {
    /// What was renamed.
    pub what: RenameWhat,
    /// Its id.
    pub id: String,
    /// The new name.
    pub name: String,
    /// For a session: the new attach command.
    pub attach_command: Option<String>,
}

impl Summary for RenameResult {
    fn summary(&self) -> String {
        let kind = match self.what {
            RenameWhat::Session => "session",
            RenameWhat::Window => "window",
            RenameWhat::Pane => "the title of pane",
        };
        let mut s = format!("Renamed {kind} {} to {:?}", self.id, self.name);
        if let Some(a) = &self.attach_command {
            s.push_str(&format!("; watch: {a}"));
        }
        s
    }
}

/// What `resize` resizes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ResizeWhat {
    /// The target's window (default).
    #[default]
    Window,
    /// The target pane inside its window.
    Pane,
}

/// Arguments of `resize`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ResizeArgs {
    /// `%3`, `@2` or an exact name.
    pub target: String,
    /// window (default) or pane.
    #[serde(default)]
    pub what: ResizeWhat,
    /// Columns.
    #[schemars(range(min = 2, max = 10_000))]
    pub width: Option<u32>,
    /// Rows.
    #[schemars(range(min = 2, max = 10_000))]
    pub height: Option<u32>,
}

/// Result of `resize`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct ResizeResult {
    /// The pane.
    pub pane: String,
    /// Its columns now.
    pub pane_width: u32,
    /// Its rows now.
    pub pane_height: u32,
    /// The window.
    pub window: String,
}

impl Summary for ResizeResult {
    fn summary(&self) -> String {
        format!(
            "Pane {} in window {} is now {}x{}",
            self.pane, self.window, self.pane_width, self.pane_height
        )
    }
}

/// Arguments of `select`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SelectArgs {
    /// The pane (or window) to select.
    pub target: String,
}

/// Result of `select`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct SelectResult {
    /// The session.
    pub session: String,
    /// The window now current in it.
    pub window: String,
    /// The pane now active in that window.
    pub pane: String,
}

impl Summary for SelectResult {
    fn summary(&self) -> String {
        format!(
            "Selected pane {} in window {} of session {}",
            self.pane, self.window, self.session
        )
    }
}

/// Arguments of `set_layout`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SetLayoutArgs {
    /// The window (or a pane in it).
    pub target: String,
    /// A layout name or a tmux layout string.
    pub layout: String,
}

/// Result of `set_layout`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct SetLayoutResult {
    /// The window.
    pub window: String,
    /// Its layout string now.
    pub layout: String,
}

impl Summary for SetLayoutResult {
    fn summary(&self) -> String {
        format!("Window {} now has layout {}", self.window, self.layout)
    }
}

/// Arguments of `detach_clients`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct DetachClientsArgs {
    /// The session (or anything in it).
    pub target: String,
}

/// Result of `detach_clients`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct DetachClientsResult {
    /// The session.
    pub session: String,
    /// Names (terminals) of the clients detached.
    pub detached: Vec<String>,
}

impl Summary for DetachClientsResult {
    fn summary(&self) -> String {
        if self.detached.is_empty() {
            format!("No human client was attached to session {}", self.session)
        } else {
            format!(
                "Detached {} client(s) from session {}: {}",
                self.detached.len(),
                self.session,
                self.detached.join(", ")
            )
        }
    }
}

const LAYOUTS: &[&str] = &[
    "even-horizontal",
    "even-vertical",
    "main-horizontal",
    "main-vertical",
    "tiled",
];

fn check_layout(layout: &str) -> Result<(), ToolError> {
    let custom = !layout.is_empty()
        && layout
            .bytes()
            .all(|b| b.is_ascii_hexdigit() || b.is_ascii_digit() || b",x{}[]".contains(&b));
    if LAYOUTS.contains(&layout) || custom {
        Ok(())
    } else {
        Err(ToolError::new(
            format!("Setting layout {layout:?}"),
            "it is neither a layout name nor a tmux layout string",
            "Use one of even-horizontal, even-vertical, main-horizontal, main-vertical, tiled",
        ))
    }
}

#[tool_router(router = manage_router, vis = "pub(crate)")]
impl TmuxMcp {
    #[tool(description = RENAME, annotations(title = "Rename", read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = false))]
    pub(crate) async fn rename(
        &self,
        Parameters(args): Parameters<RenameArgs>,
    ) -> Result<Json<RenameResult>, ToolError> {
        let conn = self.conn().await?;
        let r = conn.resolve(&args.target).await?;
        let what = format!("Renaming {}", args.target);
        conn.refuse_home(&r, &what)?;
        let err = |e: tmux_control::Error| ToolError::tmux(what.clone(), &e);
        let (id, attach_command) = match args.what {
            RenameWhat::Session => {
                check_session_name(&args.name)?;
                conn.tmux
                    .run(RenameSession::new(r.session, &args.name))
                    .await
                    .map_err(err)?;
                (
                    r.session.to_string(),
                    Some(self.backend.attach_command(&args.name)),
                )
            }
            RenameWhat::Window => {
                check_window_name(&args.name, &what)?;
                conn.tmux
                    .run(RenameWindow::new(r.window, &args.name))
                    .await
                    .map_err(err)?;
                (r.window.to_string(), None)
            }
            RenameWhat::Pane => {
                if args.name.chars().any(char::is_control) {
                    return Err(ToolError::new(
                        what,
                        "the title contains control characters",
                        "Use printable characters",
                    ));
                }
                conn.tmux
                    .run(SelectPane::new(r.pane).title(&args.name))
                    .await
                    .map_err(err)?;
                (r.pane.to_string(), None)
            }
        };
        Ok(Json(RenameResult {
            what: args.what,
            id,
            name: args.name,
            attach_command,
        }))
    }

    #[tool(description = RESIZE, annotations(title = "Resize", read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = false))]
    pub(crate) async fn resize(
        &self,
        Parameters(args): Parameters<ResizeArgs>,
    ) -> Result<Json<ResizeResult>, ToolError> {
        let conn = self.conn().await?;
        let r = conn.resolve(&args.target).await?;
        let what = format!("Resizing {}", args.target);
        conn.refuse_home(&r, &what)?;
        if args.width.is_none() && args.height.is_none() {
            return Err(ToolError::new(
                what,
                "neither width nor height was given",
                "Give width, height or both",
            ));
        }
        if args.width.is_some_and(|w| !(2..=10_000).contains(&w))
            || args.height.is_some_and(|h| !(2..=10_000).contains(&h))
        {
            return Err(ToolError::new(
                what,
                "sizes must be between 2 and 10000",
                "Use a sensible size such as 120x40",
            ));
        }
        let err = |e: tmux_control::Error| ToolError::tmux(what.clone(), &e);
        match args.what {
            ResizeWhat::Window => {
                let mut cmd = ResizeWindow::new(r.window);
                if let Some(w) = args.width {
                    cmd = cmd.width(w);
                }
                if let Some(h) = args.height {
                    cmd = cmd.height(h);
                }
                conn.tmux.run(cmd).await.map_err(err)?;
            }
            ResizeWhat::Pane => {
                let mut cmd = ResizePane::new(r.pane);
                if let Some(w) = args.width {
                    cmd = cmd.width(Size::Cells(w));
                }
                if let Some(h) = args.height {
                    cmd = cmd.height(Size::Cells(h));
                }
                conn.tmux.run(cmd).await.map_err(err)?;
            }
        }
        let row = conn.pane_row(r.pane).await?;
        Ok(Json(ResizeResult {
            pane: r.pane.to_string(),
            pane_width: row.width,
            pane_height: row.height,
            window: r.window.to_string(),
        }))
    }

    #[tool(description = SELECT, annotations(title = "Select", read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = false))]
    pub(crate) async fn select(
        &self,
        Parameters(args): Parameters<SelectArgs>,
    ) -> Result<Json<SelectResult>, ToolError> {
        let conn = self.conn().await?;
        let r = conn.resolve(&args.target).await?;
        let what = format!("Selecting {}", args.target);
        conn.refuse_home(&r, &what)?;
        let err = |e: tmux_control::Error| ToolError::tmux(what.clone(), &e);
        conn.tmux
            .run(SelectWindow::new(r.window))
            .await
            .map_err(err)?;
        conn.tmux.run(SelectPane::new(r.pane)).await.map_err(err)?;
        Ok(Json(SelectResult {
            session: r.session.to_string(),
            window: r.window.to_string(),
            pane: r.pane.to_string(),
        }))
    }

    #[tool(description = SET_LAYOUT, annotations(title = "Set layout", read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = false))]
    pub(crate) async fn set_layout(
        &self,
        Parameters(args): Parameters<SetLayoutArgs>,
    ) -> Result<Json<SetLayoutResult>, ToolError> {
        let conn = self.conn().await?;
        let r = conn.resolve(&args.target).await?;
        let what = format!("Setting the layout of window {}", r.window);
        conn.refuse_home(&r, &what)?;
        check_layout(&args.layout)?;
        let err = |e: tmux_control::Error| ToolError::tmux(what.clone(), &e);
        conn.tmux
            .run(SelectLayout::new(r.window, &args.layout))
            .await
            .map_err(err)?;
        let layout = conn
            .tmux
            .run(tmux_control::command::DisplayMessage::format("#{window_layout}").target(r.window))
            .await
            .map_err(err)?;
        Ok(Json(SetLayoutResult {
            window: r.window.to_string(),
            layout: String::from_utf8_lossy(&layout).trim().to_owned(),
        }))
    }

    #[tool(description = DETACH_CLIENTS, annotations(title = "Detach clients", read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = false))]
    pub(crate) async fn detach_clients(
        &self,
        Parameters(args): Parameters<DetachClientsArgs>,
    ) -> Result<Json<DetachClientsResult>, ToolError> {
        let conn = self.conn().await?;
        let r = conn.resolve(&args.target).await?;
        let what = format!("Detaching the clients of session {}", r.session);
        let err = |e: tmux_control::Error| ToolError::tmux(what.clone(), &e);
        let clients = conn
            .tmux
            .run(ListClients::in_session(r.session))
            .await
            .map_err(err)?;
        let mut detached = Vec::new();
        // Only terminals: tmux-mcp's own control clients stay.
        for client in clients
            .into_iter()
            .filter(|c| !c.control_mode && !c.name.is_empty())
        {
            conn.tmux
                .run(DetachClient::client(client.name.clone()))
                .await
                .map_err(err)?;
            detached.push(client.name);
        }
        Ok(Json(DetachClientsResult {
            session: r.session.to_string(),
            detached,
        }))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn layouts() {
        check_layout("tiled").unwrap();
        check_layout("b25d,80x24,0,0,0").unwrap();
        check_layout("5a1c,200x50,0,0{100x50,0,0,1,99x50,101,0,2}").unwrap();
        assert!(check_layout("tiled; kill-server").is_err());
        assert!(check_layout("").is_err());
    }
}
