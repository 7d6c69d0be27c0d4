//! `list_terminals` and `pane_info`: what the tmux server holds.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

use rmcp::handler::server::wrapper::Parameters;
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tmux_control::command::{ListClients, ListPanes, ListSessions, ListWindows};

use crate::mcp::server::TmuxMcp;
use crate::reply::{Json, Summary, ToolError};
use crate::terminal::actors::PaneActorsEntry;
use crate::terminal::presence::{self, People};
use crate::tools::inspect::{StateFacts, facts};

const LIST_TERMINALS: &str = "List every terminal on tmux-mcp's tmux server as a tree (sessions > windows > panes): each pane's id, size, command, cwd, title, exit status, copy mode, alternate screen (a full-screen program) and output cursor, and each session's attach command for humans. Use it first to find targets, and when an id stops working. \
With remote hosts (--host), each host's terminals are under `hosts` (or why it cannot be reached); with host set, only that host's.";

/// Arguments of `list_terminals`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ListTerminalsArgs {
    /// Also list tmux-mcp's own control session.
    #[serde(default)]
    pub include_internal: bool,
}

/// A pane in `list_terminals`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct PaneEntry {
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
    /// Which actors (MCP clients) created it and last typed into it, and when, as far as this server saw.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub actors: Option<PaneActorsEntry>,
    /// The people at it now (human tmux clients that show it, one typing into it): only when there are some.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub people: Option<People>,
}

/// A window in `list_terminals`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct WindowEntry {
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
pub(crate) struct SessionEntry {
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
pub(crate) struct ListTerminalsResult {
    /// The host of this tree: `local`, or a remote host's name.
    pub host: String,
    /// The tmux server, like `tmux -L tmux-mcp`.
    pub server: String,
    /// The version of that tmux server, as it reports it (like `3.5a`).
    pub tmux_version: String,
    /// The sessions.
    pub sessions: Vec<SessionEntry>,
    /// In the local tree: every remote host's terminals (pass its name as
    /// `host` to act on them), or why it cannot be reached.
    pub hosts: Vec<HostTerminals>,
}

/// A remote host's terminals in `list_terminals`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct HostTerminals {
    /// The host's name: the `host` argument of the tools.
    pub host: String,
    /// How it is reached, like `host box: ssh me@box tmux -L tmux-mcp`.
    pub server: String,
    /// tmux-mcp reached it for this listing.
    pub reachable: bool,
    /// The version of its tmux server, when reached.
    pub tmux_version: Option<String>,
    /// Its sessions (none when it cannot be reached).
    pub sessions: Vec<SessionEntry>,
    /// Why it cannot be reached (a `host_unreachable` error).
    pub error: Option<String>,
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
        write_sessions(&mut s, &self.sessions);
        for host in &self.hosts {
            match &host.error {
                Some(error) => {
                    let _ = write!(s, "\n\nhost {}: unreachable: {error}", host.host);
                }
                None => {
                    let _ = write!(
                        s,
                        "\n\nhost {} ({}, tmux {}): {} session(s); pass host={:?} to act on them",
                        host.host,
                        host.server,
                        host.tmux_version.as_deref().unwrap_or("?"),
                        host.sessions.len(),
                        host.host
                    );
                    write_sessions(&mut s, &host.sessions);
                }
            }
        }
        s
    }
}

/// The sessions of one tree, a line per session, window and pane.
fn write_sessions(s: &mut String, sessions: &[SessionEntry]) {
    {
        for session in sessions {
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
                    if let Some(a) = &p.actors {
                        if let Some(who) = &a.created_by {
                            state.push(format!("created by {who}"));
                        }
                        if let (Some(who), Some(at)) = (&a.last_input_by, &a.last_input_at) {
                            state.push(format!("last typed by {who} at {at}"));
                        }
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
    }
}

const PANE_INFO: &str = "Everything about one pane: ids, command, cwd, title, pid, size, cursor position, exit status, copy mode, alternate screen, scrollback size, output cursor, attach command, the people watching or typing into it, and its state (at_prompt, running, waiting_for_input, starting, exited) with the evidence. \
Use it before typing into a pane you did not create, or to check whether a program still runs.";

/// Arguments of `pane_info`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct PaneInfoArgs {
    /// The pane: `%3` or an exact name.
    pub target: String,
}

/// Result of `pane_info`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct PaneInfoResult {
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
    /// The people at this terminal now: the human tmux clients that show it, and one typing into it (input tools and run refuse then, with human_typing).
    pub people: People,
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
        ) + &people_sentence(&self.people)
    }
}

