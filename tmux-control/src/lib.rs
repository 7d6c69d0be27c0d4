//! # tmux-control
//!
//! Drive tmux through one persistent control-mode (`tmux -C`) connection per
//! server instead of one `tmux` process per command.
//!
//! This release contains the protocol layer: [`proto`] turns the bytes tmux
//! writes to a control client into typed frames (reply blocks and
//! notifications) and back, byte-exact, incrementally and within bounded
//! memory. Typed ids for sessions, windows and panes live at the crate root.
//!
//! ```
//! use tmux_control::proto::{Decoder, Frame, Notification};
//! use tmux_control::PaneId;
//!
//! let mut decoder = Decoder::new();
//! decoder.push(b"%output %0 hello\\015\\012\n");
//! match decoder.decode().unwrap() {
//!     Frame::Notification(Notification::Output { pane, data }) => {
//!         assert_eq!(pane, PaneId(0));
//!         assert_eq!(&data[..], b"hello\r\n");
//!     }
//!     other => panic!("unexpected {other:?}"),
//! }
//! ```

pub mod command;
mod connection;
mod error;
mod ids;
mod pane;
pub mod proto;
mod server;
mod text;

pub use connection::{
    ConnectOptions, DEFAULT_PAUSE_AFTER, DEFAULT_SESSION, DEFAULT_SUBSCRIPTION_CAPACITY, Event,
    Subscription, Tmux,
};
pub use pane::{
    DEFAULT_PANE_LOG, Expect, Match, PaneChunk, PaneEnd, PaneExit, PaneOutput, PaneState,
    PaneStream, Pattern, Screen, WaitError,
};
pub use text::PlainText;
pub use error::{Closed, Error, Result};
pub use ids::{PaneId, ParseIdError, SessionId, WindowId};
pub use server::{ISOLATED_CONFIG, IsolatedServer, Server};
