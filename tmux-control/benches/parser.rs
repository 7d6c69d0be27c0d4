//! Parser throughput: how fast [`Decoder`] turns control-mode bytes into
//! frames.
//!
//! ```text
//! cargo bench -p tmux-control --bench parser
//! ```
//!
//! A self-contained harness (no criterion): every case is fed in 64 KiB
//! chunks, as the connection's reader would push them, and decoded to the
//! last frame. After a warm-up, each case is timed in several samples of
//! enough iterations to last at least [`SAMPLE`] each; the median sample is
//! reported as MB/s (10^6 bytes per second) and lines per second, and the
//! best sample beside it (on a shared machine the best is the one least
//! disturbed by other jobs). A second table shows how the chunk size matters.
//!
//! `cargo bench -p tmux-control --bench parser -- WORD` times only the cases
//! whose name contains WORD.
//!
//! Without `--bench` (as `cargo test --benches` runs it) every case is
//! generated at 256 KiB, decoded three times (once in 64 KiB and once in
//! 4 KiB chunks after the check in `Case::new`) and checked; nothing is
//! timed. That mode also suits instruction counts that do not depend on the
//! machine's load:
//!
//! ```text
//! valgrind --tool=callgrind --toggle-collect='*decode_all*' target/release/deps/parser-HASH 'control bytes'
//! ```
//!
//! The transcripts are read from `tests/fixtures/control-mode` in this crate
//! (override with `TMUX_CONTROL_FIXTURES`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use tmux_control::proto::{DecodeError, Decoder, Encoder, Frame, Mode, Notification, Reply};
use tmux_control::{PaneId, SessionId, WindowId};

/// Warm-up time per case.
const WARMUP: Duration = Duration::from_millis(300);
/// Minimum length of one timed sample.
const SAMPLE: Duration = Duration::from_millis(400);
/// Timed samples per case (the median is reported).
const SAMPLES: usize = 5;
/// Target size of the synthetic streams.
const STREAM_BYTES: usize = 8 << 20;
/// The reader's chunk size.
const CHUNK: usize = 64 << 10;

struct Case {
    name: String,
    mode: Mode,
    data: Vec<u8>,
    /// Frames the data decodes to (checked once before timing).
    frames: usize,
}

impl Case {
    fn new(name: impl Into<String>, mode: Mode, data: Vec<u8>) -> Self {
        let name = name.into();
        let frames = decode_all(&data, mode, CHUNK);
        assert!(frames > 0, "{name}: no frames");
        Self {
            name,
            mode,
            data,
            frames,
        }
    }

    fn lines(&self) -> usize {
        memchr::memchr_iter(b'\n', &self.data).count()
    }
}

/// Decodes `data` pushed in `chunk`-sized pieces; returns the frame count.
/// Panics on any frame error.
fn decode_all(data: &[u8], mode: Mode, chunk: usize) -> usize {
    let mut dec = Decoder::with_mode(mode);
    let mut frames = 0;
    for piece in data.chunks(chunk) {
        dec.push(piece);
        loop {
            match dec.decode() {
                Ok(frame) => {
                    black_box(&frame);
                    frames += 1;
                }
                Err(DecodeError::Incomplete) => break,
                Err(DecodeError::Failed(e)) => panic!("frame error: {e}"),
            }
        }
    }
    dec.finish().unwrap();
    frames
}

/// Seconds per pass over the case's data: the median sample, and the best.
fn measure(case: &Case, chunk: usize) -> (f64, f64) {
    let run = || {
        let n = decode_all(black_box(&case.data), case.mode, chunk);
        assert_eq!(n, case.frames);
    };
    let start = Instant::now();
    let mut passes = 0u32;
    while start.elapsed() < WARMUP || passes == 0 {
        run();
        passes += 1;
    }
    let per_pass = start.elapsed().as_secs_f64() / f64::from(passes);
    let iters = ((SAMPLE.as_secs_f64() / per_pass).ceil() as u32).max(1);
    let mut samples: Vec<f64> = (0..SAMPLES)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..iters {
                run();
            }
            t.elapsed().as_secs_f64() / f64::from(iters)
        })
        .collect();
    samples.sort_by(f64::total_cmp);
    (samples[SAMPLES / 2], samples[0])
}

fn fixtures_dir() -> PathBuf {
    std::env::var_os("TMUX_CONTROL_FIXTURES")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/control-mode")
        })
}

fn fixture(name: &str) -> Vec<u8> {
    let path = fixtures_dir().join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("reading fixture {}: {e}", path.display()))
}

/// `data` repeated until the result holds at least `bytes` bytes.
fn repeat_to(data: &[u8], bytes: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes + data.len());
    while out.len() < bytes {
        out.extend_from_slice(data);
    }
    out
}

