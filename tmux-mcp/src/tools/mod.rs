//! The tools, one module per toolset, and what they share.

pub(crate) mod attention;
pub(crate) mod execute;
mod humans;
pub(crate) mod inspect;
pub(crate) mod manage;
pub(crate) mod people;
pub(crate) mod run;
pub(crate) mod teardown;
pub(crate) mod waits;

use std::sync::Arc;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tmux_control::Typed;
use tmux_control::command::{Key, SendKeys};
use tmux_control::{PaneId, PaneOutput};

use tmux_control::Resolved;

use crate::mcp::server::TmuxMcp;
use crate::reply::ToolError;
use crate::terminal::backend::Conn;
use crate::terminal::guard::Relation;
use crate::text::shape::{Highlight, LossReport, loss_reports, shape};
use crate::text::{cook_lines, keep_last_lines, pane_size, trim_trailing_blank};

/// What the self-kill guard is asked about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Guarded {
    /// Typing into a pane (send_text, send_keys, paste_text, run).
    Input,
    /// Respawning a pane.
    Respawn,
    /// Killing a pane.
    KillPane,
    /// Killing a window.
    KillWindow,
    /// Killing a session.
    KillSession,
    /// Killing the server.
    KillServer,
}

/// Status of a wait, in every wait reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum WaitStatus {
    /// The awaited thing happened.
    Matched,
    /// The pane has been quiet for the asked time.
    Idle,
    /// The pane's program exited (the pane is kept, dead).
    Exited,
    /// The pane no longer exists.
    Gone,
    /// The time limit passed first; resume with the returned cursor.
    Timeout,
}

impl WaitStatus {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            WaitStatus::Matched => "matched",
            WaitStatus::Idle => "idle",
            WaitStatus::Exited => "exited",
            WaitStatus::Gone => "gone",
            WaitStatus::Timeout => "timeout",
        }
    }
}

/// How text was delivered to a pane.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Delivery {
    /// `send-keys -l`: printable text typed literally.
    Literal,
    /// `send-keys -H`: exact bytes (text with newlines or control characters).
    Bytes,
    /// A paste buffer (`paste-buffer`, bracketed when asked).
    Paste,
    /// Only the Enter key.
    EnterOnly,
}

/// A range of output left out of a reply, to read with `read_output`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
pub(crate) struct Omitted {
    /// Cursor of the first byte left out.
    pub from_cursor: u64,
    /// Cursor just after the last byte left out.
    pub to_cursor: u64,
}

/// The smallest reply budget a call may ask for: room for the reply's
/// fields and a little output.
pub(crate) const MIN_REPLY_BYTES: usize = 2048;

/// Pane output between two offsets, cooked, redacted (all of it at once)
/// and shaped for a reply ([`crate::text::shape`]).
#[derive(Debug, Clone, Default)]
pub(crate) struct Excerpt {
    /// The text for the text content: the whole output or its shaped form.
    pub(crate) text: String,
    /// Raw bytes of output the log held for the range.
    pub(crate) raw_bytes: u64,
    /// The part left out of `text`, to read with read_output.
    pub(crate) omitted: Option<Omitted>,
    /// Bytes at the start of the range the log no longer holds.
    pub(crate) missed_bytes: u64,
    /// Small enough to go in the structured content as well as the text.
    pub(crate) small: bool,
    /// Failure-like lines (when not small).
    pub(crate) highlights: Vec<Highlight>,
    /// What the range is missing and why.
    pub(crate) losses: Vec<LossReport>,
}

impl Excerpt {
    /// The text for the structured content: the output when it is small,
    /// else `None` (the text content carries it; see [`crate::text::shape`]).
    pub(crate) fn structured(&self) -> Option<String> {
        self.small.then(|| self.text.clone())
    }
}

impl TmuxMcp {
    pub(crate) async fn conn(&self) -> Result<Arc<Conn>, ToolError> {
        self.backend.conn().await
    }

    /// A wait's time limit from the call's `timeout_secs`: the server's
    /// default when it is absent, never more than the server's maximum (a
    /// larger value counts as the maximum). See [`seconds_arg`] for what is
    /// refused.
    pub(crate) fn wait_limit(&self, tool: &str, secs: Option<f64>) -> Result<Duration, ToolError> {
        let c = &self.inner.config;
        match secs {
            None => Ok(c.default_wait),
            Some(s) => seconds_arg(
                tool,
                "timeout_secs",
                s,
                c.max_wait,
                &format!(
                    "Leave timeout_secs out for the default of {} s",
                    c.default_wait.as_secs_f64()
                ),
            ),
        }
    }

