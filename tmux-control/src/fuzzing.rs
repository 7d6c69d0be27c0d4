//! Property checks shared by the fuzz targets (`fuzz/`) and the seed replay
//! test (`tests/fuzz_seeds.rs`). Not a public API: enabled by the `fuzzing`
//! feature only.
//!
//! Every function takes arbitrary bytes and panics when a property of the
//! [`proto`](crate::proto) layer does not hold for them.
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

use std::fmt::Write as _;

use bytes::BytesMut;

use crate::proto::{DecodeError, Decoder, Encoder, Frame, FrameError, Limits, Mode, Notification};

/// Inputs up to this size are also fed in chunks of 1 to 17 bytes.
const TINY_CHUNKS_UP_TO: usize = 64 << 10;

/// Everything one decoder produced for one input.
#[derive(Debug, PartialEq)]
struct Run {
    /// Each frame or frame error, in order ([`DecodeError::Incomplete`] left out).
    outcomes: Vec<Result<Frame, FrameError>>,
    /// What [`Decoder::finish`] said at the end.
    finish: Result<(), FrameError>,
}

impl Run {
    fn frames(&self) -> Vec<Frame> {
        self.outcomes
            .iter()
            .filter_map(|o| o.as_ref().ok().cloned())
            .collect()
    }
}

/// A small deterministic generator (splitmix64), seeded from the input so
/// that a crash reproduces from the input alone.
struct Rng(u64);

impl Rng {
    fn from_data(data: &[u8]) -> Self {
        // FNV-1a
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for &b in data {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        Self(h)
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `1..=max`.
    fn size(&mut self, max: usize) -> usize {
        1 + (self.next() % max as u64) as usize
    }
}

/// Splits `data` into consecutive chunks of 1 to `max` bytes.
fn split<'a>(data: &'a [u8], rng: &mut Rng, max: usize) -> Vec<&'a [u8]> {
    let mut chunks = Vec::new();
    let mut rest = data;
    while !rest.is_empty() {
        let n = rng.size(max).min(rest.len());
        let (head, tail) = rest.split_at(n);
        chunks.push(head);
        rest = tail;
    }
    chunks
}

/// Feeds `chunks` to a fresh decoder, draining it after every push, and
/// checks the memory bound after every call.
fn feed(mode: Mode, limits: Limits, chunks: &[&[u8]]) -> Run {
    let mut dec = Decoder::with_mode(mode).with_limits(limits);
    let mut outcomes = Vec::new();
    for chunk in chunks {
        let bound = limits
            .max_line
            .saturating_add(limits.max_block)
            .saturating_add(chunk.len());
        dec.push(chunk);
        check_bound(&dec, bound, mode, limits, "push");
        loop {
            let result = dec.decode();
            check_bound(&dec, bound, mode, limits, "decode");
            match result {
                Ok(frame) => outcomes.push(Ok(frame)),
                Err(DecodeError::Failed(e)) => outcomes.push(Err(e)),
                Err(DecodeError::Incomplete) => break,
            }
        }
    }
    let finish = dec.finish();
    assert_eq!(dec.buffered(), 0, "{mode:?}: finish() left bytes buffered");
    assert!(!dec.in_block(), "{mode:?}: finish() left a block open");
    Run { outcomes, finish }
}

fn check_bound(dec: &Decoder, bound: usize, mode: Mode, limits: Limits, after: &str) {
    let buffered = dec.buffered();
    assert!(
        buffered <= bound,
        "{mode:?}: after {after}, buffered() = {buffered} exceeds max_line {} + max_block {} + one chunk = {bound}",
        limits.max_line,
        limits.max_block,
    );
}

/// Feeds `data` whole to a decoder with default limits.
fn decode_whole(mode: Mode, data: &[u8]) -> Run {
    feed(mode, Limits::default(), &[data])
}

/// Describes the first difference between two runs.
fn first_difference(a: &Run, b: &Run) -> String {
    let mut s = String::new();
    for (i, (x, y)) in a.outcomes.iter().zip(&b.outcomes).enumerate() {
        if x != y {
            let _ = write!(
                s,
                "outcome #{i}:\n  single feed: {x:?}\n  chunked:     {y:?}"
            );
            return s;
        }
    }
    if a.outcomes.len() != b.outcomes.len() {
        let n = a.outcomes.len().min(b.outcomes.len());
        let _ = write!(
            s,
            "{} vs {} outcomes; next: single feed {:?}, chunked {:?}",
            a.outcomes.len(),
            b.outcomes.len(),
            a.outcomes.get(n),
            b.outcomes.get(n),
        );
        return s;
    }
    let _ = write!(
        s,
        "finish(): single feed {:?}, chunked {:?}",
        a.finish, b.finish
    );
    s
}

