//! The emulated screen's cost (feature `emulator`), self-contained (no
//! criterion):
//!
//! (a) the emulator alone: the same `alacritty_terminal` configuration the
//!     library uses, fed a mixed terminal stream in 64 KiB chunks (plain
//!     lines, SGR colours, wide characters, a `\r` progress bar, cursor
//!     motion), at 80×24: MB/s;
//! (b) live: a pane `cat`s that stream as fast as tmux can emit it, followed
//!     with its emulator (fed on the connection's task as the output
//!     arrives, see `src/pane/emulator.rs`), read until a sentinel; our
//!     process's CPU share of one core, tmux's, and MB/s; then the
//!     emulated screen is checked against `capture-pane`.
//!
//! `cargo bench -p tmux-control --features emulator --bench emulator`
//! (docs/benchmarks.md, "Emulated screen"). Every tmux is an isolated
//! server on a private socket.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::{Duration, Instant};

use alacritty_terminal::event::VoidListener;
use alacritty_terminal::grid::Dimensions;
use alacritty_terminal::term::{Config, Term};
use alacritty_terminal::vte::ansi::Processor;
use tmux_control::command::{CapturePane, NewWindow, ResizeWindow};
use tmux_control::{IsolatedServer, PaneChunk, Tmux};

/// Size of the generated stream.
const STREAM_BYTES: usize = 32 * 1024 * 1024;

struct Size(usize, usize);

impl Dimensions for Size {
    fn total_lines(&self) -> usize {
        self.1
    }
    fn screen_lines(&self) -> usize {
        self.1
    }
    fn columns(&self) -> usize {
        self.0
    }
}

/// A mixed terminal stream of at least `n` bytes, with LF line ends (the
/// pty adds the CR); the offline part gets CR LF.
fn stream(n: usize, crlf: bool) -> Vec<u8> {
    let nl: &[u8] = if crlf { b"\r\n" } else { b"\n" };
    let mut out = Vec::with_capacity(n + 4096);
    let mut i = 0u64;
    while out.len() < n {
        for _ in 0..20 {
            i += 1;
            out.extend_from_slice(
                format!(
                    "{i} compiling crate number {} of the build, some words",
                    i * 7
                )
                .as_bytes(),
            );
            out.extend_from_slice(nl);
        }
        out.extend_from_slice(
            "\x1b[1;32mok\x1b[0m \x1b[38;5;208mwarn\x1b[0m \x1b[38;2;10;20;30mtrue colour\x1b[0m 漢字 😀"
                .as_bytes(),
        );
        out.extend_from_slice(nl);
        for p in 0..10 {
            out.extend_from_slice(format!("\r[{:<20}] {}%", "#".repeat(p * 2), p * 10).as_bytes());
        }
        out.extend_from_slice(nl);
        out.extend_from_slice(b"\x1b[5;10H\x1b[Kstatus\x1b[24;1H");
    }
    out
}

fn offline(data: &[u8]) -> f64 {
    let config = Config {
        scrolling_history: 100,
        ..Config::default()
    };
    let mut term = Term::new(config, &Size(80, 24), VoidListener);
    let mut parser: Processor = Processor::new();
    let started = Instant::now();
    for chunk in data.chunks(64 * 1024) {
        parser.advance(&mut term, chunk);
    }
    let wall = started.elapsed();
    data.len() as f64 / wall.as_secs_f64() / 1e6
}

/// utime + stime of a process, in clock ticks.
fn cpu_ticks(pid: &str) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let rest = &stat[stat.rfind(')').unwrap() + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    f[11].parse::<u64>().unwrap() + f[12].parse::<u64>().unwrap()
}

fn clock_ticks_per_second() -> f64 {
    std::process::Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(100.0)
}

struct Live {
    received: u64,
    wall: Duration,
    ours: f64,
    server: f64,
    same_as_tmux: bool,
}

