//! Regions: each command line a terminal ran, with where its command line
//! and output are in the pane's log, its working directory, exit status,
//! pipeline statuses and (for `run`) duration.
//!
//! In a shell with shell integration every command line is a region, typed
//! by `run`, `send_text` or a human: [`crate::terminal::shell`] records it when it
//! reads the shell's end mark. In other shells each completed `run` is one.
//! At most [`KEEP`] regions are kept per pane (the oldest are forgotten);
//! their text is read back from the pane's log, which can have evicted it.

use std::sync::Arc;

use tmux_control::PaneId;

use crate::terminal::lock::lock;
use crate::terminal::record::{Terminal, Terminals};
pub(crate) use crate::terminal::region::{KEEP, Region};

/// The regions of every pane: each pane's are a part of its record
/// ([`Terminal`]).
pub(crate) struct Regions {
    /// The records the panes' regions are kept in.
    terminals: Arc<Terminals>,
    /// Bumped on each new region, for the pane logs that write them.
    changed: tokio::sync::watch::Sender<u64>,
}

impl Regions {
    /// The regions of the panes whose records are in `terminals`.
    pub(crate) fn new(terminals: Arc<Terminals>) -> Self {
        Self {
            terminals,
            changed: tokio::sync::watch::Sender::new(0),
        }
    }

    /// Records `region` (numbered here) unless one ending at the same
    /// offset is already recorded.
    pub(crate) fn record(&self, pane: PaneId, region: Region) {
        self.record_in(&self.terminals.entry(pane), region);
    }

    /// Records `region` in `terminal`'s record, as [`Regions::record`].
    pub(crate) fn record_in(&self, terminal: &Terminal, mut region: Region) {
        let mut regions = lock(&terminal.regions);
        let (count, list) = &mut *regions;
        // The same end seen twice (two readers of the marks) is one region;
        // a recovered region's end is an offset of an earlier run's output,
        // which says nothing of this one's.
        if list
            .iter()
            .rev()
            .any(|r| !r.recovered && r.end == region.end)
        {
            return;
        }
        *count += 1;
        region.id = *count;
        list.push_back(region);
        if list.len() > KEEP {
            list.pop_front();
        }
        drop(regions);
        self.changed.send_modify(|n| *n += 1);
    }

    /// Puts back the regions a pane's log recovered from an earlier run
    /// (before any of this run's); numbering continues after them.
    pub(crate) fn recover(&self, pane: PaneId, recovered: impl Iterator<Item = Region>) {
        let terminal = self.terminals.entry(pane);
        let mut regions = lock(&terminal.regions);
        let (count, list) = &mut *regions;
        let mut old: Vec<Region> = recovered.collect();
        if old.is_empty() {
            return;
        }
        old.sort_by_key(|r| r.id);
        let shift = old.last().map_or(0, |r| r.id);
        for r in list.iter_mut() {
            r.id += shift;
        }
        *count += shift;
        for r in old.into_iter().rev() {
            list.push_front(r);
        }
        while list.len() > KEEP {
            list.pop_front();
        }
    }

    /// The version [`Regions::subscribe`] is at now.
    pub(crate) fn version(&self) -> u64 {
        *self.changed.borrow()
    }

    /// Changes whenever a region is recorded.
    pub(crate) fn subscribe(&self) -> tokio::sync::watch::Receiver<u64> {
        self.changed.subscribe()
    }

    /// Adds what `run` knows to the region that ended at `end`; returns
    /// the region as it is now.
    pub(crate) fn annotate(
        &self,
        pane: PaneId,
        end: u64,
        command: &str,
        duration_ms: u64,
    ) -> Option<Region> {
        let terminal = self.terminals.get(pane)?;
        let mut regions = lock(&terminal.regions);
        let r = regions.1.iter_mut().rev().find(|r| r.end == end)?;
        r.command = Some(command.to_owned());
        r.duration_ms = Some(duration_ms);
        Some(r.clone())
    }

    /// The pane's regions, oldest first.
    pub(crate) fn list(&self, pane: PaneId) -> Vec<Region> {
        self.terminals
            .get(pane)
            .map(|t| lock(&t.regions).1.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// The pane's regions after id `id`, oldest first.
    pub(crate) fn since(&self, pane: PaneId, id: u64) -> Vec<Region> {
        let Some(terminal) = self.terminals.get(pane) else {
            return Vec::new();
        };
        let regions = lock(&terminal.regions);
        let list = &regions.1;
        let newer = list.iter().rev().take_while(|r| r.id > id).count();
        list.iter().skip(list.len() - newer).cloned().collect()
    }

    /// Forgets a pane's regions (its program was replaced).
    /// Their numbering goes on, so a region id is never reused in a pane
    /// (its cooked log refers to them).
    pub(crate) fn forget(&self, pane: PaneId) {
        if let Some(terminal) = self.terminals.get(pane) {
            lock(&terminal.regions).1.clear();
        }
    }

    /// How many panes have numbered regions (kept or forgotten).
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.terminals.count(|t| lock(&t.regions).0 > 0)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn region(end: u64) -> Region {
        Region {
            id: 0,
            command: None,
            input: None,
            cwd: None,
            output_start: end - 1,
            output_end: end - 1,
            end,
            status: Some(0),
            pipestatus: None,
            duration_ms: None,
            integrated: false,
            lines: None,
            recovered: false,
            typed_by: None,
        }
    }

    #[test]
    fn numbered_once_annotated_and_bounded() {
        let regions = Regions::new(Arc::default());
        let pane = PaneId(1);
        regions.record(pane, region(10));
        regions.record(pane, region(10));
        regions.record(pane, region(20));
        regions.annotate(pane, 20, "make", 5);
        let list = regions.list(pane);
        assert_eq!(list.iter().map(|r| r.id).collect::<Vec<_>>(), [1, 2]);
        assert_eq!(
            (list[1].command.as_deref(), list[1].duration_ms),
            (Some("make"), Some(5))
        );
        for end in 0..(KEEP as u64 + 5) {
            regions.record(pane, region(100 + end));
        }
        let list = regions.list(pane);
        assert_eq!(list.len(), KEEP);
        assert_eq!(list.last().unwrap().id, KEEP as u64 + 7);
        regions.forget(pane);
        assert!(regions.list(pane).is_empty());
        regions.record(pane, region(5));
        assert_eq!(regions.list(pane)[0].id, KEEP as u64 + 8);
        // Reads and changes of a pane without a record make none.
        let other = PaneId(2);
        regions.annotate(other, 5, "make", 5);
        regions.forget(other);
        assert!(regions.list(other).is_empty() && regions.since(other, 0).is_empty());
        assert_eq!(regions.len(), 1);
    }

    /// A restarted tmux-mcp counts its output from 0 again: a region of its
    /// own that ends where a recovered one ended is a new region.
    #[test]
    fn a_recovered_end_is_no_duplicate() {
        let regions = Regions::new(Arc::default());
        let pane = PaneId(1);
        let old = Region {
            id: 4,
            recovered: true,
            ..region(92)
        };
        regions.recover(pane, [old].into_iter());
        regions.record(pane, region(92));
        let ids: Vec<(u64, bool)> = regions
            .list(pane)
            .iter()
            .map(|r| (r.id, r.recovered))
            .collect();
        assert_eq!(ids, [(4, true), (5, false)]);
        assert_eq!(regions.since(pane, 4).len(), 1);
    }
}
