//! # tmux-control
//!
//! Drive tmux through one persistent control-mode (`tmux -C`) connection per
//! server, instead of one `tmux` process per command and a `capture-pane`
//! poll to see what happened.
//!
//! * [`Tmux`] is a cheap, clonable handle to one connection. Commands from
//!   any number of tasks are pipelined over it and each reply reaches its
//!   caller; notifications fan out to [`Subscription`]s that can never stall
//!   the connection (a slow subscriber gets [`Event::Gap`] markers).
//! * [`command`] has typed builders for what users need (sessions, windows,
//!   panes, keys, paste buffers, capture, options, environment, client
//!   flags); every argument is quoted so that tmux's parser reads it back
//!   byte for byte.
//! * [`Tmux::follow`] gives a [`PaneOutput`] for any pane on the server: its
//!   output with absolute byte offsets in a bounded log, streams that resume
//!   from an offset, push-based waits ([`PaneOutput::expect`],
//!   [`PaneOutput::wait_idle`], [`PaneOutput::wait_exit`]) and the live
//!   screen ([`PaneOutput::screen`]). Nothing in the library polls.
//! * [`Server`] addresses a server: a socket name (`-L`), a socket path
//!   (`-S`), the default server (only when named), an [`IsolatedServer`]
//!   (throwaway, removed on drop), or any of these on another host over ssh.
//! * [`proto`] is the sans-IO protocol layer: a byte-exact, incremental,
//!   bounded decoder of what tmux writes, and the matching encoder.
//! * [`Tmux::connect_stream`] runs the same connection over any pair of byte
//!   streams to a `tmux -C` client the caller started (`docker exec -i`, an
//!   ssh channel).
//!
//! ## Layers
//!
//! Each layer imports only the ones below it:
//!
//! ```text
//! api         the public handle; pane logs, streams,      (Tmux, PaneOutput)
//!             waits, state, screen
//! connection  one tmux -C client: replies matched FIFO,   (ConnectOptions, Subscription)
//!             pane output routed to per-pane sinks,
//!             notifications fanned out
//! command     typed commands: one quoted line each,       (command)
//!             replies decoded for the tmux version
//! proto       sans-IO frames                              (proto)
//! ```
//!
//! The connection knows nothing of panes beyond routing their output: the
//! api registers a sink for each followed pane (through the connection's
//! command channel, so the route exists before any later command is
//! written) and a watcher that turns notifications into pane state.
//! [`Tmux`] is defined at the api layer, as a thin client over the
//! crate-private connection handle (tokio-postgres' shape): it holds that
//! handle and the api's state for the connection side by side, so the
//! connection keeps nothing of the layer above it.
//!
//! ## Example
//!
//! Start a throwaway server, open a window, type a command, wait for its
//! output without polling, and read the screen:
//!
//! ```
//! use std::time::Duration;
//! use tmux_control::command::{NewWindow, SendKeys, Key, NamedKey};
//! use tmux_control::{IsolatedServer, Pattern, Tmux};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let server = IsolatedServer::new()?; // private socket, killed on drop
//! let tmux = Tmux::connect(server.server()).await?;
//!
//! let created = tmux.run(NewWindow::new().window_name("demo").command("sh")).await?;
//! let pane = tmux.follow(created.pane).await?;
//!
//! // Register the wait first, then act: nothing printed in between is missed.
//! let done = pane.expect(Pattern::literal("hello from tmux"));
//! tmux.run(SendKeys::literal(created.pane, "echo hello from $0 | sed s/sh/tmux/")).await?;
//! tmux.run(SendKeys::keys(created.pane, [Key::named(NamedKey::Enter)])).await?;
//! let found = done.wait(Duration::from_secs(10)).await?;
//! assert_eq!(found.text, "hello from tmux");
//!
//! let screen = pane.screen().await?;
//! // (The shell's prompt may share the line if it started after the typing.)
//! assert!(screen.lines.iter().any(|l| l.ends_with("hello from tmux")));
//! # Ok(())
//! # }
//! ```
//!
//! ## Sessions the library creates
//!
//! A control client exists only while it is attached to a session. By
//! default [`Tmux::connect`] attaches to the session [`ConnectOptions::DEFAULT_SESSION`]
//! (`tmux-control`), creating it if needed, so `tmux ls` shows it. If that
//! session is destroyed (for example its last window exits) tmux ends the
//! connection and every call fails with [`Error::Closed`]; keep something
//! running in it, or attach to a session of your own with
//! [`ConnectOptions::session`]. Following a pane in another session opens
//! an extra observer client attached to that session with `ignore-size`,
//! which never changes any window's size.

pub mod command;
mod connection;
mod error;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
mod ids;
mod pane;
pub mod proto;
mod quote;
mod server;
mod text;
mod version;

pub use connection::{ConnectOptions, Event, Subscription};
pub use error::{Closed, Error, ErrorKind, Result};
pub use ids::{PaneId, ParseIdError, SessionId, WindowId};
#[cfg(feature = "emulator")]
pub use pane::EmulatedScreen;
pub use pane::shell;
pub use pane::{
    Expect, Loss, LossReason, Match, PaneChunk, PaneEnd, PaneExit, PaneOutput, PaneState,
    PaneStateChanges, PaneStream, Pattern, Resolved, Screen, Spawned, Tmux, Typed, WaitError,
    WaitOutcome,
};
pub use server::{IsolatedServer, Server};
pub use text::PlainText;
pub use version::Version;