/// What `pane_info`'s text says of the people at the terminal.
fn people_sentence(people: &People) -> String {
    let mut s = String::new();
    if !people.watching.is_empty() {
        s.push_str(&format!(
            ". Watched by a person (tmux client {})",
            people.watching.join(", ")
        ));
    }
    if let Some(client) = &people.typing {
        s.push_str(&format!(
            "; {client} is typing into it (input and run are refused until it stops)"
        ));
    }
    s
}

#[tool_router(router = list_router, vis = "pub(super)")]
impl TmuxMcp {
    #[tool(description = LIST_TERMINALS, annotations(title = "List terminals", read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false))]
    pub(crate) async fn list_terminals(
        &self,
        Parameters(args): Parameters<ListTerminalsArgs>,
    ) -> Result<Json<ListTerminalsResult>, ToolError> {
        let mut tree = self.terminal_tree(args.include_internal).await?;
        if !self.backend.is_remote() {
            tree.hosts = self.host_trees(args.include_internal).await;
        }
        Ok(Json(tree))
    }

    /// The tree of this value's tmux server (no other host's).
    pub(crate) async fn terminal_tree(
        &self,
        include_internal: bool,
    ) -> Result<ListTerminalsResult, ToolError> {
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
                    actors: conn.terminals.get(p.id).and_then(|t| t.actors_entry()),
                    people: Some(
                        presence::people_among(&clients, p.id, p.window)
                            .and_on_the_web(conn.terminals.get(p.id).as_deref()),
                    )
                    .filter(|people| *people != People::default()),
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
            if internal && !include_internal {
                continue;
            }
            let mut windows = by_session.remove(&s.id.0).unwrap_or_default();
            windows.sort_by_key(|w| w.index);
            out.push(SessionEntry {
                id: s.id.to_string(),
                attach_command: self.backend.attach_command(&s.name),
                name: s.name,
                attached_clients: humans.get(&s.id.to_string()).copied().unwrap_or(0),
                created: s.created,
                internal,
                windows,
            });
        }
        out.sort_by_key(|s| s.created);
        Ok(ListTerminalsResult {
            host: self.backend.host().to_owned(),
            server: self.backend.describe(),
            tmux_version: t.version().to_string(),
            sessions: out,
            hosts: Vec::new(),
        })
    }

    /// Every remote host's tree, reached at the same time; an unreachable
    /// host gives its error instead of failing the listing.
    async fn host_trees(&self, include_internal: bool) -> Vec<HostTerminals> {
        let mut set = tokio::task::JoinSet::new();
        for (at, server) in self.remote_hosts().into_iter().enumerate() {
            set.spawn(async move {
                let tree = server.terminal_tree(include_internal).await;
                let host = server.backend.host().to_owned();
                let entry = match tree {
                    Ok(tree) => HostTerminals {
                        host,
                        server: tree.server,
                        reachable: true,
                        tmux_version: Some(tree.tmux_version),
                        sessions: tree.sessions,
                        error: None,
                    },
                    Err(e) => {
                        // A call that failed as the connection dropped
                        // says so as the lost host.
                        let e = server.backend.lost().await.unwrap_or(e);
                        HostTerminals {
                            host,
                            server: server.backend.describe(),
                            reachable: false,
                            tmux_version: None,
                            sessions: Vec::new(),
                            error: Some(e.to_string()),
                        }
                    }
                };
                (at, entry)
            });
        }
        let mut trees: Vec<(usize, HostTerminals)> = set.join_all().await.into_iter().collect();
        trees.sort_by_key(|(at, _)| *at);
        trees.into_iter().map(|(_, t)| t).collect()
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
        let people = presence::people(&conn.tmux, &conn.humans, r.pane, r.window)
            .await
            .and_on_the_web(conn.terminals.get(r.pane).as_deref());
        Ok(Json(PaneInfoResult {
            state,
            people,
            pane: r.pane.to_string(),
            window: r.window.to_string(),
            session: r.session.to_string(),
            attach_command: self.backend.attach_command(&r.session_name),
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
