//! The workspace's end-to-end tests, as one test binary (`it`) with one
//! module per area: the built `tmux-mcp` binary over stdio, a remote tmux
//! server over ssh, and the rail that keeps every test on a private tmux
//! socket.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod mcp_stdio;
mod rail_private_socket;
mod ssh_remote;
