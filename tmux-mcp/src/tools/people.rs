//! The check every tool that types makes at the last moment: never over a
//! person. A person typing into the pane (a key from their tmux client in
//! the last seconds), or a command line in the pane's integrated shell
//! that this server did not type (a person's unfinished command), refuses
//! the input with `human_typing` unless the server runs with
//! `--human-input allow`; nothing is typed then, so the person's line is
//! intact. A person who only watches does not block: the reply names them.
//!
//! And what a person did, told once: the command lines a person ran in an
//! integrated shell (regions whose echo holds no input of this server's)
//! are news to each actor until its next call about that terminal, whose
//! reply, from any tool, says so ([`TmuxMcp::people_news`]).

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Serialize;
use tmux_control::{PaneId, PaneOutput, WindowId};

use crate::config::HumanInput;
use crate::mcp::server::TmuxMcp;
use crate::reply::ToolError;
use crate::terminal::backend::Conn;
use crate::terminal::presence::{self, People, TYPING_SECS};
use crate::terminal::region::TypedBy;

/// The most command lines of a person one reply tells of (the rest are
/// counted, and listed by list_regions).
const NEWS: usize = 10;

/// A command line a person ran, as a reply tells of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub(crate) struct PersonRan {
    /// The pane.
    pub pane: String,
    /// The region's id (read_region region_id).
    pub region: u64,
    /// The command line as the shell echoed it (secrets masked).
    pub command: Option<String>,
    /// Its exit status.
    pub exit_status: Option<i32>,
}

/// What a person did in one terminal since the actor's last call about it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, JsonSchema)]
pub(crate) struct PeopleNews {
    /// The command lines, oldest first (at most 10).
    pub ran: Vec<PersonRan>,
    /// How many more there were (list_regions lists them).
    pub more: usize,
}

impl PeopleNews {
    /// The sentence a reply's text carries.
    pub(crate) fn sentence(&self, pane: PaneId) -> String {
        let ran: Vec<String> = self
            .ran
            .iter()
            .map(|r| {
                format!(
                    "`{}` → {}",
                    r.command.as_deref().unwrap_or("?"),
                    r.exit_status
                        .map_or_else(|| "?".to_owned(), |s| s.to_string())
                )
            })
            .collect();
        let more = if self.more > 0 {
            format!(" and {} more (list_regions)", self.more)
        } else {
            String::new()
        };
        format!(
            "Since your last call, a person ran in pane {pane}: {}{more}.",
            ran.join(", ")
        )
    }
}

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
        let people = presence::people(&conn.tmux, &conn.humans, pane, window).await;
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
        // (`run` refuses it by itself; the input tools add to it); so is a
        // line it typed since the prompt and submitted, echoed before the
        // shell marks the command's start.
        if !conn.unsubmitted(pane)
            && let Some(slot) = conn.shells.get(&conn.tmux, po).await
            && slot
                .tracker
                .input_start()
                .is_none_or(|start| conn.last_input(pane).is_none_or(|at| at < start))
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

impl TmuxMcp {
    /// What a person ran in `pane` that `actor` was not told of yet (the
    /// pane's shell brought up to date first); afterwards the actor knows
    /// it. Empty for a pane without an integrated shell.
    pub(crate) async fn people_news(&self, pane: PaneId, actor: &Arc<str>) -> PeopleNews {
        let Ok(conn) = self.conn().await else {
            return PeopleNews::default();
        };
        // Only an integrated shell tells whose a command line was (and
        // asking a plain pane's option would cost a round trip each call).
        if !conn.shells.has_slot(pane) {
            return PeopleNews::default();
        }
        let Ok(po) = conn.follow(pane).await else {
            return PeopleNews::default();
        };
        let _ = conn.shells.get(&conn.tmux, &po).await;
        let Some(terminal) = conn.terminals.get(pane) else {
            return PeopleNews::default();
        };
        let known = terminal.told(actor);
        let regions = conn.shells.regions.since(pane, known);
        if let Some(last) = regions.last() {
            terminal.tell(actor, last.id);
        }
        let news: Vec<_> = regions
            .iter()
            .filter(|r| r.typed_by == Some(TypedBy::Person))
            .collect();
        let more = news.len().saturating_sub(NEWS);
        let ran = news[more..]
            .iter()
            .map(|r| {
                let entry = self.entry(&po, None, r);
                PersonRan {
                    pane: pane.to_string(),
                    region: r.id,
                    command: entry.command,
                    exit_status: r.status,
                }
            })
            .collect();
        PeopleNews { ran, more }
    }
}