/// Encodes `frames` (cycling) until the stream holds at least `bytes` bytes.
fn encode_to(mode: Mode, frames: &[Frame], bytes: usize) -> Vec<u8> {
    let encoder = Encoder::with_mode(mode);
    let mut out = BytesMut::with_capacity(bytes + (1 << 16));
    if mode == Mode::Dcs {
        encoder.encode(&Frame::DcsStart, &mut out).unwrap();
    }
    'fill: loop {
        for frame in frames {
            encoder.encode(frame, &mut out).unwrap();
            if out.len() >= bytes {
                break 'fill;
            }
        }
    }
    if mode == Mode::Dcs {
        let exit = Frame::Notification(Notification::Exit { reason: None });
        encoder.encode(&exit, &mut out).unwrap();
        encoder.encode(&Frame::DcsEnd, &mut out).unwrap();
    }
    out.to_vec()
}

fn output(pane: u32, data: Vec<u8>) -> Frame {
    Frame::Notification(Notification::Output {
        pane: PaneId(pane),
        data: Bytes::from(data),
    })
}

/// `%output` lines of 1,700 printable bytes (no byte needs escaping).
fn plain_output(size: usize) -> Vec<u8> {
    let printable: Vec<u8> = (0x20u8..0x7f).filter(|&b| b != b'\\').collect();
    let frames: Vec<Frame> = (0..8)
        .map(|k| {
            output(
                k % 3,
                printable
                    .iter()
                    .cycle()
                    .skip(k as usize)
                    .take(1700)
                    .copied()
                    .collect(),
            )
        })
        .collect();
    encode_to(Mode::Plain, &frames, size)
}

/// `%output` lines whose 512 data bytes are all control bytes or `\`, so
/// every one is a four-byte octal escape on the wire (2 KB per line).
fn control_output(size: usize) -> Vec<u8> {
    let nasty: Vec<u8> = (0u8..0x20).chain([b'\\']).collect();
    let frames: Vec<Frame> = (0..8)
        .map(|k| {
            output(
                k % 3,
                nasty
                    .iter()
                    .cycle()
                    .skip(k as usize)
                    .take(512)
                    .copied()
                    .collect(),
            )
        })
        .collect();
    encode_to(Mode::Plain, &frames, size)
}

/// A session's worth of everything: terminal output with escapes, reply
/// blocks with multi-line bodies, layout changes, window and session
/// notifications, subscriptions, flow control and stray lines.
fn mixed_frames() -> Vec<Frame> {
    let b = |s: &str| Bytes::copy_from_slice(s.as_bytes());
    let mut frames = Vec::new();
    let text =
        "total 48\r\ndrwxr-xr-x  5 user user 4096 Jan  1 12:00 src\r\n\x1b[01;34mtarget\x1b[0m\r\n";
    let reply = |n: u32, lines: usize, error: bool| {
        Frame::Reply(Reply {
            time: 1_795_960_716,
            number: n,
            flags: 1,
            error,
            body: (0..lines)
                .map(|i| {
                    Bytes::from(format!(
                        "{i}: @{i} %{} [80x24] bash* (active) 0123456789abcdef",
                        i * 2
                    ))
                })
                .collect(),
        })
    };
    for i in 0..4u32 {
        frames.push(output(i, text.repeat(3).into_bytes()));
        frames.push(output(i, b"echo hello world".to_vec()));
    }
    frames.push(reply(300, 12, false));
    frames.push(reply(301, 0, false));
    frames.push(reply(302, 1, true));
    frames.push(Frame::Notification(Notification::LayoutChange {
        window: WindowId(3),
        layout: b("b25d,80x24,0,0{40x24,0,0,1,39x24,41,0[39x12,41,0,2,39x11,41,13,3]}"),
        visible_layout: Some(b(
            "b25d,80x24,0,0{40x24,0,0,1,39x24,41,0[39x12,41,0,2,39x11,41,13,3]}",
        )),
        flags: Some(b("*")),
    }));
    frames.push(Frame::Notification(Notification::WindowAdd {
        window: WindowId(7),
    }));
    frames.push(Frame::Notification(Notification::WindowRenamed {
        window: WindowId(7),
        name: b("vim src/proto/decode.rs"),
    }));
    frames.push(Frame::Notification(Notification::WindowPaneChanged {
        window: WindowId(7),
        pane: PaneId(12),
    }));
    frames.push(Frame::Notification(Notification::SessionWindowChanged {
        session: SessionId(1),
        window: WindowId(7),
    }));
    frames.push(Frame::Notification(Notification::SubscriptionChanged {
        name: b("panes"),
        session: Some(SessionId(1)),
        window: Some(WindowId(7)),
        window_index: Some(2),
        pane: Some(PaneId(12)),
        extra: Vec::new(),
        value: b("%12 80x24 /home/user/src"),
    }));
    frames.push(Frame::Notification(Notification::ExtendedOutput {
        pane: PaneId(12),
        age_ms: 15,
        extra: Vec::new(),
        data: Bytes::from(text.as_bytes().to_vec()),
    }));
    frames.push(Frame::Notification(Notification::Pause {
        pane: PaneId(12),
    }));
    frames.push(Frame::Notification(Notification::Continue {
        pane: PaneId(12),
    }));
    frames.push(Frame::Notification(Notification::SessionChanged {
        session: SessionId(1),
        name: b("work"),
    }));
    frames.push(Frame::Notification(Notification::SessionsChanged));
    frames.push(Frame::Notification(Notification::Other {
        name: b("future-notification"),
        args: b("@1 something new"),
    }));
    frames.push(Frame::Stray(b("from-run-shell")));
    frames.push(Frame::Notification(Notification::WindowClose {
        window: WindowId(7),
    }));
    frames
}

