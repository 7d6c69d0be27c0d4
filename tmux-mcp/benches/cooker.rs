//! The cooked log's cost: [`tmux_control_mcp::text::cooked::Cooker`] fed a mixed
//! terminal stream (plain lines, SGR colours, wide characters, a `\r`
//! progress bar, readline-style cursor motion) in 64 KiB chunks at
//! 200×50, as the log's task feeds it; and the same stream cooked whole by
//! [`tmux_control_mcp::text::cook_lines`], as a reply cooks a range of
//! output (`run`, `read_output`, the waits); MB/s, the median of 7 runs. Self-contained (no
//! criterion), no tmux: `cargo bench -p tmux-control-mcp --bench cooker`
//! (docs/benchmarks.md, "Cooked log").
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::Instant;

use tmux_control_mcp::text::cook_lines;
use tmux_control_mcp::text::cooked::Cooker;

const STREAM_BYTES: usize = 32 * 1024 * 1024;

fn stream() -> Vec<u8> {
    let mut out = Vec::with_capacity(STREAM_BYTES + 4096);
    let mut i = 0u64;
    while out.len() < STREAM_BYTES {
        match i % 5 {
            0 => out.extend_from_slice(
                format!("line {i} of plain output, some words here\r\n").as_bytes(),
            ),
            1 => out.extend_from_slice(
                format!("\x1b[1;32mok\x1b[0m test_{i} \x1b[33m(12 ms)\x1b[0m\r\n").as_bytes(),
            ),
            2 => out.extend_from_slice(format!("日本語のテキスト {i} 🙂\r\n").as_bytes()),
            3 => {
                for p in (0..=100).step_by(25) {
                    out.extend_from_slice(format!("\r[{:<20}] {p}%", "#".repeat(p / 5)).as_bytes());
                }
                out.extend_from_slice(b"\r\n");
            }
            _ => {
                out.extend_from_slice(b"$ echo helo\x08\x08\x1b[1@l\x1b[C\x1b[C\x1b[K\r\nhello\r\n")
            }
        }
        i += 1;
    }
    out
}

fn main() {
    let data = stream();
    let mut rates = Vec::new();
    let mut lines = 0;
    for _ in 0..7 {
        let mut cooker = Cooker::new(0);
        cooker.resize(200, 50);
        let started = Instant::now();
        lines = 0;
        for (n, chunk) in data.chunks(64 * 1024).enumerate() {
            lines += cooker.feed((n * 64 * 1024) as u64, chunk).len();
        }
        lines += cooker.finish().len();
        let secs = started.elapsed().as_secs_f64();
        rates.push(data.len() as f64 / secs / 1e6);
    }
    rates.sort_by(f64::total_cmp);
    println!(
        "cooker: {:.1} MB/s median (min {:.1}, max {:.1}) over {} MiB, {lines} lines",
        rates[3],
        rates[0],
        rates[6],
        data.len() >> 20
    );
    assert!(lines > 100_000, "the stream cooks into lines");

    let mut rates = Vec::new();
    let mut whole = 0;
    for _ in 0..7 {
        let started = Instant::now();
        whole = cook_lines(&data, Some((200, 50))).len();
        let secs = started.elapsed().as_secs_f64();
        rates.push(data.len() as f64 / secs / 1e6);
    }
    rates.sort_by(f64::total_cmp);
    println!(
        "cook_lines: {:.1} MB/s median (min {:.1}, max {:.1}) over {} MiB, {whole} lines",
        rates[3],
        rates[0],
        rates[6],
        data.len() >> 20
    );
    // The same lines as the log's cooker, and the blank line the cursor
    // waits on after the last line feed.
    assert_eq!(whole, lines + 1, "a reply reads the log's lines");
}
