//! Arbitrary bytes into the decoder, in both modes, whole and in chunks
//! derived from the input: no panic, bounded `buffered()`, and the same
//! frames whatever the chunking. See `tmux_control::fuzzing::check_decode`.
#![no_main]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| tmux_control::fuzzing::check_decode(data));
