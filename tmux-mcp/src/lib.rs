//! `tmux-mcp`: an MCP server that gives AI agents tmux terminals, built on
//! [`tmux_control`] (one persistent control-mode connection per server).
//!
//! The binary serves [`TmuxMcp`] over stdio, or over streamable HTTP
//! ([`transport::http`], `tmux-mcp serve --http`). Tools come in four toolsets
//! ([`config::toolsets`]): `inspect`, `manage`, `execute` (the default three) and
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
//! let (transport, pumps) = tmux_control_mcp::transport::stdio::guard(stdin, stdout);
//! server.serve(transport).await?.waiting().await?;
//! pumps.finish().await;
//! # Ok(()) }
//! ```

pub mod call;
pub mod config;
pub mod doctor;
mod mcp;
mod notify;
mod reply;
mod resources;
mod terminal;
pub mod text;
mod tools;
pub mod transport;

pub use config::{Cli, Config, ConfigError, SocketChoice};
pub use mcp::server::{SERVER_NAME, StartError, TmuxMcp};
pub use mcp::wait::{CallCtx, Waited};
pub use terminal::backend::HOME_SESSION;
pub use terminal::guard::Caller;

#[cfg(test)]
mod tests;
