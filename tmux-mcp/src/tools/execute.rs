//! The `execute` toolset: create terminals, run commands, send input,
//! respawn, set options and environment.

use std::collections::BTreeMap;
use std::time::Duration;

use rmcp::handler::server::wrapper::Parameters;
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tmux_control::command::{
    Key, NewPane, NewSession, NewWindow, OptionScope, RespawnPane, SendKeys, SetEnvironment,
    SetOption, ShowOption, Size, SplitWindow,
};
use tmux_control::{PaneOutput, Pattern};

use crate::backend::{Conn, check_session_name, check_window_name};
use crate::reply::{Json, Summary, ToolError};
use crate::server::TmuxMcp;
use crate::tools::{Delivery, Guarded, check_typable, paste, press_enter, type_text};

// ---------------------------------------------------------------- create_terminal

const CREATE_TERMINAL: &str = "Create a terminal: a new tmux session (kind=session, the default), a new window in an existing session (kind=window, target=the session), or a new pane split from an existing one (kind=split, target=the pane; split=right or below). \
It runs command through the shell if given (for example \"python3\" or \"make test\"), otherwise the default shell. Options: name (sessions: no ':' or '.', not starting with $ @ % = -), cwd (an existing directory), env (variables for the new process), width/height (sessions only), size_percent (splits). \
Its output is recorded from the very first byte (the pane is followed before its program starts), and the pane is kept after its program exits so the exit status stays readable. \
Returns the new session, window and pane ids (use the pane id as target from now on), the size, an output cursor, and attach_command: the command a human runs to watch it live. \
Fails if the name is taken or not allowed, the target does not exist, or cwd is not a directory.";

/// What `create_terminal` creates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TerminalKind {
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
pub enum SplitDirection {
    /// Below the target pane (default).
    #[default]
    Below,
    /// To the right of the target pane.
    Right,
}

/// Arguments of `create_terminal`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateTerminalArgs {
    /// session (default), window or split.
    #[serde(default)]
    pub kind: TerminalKind,
    /// Name of the new session or window (default: tmux picks one).
    pub name: Option<String>,
    /// For window: the session to add it to. For split: the pane to split. An id or an exact name.
    pub target: Option<String>,
    /// Shell command to run instead of the default shell.
    pub command: Option<String>,
    /// Working directory (an existing directory).
    pub cwd: Option<String>,
    /// Environment variables for the new process.
    pub env: Option<BTreeMap<String, String>>,
    /// Columns of a new session's window (default 200 on tmux-mcp's own server).
    pub width: Option<u32>,
    /// Rows of a new session's window (default 50 on tmux-mcp's own server).
    pub height: Option<u32>,
    /// For split: below (default) or right.
    pub split: Option<SplitDirection>,
    /// For split: the new pane's share of the space, 1 to 99 percent.
    pub size_percent: Option<u8>,
}

/// Result of `create_terminal`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct CreateTerminalResult {
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
    /// Output cursor (0: everything it prints is recorded).
    pub cursor: u64,
    /// How a human attaches to watch it.
    pub attach_command: String,
}

impl Summary for CreateTerminalResult {
    fn summary(&self) -> String {
        format!(
            "Created {} — session {} {:?}, window {} (index {}), pane {} ({}x{}) running {}. Use target={} from now on; output cursor={}. A human can watch with: {}",
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
            self.pane,
            self.cursor,
            self.attach_command
        )
    }
}

// ---------------------------------------------------------------- input

const SEND_TEXT: &str = "Type text into a pane exactly as given: any Unicode (emoji, CJK), quotes, $, backslashes, ; and #{...} arrive unchanged, and newlines arrive as newlines (each one is Enter to a shell). enter=true then presses Enter as a separate key. \
Use it for interactive programs (REPLs, prompts, editors in insert mode) and to answer questions; for shell commands prefer run, which also returns output and exit status. Key names like C-c are NOT interpreted here: use send_keys for keys. \
Returns how the text was delivered and the output cursor from just before typing: pass it to wait_for_output to see the reaction. \
Refuses a pane in copy mode (keys would go to the mode; force=true sends anyway) and a pane whose program has exited.";

