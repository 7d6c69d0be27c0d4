//! The actors' part of a terminal's record, beneath the record; the logic
//! that keeps it is in [`super`].

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
}