fn live(rt: &tokio::runtime::Runtime, hz: f64) -> Live {
    let iso = IsolatedServer::new().unwrap();
    let path = iso.dir().join("stream.txt");
    std::fs::write(&path, stream(STREAM_BYTES, false)).unwrap();
    let r = rt.block_on(async {
        tokio::time::timeout(Duration::from_secs(300), async {
            let tmux = Tmux::connect(iso.server()).await.unwrap();
            let pid = tmux
                .run(tmux_control::command::DisplayMessage::format("#{pid}"))
                .await
                .unwrap();
            let server_pid = String::from_utf8_lossy(&pid).trim().to_owned();
            // The pane waits for a key before it starts, so the measure
            // starts with the flood.
            let command = format!(
                "read -r go; cat {}; printf 'EMU%sEND\\n' -; exec sleep 600",
                path.display()
            );
            let started = tmux.spawn(NewWindow::new().command(command)).await.unwrap();
            tmux.run(ResizeWindow::new(started.window).size(80, 24))
                .await
                .unwrap();
            let out = started.output;
            let mut s = out.stream_from(out.end_offset());
            let (o0, s0) = (cpu_ticks("self"), cpu_ticks(&server_pid));
            let t0 = Instant::now();
            tmux.run(tmux_control::command::SendKeys::hex(started.pane, *b"\r"))
                .await
                .unwrap();
            let mut received = 0u64;
            let mut tail: Vec<u8> = Vec::new();
            loop {
                match s.next().await {
                    Some(PaneChunk::Output { data, .. }) => {
                        received += data.len() as u64;
                        tail.extend_from_slice(&data);
                        if memchr::memmem::find(&tail, b"EMU-END").is_some() {
                            break;
                        }
                        let keep = tail.len().saturating_sub(8);
                        tail.drain(..keep);
                    }
                    Some(_) => {}
                    None => panic!("the pane ended early"),
                }
            }
            let screen = out.emulated_screen().expect("the emulator is in sync");
            let wall = t0.elapsed();
            let ours = (cpu_ticks("self") - o0) as f64 / hz;
            let server = (cpu_ticks(&server_pid) - s0) as f64 / hz;
            // Wait for the prompt-less pane to settle, then compare.
            out.wait_idle(Duration::from_millis(200), Duration::from_secs(10))
                .await
                .unwrap();
            let screen_now = out.emulated_screen().expect("in sync");
            let tmux_lines: Vec<String> = tmux
                .run(CapturePane::new(started.pane))
                .await
                .unwrap()
                .iter()
                .map(|l| String::from_utf8_lossy(l).into_owned())
                .collect();
            drop(screen);
            Live {
                received,
                wall,
                ours,
                server,
                same_as_tmux: tmux_lines == screen_now.lines,
            }
        })
        .await
        .expect("the live run timed out")
    });
    drop(iso);
    r
}

fn main() {
    let hz = clock_ticks_per_second();
    let data = stream(STREAM_BYTES, true);
    let mut rates: Vec<f64> = (0..5).map(|_| offline(&data)).collect();
    rates.sort_by(f64::total_cmp);
    println!(
        "(a) emulator alone, 80x24, {} bytes in 64 KiB chunks: median {:.1} MB/s, best {:.1} MB/s",
        data.len(),
        rates[2],
        rates[4]
    );
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    for run in 1..=3 {
        let r = live(&rt, hz);
        let secs = r.wall.as_secs_f64();
        println!(
            "(b) live run {run}: {} bytes in {:.2} s = {:.1} MB/s; our process {:.0} % of a core \
             ({:.1} ms per MB), tmux {:.0} %; emulated screen equal to capture-pane: {}",
            r.received,
            secs,
            r.received as f64 / secs / 1e6,
            100.0 * r.ours / secs,
            1000.0 * r.ours / (r.received as f64 / 1e6),
            100.0 * r.server / secs,
            r.same_as_tmux
        );
    }
}
