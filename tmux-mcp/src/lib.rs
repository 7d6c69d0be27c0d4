//! `tmux-mcp`: an MCP server that gives AI agents tmux terminals, built on
//! [`tmux_control`] (one persistent control-mode connection per server).
//!
//! The binary serves [`TmuxMcp`] over stdio, or over streamable HTTP
//! ([`http`], `tmux-mcp serve --http`). Tools come in four toolsets
//! ([`toolsets`]): `inspect`, `manage`, `execute` (the default three) and
//! `teardown`. By default the server drives its own tmux server on the
//! socket `tmux -L tmux-mcp`, started on the first tool call that needs it.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use rmcp::ServiceExt as _;
//! use tmux_control_mcp::{Config, TmuxMcp};
//! let server = TmuxMcp::new(Config::default())?;
//! // Every line is answered, also one that is not JSON (see `stdio`).
//! let (stdin, stdout) = rmcp::transport::stdio();
//! let (transport, pumps) = tmux_control_mcp::stdio::guard(stdin, stdout);
//! server.serve(transport).await?.waiting().await?;
//! pumps.finish().await;
//! # Ok(()) }
//! ```

pub mod actors;
pub mod audit;
mod backend;
pub mod bridge;
pub mod config;
mod config_error;
pub mod cooked;
pub mod doctor;
pub mod guard;
pub mod http;
mod journal;
pub mod markers;
mod probe;
pub mod redact;
mod regions;
pub mod reply;
mod resources;
mod runs;
pub mod schema;
mod server;
pub mod shape;
pub mod shared;
mod shell;
pub mod stdio;
mod subscriptions;
mod tasks;
mod terminal;
pub mod text;
pub mod tools;
pub mod toolsets;
mod wait;

pub use backend::HOME_SESSION;
pub use config::{Cli, Config, ConfigError, SocketChoice};
pub use server::{SERVER_NAME, StartError, TmuxMcp};
pub use wait::{CallCtx, Waited};

#[cfg(test)]
mod tests;
