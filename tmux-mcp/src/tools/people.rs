//! The check every tool that types makes at the last moment: never over a
//! person. A person typing into the pane (a key from their tmux client in
//! the last seconds), or a command line in the pane's integrated shell
//! that this server did not type (a person's unfinished command), refuses
//! the input with `human_typing` unless the server runs with
//! `--human-input allow`; nothing is typed then, so the person's line is
//! intact. A person who took the terminal over in the web view holds it:
//! every input refuses with `human_holds`, with no override, until they
//! hand it back. A person who only watches does not block: the reply names
//! them.
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

/// `human_holds` when a person holds `pane`'s input (they took it over
/// in the web view): no input of any tool goes in until they hand it back.
pub(crate) fn refuse_held(conn: &Conn, pane: PaneId, what: &str) -> Result<(), ToolError> {
    match conn.terminals.get(pane).and_then(|t| t.hold()) {
        Some(hold) => Err(ToolError::human_holds(what, &hold.by, &hold.since)),
        None => Ok(()),
    }
}

/// What the last check before typing found (see [`TmuxMcp::check_people`]).
#[derive(Debug, Clone, Default)]
pub(crate) struct Checked {
    /// The people's clients that watch the pane.
    pub(crate) watching: Vec<String>,
    /// How long the call waited for a person to finish (`--human-input
    /// wait`), when it did.
    pub(crate) waited_ms: Option<u64>,
    /// The person's client typed over (`over_person: true`, or
    /// `--human-input allow`, while a person was in the way).
    pub(crate) typed_over: Option<String>,
}

impl TmuxMcp {
    /// Who is at `pane` (in `window`) now; refuses (`what` failed with
    /// `human_typing`) when typing there would collide with a person. With
    /// `--human-input wait` it first waits, at most `limit`, until the
    /// person is done; `over_person` (the call's explicit override) or
    /// `--human-input allow` types anyway, and the reply says over whom.
    pub(crate) async fn check_people(
        &self,
        conn: &Conn,
        po: &PaneOutput,
        (pane, window): (PaneId, WindowId),
        what: &str,
        over_person: bool,
        limit: std::time::Duration,
    ) -> Result<Checked, ToolError> {
        let policy = if over_person {
            HumanInput::Allow
        } else {
            self.inner.config.human_input
        };
        // A person's hold is absolute: no override types over it.
        refuse_held(conn, pane, what)?;
        let started = std::time::Instant::now();
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            let people = presence::people(&conn.tmux, &conn.humans, pane, window).await;
            let in_the_way = self.person_in_the_way(conn, po, pane, &people, what).await;
            let Some((refusal, client, typing_until)) = in_the_way else {
                let waited = started.elapsed();
                return Ok(Checked {
                    watching: people.watching,
                    waited_ms: (policy == HumanInput::Wait && waited.as_millis() > 0)
                        .then(|| u64::try_from(waited.as_millis()).unwrap_or(u64::MAX)),
                    typed_over: None,
                });
            };
            match policy {
                HumanInput::Allow => {
                    return Ok(Checked {
                        watching: people.watching,
                        waited_ms: None,
                        typed_over: client.or_else(|| Some("a person's line".to_owned())),
                    });
                }
                HumanInput::Refuse => return Err(refusal),
                HumanInput::Wait if tokio::time::Instant::now() >= deadline => return Err(refusal),
                HumanInput::Wait => {}
            }
            // Wait for the pane's next output (the person types on,
            // submits or clears the line) or the end of the typing window
            // tmux's whole-second key time allows (a true timer: that
            // window's end), at most until the deadline.
            let mut more = po.stream_from(po.end_offset());
            let wake = typing_until.map_or(deadline, |until| until.min(deadline));
            tokio::select! {
                _ = more.next() => {}
                () = tokio::time::sleep_until(wake) => {}
            }
        }
    }

    /// Whether a person is in the way of typing into `pane`: the refusal,
    /// the person's client when known, and, for a person typing, when the
    /// typing window ends.
    async fn person_in_the_way(
        &self,
        conn: &Conn,
        po: &PaneOutput,
        pane: PaneId,
        people: &People,
        what: &str,
    ) -> Option<(ToolError, Option<String>, Option<tokio::time::Instant>)> {
        if let Some(client) = &people.typing {
            let refusal = ToolError::human_typing(
                what,
                &format!(
                    "a person is typing into this terminal (tmux client {client} sent a key within the last {TYPING_SECS} seconds)"
                ),
                Some(client),
            );
            let left = people.typing_for.unwrap_or(TYPING_SECS);
            let until = tokio::time::Instant::now() + std::time::Duration::from_secs(left);
            return Some((refusal, Some(client.clone()), Some(until)));
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
            let client = people.watching.first().cloned();
            let refusal = ToolError::human_typing(
                what,
                "the shell's command line holds text this server did not type (a person's unfinished command)",
                client.as_deref(),
            );
            return Some((refusal, client, None));
        }
        None
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
