//! `list_terminals` and `pane_info`: what the tmux server holds.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

use rmcp::handler::server::wrapper::Parameters;
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tmux_control::command::{ListClients, ListPanes, ListSessions, ListWindows};

use crate::reply::{Json, Summary, ToolError};
use crate::server::TmuxMcp;
use crate::tools::inspect::{StateFacts, facts};

const LIST_TERMINALS: &str = "List every terminal on the tmux server tmux-mcp drives: sessions, their windows and panes, with each pane's id, size, foreground command, working directory, title, whether its program has exited (and the exit status), whether it is in copy mode or on the alternate screen (a full-screen program), and its output cursor if it is followed. \
Use it first to find targets, and whenever an id stops working. \
Returns a tree (sessions > windows > panes) and the command a human runs to watch each session. tmux-mcp's own control session is hidden unless include_internal is true. \
Fails only if tmux cannot be reached.";

/// Arguments of `list_terminals`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListTerminalsArgs {
    /// Also list tmux-mcp's own control session (default false).
    #[serde(default)]
    pub include_internal: bool,
}

/// A pane in `list_terminals`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct PaneEntry {
    /// Pane id, like `%3`: the most reliable target.
    pub id: String,
    /// Index in its window.
    pub index: u32,
    /// The window's active pane.
    pub active: bool,
    /// Columns.
    pub width: u32,
    /// Rows.
    pub height: u32,
    /// Foreground command (`bash`, `vim`, …).
    pub command: String,
    /// Working directory of the foreground process.
    pub cwd: String,
    /// Pane title (secrets masked).
    pub title: String,
    /// Process id of the pane's program.
    pub pid: Option<u32>,
    /// The program has exited; the pane is kept so its output and status stay readable.
    pub dead: bool,
    /// Exit status of a dead pane's program.
    pub exit_status: Option<i32>,
    /// In copy mode (or another tmux mode): typed text would go to the mode.
    pub in_mode: bool,
    /// On the alternate screen: a full-screen program (editor, pager, TUI) is running.
    pub alternate_screen: bool,
    /// Lines of scrollback history.
    pub history_lines: u32,
    /// Current end of its followed output (a cursor for wait_for_output / read_output), if followed.
    pub cursor: Option<u64>,
}

/// A window in `list_terminals`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct WindowEntry {
    /// Window id, like `@2`.
    pub id: String,
    /// Index in its session.
    pub index: u32,
    /// Name.
    pub name: String,
    /// The session's current window.
    pub active: bool,
    /// Columns.
    pub width: u32,
    /// Rows.
    pub height: u32,
    /// A pane is zoomed.
    pub zoomed: bool,
    /// Its panes.
    pub panes: Vec<PaneEntry>,
}

/// A session in `list_terminals`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SessionEntry {
    /// Session id, like `$1`.
    pub id: String,
    /// Name.
    pub name: String,
    /// Terminal clients (humans) attached to it; control clients are not counted.
    pub attached_clients: u32,
    /// Created, in seconds since the epoch.
    pub created: u64,
    /// tmux-mcp's own control session.
    pub internal: bool,
    /// How a human attaches to watch it.
    pub attach_command: String,
    /// Its windows.
    pub windows: Vec<WindowEntry>,
}

/// Result of `list_terminals`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ListTerminalsResult {
    /// The tmux server, like `tmux -L tmux-mcp`.
    pub server: String,
    /// The version of that tmux server, as it reports it (like `3.5a`).
    pub tmux_version: String,
    /// The sessions.
    pub sessions: Vec<SessionEntry>,
}

impl Summary for ListTerminalsResult {
    fn summary(&self) -> String {
        let mut s = format!(
            "{} (tmux {}): {} session(s)",
            self.server,
            self.tmux_version,
            self.sessions.len()
        );
        if self.sessions.is_empty() {
            s.push_str(". Create one with create_terminal.");
        }
        for session in &self.sessions {
            let _ = write!(
                s,
                "\nsession {} {:?}{}{} — watch: {}",
                session.id,
                session.name,
                if session.internal { " (internal)" } else { "" },
                if session.attached_clients > 0 {
                    format!(", {} human client(s) attached", session.attached_clients)
                } else {
                    String::new()
                },
                session.attach_command
            );
            for w in &session.windows {
                let _ = write!(
                    s,
                    "\n  window {} {}:{:?} {}x{}{}",
                    w.id,
                    w.index,
                    w.name,
                    w.width,
                    w.height,
                    if w.active { " (current)" } else { "" }
                );
                for p in &w.panes {
                    let mut state = Vec::new();
                    if p.active {
                        state.push("active".to_owned());
                    }
                    if p.dead {
                        state.push(format!(
                            "exited {}",
                            p.exit_status
                                .map_or_else(|| "?".to_owned(), |x| x.to_string())
                        ));
                    }
                    if p.in_mode {
                        state.push("copy-mode".into());
                    }
                    if p.alternate_screen {
                        state.push("full-screen".into());
                    }
                    if let Some(c) = p.cursor {
                        state.push(format!("cursor={c}"));
                    }
                    let _ = write!(
                        s,
                        "\n    pane {} {}x{} {} in {}{}",
                        p.id,
                        p.width,
                        p.height,
                        p.command,
                        p.cwd,
                        if state.is_empty() {
                            String::new()
                        } else {
                            format!(" [{}]", state.join(", "))
                        }
                    );
                }
            }
        }
        s
    }
}