    /// The size budget of a whole reply (run, read_output, the waits): the
    /// call's `max_bytes`, at least [`MIN_REPLY_BYTES`] and at most
    /// `--max-output-bytes`, or `--max-reply-bytes`.
    pub(crate) fn budget(&self, max: Option<usize>) -> usize {
        let c = &self.inner.config;
        let limit = c.max_output_bytes.max(c.max_reply_bytes);
        max.map_or(c.max_reply_bytes, |m| m.clamp(MIN_REPLY_BYTES, limit))
    }

    /// The budget of pane text in a capture_screen or search_output reply.
    pub(crate) fn screen_budget(&self, max: Option<usize>) -> usize {
        let limit = self.inner.config.max_output_bytes;
        max.map_or(limit, |m| m.clamp(256, limit))
    }

    /// What the output range `from..to` of a followed pane is missing, and why.
    pub(crate) fn losses(&self, po: &PaneOutput, from: u64, to: u64) -> Vec<LossReport> {
        loss_reports(&po.losses(from, to))
    }

    /// Masks secrets in pane text.
    pub(crate) fn redact(&self, text: &str) -> String {
        self.inner.redactor.redact(text).into_owned()
    }

    /// Masks secrets in the pieces of one reply taken together (see
    /// [`crate::text::redact::Redactor::redact_parts`]).
    pub(crate) fn redact_parts(&self, parts: &[&str], open_end: bool) -> Vec<String> {
        self.inner.redactor.redact_parts(parts, open_end)
    }

    /// Masks secrets in screen lines taken together (a secret may span
    /// lines), keeping the number of lines.
    pub(crate) fn redact_lines(&self, lines: &[String]) -> Vec<String> {
        self.inner.redactor.redact_lines(lines)
    }

    /// The self-kill guard.
    pub(crate) async fn guard(
        &self,
        conn: &Conn,
        r: &Resolved,
        action: Guarded,
    ) -> Result<(), ToolError> {
        // tmux-mcp's client runs on this machine: it cannot be inside a
        // remote host's tmux server (its TMUX names a local socket).
        if conn.remote {
            return Ok(());
        }
        let socket = conn
            .socket_path
            .clone()
            .unwrap_or_else(|| self.backend.expected_socket());
        let what = match action {
            Guarded::Input => "Sending input",
            Guarded::Respawn => "Respawning the pane",
            Guarded::KillPane => "Killing the pane",
            Guarded::KillWindow => "Killing the window",
            Guarded::KillSession => "Killing the session",
            Guarded::KillServer => "Killing the server",
        };
        let refuse = |why: String| {
            Err(ToolError::new(
                what,
                why,
                "This is refused to protect the MCP client itself; act on another target",
            ))
        };
        let (pane, session) = match self.inner.caller.relation(Some(&socket)) {
            Relation::Outside => return Ok(()),
            Relation::Unknown => {
                return refuse(
                    "TMUX_PANE is set but TMUX is not readable, so tmux-mcp cannot tell whether it runs inside this server".into(),
                );
            }
            Relation::Inside { pane, session } => (pane, session),
        };
        if action == Guarded::KillServer {
            return refuse(format!(
                "tmux-mcp itself runs inside this tmux server ({})",
                socket.display()
            ));
        }
        let mine = match pane {
            Some(p) => conn.resolve(&p.to_string()).await.ok(),
            None => None,
        };
        let my_session = mine.as_ref().map(|m| m.session).or(session);
        let hit = match action {
            Guarded::Input | Guarded::Respawn | Guarded::KillPane => pane == Some(r.pane),
            Guarded::KillWindow => mine.as_ref().is_some_and(|m| m.window == r.window),
            Guarded::KillSession => my_session == Some(r.session),
            Guarded::KillServer => true,
        };
        // Inside this server but the pane cannot be placed (TMUX_PANE unset
        // or unknown): any pane of the client's session may be its own, so
        // every action on that session is refused alike; with no session
        // known either, everything wider than a pane is.
        let unknown = mine.is_none()
            && match my_session {
                Some(session) => session == r.session,
                None => matches!(action, Guarded::KillWindow | Guarded::KillSession),
            };
        if hit || unknown {
            let which = match pane {
                Some(p) => format!("TMUX_PANE={p}"),
                None => "TMUX_PANE is not set, so any pane of its session may be it".to_owned(),
            };
            return refuse(format!(
                "the target ({} {} {}) may hold the terminal tmux-mcp's own client runs in ({which})",
                r.session, r.window, r.pane,
            ));
        }
        Ok(())
    }

