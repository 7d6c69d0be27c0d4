//! The input tools: `send_text`, `send_keys` and `paste_text`.

use rmcp::handler::server::wrapper::Parameters;
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tmux_control::command::{Key, SendKeys};

use crate::mcp::server::TmuxMcp;
use crate::reply::{Json, Summary, ToolError};
use crate::terminal::actors::Sharing;
use crate::terminal::actors::Turn;
use crate::terminal::backend::Conn;
use crate::tools::people::Checked;
use crate::tools::{Delivery, Guarded, check_typable, paste, press_enter, refuse_nul, type_text};

const SEND_TEXT: &str = "Type text into a pane exactly: any Unicode, quotes, $, backslashes and #{...} arrive unchanged; each newline is Enter to a shell. enter=true then presses Enter as a separate key. \
For interactive programs (REPLs, prompts, editors) and answering questions; for shell commands prefer run. Key names like C-c are not interpreted: use send_keys. \
Returns the output cursor from before typing, for wait_for_output. Refuses a pane in copy mode (force=true types anyway) or whose program exited. human_typing: a person is typing there; nothing was typed, retry later.";

/// Arguments of `send_text`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SendTextArgs {
    /// The pane: `%3` or an exact name.
    pub target: String,
    /// The text, typed exactly.
    pub text: String,
    /// Then press Enter, as a separate key.
    #[serde(default)]
    pub enter: bool,
    /// Type even in copy mode (the mode gets the keys).
    #[serde(default)]
    pub force: bool,
    /// Type even while a person types there or has a line pending (joining it). Only if they asked; audited.
    #[serde(default)]
    pub over_person: bool,
}

/// Result of `send_text` and `paste_text`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct SendTextResult {
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
    /// Other actors (MCP clients) using this pane, if any: who typed into it last, and whom this call waited for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sharing: Option<Sharing>,
}

impl Summary for SendTextResult {
    fn summary(&self) -> String {
        format!(
            "Sent {} bytes to pane {}{}. To see the reaction: wait_for_output or wait_for_idle (cursor={}).{}",
            self.bytes,
            self.pane,
            if self.enter { " and pressed Enter" } else { "" },
            self.cursor,
            Sharing::sentence(self.sharing.as_ref())
        )
    }
}

const SEND_KEYS: &str = "Press keys in a pane by name, in order (never typed as text): Enter, Escape, Tab, BTab (shift-tab), Space, BSpace, Up, Down, Left, Right, Home, End, PageUp, PageDown, Insert, Delete, F1 to F12, or one character. Modifiers, combinable: C- (ctrl; letters, digits, most punctuation), M- (alt), S- (shift): C-c (interrupt), C-d (end of input), C-z, M-x, C-M-f, S-Up. \
To interrupt, confirm, move through menus and TUIs, or leave copy mode (q); text goes through send_text. Returns whether the pane was in copy mode and the output cursor from before. An unknown name sends nothing.";

/// Arguments of `send_keys`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SendKeysArgs {
    /// The pane: `%3` or an exact name.
    pub target: String,
    /// Key names, pressed in order: ["C-c"], ["Down", "Enter"].
    pub keys: Vec<String>,
}

/// Result of `send_keys`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct SendKeysResult {
    /// The pane.
    pub pane: String,
    /// The keys pressed, as tmux names them.
    pub keys: Vec<String>,
    /// The pane was in copy mode (the keys went to the mode).
    pub in_mode: bool,
    /// Output cursor from just before the keys.
    pub cursor: u64,
    /// Other actors (MCP clients) using this pane, if any: who typed into it last, and whom this call waited for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sharing: Option<Sharing>,
}

impl Summary for SendKeysResult {
    fn summary(&self) -> String {
        format!(
            "Pressed {} in pane {}{}; cursor={}.{}",
            self.keys.join(" "),
            self.pane,
            if self.in_mode {
                " (it was in copy mode: the mode got the keys)"
            } else {
                ""
            },
            self.cursor,
            Sharing::sentence(self.sharing.as_ref())
        )
    }
}

const PASTE_TEXT: &str = "Paste text through a tmux paste buffer, bracketed by default: shells, editors and chat TUIs take it as one paste instead of running each line, and long text is fast. Newlines arrive as carriage returns. enter=true then presses Enter (to submit). \
For long or multi-line input; for exact keystrokes use send_text. Returns the bytes delivered and the output cursor from before. Refuses like send_text (copy mode, exited program, human_typing).";

/// Arguments of `paste_text`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct PasteTextArgs {
    /// The pane: `%3` or an exact name.
    pub target: String,
    /// The text to paste.
    pub text: String,
    /// Then press Enter, as a separate key.
    #[serde(default)]
    pub enter: bool,
    /// Use bracketed-paste markers if the program asked for them (default true).
    pub bracketed: Option<bool>,
    /// Paste even in copy mode.
    #[serde(default)]
    pub force: bool,
    /// Paste even while a person types there or has a line pending (joining it). Only if they asked; audited.
    #[serde(default)]
    pub over_person: bool,
}

