//! `create_terminal`: new sessions, windows and split panes, followed from
//! their first byte.

use std::collections::BTreeMap;
use std::time::Duration;

use rmcp::handler::server::wrapper::Parameters;
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tmux_control::command::{NewPane, NewSession, NewWindow, SetEnvironment, Size, SplitWindow};
use tmux_control::shell::{NONCE_VARIABLE, ShellPhase};
use tmux_control::{PaneOutput, Pattern};

use crate::mcp::server::TmuxMcp;
use crate::reply::{Json, Summary, ToolError};
use crate::terminal::backend::{check_session_name, check_window_name};
use crate::tools::execute::{check_cwd, check_env};

const CREATE_TERMINAL: &str = "Create a terminal: a new session (kind=session, the default), a window in a session (kind=window, target=the session), or a pane split off one (kind=split, target=the pane). It runs command through the shell, else the default shell. \
Output is recorded from the first byte, and the pane is kept after its program exits so its exit status stays readable. \
Returns the session, window and pane ids (use the pane id as target), size, an output cursor, and attach_command for a human to watch.";

/// What `create_terminal` creates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum TerminalKind {
    /// A new session with one window and pane (default).
    #[default]
    Session,
    /// A new window in the target's session.
    Window,
    /// A new pane split off the target pane.
    Split,
}

/// Where a split puts the new pane.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum SplitDirection {
    /// Below the target pane (default).
    #[default]
    Below,
    /// To the right of the target pane.
    Right,
}

/// Arguments of `create_terminal`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CreateTerminalArgs {
    /// What to create (default session).
    #[serde(default)]
    pub kind: TerminalKind,
    /// Name of the new session or window (default: tmux picks). Session names: no ':' or '.', not starting with $ @ % = -.
    pub name: Option<String>,
    /// For window: the session. For split: the pane to split.
    pub target: Option<String>,
    /// Shell command to run instead of the default shell ("python3", "make test").
    pub command: Option<String>,
    /// Working directory (must exist).
    pub cwd: Option<String>,
    /// Environment variables for the new process.
    pub env: Option<BTreeMap<String, String>>,
    /// Columns of a new session (default 200 on tmux-mcp's own server).
    #[schemars(range(min = 2, max = 10_000))]
    pub width: Option<u32>,
    /// Rows of a new session (default 50 on tmux-mcp's own server).
    #[schemars(range(min = 2, max = 10_000))]
    pub height: Option<u32>,
    /// For split: below (default) or right.
    pub split: Option<SplitDirection>,
    /// For split: the new pane's share of the space, in percent.
    #[schemars(range(min = 1, max = 99))]
    pub size_percent: Option<u8>,
}

/// Result of `create_terminal`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct CreateTerminalResult {
    /// What was created.
    pub kind: TerminalKind,
    /// Session id.
    pub session: String,
    /// Session name.
    pub session_name: String,
    /// Window id.
    pub window: String,
    /// Window index.
    pub window_index: u32,
    /// The new pane's id: use it as target.
    pub pane: String,
    /// Columns.
    pub width: u32,
    /// Rows.
    pub height: u32,
    /// The command it runs (none: the default shell).
    pub command: Option<String>,
    /// The shell started with shell integration (bash, zsh or fish), if any: `run` then types commands as they are and knows their end and status from the shell's own marks.
    pub shell_integration: Option<String>,
    /// With shell integration: whether the shell had drawn its first prompt when this returned (false: it is still reading its start-up files; `run` waits for it).
    pub shell_ready: Option<bool>,
    /// Output cursor (0: everything it prints is recorded).
    pub cursor: u64,
    /// How a human attaches to watch it.
    pub attach_command: String,
    /// The host it runs on: `local`, or a configured remote host's name
    /// (pass it as host, with target, in later calls).
    pub host: String,
}

