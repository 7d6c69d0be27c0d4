//! The actors' part of a terminal's record, beneath the record; the logic
//! that keeps it is in [`super`].

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::SystemTime;

/// What a terminal's record holds about its actors.
#[derive(Default)]
pub(crate) struct PaneRecord {
    pub(super) created: Option<(Arc<str>, SystemTime)>,
    /// The actors that typed into the pane, each with its latest time,
    /// latest last.
    pub(super) typists: Vec<(Arc<str>, SystemTime)>,
    /// Held while an actor types into the pane.
    pub(super) turn: Arc<tokio::sync::Mutex<()>>,
    /// Who holds `turn`.
    pub(super) holder: Option<Arc<str>>,
    /// Where each of the last inputs began (the output offset just before
    /// it), and whose it was, oldest first: a command line typed with none
    /// of them in it was typed by a person.
    pub(super) inputs: VecDeque<(u64, Arc<str>)>,
    /// For each actor, the last region of the pane it was told about (or
    /// saw come): what a person ran after it is news to that actor.
    pub(super) told: HashMap<Arc<str>, u64>,
}
