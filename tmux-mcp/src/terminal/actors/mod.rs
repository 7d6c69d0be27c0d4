//! Who did what to which pane: per pane (a part of the terminal's record
//! on the tmux connection, so it ends with it, and forgotten with the
//! record when tmux says the pane is gone) who created the pane and who typed into it when, and
//! the pane's input turn, which serialises input: the input tools and
//! `run`'s typing take it, an async lock held only while input is prepared
//! and typed (never while `run` waits for its command to finish, and never
//! by the reading tools). The replies say who else uses the pane
//! ([`Sharing`]); `list_terminals` says who created it and typed into it
//! last ([`PaneActorsEntry`]). The names are the callers' (the MCP layer's
//! `actors`).

use std::sync::Arc;
use std::time::SystemTime;

use schemars::JsonSchema;
use serde::Serialize;
use tmux_control::PaneId;

use crate::terminal::lock::lock;
use crate::terminal::record::{Terminal, Terminals};

pub(crate) mod part;
use crate::text::rfc3339;

/// The most actors remembered per pane as having typed into it.
const TYPISTS: usize = 16;

/// The most inputs remembered per pane, to tell whose a command line was.
const INPUTS: usize = 64;

/// What an input tool's or `run`'s reply says about other actors on the
/// pane (absent when no other actor has typed into it).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, JsonSchema)]
pub(crate) struct Sharing {
    /// Another actor was typing into this pane when this call came: this call waited until that input was done (input to one pane is serialised), then typed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub waited_for: Option<String>,
    /// The last other actor (another MCP client) that typed into this pane before this call: someone else is using this terminal.
    pub last_other_actor: Option<String>,
    /// When that actor last typed (RFC 3339, UTC).
    pub last_other_at: Option<String>,
    /// People's tmux clients that showed this terminal when this call typed (a person watching, not typing: typing into a terminal a person types into is refused with human_typing).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub watched_by: Vec<String>,
    /// How long this call waited for a person to finish typing before it typed (server policy --human-input wait).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waited_for_person_ms: Option<u64>,
    /// This call typed although a person was typing or had a line on the prompt (over_person: true, or --human-input allow): the tmux client, or "a person's line".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub typed_over_person: Option<String>,
}

impl Sharing {
    /// `sharing`, with the people's clients `watching` the pane, how long
    /// the call `waited` for a person, and whom it `typed_over`.
    pub(crate) fn with_people(
        sharing: Option<Self>,
        watching: Vec<String>,
        waited: Option<u64>,
        typed_over: Option<String>,
    ) -> Option<Self> {
        if watching.is_empty() && waited.is_none() && typed_over.is_none() {
            return sharing;
        }
        let mut sharing = sharing.unwrap_or_default();
        sharing.watched_by = watching;
        sharing.waited_for_person_ms = waited;
        sharing.typed_over_person = typed_over;
        Some(sharing)
    }

    /// A sentence for a reply's text form (empty when there is nothing to say).
    pub(crate) fn sentence(sharing: Option<&Self>) -> String {
        let Some(s) = sharing else {
            return String::new();
        };
        let mut out = String::new();
        if let Some(other) = &s.waited_for {
            out.push_str(&format!(
                " It waited for {other:?}, who was typing into this pane at the same time."
            ));
        }
        if let (Some(other), Some(at)) = (&s.last_other_actor, &s.last_other_at) {
            out.push_str(&format!(
                " This terminal is shared: {other:?} last typed into it at {at}."
            ));
        }
        if !s.watched_by.is_empty() {
            out.push_str(&format!(
                " A person watches this terminal (tmux client {}).",
                s.watched_by.join(", ")
            ));
        }
        if let Some(ms) = s.waited_for_person_ms {
            out.push_str(&format!(
                " It waited {ms} ms for a person to finish typing."
            ));
        }
        if let Some(whom) = &s.typed_over_person {
            out.push_str(&format!(
                " It typed over a person at the terminal ({whom}): their line and this input are joined."
            ));
        }
        out
    }
}

/// Who created a pane and who last typed into it, for `list_terminals`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, JsonSchema)]
pub(crate) struct PaneActorsEntry {
    /// The actor that created the pane (through create_terminal on this server).
    pub created_by: Option<String>,
    /// When (RFC 3339, UTC).
    pub created_at: Option<String>,
    /// The actor that last typed into the pane (input tools and run).
    pub last_input_by: Option<String>,
    /// When (RFC 3339, UTC).
    pub last_input_at: Option<String>,
    /// The actor typing into the pane right now, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub typing_now: Option<String>,
}

/// The actors of each pane of one tmux connection, kept in the panes'
/// records.
pub(crate) struct PaneActors {
    terminals: Arc<Terminals>,
}

/// The right to type into one pane, until dropped.
pub(crate) struct Turn {
    /// The record of the pane.
    terminal: Arc<Terminal>,
    actor: Arc<str>,
    sharing: Option<Sharing>,
    _held: tokio::sync::OwnedMutexGuard<()>,
}

impl PaneActors {
    /// The actors of the panes whose records are in `terminals`.
    pub(crate) fn new(terminals: Arc<Terminals>) -> Self {
        Self { terminals }
    }