    /// Cooked, redacted output between two offsets of a followed pane,
    /// shaped to fit a reply of `budget` bytes ([`crate::text::shape`]): whole
    /// when it fits, else failure-like lines, head and tail, and the
    /// cursors of the rest. The whole range is redacted at once; when it
    /// reaches the end of the output so far, a secret cut off there is
    /// masked too.
    pub(crate) fn excerpt(&self, po: &PaneOutput, start: u64, end: u64, budget: usize) -> Excerpt {
        let want =
            usize::try_from(end.saturating_sub(start.max(po.start_offset()))).unwrap_or(usize::MAX);
        let (at, mut raw) = po.read_from(start, want);
        // Never past `end`, even if eviction moved the start meanwhile.
        raw.truncate(usize::try_from(end.saturating_sub(at)).unwrap_or(usize::MAX));
        let open_end = at + raw.len() as u64 >= po.end_offset();
        let shaped = shape(
            &self.inner.redactor,
            &raw,
            at,
            budget,
            open_end,
            &po.pane().to_string(),
            pane_size(po),
        );
        Excerpt {
            text: shaped.text,
            raw_bytes: raw.len() as u64,
            omitted: shaped.omitted.map(|(from_cursor, to_cursor)| Omitted {
                from_cursor,
                to_cursor,
            }),
            missed_bytes: at.saturating_sub(start),
            small: shaped.small,
            highlights: shaped.highlights,
            losses: self.losses(po, start, end),
        }
    }

    /// The last lines of output between `from` and `end` (at most `lines`
    /// lines and `max` bytes as JSON), for a wait's reply: cooked, with up
    /// to 8 KiB before them redacted together with them (a secret that
    /// started earlier is still masked) and a secret cut off at the end of
    /// the output so far masked too.
    pub(crate) fn tail_text(
        &self,
        po: &PaneOutput,
        from: u64,
        end: u64,
        lines: usize,
        max: usize,
    ) -> String {
        let look = end.saturating_sub(8192).max(from);
        let want = usize::try_from(end.saturating_sub(look)).unwrap_or(usize::MAX);
        let (at, mut raw) = po.read_from(look, want);
        raw.truncate(usize::try_from(end.saturating_sub(at)).unwrap_or(usize::MAX));
        let open_end = at + raw.len() as u64 >= po.end_offset();
        let cooked = cook_lines(&raw, pane_size(po));
        let texts: Vec<&str> = cooked.iter().map(|l| l.text.as_str()).collect();
        let mut shown: Vec<String> = self
            .inner
            .redactor
            .redact_lines_marked(&texts, open_end)
            .into_iter()
            .filter(|(_, swallowed)| !swallowed)
            .map(|(text, _)| text)
            .collect();
        trim_trailing_blank(&mut shown);
        let keep = shown.len().saturating_sub(lines);
        keep_last_lines(&shown[keep..], max).1
    }
}

/// A number of seconds given as the argument `name` of `tool`, as a
/// `Duration` of at most `max`.
///
/// NaN, infinities and negative numbers are refused with an error that names
/// the argument and the accepted range (the JSON of an MCP call cannot carry
/// NaN or infinities, but a direct caller can). A finite number above `max`
/// counts as `max`: it is compared before it is converted, so no value can
/// overflow a `Duration` (`Duration::from_secs_f64(1e308)` panics).
pub(crate) fn seconds_arg(
    tool: &str,
    name: &str,
    secs: f64,
    max: Duration,
    next: &str,
) -> Result<Duration, ToolError> {
    let top = max.as_secs_f64();
    if !secs.is_finite() || secs < 0.0 {
        return Err(ToolError::new(
            tool,
            format!(
                "{name} must be a number of seconds from 0 to {top} (larger numbers count as {top}), not {secs}"
            ),
            next,
        ));
    }
    if secs >= top {
        return Ok(max);
    }
    Ok(Duration::try_from_secs_f64(secs).map_or(max, |d| d.min(max)))
}