impl Summary for CreateTerminalResult {
    fn summary(&self) -> String {
        format!(
            "Created {} — session {} {:?}, window {} (index {}), pane {} ({}x{}) running {}{}. Use target={}{} from now on; output cursor={}. A human can watch with: {}",
            match self.kind {
                TerminalKind::Session => "a session",
                TerminalKind::Window => "a window",
                TerminalKind::Split => "a split pane",
            },
            self.session,
            self.session_name,
            self.window,
            self.window_index,
            self.pane,
            self.width,
            self.height,
            self.command.as_deref().unwrap_or("the default shell"),
            match (&self.shell_integration, self.shell_ready) {
                (Some(shell), Some(false)) => format!(
                    " ({shell} with shell integration; still starting: its first prompt has not appeared yet)"
                ),
                (Some(shell), _) => format!(" ({shell} with shell integration)"),
                (None, _) => String::new(),
            },
            self.pane,
            if self.host == crate::config::LOCAL_HOST {
                String::new()
            } else {
                format!(" with host={}", self.host)
            },
            self.cursor,
            self.attach_command
        )
    }
}

/// The longest `create_terminal` waits for an integrated shell's first
/// prompt (a true timer: a deadline; a slower shell is reported not ready).
const FIRST_PROMPT: Duration = Duration::from_secs(3);

/// Waits (at most two seconds) for the first visible output after
/// `from`, then for the output to pause briefly.
async fn any_output(po: &PaneOutput, pattern: Pattern, from: u64) -> bool {
    let seen = po
        .expect_from(pattern, from)
        .wait(Duration::from_secs(2))
        .await
        .is_ok();
    if seen {
        let _ = po
            .wait_idle(Duration::from_millis(50), Duration::from_millis(500))
            .await;
    }
    seen
}

