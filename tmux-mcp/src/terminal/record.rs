//! One record per terminal (a followed pane): a [`Terminal`] holds
//! everything one connection knows about the pane, and the connection's
//! [`Terminals`] holds the records, by pane. A record is created in one
//! place ([`Terminals::entry`]), the first time a concern writes something
//! about the pane (lookups never create one), and removed in one place
//! ([`Terminals::remove`], called by
//! [`Conn::forget`](crate::terminal::backend::Conn)) when the pane's durable
//! log's task sees the pane gone (its output ended with `PaneEnd::Gone`):
//! the whole record goes, so nothing outlives its pane (issue 23).
//!
//! A record has one part per concern, each behind a lock of its own, so a
//! concern locks only its part and never holds it while it awaits:
//!
//! - the input this server sent the pane ([`Input`], kept here): the output
//!   offset just before the last input, and whether text it typed waits on
//!   the input line unsubmitted;
//! - its integrated shell and its wrapped runs (`shell::Shells`);
//! - its regions, numbered (`regions::Regions`);
//! - its durable log and its output (`journal::journals::Journals`);
//! - who created it and typed into it, and its input turn
//!   (`actors::PaneActors`);
//! - the person who holds its input from the web view, if any ([`Hold`],
//!   kept here): while one does, no agent types into it; and who views it
//!   there.
//!
//! Each concern keeps its logic and what it knows about all panes (the
//! shell integration's hooks, the regions' change counter, the logs'
//! directory and bound) and reads and writes its part of a pane's record
//! through the connection's [`Terminals`]. Runs are kept by run id
//! (`Conn::runs`), not here: a resume can still answer after the pane is
//! gone.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use tmux_control::{PaneId, PaneOutput};

use crate::terminal::actors::part::PaneRecord;
use crate::terminal::journal::Journal;
use crate::terminal::lock::lock;
use crate::terminal::region::Region;
use crate::terminal::shell::slot::{ShellSlot, Wrapped};

tokio::task_local! {
    /// The panes the current call named (resolved a target to), when the
    /// call is run through [`noting_touched`].
    static TOUCHED: std::cell::RefCell<Vec<PaneId>>;
}

/// Runs `call`, and returns with its output the panes it resolved a target
/// to ([`touched`]), each once, in order.
pub(crate) async fn noting_touched<F: std::future::Future>(call: F) -> (F::Output, Vec<PaneId>) {
    TOUCHED
        .scope(std::cell::RefCell::new(Vec::new()), async move {
            let out = call.await;
            let panes = TOUCHED.with(|t| t.take());
            (out, panes)
        })
        .await
}

/// Notes that the current call is about `pane` (nothing outside
/// [`noting_touched`]).
pub(crate) fn touched(pane: PaneId) {
    let _ = TOUCHED.try_with(|t| {
        let mut panes = t.borrow_mut();
        if !panes.contains(&pane) {
            panes.push(pane);
        }
    });
}

/// The input record of one terminal.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Input {
    /// The output offset just before the last input this server sent.
    pub(crate) last_at: Option<u64>,
    /// Text this server typed without Enter waits on the input line, no key
    /// since having submitted or cleared it: a `run` there would join it.
    pub(crate) unsubmitted: bool,
}

/// Everything one connection knows about one terminal (see the module
/// docs): one part per concern, each behind its own lock.
#[derive(Default)]
pub(crate) struct Terminal {
    /// The input this server sent it.
    input: Mutex<Input>,
    /// Its integrated shell, when it has one (`shell`).
    pub(super) shell: Mutex<Option<ShellSlot>>,
    /// Where its last wrapped run ended and how its prompt ends, once `run`
    /// typed its wrapped form into it (`shell`).
    pub(super) wrapped: Mutex<Option<Wrapped>>,
    /// Its regions: the last id given (ids are never reused in a pane) and
    /// the regions kept, oldest first (`regions`).
    pub(super) regions: Mutex<(u64, VecDeque<Region>)>,
    /// Its durable log and the output that feeds it, once opened
    /// (`journal`).
    pub(super) journal: Mutex<Option<(Arc<Journal>, PaneOutput)>>,
    /// Who created it and typed into it, and its input turn (`actors`).
    pub(super) actors: Mutex<PaneRecord>,
    /// Its attention watch was started (`backend::watch`).
    watched: std::sync::atomic::AtomicBool,
    /// The person who took its input over in the web view, if one did.
    hold: Mutex<Option<Hold>>,
    /// The web view's tabs that show it: each tab's number and its key's
    /// name.
    viewers: Mutex<std::collections::BTreeMap<u64, Arc<str>>>,
}

/// A person's hold on a terminal's input (the web view's take-over): until
/// hand-back, the input tools and `run` refuse with `human_holds`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Hold {
    /// Who holds it: the name of their web key.
    pub(crate) by: Arc<str>,
    /// The web session that holds it (its tabs all hold it).
    pub(crate) session: u64,
    /// When it was taken (RFC 3339).
    pub(crate) since: String,
}

impl Terminal {
    /// Claims the start of the terminal's attention watch: `true` the
    /// first time only.
    pub(crate) fn claim_watch(&self) -> bool {
        !self.watched.swap(true, std::sync::atomic::Ordering::AcqRel)
    }

    /// The input this server sent it.
    pub(crate) fn input(&self) -> Input {
        *lock(&self.input)
    }

    /// Who holds its input now, if a person does.
    pub(crate) fn hold(&self) -> Option<Hold> {
        lock(&self.hold).clone()
    }