/// Arguments of `send_text`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SendTextArgs {
    /// The pane: an id like `%3` or an exact name.
    pub target: String,
    /// The text to type, exactly.
    pub text: String,
    /// Press Enter after the text, as a separate key (default false).
    #[serde(default)]
    pub enter: bool,
    /// Type even if the pane is in copy mode (the mode gets the keys).
    #[serde(default)]
    pub force: bool,
}

/// Result of `send_text` and `paste_text`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SendTextResult {
    /// The pane.
    pub pane: String,
    /// Bytes of text delivered.
    pub bytes: usize,
    /// literal, bytes, paste or enter_only.
    pub delivery: Delivery,
    /// Enter was pressed after the text.
    pub enter: bool,
    /// Output cursor from just before the input: wait_for_output from here sees the reaction.
    pub cursor: u64,
}

impl Summary for SendTextResult {
    fn summary(&self) -> String {
        format!(
            "Sent {} bytes to pane {}{}. To see the reaction: wait_for_output or wait_for_idle (cursor={}).",
            self.bytes,
            self.pane,
            if self.enter { " and pressed Enter" } else { "" },
            self.cursor
        )
    }
}

const SEND_KEYS: &str = "Press keys in a pane, by name, in order: never typed as text. \
Names: Enter, Escape, Tab, BTab (shift-tab), Space, BSpace (backspace), Up, Down, Left, Right, Home, End, PPage/PageUp, NPage/PageDown, IC/Insert, DC/Delete, F1 to F12, or any single character (a, 1, /, é). Modifiers as prefixes: C- (ctrl), M- (alt/meta), S- (shift), combinable: C-c (interrupt), C-d (end of input), C-z, C-l, C-r, M-x, M-b, C-M-f, S-Up. C- works with letters, digits and @ [ \\ ] ^ _ ? ! # ( ) + , - . : ; < = > ' ` /. \
Use it to interrupt (C-c), confirm, navigate menus and TUIs, or leave copy mode (q). Text goes through send_text. \
Returns the keys pressed, whether the pane is in copy mode, and the output cursor from before the keys. \
Fails on an unknown key name (nothing is sent then).";

/// Arguments of `send_keys`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SendKeysArgs {
    /// The pane: an id like `%3` or an exact name.
    pub target: String,
    /// Key names, pressed in order, like ["C-c"] or ["Down", "Down", "Enter"].
    pub keys: Vec<String>,
}

/// Result of `send_keys`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SendKeysResult {
    /// The pane.
    pub pane: String,
    /// The keys pressed, as tmux names them.
    pub keys: Vec<String>,
    /// The pane was in copy mode (the keys went to the mode).
    pub in_mode: bool,
    /// Output cursor from just before the keys.
    pub cursor: u64,
}

impl Summary for SendKeysResult {
    fn summary(&self) -> String {
        format!(
            "Pressed {} in pane {}{}; cursor={}.",
            self.keys.join(" "),
            self.pane,
            if self.in_mode {
                " (it was in copy mode: the mode got the keys)"
            } else {
                ""
            },
            self.cursor
        )
    }
}

const PASTE_TEXT: &str = "Paste text into a pane through a tmux paste buffer, as a bracketed paste by default: programs that support it (shells, editors, chat TUIs) take the whole text as one paste instead of running each line, and it is fast for long text. enter=true presses Enter afterwards as a separate key (to submit). \
Use it for long or multi-line input to programs; for exact keystrokes use send_text. Newlines are delivered as carriage returns, as a terminal paste does. \
Returns bytes delivered and the output cursor from just before the paste. \
Refuses a pane in copy mode (force=true pastes anyway) and a pane whose program has exited.";

/// Arguments of `paste_text`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PasteTextArgs {
    /// The pane: an id like `%3` or an exact name.
    pub target: String,
    /// The text to paste.
    pub text: String,
    /// Press Enter after the paste, as a separate key (default false).
    #[serde(default)]
    pub enter: bool,
    /// Wrap in bracketed-paste markers when the program asked for them (default true).
    pub bracketed: Option<bool>,
    /// Paste even if the pane is in copy mode.
    #[serde(default)]
    pub force: bool,
}