#[tool_router(router = create_router, vis = "pub(super)")]
impl TmuxMcp {
    #[tool(description = CREATE_TERMINAL, annotations(title = "Create terminal", read_only_hint = false, destructive_hint = false, idempotent_hint = false, open_world_hint = true))]
    pub(crate) async fn create_terminal(
        &self,
        Parameters(args): Parameters<CreateTerminalArgs>,
    ) -> Result<Json<CreateTerminalResult>, ToolError> {
        let what = match args.kind {
            TerminalKind::Session => "Creating a session",
            TerminalKind::Window => "Creating a window",
            TerminalKind::Split => "Splitting a pane",
        };
        if let Some(name) = &args.name {
            match args.kind {
                TerminalKind::Session => check_session_name(name)?,
                _ => check_window_name(name, what)?,
            }
        }
        check_cwd(args.cwd.as_deref(), what)?;
        check_env(args.env.as_ref(), what)?;
        if args.width.is_some_and(|w| !(2..=10_000).contains(&w))
            || args.height.is_some_and(|h| !(2..=10_000).contains(&h))
        {
            return Err(ToolError::new(
                what,
                "width and height must be between 2 and 10000",
                "Use a sensible size such as 200x50",
            ));
        }
        if args.size_percent.is_some_and(|p| !(1..=99).contains(&p)) {
            return Err(ToolError::new(
                what,
                "size_percent must be between 1 and 99",
                "Use for example 50",
            ));
        }
        let command = args.command.clone().filter(|c| !c.trim().is_empty());
        let conn = self.conn().await?;
        let err = |e: tmux_control::Error| ToolError::tmux(what, &e);
        let new_pane: NewPane = match args.kind {
            TerminalKind::Session => {
                let mut cmd = NewSession::new();
                if let Some(name) = &args.name {
                    cmd = cmd.session_name(name);
                }
                if let (Some(w), Some(h)) = (args.width, args.height) {
                    cmd = cmd.size(w, h);
                } else if args.width.is_some() || args.height.is_some() {
                    return Err(ToolError::new(
                        what,
                        "give both width and height, or neither",
                        "Add the missing one",
                    ));
                }
                cmd.into()
            }
            TerminalKind::Window | TerminalKind::Split => {
                let Some(target) = &args.target else {
                    return Err(ToolError::new(
                        what,
                        "kind=window and kind=split need a target",
                        "Give target: the session to add a window to, or the pane to split (ids from list_terminals)",
                    ));
                };
                if args.width.is_some() || args.height.is_some() {
                    return Err(ToolError::new(
                        what,
                        "width and height apply to new sessions only",
                        "Omit them, or use resize afterwards",
                    ));
                }
                let r = conn.resolve(target).await?;
                conn.refuse_home(&r, what)?;
                if args.kind == TerminalKind::Window {
                    let mut cmd = NewWindow::new().target(r.session);
                    if let Some(name) = &args.name {
                        cmd = cmd.window_name(name);
                    }
                    cmd.into()
                } else {
                    let mut cmd = SplitWindow::new().target(r.pane);
                    cmd = match args.split.unwrap_or_default() {
                        SplitDirection::Below => cmd.vertical(),
                        SplitDirection::Right => cmd.horizontal(),
                    };
                    if let Some(p) = args.size_percent {
                        cmd = cmd.size(Size::Percent(p));
                    }
                    cmd.into()
                }
            }
        };
        let mut new_pane = new_pane.remain_on_exit();
        if let Some(dir) = &args.cwd {
            new_pane = new_pane.start_directory(dir);
        }
        for (k, v) in args.env.iter().flatten() {
            new_pane = new_pane.env(k.clone(), v);
        }
        if let Some(p) = &command {
            new_pane = new_pane.command(p);
        }
        // The default shell, with shell integration when it has hooks.
        let integrated = match &command {
            Some(_) => None,
            None => conn.shells.launch(&conn.tmux).await,
        };
        if let Some((_, _, launch)) = &integrated {
            new_pane = new_pane.command(&launch.command);
            for (k, v) in &launch.env {
                new_pane = new_pane.env(k.clone(), v);
            }
        }
        // Followed from the program's first byte, and kept (with its exit
        // status) after it exits.
        let spawned = conn.tmux.spawn(new_pane).await.map_err(err)?;
        let po = spawned.output;
        let mut shell_ready = None;
        if integrated.is_some() {
            // A new session keeps the variables of `new-session -e` in its
            // environment, where every later window would inherit the nonce:
            // the shell has it now, so the session forgets it.
            let forget = SetEnvironment::unset(NONCE_VARIABLE).target(spawned.session);
            if let Err(e) = conn.tmux.run(forget).await {
                tracing::debug!(error = %e, "cannot remove the nonce from the session's environment");
            }
        }
        if let Some((kind, nonce, _)) = &integrated {
            // Ready once it has drawn its first prompt (its start-up files
            // read), so that what is typed next is not echoed before it.
            conn.shells
                .adopt(&conn.tmux, spawned.pane, *kind, nonce, spawned.start)
                .await;
            let ready = |p| p == ShellPhase::Ready;
            let slot = conn
                .shells
                .wait_for(&conn.tmux, &po, ready, FIRST_PROMPT)
                .await;
            shell_ready = Some(slot.is_some_and(|s| ready(s.phase())));
        } else if command.is_none() {
            // A shell without hooks: let it print its first prompt before
            // the caller types (typed-ahead text would be echoed before it).
            if let Ok(any) = Pattern::regex(r"\S") {
                let _ = any_output(&po, any, spawned.start).await;
            }
        }
        // Waits without a cursor start from here: everything it prints.
        conn.note_input(spawned.pane, spawned.start);
        conn.actors
            .created(spawned.pane, crate::mcp::actors::current());
        let r = conn.resolve(&spawned.pane.to_string()).await?;
        let row = conn.pane_row(spawned.pane).await?;
        Ok(Json(CreateTerminalResult {
            kind: args.kind,
            session: spawned.session.to_string(),
            attach_command: self.backend.attach_command(&r.session_name),
            session_name: r.session_name,
            window: spawned.window.to_string(),
            window_index: r.window_index,
            pane: spawned.pane.to_string(),
            width: row.width,
            height: row.height,
            command,
            shell_integration: integrated.map(|(kind, _, _)| kind.name().to_owned()),
            shell_ready,
            cursor: spawned.start,
            host: self.backend.host().to_owned(),
        }))
    }
}