/// Refuses text with a NUL byte for the tools that deliver it through a
/// tmux argument (a paste buffer's contents, a shell command line): tmux's
/// arguments are C strings, so no argument can hold NUL. Checked before
/// anything is sent, so that nothing is half pasted and no paste buffer is
/// left behind. `send_text` needs no such check: it sends control
/// characters as hex bytes (`send-keys -H 00`), and NUL arrives as byte 0.
pub(crate) fn refuse_nul(tool: &str, name: &str, text: &str, why: &str) -> Result<(), ToolError> {
    match text.bytes().position(|b| b == 0) {
        None => Ok(()),
        Some(at) => Err(ToolError::new(
            tool,
            format!("{name} contains a NUL byte (byte {}), which {why}", at + 1),
            "Leave the NUL out, or type it with send_text, which delivers it as the byte 0 (what Ctrl-@ types on a terminal)",
        )),
    }
}

/// Types `text` into `pane` exactly: literal keys for printable text,
/// exact bytes for text with newlines or control characters.
pub(crate) async fn type_text(
    conn: &Conn,
    pane: PaneId,
    text: &str,
) -> Result<Delivery, ToolError> {
    match conn.tmux.type_text(pane, text).await {
        Ok(Typed::Literal) => Ok(Delivery::Literal),
        Ok(Typed::Bytes) => Ok(Delivery::Bytes),
        Ok(_) => Ok(Delivery::EnterOnly),
        Err(e) => Err(ToolError::tmux(format!("Typing into pane {pane}"), &e)),
    }
}

/// Pastes `text` into `pane` through a private paste buffer (deleted after).
pub(crate) async fn paste(
    conn: &Conn,
    pane: PaneId,
    text: &str,
    bracketed: bool,
) -> Result<(), ToolError> {
    conn.tmux
        .paste(pane, text, bracketed)
        .await
        .map_err(|e| ToolError::tmux(format!("Pasting into pane {pane}"), &e))
}

/// Presses Enter in `pane`.
pub(crate) async fn press_enter(conn: &Conn, pane: PaneId) -> Result<(), ToolError> {
    conn.tmux
        .run(SendKeys::keys(pane, [Key::ENTER]))
        .await
        .map_err(|e| ToolError::tmux(format!("Pressing Enter in pane {pane}"), &e))
}

/// Refuses to type into a pane whose program has exited, or that is in a
/// mode (copy mode…) unless `force`.
pub(crate) fn check_typable(
    row: &tmux_control::command::PaneInfo,
    force: bool,
    what: &str,
) -> Result<(), ToolError> {
    if row.dead {
        return Err(ToolError::new(
            what,
            format!(
                "the program in pane {} has exited (status {})",
                row.id,
                row.dead_status
                    .map_or_else(|| "unknown".to_owned(), |s| s.to_string())
            ),
            "Use respawn to start a program in it again, or create_terminal for a new one",
        ));
    }
    if row.in_mode && !force {
        return Err(ToolError::new(
            what,
            format!(
                "pane {} is in copy mode (or another tmux mode), so keys would go to the mode, not to the program",
                row.id
            ),
            "Leave the mode with send_keys keys=[\"q\"] and try again, or pass force: true to send to the mode on purpose",
        ));
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    const MAX: Duration = Duration::from_secs(60);

    fn secs(v: f64) -> Result<Duration, ToolError> {
        seconds_arg("wait_for_idle", "timeout_secs", v, MAX, "Leave it out")
    }

    #[test]
    fn seconds_are_clamped_before_conversion() {
        assert_eq!(secs(0.0).unwrap(), Duration::ZERO);
        assert_eq!(secs(-0.0).unwrap(), Duration::ZERO);
        assert_eq!(secs(1.5).unwrap(), Duration::from_millis(1500));
        assert_eq!(secs(60.0).unwrap(), MAX);
        // Each of these panics in `Duration::from_secs_f64`.
        for huge in [61.0, 1e19, 1e308, f64::MAX] {
            assert_eq!(secs(huge).unwrap(), MAX, "{huge}");
        }
        // Smaller than a nanosecond rounds down, never up past the limit.
        assert_eq!(secs(1e-12).unwrap(), Duration::ZERO);
    }

    #[test]
    fn negative_and_non_finite_seconds_are_refused_by_name() {
        for bad in [
            -1.0,
            -1e-9,
            -1e308,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ] {
            let err = secs(bad).unwrap_err().to_string();
            assert!(
                err.starts_with(
                    "wait_for_idle failed: timeout_secs must be a number of seconds from 0 to 60"
                ),
                "{err}"
            );
            assert!(err.contains("larger numbers count as 60"), "{err}");
            assert!(err.contains(&format!("not {bad}")), "{err}");
            assert!(err.ends_with("Leave it out"), "{err}");
        }
    }
}