    /// How many panes have a record of their actors.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.terminals.count(|t| {
            let record = lock(&t.actors);
            record.created.is_some() || !record.typists.is_empty() || record.holder.is_some()
        })
    }

    /// Remembers that `actor` created `pane` now.
    pub(crate) fn created(&self, pane: PaneId, actor: Arc<str>) {
        let terminal = self.terminals.entry(pane);
        lock(&terminal.actors).created = Some((actor, SystemTime::now()));
    }

    /// Waits for `pane`'s turn (another actor's input to it finishes
    /// first) and takes it for `actor`. The turn says who else uses the
    /// pane ([`Turn::sharing`]); [`Turn::typed`] records the input.
    pub(crate) async fn take_turn(&self, pane: PaneId, actor: Arc<str>) -> Turn {
        let terminal = self.terminals.entry(pane);
        let turn = lock(&terminal.actors).turn.clone();
        let (held, busy_with) = match turn.clone().try_lock_owned() {
            Ok(held) => (held, None),
            Err(_) => {
                let holder = lock(&terminal.actors).holder.clone();
                tracing::debug!(%pane, actor = %actor, holder = ?holder, "waiting for the pane's input turn");
                (turn.lock_owned().await, holder)
            }
        };
        let mut record = lock(&terminal.actors);
        record.holder = Some(actor.clone());
        tracing::debug!(%pane, actor = %actor, "took the pane's input turn");
        let last_other = record
            .typists
            .iter()
            .rev()
            .find(|(who, _)| **who != *actor)
            .cloned();
        let waited_for = busy_with.filter(|who| **who != *actor);
        let sharing = (waited_for.is_some() || last_other.is_some()).then(|| Sharing {
            waited_for: waited_for.map(|w| w.to_string()),
            last_other_actor: last_other.as_ref().map(|(who, _)| who.to_string()),
            last_other_at: last_other.map(|(_, at)| rfc3339(at)),
            ..Sharing::default()
        });
        drop(record);
        Turn {
            terminal,
            actor,
            sharing,
            _held: held,
        }
    }
}

impl Terminal {
    /// The actor that typed into the pane between output offsets `from`
    /// and `to` (a command line's echo), if one did as far as this server
    /// remembers; `None`: nothing this server sent, so a person typed it.
    pub(crate) fn typed_by(&self, from: u64, to: u64) -> Option<Arc<str>> {
        let record = lock(&self.actors);
        record
            .inputs
            .iter()
            .rev()
            .find(|(at, _)| (from..=to).contains(at))
            .map(|(_, who)| who.clone())
    }

    /// The last region `actor` was told of (0 the first time: all of them
    /// are news).
    pub(crate) fn told(&self, actor: &Arc<str>) -> u64 {
        lock(&self.actors).told.get(actor).copied().unwrap_or(0)
    }

    /// Records that `actor` knows the regions up to `last` now.
    pub(crate) fn tell(&self, actor: &Arc<str>, last: u64) {
        lock(&self.actors).told.insert(actor.clone(), last);
    }

    /// Who created the pane and who typed into it last.
    pub(crate) fn actors_entry(&self) -> Option<PaneActorsEntry> {
        let record = lock(&self.actors);
        let last = record.typists.last();
        let entry = PaneActorsEntry {
            created_by: record.created.as_ref().map(|(who, _)| who.to_string()),
            created_at: record.created.as_ref().map(|(_, at)| rfc3339(*at)),
            last_input_by: last.map(|(who, _)| who.to_string()),
            last_input_at: last.map(|(_, at)| rfc3339(*at)),
            typing_now: record.holder.as_ref().map(ToString::to_string),
        };
        (entry != PaneActorsEntry::default()).then_some(entry)
    }
}

impl Turn {
    /// What the reply says about other actors on the pane.
    pub(crate) fn sharing(&self) -> Option<Sharing> {
        self.sharing.clone()
    }

    /// Records that the turn's actor types into the pane now, its input
    /// starting after output offset `at`.
    pub(crate) fn typed(&self, at: u64) {
        let mut record = lock(&self.terminal.actors);
        record.inputs.push_back((at, self.actor.clone()));
        if record.inputs.len() > INPUTS {
            record.inputs.pop_front();
        }
        record.typists.retain(|(who, _)| *who != self.actor);
        record.typists.push((self.actor.clone(), SystemTime::now()));
        if record.typists.len() > TYPISTS {
            record.typists.remove(0);
        }
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        lock(&self.terminal.actors).holder = None;
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn turns_are_serialised_and_say_who_else_typed() {
        let terminals: Arc<Terminals> = Arc::default();
        let actors = PaneActors::new(terminals.clone());
        let entry = |pane| terminals.get(pane).and_then(|t| t.actors_entry());
        let pane = PaneId(7);
        let a: Arc<str> = Arc::from("A");
        let b: Arc<str> = Arc::from("B");
        actors.created(pane, a.clone());
        let first = actors.take_turn(pane, a.clone()).await;
        assert_eq!(first.sharing(), None);
        first.typed(0);
        assert_eq!(entry(pane).unwrap().typing_now.as_deref(), Some("A"));
        // B waits while A holds the turn, and is told about A.
        let waiting = tokio::spawn({
            let actors = PaneActors::new(terminals.clone());
            let b = b.clone();
            async move {
                let turn = actors.take_turn(pane, b).await;
                turn.typed(10);
                turn.sharing()
            }
        });
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished());
        drop(first);
        let sharing = waiting.await.unwrap().unwrap();
        assert_eq!(sharing.waited_for.as_deref(), Some("A"));
        assert_eq!(sharing.last_other_actor.as_deref(), Some("A"));
        let entry = entry(pane).unwrap();
        assert_eq!(entry.created_by.as_deref(), Some("A"));
        assert_eq!(entry.last_input_by.as_deref(), Some("B"));
        assert_eq!(entry.typing_now, None);
        // A again: B was the last other actor; nobody to wait for.
        let again = actors.take_turn(pane, a).await;
        let sharing = again.sharing().unwrap();
        assert_eq!(sharing.last_other_actor.as_deref(), Some("B"));
        assert_eq!(sharing.waited_for, None);
    }
}