const PANE_INFO: &str = "Everything about one pane: ids and indexes, foreground command, working directory, title, process id, size, cursor position, whether its program has exited and with what status, whether it is in copy mode or on the alternate screen (full-screen program), scrollback size, whether tmux-mcp follows its output and the current output cursor, how a human attaches to watch it, and what the terminal is doing (state: at_prompt, running, waiting_for_input, starting, exited) with the evidence (shell marks, the foreground process, whether it reads the terminal, whether echo is off). \
Use it before typing into a pane you did not create, or to check whether a program is still running. \
Fails if the target does not exist.";

/// Arguments of `pane_info`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PaneInfoArgs {
    /// The pane: an id like `%3` or an exact name.
    pub target: String,
}

/// Result of `pane_info`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct PaneInfoResult {
    /// Pane id.
    pub pane: String,
    /// Window id.
    pub window: String,
    /// Session id.
    pub session: String,
    /// Session name.
    pub session_name: String,
    /// Window index in the session.
    pub window_index: u32,
    /// Pane index in the window.
    pub pane_index: u32,
    /// Foreground command.
    pub command: String,
    /// Working directory of the foreground process.
    pub cwd: String,
    /// Title (secrets masked).
    pub title: String,
    /// Process id of the pane's program.
    pub pid: Option<u32>,
    /// Columns.
    pub width: u32,
    /// Rows.
    pub height: u32,
    /// Cursor column.
    pub cursor_x: u32,
    /// Cursor row.
    pub cursor_y: u32,
    /// The program has exited.
    pub dead: bool,
    /// Its exit status, when it has exited.
    pub exit_status: Option<i32>,
    /// In copy mode (or another tmux mode).
    pub in_mode: bool,
    /// On the alternate screen (a full-screen program).
    pub alternate_screen: bool,
    /// The window's active pane.
    pub active: bool,
    /// Lines of scrollback.
    pub history_lines: u32,
    /// Current end of the followed output: a cursor for wait_for_output / read_output.
    pub cursor: u64,
    /// How a human attaches to watch it.
    pub attach_command: String,
    /// The version of the tmux server the pane runs in (like `3.5a`).
    pub tmux_version: String,
    /// What the terminal is doing (at_prompt, running, waiting_for_input, …) and the evidence.
    pub state: StateFacts,
}

impl Summary for PaneInfoResult {
    fn summary(&self) -> String {
        format!(
            "Pane {} (window {} {}:{}, session {} {:?}): {} in {}, {}x{}, cursor at {},{}{}{}{}; {}; output cursor={}; tmux {}; watch: {}",
            self.pane,
            self.window,
            self.window_index,
            self.pane_index,
            self.session,
            self.session_name,
            self.command,
            self.cwd,
            self.width,
            self.height,
            self.cursor_x,
            self.cursor_y,
            if self.dead {
                format!(
                    ", program exited with status {}",
                    self.exit_status
                        .map_or_else(|| "?".to_owned(), |s| s.to_string())
                )
            } else {
                String::new()
            },
            if self.in_mode { ", in copy mode" } else { "" },
            if self.alternate_screen {
                ", full-screen program"
            } else {
                ""
            },
            self.state.describe(),
            self.cursor,
            self.tmux_version,
            self.attach_command
        )
    }
}

