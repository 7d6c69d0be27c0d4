//! What one connection knows about each terminal (a followed pane) that is
//! not kept by a concern of its own, and the one place where everything it
//! knows about a pane is forgotten once tmux says the pane is gone.
//!
//! A terminal's record here holds the input this server sent it: the output
//! offset just before the last input, and whether text it typed waits on the
//! input line unsubmitted. Its shell (`shell::Shells`), its regions
//! (`regions::Regions`), its durable log (`journal::Journals`) and who typed
//! into it (`actors::PaneActors`) are kept by those concerns, each by pane;
//! [`Conn::forget`](crate::terminal::backend::Conn) removes the pane from all of them
//! when its durable log's task sees the pane gone (its output ended with
//! `PaneEnd::Gone`), so no state outlives its pane (issue 23; a record that
//! holds all of them in one place is the next step, see
//! docs/architecture.md).

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

use tmux_control::PaneId;

/// The input record of one terminal.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Input {
    /// The output offset just before the last input this server sent.
    pub(crate) last_at: Option<u64>,
    /// Text this server typed without Enter waits on the input line, no key
    /// since having submitted or cleared it: a `run` there would join it.
    pub(crate) unsubmitted: bool,
}

/// The input records of one connection's terminals, by pane.
#[derive(Debug, Default)]
pub(crate) struct Terminals {
    inputs: Mutex<HashMap<PaneId, Input>>,
}

impl Terminals {
    fn lock(&self) -> MutexGuard<'_, HashMap<PaneId, Input>> {
        self.inputs.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Changes `pane`'s input record.
    pub(crate) fn update(&self, pane: PaneId, change: impl FnOnce(&mut Input)) {
        let mut inputs = self.lock();
        let input = inputs.entry(pane).or_default();
        change(input);
        if *input == Input::default() {
            inputs.remove(&pane);
        }
    }

    /// `pane`'s input record.
    pub(crate) fn input(&self, pane: PaneId) -> Input {
        self.lock().get(&pane).copied().unwrap_or_default()
    }

    /// Forgets `pane`.
    pub(crate) fn forget(&self, pane: PaneId) {
        self.lock().remove(&pane);
    }

    /// How many terminals have a record.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.lock().len()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_record_lasts_while_it_says_something() {
        let terminals = Terminals::default();
        let pane = PaneId(3);
        terminals.update(pane, |i| i.unsubmitted = true);
        assert!(terminals.input(pane).unsubmitted);
        terminals.update(pane, |i| i.unsubmitted = false);
        assert_eq!(terminals.len(), 0);
        terminals.update(pane, |i| i.last_at = Some(7));
        assert_eq!(terminals.input(pane).last_at, Some(7));
        terminals.forget(pane);
        assert_eq!(terminals.len(), 0);
        assert_eq!(terminals.input(pane), Input::default());
    }
}
