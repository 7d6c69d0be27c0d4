//! The MCP layer: the server handler and what every tool call goes
//! through, below the tools and above the terminals.
//!
//! - `server`: [`TmuxMcp`](crate::TmuxMcp), what it tells a client about
//!   itself, the filtered tool router and the audit record around every
//!   call;
//! - `actors`: the name each session goes by and the caller of each call;
//! - `audit`: the audit log, one JSON line per tool call;
//! - `tasks`: long calls as MCP tasks;
//! - `subscriptions`: the live resources' URIs and subscribers (served
//!   by `crate::resources`, above the tools);
//! - `schema`: tool schemas and arguments read the way they say;
//! - `wait`: bounded, cancellable waits that report progress.

pub(crate) mod actors;
pub(crate) mod audit;
pub(crate) mod schema;
pub(crate) mod server;
pub(crate) mod subscriptions;
pub(crate) mod tasks;
pub(crate) mod wait;
