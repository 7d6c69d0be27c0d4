//! Terminals: the tmux servers tmux-mcp drives and what it knows about each
//! followed pane, below the MCP layer and above the text.
//!
//! - `backend`: the hosts and their connections (`Backend`, one `Conn` per
//!   host), how each is reached, and the self-kill guard's checks;
//! - `record`: each terminal's record of its input, and the one place
//!   where everything known about a pane is forgotten when tmux says it
//!   is gone;
//! - `shell`: which panes run an integrated shell, and where it stands;
//! - `runs`: `run` calls in progress and how each ended;
//! - `regions`: each command line a terminal ran, and where its output is;
//! - `journal`: the cooked, durable log of each terminal;
//! - `actors`: who created each pane and typed into it, and its input turn;
//! - `probe`: the kernel's evidence of what a pane's program is doing;
//! - `markers`: the wrapped form of `run` for shells without integration;
//! - `guard`: where this process itself runs in tmux.
//!
//! Everything a connection knows about a pane is created when the pane is
//! first followed and forgotten in one place (`Conn::forget`) when its
//! output ends with the pane gone.

pub(crate) mod actors;
pub(crate) mod backend;
pub(crate) mod guard;
pub(crate) mod journal;
pub(crate) mod markers;
pub(crate) mod probe;
pub(crate) mod record;
pub(crate) mod regions;
pub(crate) mod runs;
pub(crate) mod shell;