#[tool_router(router = input_router, vis = "pub(super)")]
impl TmuxMcp {
    #[tool(description = SEND_TEXT, annotations(title = "Send text", read_only_hint = false, destructive_hint = true, idempotent_hint = false, open_world_hint = true))]
    pub(crate) async fn send_text(
        &self,
        Parameters(args): Parameters<SendTextArgs>,
    ) -> Result<Json<SendTextResult>, ToolError> {
        let (conn, r, cursor, turn, checked) = self
            .prepare_input(
                &args.target,
                "Typing into",
                &args.text,
                args.enter,
                (args.force, args.over_person),
            )
            .await?;
        let delivery = type_text(&conn, r.pane, &args.text).await?;
        if args.enter {
            press_enter(&conn, r.pane).await?;
        }
        conn.note_unsubmitted(
            r.pane,
            !args.enter && !args.text.is_empty() && !args.text.ends_with('\n'),
        );
        Ok(Json(SendTextResult {
            pane: r.pane.to_string(),
            bytes: args.text.len(),
            delivery,
            enter: args.enter,
            cursor,
            sharing: Sharing::with_people(
                turn.sharing(),
                checked.watching,
                checked.waited_ms,
                checked.typed_over,
            ),
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
        let turn = conn
            .actors
            .take_turn(r.pane, crate::mcp::actors::current())
            .await;
        let po = conn.follow(r.pane).await?;
        let row = conn.pane_row(r.pane).await?;
        if row.dead {
            check_typable(&row, true, &what)?;
        }
        // Keys are not checked against a person typing, but a person's
        // hold (the web view's take-over) refuses them too.
        crate::tools::people::refuse_held(&conn, r.pane, &what)?;
        let cursor = po.end_offset();
        conn.note_input(r.pane, cursor);
        turn.typed(cursor);
        let names: Vec<String> = keys.iter().map(ToString::to_string).collect();
        // Enter submits the line; C-c, C-u and C-j clear or submit it too.
        if names.iter().any(|k| {
            matches!(
                k.as_str(),
                "Enter" | "KPEnter" | "C-m" | "C-j" | "C-c" | "C-u"
            )
        }) {
            conn.note_unsubmitted(r.pane, false);
        }
        conn.tmux
            .run(SendKeys::keys(r.pane, keys))
            .await
            .map_err(|e| ToolError::tmux(what, &e))?;
        Ok(Json(SendKeysResult {
            pane: r.pane.to_string(),
            keys: names,
            in_mode: row.in_mode,
            cursor,
            sharing: turn.sharing(),
        }))
    }

    #[tool(description = PASTE_TEXT, annotations(title = "Paste text", read_only_hint = false, destructive_hint = true, idempotent_hint = false, open_world_hint = true))]
    pub(crate) async fn paste_text(
        &self,
        Parameters(args): Parameters<PasteTextArgs>,
    ) -> Result<Json<SendTextResult>, ToolError> {
        refuse_nul(
            "paste_text",
            "text",
            &args.text,
            "a tmux paste buffer cannot hold (it is set through a tmux argument)",
        )?;
        let (conn, r, cursor, turn, checked) = self
            .prepare_input(
                &args.target,
                "Pasting into",
                &args.text,
                args.enter,
                (args.force, args.over_person),
            )
            .await?;
        if !args.text.is_empty() {
            paste(&conn, r.pane, &args.text, args.bracketed.unwrap_or(true)).await?;
        }
        if args.enter {
            press_enter(&conn, r.pane).await?;
        }
        // A bracketed paste's newlines are text in the line, not Enter.
        conn.note_unsubmitted(r.pane, !args.enter && !args.text.is_empty());
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
            sharing: Sharing::with_people(
                turn.sharing(),
                checked.watching,
                checked.waited_ms,
                checked.typed_over,
            ),
        }))
    }
}

impl TmuxMcp {
    /// The checks shared by the tools that type or paste text: the target
    /// exists and is not protected, there is something to send, the pane
    /// can take input. Takes the pane's input turn (held until the caller
    /// drops it, after typing), and makes sure no person is typing there
    /// ([`TmuxMcp::check_people`]). Returns the output offset before the
    /// input, and the people's clients that watch the pane.
    async fn prepare_input(
        &self,
        target: &str,
        verb: &str,
        text: &str,
        enter: bool,
        (force, over_person): (bool, bool),
    ) -> Result<
        (
            std::sync::Arc<Conn>,
            tmux_control::Resolved,
            u64,
            Turn,
            Checked,
        ),
        ToolError,
    > {
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
        let turn = conn
            .actors
            .take_turn(r.pane, crate::mcp::actors::current())
            .await;
        let po = conn.follow(r.pane).await?;
        let row = conn.pane_row(r.pane).await?;
        check_typable(&row, force, &what)?;
        let limit = self.inner.config.default_wait;
        let checked = self
            .check_people(&conn, &po, (r.pane, row.window), &what, over_person, limit)
            .await?;
        let cursor = po.end_offset();
        conn.note_input(r.pane, cursor);
        turn.typed(cursor);
        Ok((conn, r, cursor, turn, checked))
    }
}