#[tool_router(router = list_router, vis = "pub(super)")]
impl TmuxMcp {
    #[tool(description = LIST_TERMINALS, annotations(title = "List terminals", read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false))]
    pub(crate) async fn list_terminals(
        &self,
        Parameters(args): Parameters<ListTerminalsArgs>,
    ) -> Result<Json<ListTerminalsResult>, ToolError> {
        let what = "Listing terminals";
        let conn = self.conn().await?;
        let t = &conn.tmux;
        let err = |e: tmux_control::Error| ToolError::tmux(what, &e);
        let sessions = t.run(ListSessions::new()).await.map_err(err)?;
        let windows = t.run(ListWindows::all()).await.map_err(err)?;
        let panes = t.run(ListPanes::all()).await.map_err(err)?;
        let clients = t.run(ListClients::all()).await.map_err(err)?;
        let mut humans: HashMap<String, u32> = HashMap::new();
        for client in clients.iter().filter(|c| !c.control_mode) {
            if let Some(session) = client.session {
                *humans.entry(session.to_string()).or_default() += 1;
            }
        }
        let cursors: HashMap<_, _> = conn
            .tmux
            .followed()
            .await
            .iter()
            .map(|po| (po.pane(), po.end_offset()))
            .collect();
        let mut by_window: BTreeMap<(u32, u32), Vec<PaneEntry>> = BTreeMap::new();
        for p in panes {
            by_window
                .entry((p.session.0, p.window.0))
                .or_default()
                .push(PaneEntry {
                    id: p.id.to_string(),
                    index: p.index,
                    active: p.active,
                    width: p.width,
                    height: p.height,
                    command: p.current_command.clone(),
                    cwd: p.current_path.display().to_string(),
                    title: self.redact(&p.title),
                    pid: p.pid,
                    dead: p.dead,
                    exit_status: p.dead_status,
                    in_mode: p.in_mode,
                    alternate_screen: p.alternate_on,
                    history_lines: p.history_size,
                    cursor: cursors.get(&p.id).copied(),
                });
        }
        let mut by_session: BTreeMap<u32, Vec<WindowEntry>> = BTreeMap::new();
        for w in windows {
            let mut panes = by_window.remove(&(w.session.0, w.id.0)).unwrap_or_default();
            panes.sort_by_key(|p| p.index);
            by_session
                .entry(w.session.0)
                .or_default()
                .push(WindowEntry {
                    id: w.id.to_string(),
                    index: w.index,
                    name: w.name.clone(),
                    active: w.active,
                    width: w.width,
                    height: w.height,
                    zoomed: w.zoomed,
                    panes,
                });
        }
        let mut out = Vec::new();
        for s in sessions {
            let internal = s.id == conn.home.0;
            if internal && !args.include_internal {
                continue;
            }
            let mut windows = by_session.remove(&s.id.0).unwrap_or_default();
            windows.sort_by_key(|w| w.index);
            out.push(SessionEntry {
                id: s.id.to_string(),
                attach_command: self.inner.backend.attach_command(&s.name),
                name: s.name,
                attached_clients: humans.get(&s.id.to_string()).copied().unwrap_or(0),
                created: s.created,
                internal,
                windows,
            });
        }
        out.sort_by_key(|s| s.created);
        Ok(Json(ListTerminalsResult {
            server: self.inner.backend.describe(),
            tmux_version: t.version().to_string(),
            sessions: out,
        }))
    }

    #[tool(description = PANE_INFO, annotations(title = "Pane info", read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false))]
    pub(crate) async fn pane_info(
        &self,
        Parameters(args): Parameters<PaneInfoArgs>,
    ) -> Result<Json<PaneInfoResult>, ToolError> {
        let conn = self.conn().await?;
        let r = conn.resolve(&args.target).await?;
        let po = conn.follow(r.pane).await?;
        let row = conn.pane_row(r.pane).await?;
        let state = facts(&conn, &po, &row).await;
        Ok(Json(PaneInfoResult {
            state,
            pane: r.pane.to_string(),
            window: r.window.to_string(),
            session: r.session.to_string(),
            attach_command: self.inner.backend.attach_command(&r.session_name),
            session_name: r.session_name,
            window_index: r.window_index,
            pane_index: r.pane_index,
            command: row.current_command,
            cwd: row.current_path.display().to_string(),
            title: self.redact(&row.title),
            pid: row.pid,
            width: row.width,
            height: row.height,
            cursor_x: row.cursor_x,
            cursor_y: row.cursor_y,
            dead: row.dead,
            exit_status: row.dead_status,
            in_mode: row.in_mode,
            alternate_screen: row.alternate_on,
            active: row.active,
            history_lines: row.history_size,
            cursor: po.end_offset(),
            tmux_version: conn.tmux.version().to_string(),
        }))
    }
}
