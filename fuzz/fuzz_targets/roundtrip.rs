//! decode → encode → decode gives the same frames back, in both modes. See
//! `tmux_control::fuzzing::check_roundtrip`.
#![no_main]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| tmux_control::fuzzing::check_roundtrip(data));