/// Decodes `data` in both modes, with default and with small [`Limits`],
/// fed whole and in chunks derived from the input. Panics when
///
/// * the decoder panics;
/// * [`Decoder::buffered`] ever exceeds `max_line + max_block` plus the size
///   of the chunk just pushed;
/// * [`Decoder::finish`] leaves anything buffered;
/// * the frames (and frame errors, and the result of `finish`) of a chunked
///   feed differ from those of the single feed;
/// * in `-C` mode with default limits, `finish` does not hand back the bytes
///   after the last LF (as [`FrameError::PartialLine`], or as the partial
///   line of [`FrameError::UnterminatedBlock`]): the end of a stream is
///   never dropped silently.
pub fn check_decode(data: &[u8]) {
    check_tail_kept(data);
    let mut rng = Rng::from_data(data);
    let small = Limits::default()
        .max_line(64 + (rng.next() % 256) as usize)
        .max_block(64 + (rng.next() % 2048) as usize);
    for mode in [Mode::Plain, Mode::Dcs] {
        for limits in [Limits::default(), small] {
            let whole = feed(mode, limits, &[data]);
            let mut splits = vec![split(data, &mut rng, 4096)];
            if data.len() <= TINY_CHUNKS_UP_TO {
                splits.push(split(data, &mut rng, 17));
            }
            for chunks in splits {
                let chunked = feed(mode, limits, &chunks);
                if chunked != whole {
                    let sizes: Vec<usize> = chunks.iter().take(64).map(|c| c.len()).collect();
                    panic!(
                        "{mode:?}, {limits:?}: chunked feed differs from single feed: {}\n  first chunk sizes: {sizes:?}",
                        first_difference(&whole, &chunked)
                    );
                }
            }
        }
    }
}

/// The bytes after the last LF come back from `finish` (`-C`, default limits).
fn check_tail_kept(data: &[u8]) {
    let tail = match memchr::memrchr(b'\n', data) {
        Some(lf) => &data[lf + 1..],
        None => data,
    };
    let run = decode_whole(Mode::Plain, data);
    let kept: &[u8] = match &run.finish {
        Ok(()) => b"",
        Err(FrameError::PartialLine { bytes }) => bytes,
        Err(FrameError::UnterminatedBlock { partial, .. }) => partial,
        Err(other) => panic!("finish() gave an unexpected error: {other:?}"),
    };
    assert_eq!(
        kept,
        tail,
        "finish() must hand back the unterminated last line ({} bytes), got {:?}",
        tail.len(),
        run.finish
    );
}

/// Decodes `data` in both modes, encodes every decoded frame with
/// [`Encoder`] (skipping frames it refuses), decodes that output and panics
/// unless exactly the encoded frames come back, without errors, and unless
/// encoding them again gives the same bytes.
///
/// In `-CC` mode a refused `%exit` ends the comparison: the decoder's DCS
/// state after it (`ESC \` expected) cannot be reproduced without it.
pub fn check_roundtrip(data: &[u8]) {
    for mode in [Mode::Plain, Mode::Dcs] {
        let encoder = Encoder::with_mode(mode);
        let mut wire = BytesMut::new();
        let mut expected = Vec::new();
        for frame in decode_whole(mode, data).frames() {
            match encoder.encode(&frame, &mut wire) {
                Ok(()) => expected.push(frame),
                Err(_)
                    if mode == Mode::Dcs
                        && matches!(frame, Frame::Notification(Notification::Exit { .. })) =>
                {
                    break;
                }
                Err(_) => {}
            }
        }
        let again = decode_whole(mode, &wire);
        if let Some(err) = again.outcomes.iter().find_map(|o| o.as_ref().err()) {
            panic!("{mode:?}: the encoder's output does not decode: {err:?}\n  wire: {wire:?}");
        }
        if let Err(err) = &again.finish {
            panic!("{mode:?}: the encoder's output ends unfinished: {err:?}\n  wire: {wire:?}");
        }
        let frames = again.frames();
        if frames != expected {
            let i = frames
                .iter()
                .zip(&expected)
                .take_while(|(a, b)| a == b)
                .count();
            panic!(
                "{mode:?}: decode(encode(frames)) differs at frame #{i} ({} vs {} frames):\n  encoded: {:?}\n  decoded: {:?}",
                expected.len(),
                frames.len(),
                expected.get(i),
                frames.get(i),
            );
        }
        let mut wire2 = BytesMut::new();
        for frame in &frames {
            encoder
                .encode(frame, &mut wire2)
                .unwrap_or_else(|e| panic!("{mode:?}: re-encoding {frame:?} failed: {e}"));
        }
        assert_eq!(wire2, wire, "{mode:?}: encoding is not stable");
    }
}
