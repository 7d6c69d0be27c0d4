//! Terminals: the tmux servers tmux-mcp drives and what it knows about each
//! followed pane, below the MCP layer and above the text.
//!
//! - `backend`: the hosts and their connections (`Backend`, one `Conn` per
//!   host), how each is reached, and the self-kill guard's checks;
//! - `record`: each terminal's one record (`Terminal`), which holds
//!   everything a connection knows about the pane, one part per concern,
//!   and the connection's records by pane (`Terminals`): created in one
//!   place, removed whole in one place; its input is kept there;
//! - `shell`: which panes run an integrated shell, and where it stands;
//!   the wrapped form's runs;
//! - `runs`: `run` calls in progress and how each ended;
//! - `regions`: each command line a terminal ran, and where its output is;
//! - `journal`: the cooked, durable log of each terminal;
//! - `actors`: who created each pane and typed into it, and its input turn;
//! - `presence`: the people at a terminal (human tmux clients that show
//!   it, one typing there) and a command line the shell holds;
//! - `probe`: the kernel's evidence of what a pane's program is doing;
//! - `markers`: the wrapped form of `run` for shells without integration;
//! - `guard`: where this process itself runs in tmux.
//!
//! - `region`, `shell::slot`, `actors::part`, the `Journal` of `journal`:
//!   the parts of a record, one per concern; `lock`: how a part is locked.
//!
//! Everything a connection knows about a pane is in the pane's record: the
//! concerns (`shell`, `regions`, `journal::journals`, `actors`) keep their
//! logic and what they know about all panes, and read and write their part
//! of each pane's record through the connection's `Terminals`. Imports run
//! one way: the parts lie beneath the record, and the concerns that reach
//! the records above it, so a part never names the record that holds it. The record is
//! created the first time a concern writes something about the pane (a
//! lookup creates none) and removed whole in one place (`Conn::forget`)
//! when its output ends with the pane gone. Runs are kept by run id, not
//! in the record.

pub(crate) mod actors;
pub(crate) mod attention;
pub(crate) mod backend;
pub(crate) mod guard;
pub(crate) mod journal;
pub(crate) mod lock;
pub(crate) mod markers;
pub(crate) mod presence;
pub(crate) mod probe;
pub(crate) mod record;
pub(crate) mod region;
pub(crate) mod regions;
pub(crate) mod runs;
pub(crate) mod shell;