// ---------------------------------------------------------------- respawn, options, environment

const RESPAWN: &str = "Restart the program in a pane, keeping the pane (same id, place and output log): after the program exited, or to replace a stuck one (kill=true, the default, ends the running program first). \
command replaces what it runs (default: what it ran before, or the default shell); cwd and env as in create_terminal. \
Returns the output cursor from just before the restart. Refuses tmux-mcp's own pane and the pane its client runs in. Fails if the target does not exist, or if kill=false and the program is still running.";

/// Arguments of `respawn`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RespawnArgs {
    /// The pane: an id like `%3` or an exact name.
    pub target: String,
    /// Shell command to run (default: what the pane ran before).
    pub command: Option<String>,
    /// Working directory (an existing directory).
    pub cwd: Option<String>,
    /// Environment variables for the new process.
    pub env: Option<BTreeMap<String, String>>,
    /// End a program that is still running first (default true).
    pub kill: Option<bool>,
}

/// Result of `respawn`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct RespawnResult {
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

const SET_OPTION: &str = "Set (or unset) a tmux option: scope server, session, window or pane; with target for one session/window/pane, or global=true for the default of every one. Examples: scope=window name=mode-keys value=vi; scope=session name=status value=off; scope=pane name=remain-on-exit value=on. \
This is in the execute toolset because some options run commands (default-command, status formats with #(...)). \
Returns the option's value afterwards. Fails if the option name is unknown or the value invalid for it.";

/// Which options table `set_option` addresses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OptionScopeArg {
    /// Server options.
    Server,
    /// Session options.
    Session,
    /// Window options.
    Window,
    /// Pane options.
    Pane,
}

/// Arguments of `set_option`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetOptionArgs {
    /// server, session, window or pane.
    pub scope: OptionScopeArg,
    /// The option's name, like history-limit or @my-option.
    pub name: String,
    /// The value (omit with unset=true).
    pub value: Option<String>,
    /// Unset the option instead (it falls back to the global default).
    #[serde(default)]
    pub unset: bool,
    /// The session, window or pane it applies to (an id or an exact name); omit with global=true or for scope=server.
    pub target: Option<String>,
    /// Set the global default instead of one target's value.
    #[serde(default)]
    pub global: bool,
}

/// Result of `set_option`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SetOptionResult {
    /// The scope.
    pub scope: OptionScopeArg,
    /// The option.
    pub name: String,
    /// The id it was set on, if not global.
    pub target: Option<String>,
    /// Its value now (none if unset and without a default).
    pub value: Option<String>,
}

impl Summary for SetOptionResult {
    fn summary(&self) -> String {
        format!(
            "Option {} ({:?}{}) is now {}",
            self.name,
            self.scope,
            self.target
                .as_deref()
                .map(|t| format!(" on {t}"))
                .unwrap_or_else(|| " global".to_owned()),
            self.value
                .as_deref()
                .map_or_else(|| "unset".to_owned(), |v| format!("{v:?}"))
        )
    }
}

const SET_ENVIRONMENT: &str = "Set (or unset) an environment variable in tmux's environment for processes started later: of one session (target) or global (global=true). It does not change programs already running; for one command prefer `env NAME=value command` in run. \
Returns what was changed. Fails if the name is empty or contains '=', or the target does not exist.";

/// Arguments of `set_environment`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetEnvironmentArgs {
    /// The variable's name.
    pub name: String,
    /// Its value (omit with unset=true).
    pub value: Option<String>,
    /// Remove the variable instead.
    #[serde(default)]
    pub unset: bool,
    /// The session whose environment changes (an id or an exact name); omit with global=true.
    pub target: Option<String>,
    /// Change the global environment.
    #[serde(default)]
    pub global: bool,
}

/// Result of `set_environment`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SetEnvironmentResult {
    /// The variable.
    pub name: String,
    /// The session id, or "global".
    pub scope: String,
    /// true if set, false if unset.
    pub set: bool,
}

impl Summary for SetEnvironmentResult {
    fn summary(&self) -> String {
        format!(
            "{} {} in the {} environment (for processes started from now on)",
            if self.set { "Set" } else { "Unset" },
            self.name,
            self.scope
        )
    }
}

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

