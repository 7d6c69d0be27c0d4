//! tmux-control's integration tests: one test binary (`it`), one module per
//! area, the way tokio-postgres lays out its tests. Nextest names each test
//! by its module path, e.g. `tmux-control::it commands::sessions::…`.
//!
//! Tests that talk to tmux do so only on isolated servers (private `-S`
//! sockets in private directories, removed afterwards).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

mod commands;
mod conformance;
mod connection;
// `tmux_control::fuzzing` exists only with the `fuzzing` feature.
#[cfg(feature = "fuzzing")]
mod fuzz_seeds;
mod proto_props;
mod quoting_props;
mod quoting_real_tmux;
#[cfg(feature = "emulator")]
mod screen_fidelity;
mod shell;
mod spawn;
mod streams;
mod tracing_events;