/// Cutting `data` after its last LF at or before `size` bytes.
fn whole_lines(mut data: Vec<u8>, size: usize) -> Vec<u8> {
    let end = data[..data.len().min(size)]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    data.truncate(end);
    data
}

/// The cases whose name contains `filter`, with synthetic streams of about
/// `size` bytes.
fn cases(size: usize, filter: Option<&str>) -> Vec<Case> {
    type Make = fn(usize) -> Vec<u8>;
    let all: [(&str, Mode, Make); 7] = [
        (
            "07-output-burst.bin (transcript, 64 % escapes)",
            Mode::Plain,
            |_| fixture("07-output-burst.bin"),
        ),
        (
            "06-output-bytes.bin repeated (1 % escapes)",
            Mode::Plain,
            |size| repeat_to(&fixture("06-output-bytes.bin"), size),
        ),
        (
            "%output, all control bytes (100 % escapes)",
            Mode::Plain,
            |size| whole_lines(control_output(size), size),
        ),
        ("%output, 1.7 KB printable lines", Mode::Plain, |size| {
            whole_lines(plain_output(size), size)
        }),
        ("mixed session stream (Encoder)", Mode::Plain, |size| {
            encode_to(Mode::Plain, &mixed_frames(), size)
        }),
        ("mixed session stream, -CC", Mode::Dcs, |size| {
            encode_to(Mode::Dcs, &mixed_frames(), size)
        }),
        // What a -CC client sees before the DCS introducer (a terminal's
        // output) is reported line by line as stray lines.
        ("-CC, 1.7 KB lines before the DCS", Mode::Dcs, |size| {
            whole_lines(plain_output(size), size)
        }),
    ];
    all.into_iter()
        .filter(|(name, ..)| filter.is_none_or(|f| name.contains(f)))
        .map(|(name, mode, make)| Case::new(name, mode, make(size)))
        .collect()
}

fn main() {
    let bench = std::env::args().any(|a| a == "--bench");
    // `cargo bench --bench parser -- WORD`: only the cases whose name contains WORD.
    let filter = std::env::args().skip(1).find(|a| !a.starts_with("--"));
    let size = if bench { STREAM_BYTES } else { 256 << 10 };
    let cases = cases(size, filter.as_deref());
    if !bench {
        for case in &cases {
            for chunk in [1 << 12, CHUNK] {
                assert_eq!(
                    decode_all(&case.data, case.mode, chunk),
                    case.frames,
                    "{}",
                    case.name
                );
            }
            println!(
                "{}: {} bytes, {} frames",
                case.name,
                case.data.len(),
                case.frames
            );
        }
        println!(
            "parser bench: {} cases decoded and checked (run with --bench to time them)",
            cases.len()
        );
        return;
    }

    println!(
        "Parser throughput: {}-byte chunks, median of {SAMPLES} samples of >= {} ms after {} ms warm-up",
        CHUNK,
        SAMPLE.as_millis(),
        WARMUP.as_millis()
    );
    println!();
    println!("| case | bytes | lines | frames | MB/s | lines/s | best MB/s |");
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for case in &cases {
        let (secs, best) = measure(case, CHUNK);
        println!(
            "| {} | {} | {} | {} | {:.0} | {:.2} M | {:.0} |",
            case.name,
            case.data.len(),
            case.lines(),
            case.frames,
            case.data.len() as f64 / secs / 1e6,
            case.lines() as f64 / secs / 1e6,
            case.data.len() as f64 / best / 1e6,
        );
    }

    println!();
    println!("Chunk size sensitivity:");
    println!();
    println!("| case | chunk | MB/s | lines/s | best MB/s |");
    println!("|---|---:|---:|---:|---:|");
    for case in cases.iter().filter(|c| {
        c.name.starts_with("%output, 1.7") || c.name.starts_with("mixed session stream (")
    }) {
        for chunk in [4 << 10, 64 << 10, 1 << 20] {
            let (secs, best) = measure(case, chunk);
            println!(
                "| {} | {} KiB | {:.0} | {:.2} M | {:.0} |",
                case.name,
                chunk >> 10,
                case.data.len() as f64 / secs / 1e6,
                case.lines() as f64 / secs / 1e6,
                case.data.len() as f64 / best / 1e6,
            );
        }
    }
}