    /// Gives its input to `hold`, unless another session holds it: then
    /// that hold is returned and nothing changes.
    pub(crate) fn take(&self, hold: Hold) -> Result<(), Hold> {
        let mut held = lock(&self.hold);
        match &*held {
            Some(other) if other.session != hold.session => Err(other.clone()),
            _ => {
                *held = Some(hold);
                Ok(())
            }
        }
    }

    /// Tab `tab` of the web view (by the key `name`) shows it.
    pub(crate) fn viewed_by(&self, tab: u64, name: &str) {
        lock(&self.viewers).insert(tab, Arc::from(name));
    }

    /// Tab `tab` no longer shows it.
    pub(crate) fn unviewed_by(&self, tab: u64) {
        lock(&self.viewers).remove(&tab);
    }

    /// The people who view it in the web view, by their key's name, each
    /// once, sorted.
    pub(crate) fn web_viewers(&self) -> Vec<String> {
        let mut names: Vec<String> = lock(&self.viewers)
            .values()
            .map(|n| n.to_string())
            .collect();
        names.sort();
        names.dedup();
        names
    }

    /// Ends `session`'s hold; whether it held the terminal.
    pub(crate) fn release(&self, session: u64) -> bool {
        let mut held = lock(&self.hold);
        if held.as_ref().is_some_and(|h| h.session == session) {
            *held = None;
            return true;
        }
        false
    }
}

/// The records of one connection's terminals, by pane.
#[derive(Default)]
pub(crate) struct Terminals {
    records: Mutex<HashMap<PaneId, Arc<Terminal>>>,
}

impl Terminals {
    /// The record of `pane`, created the first time: for a concern that
    /// writes something about the pane.
    pub(crate) fn entry(&self, pane: PaneId) -> Arc<Terminal> {
        lock(&self.records).entry(pane).or_default().clone()
    }

    /// The record of `pane`, if it has one (a lookup creates none).
    pub(crate) fn get(&self, pane: PaneId) -> Option<Arc<Terminal>> {
        lock(&self.records).get(&pane).cloned()
    }

    /// Forgets `pane`, which is gone: removes its whole record (called by
    /// `Conn::forget` only).
    pub(crate) fn remove(&self, pane: PaneId) {
        lock(&self.records).remove(&pane);
    }

    /// Every record, with its pane.
    pub(crate) fn all_with_panes(&self) -> Vec<(PaneId, Arc<Terminal>)> {
        lock(&self.records)
            .iter()
            .map(|(pane, t)| (*pane, t.clone()))
            .collect()
    }

    /// Every record.
    pub(crate) fn all(&self) -> Vec<Arc<Terminal>> {
        lock(&self.records).values().cloned().collect()
    }

    /// How many terminals have a record.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        lock(&self.records).len()
    }

    /// How many records `holds` says hold something.
    #[cfg(test)]
    pub(super) fn count(&self, holds: impl Fn(&Terminal) -> bool) -> usize {
        let records: Vec<Arc<Terminal>> = lock(&self.records).values().cloned().collect();
        records.iter().filter(|t| holds(t)).count()
    }

    /// Changes `pane`'s input record (creating the pane's record only when
    /// the change says something).
    pub(crate) fn update(&self, pane: PaneId, change: impl Fn(&mut Input)) {
        let terminal = match self.get(pane) {
            Some(terminal) => terminal,
            None => {
                let mut input = Input::default();
                change(&mut input);
                if input == Input::default() {
                    return;
                }
                self.entry(pane)
            }
        };
        change(&mut lock(&terminal.input));
    }

    /// `pane`'s input record.
    pub(crate) fn input(&self, pane: PaneId) -> Input {
        self.get(pane).map(|t| t.input()).unwrap_or_default()
    }

    /// How many terminals' input records say something.
    #[cfg(test)]
    pub(crate) fn inputs(&self) -> usize {
        self.count(|t| t.input() != Input::default())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_record_is_made_by_writes_and_goes_whole() {
        let terminals = Terminals::default();
        let pane = PaneId(3);
        // Reads and changes that say nothing make no record.
        assert_eq!(terminals.input(pane), Input::default());
        assert!(terminals.get(pane).is_none());
        terminals.update(pane, |i| i.unsubmitted = false);
        assert_eq!(terminals.len(), 0);
        terminals.update(pane, |i| i.unsubmitted = true);
        assert!(terminals.input(pane).unsubmitted);
        terminals.update(pane, |i| i.last_at = Some(7));
        assert_eq!(
            terminals.input(pane),
            Input {
                last_at: Some(7),
                unsubmitted: true
            }
        );
        assert_eq!((terminals.len(), terminals.inputs()), (1, 1));
        // One record for the pane, whoever asks.
        assert!(Arc::ptr_eq(
            &terminals.entry(pane),
            &terminals.get(pane).unwrap()
        ));
        terminals.remove(pane);
        assert_eq!(terminals.len(), 0);
        assert_eq!(terminals.input(pane), Input::default());
    }

    #[test]
    fn one_session_holds_a_terminal_at_a_time() {
        let terminal = Terminal::default();
        let hold = |session| Hold {
            by: Arc::from(format!("person{session}")),
            session,
            since: String::new(),
        };
        assert_eq!(terminal.take(hold(1)), Ok(()));
        // Taking again is the same hold; another session is refused.
        assert_eq!(terminal.take(hold(1)), Ok(()));
        assert_eq!(terminal.take(hold(2)), Err(hold(1)));
        assert!(!terminal.release(2));
        assert_eq!(terminal.hold(), Some(hold(1)));
        assert!(terminal.release(1));
        assert_eq!(terminal.hold(), None);
        assert_eq!(terminal.take(hold(2)), Ok(()));
    }
}
