//! Transports: how MCP messages reach [`crate::TmuxMcp`]. Each serves the
//! same server and its tools; none knows what a tool does.
//!
//! - [`stdio`]: one client on standard input and output, every line answered
//!   (a line that is not JSON-RPC gets a JSON-RPC error, never silence);
//! - [`http`]: streamable HTTP (`serve --http`), behind a Host, Origin and
//!   bearer-token guard;
//! - [`shared`]: one server shared by several clients over a unix socket
//!   (`serve --unix`);
//! - [`bridge`]: a stdio server that forwards to a shared one (`bridge`);
//! - [`web`]: the live view of the terminals in the browser, for people
//!   (under `serve --http`, or `--web ADDR`).
//!
//! Above the MCP layer (`crate::mcp`) and the tools; nothing below
//! imports a transport.

pub mod bridge;
pub mod http;
pub mod shared;
pub mod stdio;
pub mod web;
