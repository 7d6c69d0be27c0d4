//! The check every tool that types makes at the last moment: never over a
//! person. A person typing into the pane (a key from their tmux client in
//! the last seconds), or a command line in the pane's integrated shell
//! that this server did not type (a person's unfinished command), refuses
//! the input with `human_typing` unless the server runs with
//! `--human-input allow`; nothing is typed then, so the person's line is
//! intact. A person who only watches does not block: the reply names them.

use tmux_control::{PaneId, PaneOutput, WindowId};

use crate::config::HumanInput;
use crate::mcp::server::TmuxMcp;
use crate::reply::ToolError;
use crate::terminal::backend::Conn;
use crate::terminal::presence::{self, People, TYPING_SECS};

impl TmuxMcp {
    /// Who is at `pane` (in `window`) now; refuses (`what` failed with
    /// `human_typing`) when typing there would collide with a person.
    pub(crate) async fn check_people(
        &self,
        conn: &Conn,
        po: &PaneOutput,
        pane: PaneId,
        window: WindowId,
        what: &str,
    ) -> Result<People, ToolError> {
        let people = presence::people(&conn.tmux, pane, window).await;
        if self.inner.config.human_input == HumanInput::Allow {
            return Ok(people);
        }
        if let Some(client) = &people.typing {
            return Err(ToolError::human_typing(
                what,
                &format!(
                    "a person is typing into this terminal (tmux client {client} sent a key within the last {TYPING_SECS} seconds)"
                ),
                Some(client),
            ));
        }
        // Text this server typed and left unsubmitted is its own line
        // (`run` refuses it by itself; the input tools add to it).
        if !conn.unsubmitted(pane)
            && let Some(slot) = conn.shells.get(&conn.tmux, po).await
            && presence::holds_a_line(po, &slot)
        {
            return Err(ToolError::human_typing(
                what,
                "the shell's command line holds text this server did not type (a person's unfinished command)",
                people.watching.first().map(String::as_str),
            ));
        }
        Ok(people)
    }
}
