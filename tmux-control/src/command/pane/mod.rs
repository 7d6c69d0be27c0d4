//! Panes: `split-window`, `list-panes`, `kill-pane`, `select-pane`,
//! `resize-pane`, `respawn-pane`.
//!
//! One small builder per command of this family: `split-window` is in
//! `split`, `list-panes` and its row in `list`, the commands that act on a
//! pane in `actions`.

mod actions;
mod list;
mod split;

pub use actions::{Direction, KillPane, ResizePane, RespawnPane, SelectPane};
pub use list::{ListPanes, PaneInfo};
pub use split::SplitWindow;