fn check_cwd(cwd: Option<&str>, what: &str) -> Result<(), ToolError> {
    if let Some(dir) = cwd
        && !std::path::Path::new(dir).is_dir()
    {
        return Err(ToolError::new(
            what,
            format!("cwd {dir:?} is not an existing directory"),
            "Give an absolute path of an existing directory, or omit cwd",
        ));
    }
    Ok(())
}

fn check_env(env: Option<&BTreeMap<String, String>>, what: &str) -> Result<(), ToolError> {
    for name in env.into_iter().flat_map(BTreeMap::keys) {
        if name.is_empty() || name.contains('=') || name.contains('\0') {
            return Err(ToolError::new(
                what,
                format!("{name:?} is not a variable name"),
                "Use names without '=' such as DEBUG or PATH",
            ));
        }
    }
    Ok(())
}

#[tool_router(router = execute_router, vis = "pub(crate)")]
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
        let program = command.clone();
        let env: Vec<(String, String)> = args.env.clone().unwrap_or_default().into_iter().collect();
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
                if let Some(dir) = &args.cwd {
                    cmd = cmd.start_directory(dir);
                }
                for (k, v) in &env {
                    cmd = cmd.env(k.clone(), v);
                }
                if let Some(p) = &program {
                    cmd = cmd.command(p);
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
                    if let Some(dir) = &args.cwd {
                        cmd = cmd.start_directory(dir);
                    }
                    for (k, v) in &env {
                        cmd = cmd.env(k.clone(), v);
                    }
                    if let Some(p) = &program {
                        cmd = cmd.command(p);
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
                    if let Some(dir) = &args.cwd {
                        cmd = cmd.start_directory(dir);
                    }
                    for (k, v) in &env {
                        cmd = cmd.env(k.clone(), v);
                    }
                    if let Some(p) = &program {
                        cmd = cmd.command(p);
                    }
                    cmd.into()
                }
            }
        };
        // Followed from the program's first byte, and kept (with its exit
        // status) after it exits.
        let spawned = conn
            .tmux
            .spawn(new_pane.remain_on_exit())
            .await
            .map_err(err)?;
        let po = conn.adopt(&spawned.output).await;
        if command.is_none() {
            // A shell: let it print its first prompt before the caller
            // types (typed-ahead text would be echoed before the prompt).
            if let Ok(any) = Pattern::regex(r"\S") {
                let _ = any_output(&po, any, spawned.start).await;
            }
        }
        // Waits without a cursor start from here: everything it prints.
        conn.note_input(spawned.pane, spawned.start);
        let r = conn.resolve(&spawned.pane.to_string()).await?;
        let row = conn.pane_row(spawned.pane).await?;
        Ok(Json(CreateTerminalResult {
            kind: args.kind,
            session: spawned.session.to_string(),
            attach_command: self.inner.backend.attach_command(&r.session_name),
            session_name: r.session_name,
            window: spawned.window.to_string(),
            window_index: r.window_index,
            pane: spawned.pane.to_string(),
            width: row.width,
            height: row.height,
            command,
            cursor: spawned.start,
        }))
    }

    #[tool(description = SEND_TEXT, annotations(title = "Send text", read_only_hint = false, destructive_hint = true, idempotent_hint = false, open_world_hint = true))]
    pub(crate) async fn send_text(
        &self,
        Parameters(args): Parameters<SendTextArgs>,
    ) -> Result<Json<SendTextResult>, ToolError> {
        let (conn, r, cursor) = self
            .prepare_input(
                &args.target,
                "Typing into",
                &args.text,
                args.enter,
                args.force,
            )
            .await?;
        let delivery = type_text(&conn, r.pane, &args.text).await?;
        if args.enter {
            press_enter(&conn, r.pane).await?;
        }
        Ok(Json(SendTextResult {
            pane: r.pane.to_string(),
            bytes: args.text.len(),
            delivery,
            enter: args.enter,
            cursor,
        }))
    }

    #[tool(description = SEND_KEYS, annotations(title = "Send keys", read_only_hint = false, destructive_hint = true, idempotent_hint = false, open_world_hint = true))]
    pub(crate) async fn send_keys(
        &self,
        Parameters(args): Parameters<SendKeysArgs>,
    ) -> Result<Json<SendKeysResult>, ToolError> {
        let what = "Pressing keys";
        if args.keys.is_empty() || args.keys.len() > 200 {
            return Err(ToolError::new(
                what,
                "keys must hold 1 to 200 key names",
                "Give keys like [\"C-c\"] or [\"Up\", \"Enter\"]",
            ));
        }
        let keys = args
            .keys
            .iter()
            .map(|k| {
                k.parse::<Key>()
                    .map_err(|_| format!("{k:?} is not a key tmux can send"))
            })
            .collect::<Result<Vec<Key>, _>>()
            .map_err(|why| ToolError::new(what, why, "Use names from the tool's description (Enter, C-c, Up, F5, M-x…); to type text, or a control byte with no key name, use send_text"))?;
        let conn = self.conn().await?;
        let r = conn.resolve(&args.target).await?;
        let what = format!("Pressing keys in pane {}", r.pane);
        conn.refuse_home(&r, &what)?;
        self.guard(&conn, &r, Guarded::Input).await?;
        let po = conn.follow(r.pane).await?;
        let row = conn.pane_row(r.pane).await?;
        if row.dead {
            check_typable(&row, true, &what)?;
        }
        let cursor = po.end_offset();
        conn.note_input(r.pane, cursor);
        let names: Vec<String> = keys.iter().map(ToString::to_string).collect();
        conn.tmux
            .run(SendKeys::keys(r.pane, keys))
            .await
            .map_err(|e| ToolError::tmux(what, &e))?;
        Ok(Json(SendKeysResult {
            pane: r.pane.to_string(),
            keys: names,
            in_mode: row.in_mode,
            cursor,
        }))
    }

    #[tool(description = PASTE_TEXT, annotations(title = "Paste text", read_only_hint = false, destructive_hint = true, idempotent_hint = false, open_world_hint = true))]
    pub(crate) async fn paste_text(
        &self,
        Parameters(args): Parameters<PasteTextArgs>,
    ) -> Result<Json<SendTextResult>, ToolError> {
        let (conn, r, cursor) = self
            .prepare_input(
                &args.target,
                "Pasting into",
                &args.text,
                args.enter,
                args.force,
            )
            .await?;
        if !args.text.is_empty() {
            paste(&conn, r.pane, &args.text, args.bracketed.unwrap_or(true)).await?;
        }
        if args.enter {
            press_enter(&conn, r.pane).await?;
        }
        Ok(Json(SendTextResult {
            pane: r.pane.to_string(),
            bytes: args.text.len(),
            delivery: if args.text.is_empty() {
                Delivery::EnterOnly
            } else {
                Delivery::Paste
            },
            enter: args.enter,
            cursor,
        }))
    }

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
        conn.tmux
            .respawn(cmd)
            .await
            .map_err(|e| ToolError::tmux(what.clone(), &e))?;
        // The followed state says "dead" until tmux's next state report
        // (about a second): read it now, so that waits started right after
        // this do not see the old exit.
        po.refresh_state()
            .await
            .map_err(|e| ToolError::tmux(what, &e))?;
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

    #[tool(description = SET_OPTION, annotations(title = "Set option", read_only_hint = false, destructive_hint = true, idempotent_hint = true, open_world_hint = true))]
    pub(crate) async fn set_option(
        &self,
        Parameters(args): Parameters<SetOptionArgs>,
    ) -> Result<Json<SetOptionResult>, ToolError> {
        let what = format!("Setting option {}", args.name);
        let scope = match args.scope {
            OptionScopeArg::Server => OptionScope::Server,
            OptionScopeArg::Session => OptionScope::Session,
            OptionScopeArg::Window => OptionScope::Window,
            OptionScopeArg::Pane => OptionScope::Pane,
        };
        if args.unset == args.value.is_some() {
            return Err(ToolError::new(
                what,
                "give either value or unset=true",
                "Add value, or set unset=true without value",
            ));
        }
        let conn = self.conn().await?;
        let target: Option<String> = match (&args.target, args.scope, args.global) {
            (_, OptionScopeArg::Server, _) | (None, _, true) => None,
            (Some(_), _, true) => {
                return Err(ToolError::new(
                    what,
                    "target and global=true exclude each other",
                    "Drop one of them",
                ));
            }
            (None, _, false) => {
                return Err(ToolError::new(
                    what,
                    "a session, window or pane option needs a target or global=true",
                    "Give target (an id) or global=true",
                ));
            }
            (Some(t), scope, false) => {
                let r = conn.resolve(t).await?;
                conn.refuse_home(&r, &what)?;
                Some(match scope {
                    OptionScopeArg::Session => r.session.to_string(),
                    OptionScopeArg::Window => r.window.to_string(),
                    _ => r.pane.to_string(),
                })
            }
        };
        let mut set = match &args.value {
            Some(v) => SetOption::new(scope, args.name.clone(), v),
            None => SetOption::unset(scope, args.name.clone()),
        };
        let mut show = ShowOption::new(scope, args.name.clone());
        if let Some(t) = &target {
            set = set.target(t.as_str());
            show = show.target(t.as_str());
        } else if args.scope != OptionScopeArg::Server {
            set = set.global();
            show = show.global();
        }
        conn.tmux
            .run(set)
            .await
            .map_err(|e| ToolError::tmux(what.clone(), &e))?;
        let value = conn
            .tmux
            .run(show)
            .await
            .ok()
            .flatten()
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
        Ok(Json(SetOptionResult {
            scope: args.scope,
            name: args.name,
            target,
            value,
        }))
    }

    #[tool(description = SET_ENVIRONMENT, annotations(title = "Set environment", read_only_hint = false, destructive_hint = true, idempotent_hint = true, open_world_hint = true))]
    pub(crate) async fn set_environment(
        &self,
        Parameters(args): Parameters<SetEnvironmentArgs>,
    ) -> Result<Json<SetEnvironmentResult>, ToolError> {
        let what = format!("Setting environment variable {}", args.name);
        if args.unset == args.value.is_some() {
            return Err(ToolError::new(
                what,
                "give either value or unset=true",
                "Add value, or set unset=true without value",
            ));
        }
        let conn = self.conn().await?;
        let mut cmd = match &args.value {
            Some(v) => SetEnvironment::set(args.name.clone(), v),
            None => SetEnvironment::remove(args.name.clone()),
        };
        let scope = match (&args.target, args.global) {
            (None, true) => {
                cmd = cmd.global();
                "global".to_owned()
            }
            (Some(t), false) => {
                let r = conn.resolve(t).await?;
                conn.refuse_home(&r, &what)?;
                cmd = cmd.target(r.session);
                r.session.to_string()
            }
            _ => {
                return Err(ToolError::new(
                    what,
                    "give exactly one of target (a session) and global=true",
                    "Fix the arguments",
                ));
            }
        };
        conn.tmux
            .run(cmd)
            .await
            .map_err(|e| ToolError::tmux(what, &e))?;
        Ok(Json(SetEnvironmentResult {
            name: args.name,
            scope,
            set: args.value.is_some(),
        }))
    }
}

impl TmuxMcp {
    /// The checks shared by the tools that type or paste text: the target
    /// exists and is not protected, there is something to send, the pane
    /// can take input. Returns the output offset before the input.
    async fn prepare_input(
        &self,
        target: &str,
        verb: &str,
        text: &str,
        enter: bool,
        force: bool,
    ) -> Result<(std::sync::Arc<Conn>, tmux_control::Resolved, u64), ToolError> {
        let conn = self.conn().await?;
        let r = conn.resolve(target).await?;
        let what = format!("{verb} pane {}", r.pane);
        conn.refuse_home(&r, &what)?;
        self.guard(&conn, &r, Guarded::Input).await?;
        if text.is_empty() && !enter {
            return Err(ToolError::new(
                what,
                "text is empty and enter is false: nothing to send",
                "Give text, or enter=true to press Enter",
            ));
        }
        let po = conn.follow(r.pane).await?;
        let row = conn.pane_row(r.pane).await?;
        check_typable(&row, force, &what)?;
        let cursor = po.end_offset();
        conn.note_input(r.pane, cursor);
        Ok((conn, r, cursor))
    }
}
