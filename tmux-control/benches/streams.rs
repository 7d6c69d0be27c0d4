//! Pane streams and waits: keystroke-to-wake-up latency of a push-based
//! wait (against a 50 ms `capture-pane` poller), output ingestion rate and
//! CPU cost, and peak memory under a 1 GB flood with slow consumers.
//!
//! Run with `cargo bench -p tmux-control --bench streams`. Everything
//! happens on throwaway [`IsolatedServer`]s; every `tmux` process started
//! here names its socket with `-S`.
//!
//! The flood runs in a child process (this binary re-executed with
//! [`MODE_ENV`] set), so that its `VmHWM` measures that run alone.
//!
//! Environment knobs: `TMUX_CONTROL_STREAMS_FLOOD` (input bytes of the
//! flood, default 750,000,000, which base64 turns into 1.0 GB) and
//! `TMUX_CONTROL_STREAMS_BREAKDOWN=1` (also run the flood's memory
//! breakdown variants at 150 MB each).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tmux_control::{Event, IsolatedServer, PaneChunk, PaneId, PaneOutput, Pattern, Tmux};

/// Selects a child mode (`flood`).
const MODE_ENV: &str = "TMUX_CONTROL_STREAMS_MODE";
/// Input bytes of the flood (before base64).
const FLOOD_ENV: &str = "TMUX_CONTROL_STREAMS_FLOOD";
/// Which consumers the flood child runs (see [`Variant`]).
const VARIANT_ENV: &str = "TMUX_CONTROL_STREAMS_VARIANT";
/// Set to 1 to also run the memory breakdown variants.
const BREAKDOWN_ENV: &str = "TMUX_CONTROL_STREAMS_BREAKDOWN";

/// Default flood input: base64 makes 1,000,000,000 characters of it.
const FLOOD_DEFAULT: u64 = 750_000_000;
/// Flood input of each breakdown variant.
const BREAKDOWN_FLOOD: u64 = 112_500_000;

/// Latency samples per method, after warm-up.
const LAT_SAMPLES: usize = 200;
/// Samples per method in one block (the methods alternate by block).
const LAT_BLOCK: usize = 25;
/// Unmeasured samples per method first.
const LAT_WARM_UP: usize = 10;
/// The poll interval of the comparison poller.
const POLL_INTERVAL: Duration = Duration::from_millis(50);
/// The prompt of the latency pane's shell.
const PROMPT: &str = "RDY:";

/// Size of the ingestion file.
const INGEST_BYTES: usize = 200 << 20;

/// Longest any single phase may take.
const PHASE_LIMIT: Duration = Duration::from_secs(600);

// ---------------------------------------------------------------------------
// Small helpers.

fn text(reply: &tmux_control::proto::Reply) -> String {
    reply
        .body
        .iter()
        .map(|l| String::from_utf8_lossy(l).into_owned())
        .collect::<Vec<_>>()
        .join("\n")
}

async fn ok(tmux: &Tmux, line: impl Into<Vec<u8>>) -> String {
    let line = line.into();
    let r = tmux.raw_line(line.clone()).await.unwrap();
    assert!(!r.error, "{}: {}", String::from_utf8_lossy(&line), text(&r));
    text(&r)
}

/// A window running `command` in the connection's session; returns its pane.
async fn new_pane(tmux: &Tmux, command: &str) -> PaneId {
    let quoted = command.replace('\'', "'\\''");
    let id = ok(
        tmux,
        format!("new-window -d -P -F '#{{pane_id}}' -t 'tmux-control:' '{quoted}'"),
    )
    .await;
    id.trim().parse().unwrap()
}

/// `then`, run once the tmux channel `go-TAG` is signalled (`tmux` inside
/// a pane reaches that pane's own server through `$TMUX`).
fn gated(tag: &str, then: &str) -> String {
    format!("tmux wait-for go-{tag}; {then}")
}

async fn open_gate(tmux: &Tmux, tag: &str) {
    ok(tmux, format!("wait-for -S go-{tag}")).await;
}

/// Runs `tmux -S SOCKET ARGS…` on the isolated server and returns its output.
fn tmux_output(socket: &Path, dir: &Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new("tmux") // the isolated socket, next line
        .arg("-S")
        .arg(socket)
        .args(args)
        .env_remove("TMUX")
        .env_remove("TMUX_PANE")
        .env("TMUX_TMPDIR", dir)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .unwrap()
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    memchr::memmem::find(hay, needle).is_some()
}

/// Finds a marker in a stream of chunks, also across chunk boundaries.
struct Sentinel {
    needle: Vec<u8>,
    carry: Vec<u8>,
}

impl Sentinel {
    fn new(needle: &str) -> Self {
        Sentinel {
            needle: needle.as_bytes().to_vec(),
            carry: Vec::new(),
        }
    }

    fn seen(&mut self, data: &[u8]) -> bool {
        let k = self.needle.len() - 1;
        // The last k bytes before `data`, then the first k of `data`.
        self.carry.extend_from_slice(&data[..data.len().min(k)]);
        let hit = contains(&self.carry, &self.needle) || contains(data, &self.needle);
        if data.len() >= k {
            self.carry.clear();
            self.carry.extend_from_slice(&data[data.len() - k..]);
        } else {
            let excess = self.carry.len().saturating_sub(k);
            self.carry.drain(..excess);
        }
        hit
    }
}

/// utime + stime of a process, in clock ticks.
fn cpu_ticks(pid: &str) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let rest = &stat[stat.rfind(')').unwrap() + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // After the command name: state is field 3, utime 14, stime 15.
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

/// A `kB` field of `/proc/PID/status`, in KiB.
fn status_kib(pid: &str, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse().ok())
        .unwrap_or(0)
}

/// `wchar` of `/proc/PID/io` (bytes the process wrote), if readable.
fn written_bytes(pid: &str) -> Option<u64> {
    let io = std::fs::read_to_string(format!("/proc/{pid}/io")).ok()?;
    io.lines()
        .find_map(|l| l.strip_prefix("wchar:"))
        .and_then(|v| v.trim().parse().ok())
}

/// (busy, steal, total) ticks of all CPUs, from `/proc/stat`.
fn machine_ticks() -> (u64, u64, u64) {
    let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let f: Vec<u64> = stat
        .lines()
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .skip(1)
        .filter_map(|v| v.parse().ok())
        .collect();
    // user nice system idle iowait irq softirq steal (guest is in user).
    let get = |i: usize| f.get(i).copied().unwrap_or(0);
    let idle = get(3) + get(4);
    let total: u64 = (0..8).map(get).sum();
    (total - idle, get(7), total)
}

/// Busy and steal shares of the machine between two [`machine_ticks`].
fn machine_busy(a: (u64, u64, u64), b: (u64, u64, u64)) -> (f64, f64) {
    let total = (b.2 - a.2).max(1) as f64;
    ((b.0 - a.0) as f64 / total, (b.1 - a.1) as f64 / total)
}

fn pct(sorted: &[Duration], p: f64) -> Duration {
    let i = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[i.clamp(1, sorted.len()) - 1]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn fmt_ms(d: Duration) -> String {
    let m = ms(d);
    if m < 10.0 {
        format!("{m:.2} ms")
    } else {
        format!("{m:.1} ms")
    }
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

fn multi_thread() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap()
}

// ---------------------------------------------------------------------------
// (a) Keystroke to wait wake-up.

struct Latency {
    /// The server's `#{version}`.
    version: String,
    ours: Vec<Duration>,
    /// The poller, first capture right after the send.
    poll: PollRuns,
    /// The poller, its 50 ms clock at an even spread of phases.
    poll_phase: PollRuns,
}

/// One library sample: register the wait, send the keys over the
/// connection, time until the wait returns.
async fn ours_sample(tmux: &Tmux, out: &PaneOutput, pane: PaneId, i: usize) -> Duration {
    let marker = format!("Z{i}Q");
    let wait = out.expect(Pattern::literal(&marker));
    let prompt = out.expect(Pattern::literal(PROMPT));
    let keys = format!("send-keys -t {pane} -l 'printf \"Z%sQ\\n\" {i}'");
    let enter = format!("send-keys -t {pane} Enter");
    let started = Instant::now();
    let woken = async {
        let m = wait.wait(Duration::from_secs(10)).await;
        (m, Instant::now())
    };
    // Polled in order: both lines are queued before the wait first polls.
    let (a, b, (m, at)) = tokio::join!(tmux.raw_line(keys), tmux.raw_line(enter), woken);
    assert!(!a.unwrap().error && !b.unwrap().error, "send-keys failed");
    let m = m.unwrap();
    assert_eq!(m.text, marker);
    // Back at the prompt before the next sample (not timed).
    prompt.wait(Duration::from_secs(10)).await.unwrap();
    at - started
}

/// One poller sample, as tools without push do it: a `send-keys`
/// subprocess, then a `capture-pane` subprocess every 50 ms until the
/// marker shows. With `phase`, the first capture waits until `phase` after
/// the send began (a poller whose 50 ms clock is not aligned with the
/// keystroke). Returns (latency, captures, send time, when found).
fn poll_sample(
    socket: &Path,
    dir: &Path,
    pane: PaneId,
    i: usize,
    phase: Option<Duration>,
) -> (Duration, usize, Duration, Instant) {
    let marker = format!("Z{i}Q");
    let target = pane.to_string();
    let keys = format!("printf \"Z%sQ\\n\" {i}");
    let started = Instant::now();
    #[rustfmt::skip]
    let sent = tmux_output(socket, dir, &["send-keys", "-t", &target, "-l", &keys, ";", "send-keys", "-t", &target, "Enter"]);
    let send_time = started.elapsed();
    assert!(sent.status.success(), "send-keys subprocess failed");
    if let Some(phase) = phase {
        let due = started + phase;
        let now = Instant::now();
        if due > now {
            std::thread::sleep(due - now);
        }
    }
    let mut captures = 0;
    loop {
        let shot = tmux_output(socket, dir, &["capture-pane", "-p", "-t", &target]);
        captures += 1;
        if contains(&shot.stdout, marker.as_bytes()) {
            let found = Instant::now();
            return (found - started, captures, send_time, found);
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "poller never saw {marker}"
        );
        std::thread::sleep(POLL_INTERVAL);
    }
}

/// Results of one poller variant.
#[derive(Default)]
struct PollRuns {
    /// Keystroke to found.
    total: Vec<Duration>,
    /// Found, minus when the library's push wait on the same marker woke.
    late: Vec<Duration>,
    captures: Vec<usize>,
    /// The `send-keys` subprocess alone.
    send: Vec<Duration>,
}

/// An even spread of phases over one poll interval (golden-ratio steps).
fn phase(k: usize) -> Duration {
    let frac = (k as f64 * 0.618_033_988_749_895).fract();
    POLL_INTERVAL.mul_f64(frac)
}

fn latency(rt: &tokio::runtime::Runtime) -> Latency {
    let iso = IsolatedServer::new().unwrap();
    let socket = iso.socket_path();
    let dir = iso.dir().to_path_buf();
    let tmux = rt.block_on(Tmux::connect(iso.server())).unwrap();
    let (pane, out) = rt.block_on(async {
        let pane = new_pane(&tmux, &gated("lat", &format!("exec env PS1={PROMPT} sh"))).await;
        let out = tmux.follow(pane).await.unwrap();
        let prompt = out.expect(Pattern::literal(PROMPT));
        open_gate(&tmux, "lat").await;
        prompt.wait(Duration::from_secs(20)).await.unwrap();
        (pane, out)
    });

    let mut n = 0usize;
    let mut ours_block = |count: usize, into: Option<&mut Vec<Duration>>| {
        let tmux = tmux.clone();
        let out = out.clone();
        let first = n;
        n += count;
        let got = rt
            .block_on(rt.spawn(async move {
                let mut v = Vec::with_capacity(count);
                for i in first..first + count {
                    v.push(ours_sample(&tmux, &out, pane, i).await);
                }
                v
            }))
            .unwrap();
        if let Some(into) = into {
            into.extend(got);
        }
    };
    let mut m = 1_000_000usize;
    let mut poll_block = |count: usize, phased: bool, into: Option<&mut PollRuns>| {
        let mut runs = PollRuns::default();
        for k in 0..count {
            let prompt = out.expect(Pattern::literal(PROMPT));
            // The push wait on the same marker tells when the line arrived.
            let watch = out.expect(Pattern::literal(&format!("Z{m}Q")));
            let watcher = rt.spawn(async move {
                watch.wait(Duration::from_secs(10)).await.unwrap();
                Instant::now()
            });
            let (total, captures, send, found) =
                poll_sample(&socket, &dir, pane, m, phased.then(|| phase(k)));
            let pushed = rt.block_on(watcher).unwrap();
            m += 1;
            runs.total.push(total);
            runs.late.push(found.saturating_duration_since(pushed));
            runs.captures.push(captures);
            runs.send.push(send);
            rt.block_on(prompt.wait(Duration::from_secs(10))).unwrap();
        }
        if let Some(into) = into {
            into.total.extend(runs.total);
            into.late.extend(runs.late);
            into.captures.extend(runs.captures);
            into.send.extend(runs.send);
        }
    };

    ours_block(LAT_WARM_UP, None);
    poll_block(LAT_WARM_UP, false, None);
    let version = rt.block_on(ok(&tmux, "display-message -p '#{version}'"));
    let mut lat = Latency {
        version,
        ours: Vec::new(),
        poll: PollRuns::default(),
        poll_phase: PollRuns::default(),
    };
    // Alternate the methods block by block, rotating the order.
    for round in 0..LAT_SAMPLES / LAT_BLOCK {
        for j in 0..3 {
            match (round + j) % 3 {
                0 => ours_block(LAT_BLOCK, Some(&mut lat.ours)),
                1 => poll_block(LAT_BLOCK, false, Some(&mut lat.poll)),
                _ => poll_block(LAT_BLOCK, true, Some(&mut lat.poll_phase)),
            }
        }
    }
    drop(out);
    rt.block_on(async move { drop(tmux) });
    drop(iso);
    lat
}

// ---------------------------------------------------------------------------
// (b) Ingestion.

struct Ingest {
    file_bytes: usize,
    received: u64,
    expected: u64,
    missed: u64,
    lost: u64,
    wall: Duration,
    ours: f64,
    server: f64,
    client: f64,
    /// Bytes the tmux server wrote meanwhile (it writes `%output` to our
    /// pipe itself; the `tmux -C` process only hands over its descriptors).
    wire: Option<u64>,
    /// Busy share of all CPUs of the machine meanwhile, and the steal share.
    machine: (f64, f64),
}

/// Writes ~`size` bytes of printable lines (76 characters and LF) to
/// `path`; returns (bytes, lines).
fn write_printable(path: &Path, size: usize) -> (usize, usize) {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut file = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut line = [0u8; 77];
    let (mut written, mut lines) = (0usize, 0usize);
    while written < size {
        for b in &mut line[..76] {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            *b = ALPHABET[(x % 64) as usize];
        }
        line[76] = b'\n';
        std::io::Write::write_all(&mut file, &line).unwrap();
        written += line.len();
        lines += 1;
    }
    std::io::Write::flush(&mut file).unwrap();
    (written, lines)
}

fn ingest(rt: &tokio::runtime::Runtime, hz: f64) -> Ingest {
    let iso = IsolatedServer::new().unwrap();
    let path = iso.dir().join("big.txt");
    let (file_bytes, lines) = write_printable(&path, INGEST_BYTES);
    // The pty turns each LF into CR LF; then the sentinel line.
    let expected = (file_bytes + lines + "INGEST-END\r\n".len()) as u64;
    let r = rt.block_on(async {
        tokio::time::timeout(PHASE_LIMIT, async {
            let tmux = Tmux::connect(iso.server()).await.unwrap();
            let server_pid = ok(&tmux, "display-message -p '#{pid}'").await;
            let client_pid = ok(&tmux, "display-message -p '#{client_pid}'").await;
            let command = gated(
                "ingest",
                &format!(
                    "cat {}; printf 'INGEST%sEND\\n' -; exec sleep 600",
                    path.display()
                ),
            );
            let pane = new_pane(&tmux, &command).await;
            let out = tmux.follow(pane).await.unwrap();
            let mut stream = out.stream_from(0);
            let mut sentinel = Sentinel::new("INGEST-END");
            let (mut received, mut missed, mut lost) = (0u64, 0u64, 0u64);
            let s0 = cpu_ticks(&server_pid);
            let c0 = cpu_ticks(&client_pid);
            let o0 = cpu_ticks("self");
            let w0 = written_bytes(&server_pid);
            let m0 = machine_ticks();
            let started = Instant::now();
            open_gate(&tmux, "ingest").await;
            loop {
                match stream.next().await {
                    Some(PaneChunk::Output { data, .. }) => {
                        received += data.len() as u64;
                        if sentinel.seen(&data) {
                            break;
                        }
                    }
                    Some(PaneChunk::Missed { from, to }) => missed += to - from,
                    Some(PaneChunk::Lost { .. }) => lost += 1,
                    Some(_) => {}
                    None => panic!("the ingestion pane ended early"),
                }
            }
            let wall = started.elapsed();
            let share = |d: u64| d as f64 / hz;
            let r = Ingest {
                file_bytes,
                received,
                expected,
                missed,
                lost,
                wall,
                ours: share(cpu_ticks("self") - o0),
                server: share(cpu_ticks(&server_pid) - s0),
                client: share(cpu_ticks(&client_pid) - c0),
                wire: w0.and_then(|w0| written_bytes(&server_pid).map(|w1| w1 - w0)),
                machine: machine_busy(m0, machine_ticks()),
            };
            drop(stream);
            drop(out);
            drop(tmux);
            r
        })
        .await
        .expect("ingestion timed out")
    });
    drop(iso);
    r
}

// ---------------------------------------------------------------------------
// (c) Flood with slow consumers (child process).

/// Which consumers a flood child runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Variant {
    /// Fast reader, slow reader, slow subscription (capacity 64).
    Full,
    /// The fast reader alone.
    FastOnly,
    /// Fast reader and slow reader.
    SlowReader,
    /// Fast reader and a slow subscription of capacity 64.
    Sub64,
    /// Fast reader and a slow subscription of the default capacity (4096).
    SubDefault,
    /// Like `Full`, but the slow reader jumps to the live end after a
    /// `Missed` (instead of resuming at the oldest byte held).
    SkipAhead,
    /// Like `Full`, but the slow reader sleeps only after `Output` chunks.
    NoSleepOnMissed,
}

impl Variant {
    fn name(self) -> &'static str {
        match self {
            Variant::Full => "full",
            Variant::FastOnly => "fast-only",
            Variant::SlowReader => "slow-reader",
            Variant::Sub64 => "sub-64",
            Variant::SubDefault => "sub-4096",
            Variant::SkipAhead => "skip-ahead",
            Variant::NoSleepOnMissed => "no-sleep-on-missed",
        }
    }

    fn parse(s: &str) -> Self {
        [
            Variant::Full,
            Variant::FastOnly,
            Variant::SlowReader,
            Variant::Sub64,
            Variant::SubDefault,
            Variant::SkipAhead,
            Variant::NoSleepOnMissed,
        ]
        .into_iter()
        .find(|v| v.name() == s)
        .unwrap_or(Variant::Full)
    }

    fn describe(self) -> &'static str {
        match self {
            Variant::Full => "fast reader + slow reader + slow subscription (64)",
            Variant::FastOnly => "fast reader only",
            Variant::SlowReader => "fast reader + slow reader",
            Variant::Sub64 => "fast reader + slow subscription (64)",
            Variant::SubDefault => "fast reader + slow subscription (default 4096)",
            Variant::SkipAhead => {
                "as the first row, the slow reader jumping to the live end after `Missed`"
            }
            Variant::NoSleepOnMissed => {
                "as the first row, the slow reader sleeping after `Output` chunks only"
            }
        }
    }

    fn slow_reader(self) -> bool {
        matches!(
            self,
            Variant::Full | Variant::SlowReader | Variant::SkipAhead | Variant::NoSleepOnMissed
        )
    }

    fn subscription(self) -> Option<usize> {
        match self {
            Variant::Full | Variant::Sub64 | Variant::SkipAhead | Variant::NoSleepOnMissed => {
                Some(64)
            }
            Variant::SubDefault => Some(tmux_control::Subscription::DEFAULT_CAPACITY),
            _ => None,
        }
    }
}

/// Expected pane bytes of `head -c n /dev/zero | base64` through a pty.
fn base64_pty_len(n: u64) -> u64 {
    let chars = n.div_ceil(3) * 4;
    let lines = chars.div_ceil(76);
    chars + 2 * lines
}

/// The child: runs one flood and prints one `FLOOD key=value …` line.
fn flood_child() {
    let input: u64 = std::env::var(FLOOD_ENV)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(FLOOD_DEFAULT);
    let variant = Variant::parse(&std::env::var(VARIANT_ENV).unwrap_or_default());
    let rss_start = status_kib("self", "VmRSS:");
    let rt = multi_thread();
    let iso = IsolatedServer::new().unwrap();
    let line = rt.block_on(async {
        tokio::time::timeout(PHASE_LIMIT, flood(&iso, input, variant, rss_start))
            .await
            .expect("flood timed out")
    });
    drop(rt);
    drop(iso);
    println!("{line}");
}

async fn flood(iso: &IsolatedServer, input: u64, variant: Variant, rss_start: u64) -> String {
    let tmux = Tmux::connect(iso.server()).await.unwrap();
    let server_pid = ok(&tmux, "display-message -p '#{pid}'").await;
    let client_pid = ok(&tmux, "display-message -p '#{client_pid}'").await;
    let rss_connected = status_kib("self", "VmRSS:");
    let command = gated(
        "flood",
        &format!("head -c {input} /dev/zero | base64; printf 'FLOOD%sEND\\n' -; exec sleep 600"),
    );
    let expected = base64_pty_len(input) + "FLOOD-END\r\n".len() as u64;
    let pane = new_pane(&tmux, &command).await;
    let out = tmux.follow(pane).await.unwrap();
    let done = Arc::new(AtomicBool::new(false));

    // RSS sampler: the peak as the run goes, every 50 ms.
    let sampled_peak = Arc::new(AtomicU64::new(0));
    let sampler = {
        let done = done.clone();
        let peak = sampled_peak.clone();
        tokio::spawn(async move {
            while !done.load(Ordering::Acquire) {
                peak.fetch_max(status_kib("self", "VmRSS:"), Ordering::AcqRel);
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        })
    };

    let slow_reader = variant.slow_reader().then(|| {
        let done = done.clone();
        let out = out.clone();
        let skip = variant == Variant::SkipAhead;
        let sleep_on_missed = variant != Variant::NoSleepOnMissed;
        let mut stream = out.stream_from(0);
        tokio::spawn(async move {
            let (mut read, mut missed, mut missed_chunks, mut lost) = (0u64, 0u64, 0u64, 0u64);
            while !done.load(Ordering::Acquire) {
                match stream.next_max(4096).await {
                    Some(PaneChunk::Output { data, .. }) => read += data.len() as u64,
                    Some(PaneChunk::Missed { from, to }) => {
                        missed_chunks += 1;
                        if skip {
                            let live = out.end_offset().max(to);
                            missed += live - from;
                            stream = out.stream_from(live);
                        } else {
                            missed += to - from;
                        }
                        if !sleep_on_missed {
                            continue;
                        }
                    }
                    Some(PaneChunk::Lost { .. }) => lost += 1,
                    Some(_) => {}
                    None => break,
                }
                // The work per chunk (every chunk, `Missed` included, unless the variant says otherwise).
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            (read, missed, missed_chunks, lost)
        })
    });

    let slow_sub = variant.subscription().map(|capacity| {
        let done = done.clone();
        let mut events = tmux.subscribe_with_capacity(capacity);
        tokio::spawn(async move {
            let (mut received, mut gaps, mut gap_missed) = (0u64, 0u64, 0u64);
            while !done.load(Ordering::Acquire) {
                match events.recv().await {
                    Some(Event::Gap { missed }) => {
                        gaps += 1;
                        gap_missed += missed;
                    }
                    Some(_) => received += 1,
                    None => break,
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            // Count what is still queued or still pending as a gap.
            while let Ok(Some(e)) =
                tokio::time::timeout(Duration::from_millis(1), events.recv()).await
            {
                if let Event::Gap { missed } = e {
                    gaps += 1;
                    gap_missed += missed;
                }
            }
            (received, gaps, gap_missed)
        })
    });

    let mut stream = out.stream_from(0);
    let mut sentinel = Sentinel::new("FLOOD-END");
    let (mut received, mut missed, mut lost) = (0u64, 0u64, 0u64);
    let s0 = cpu_ticks(&server_pid);
    let o0 = cpu_ticks("self");
    let m0 = machine_ticks();
    let started = Instant::now();
    open_gate(&tmux, "flood").await;
    loop {
        match stream.next().await {
            Some(PaneChunk::Output { data, .. }) => {
                received += data.len() as u64;
                if sentinel.seen(&data) {
                    break;
                }
            }
            Some(PaneChunk::Missed { from, to }) => missed += to - from,
            Some(PaneChunk::Lost { .. }) => lost += 1,
            Some(_) => {}
            None => panic!("the flood pane ended early"),
        }
    }
    let wall = started.elapsed();
    let hz = clock_ticks_per_second();
    let ours_cpu = (cpu_ticks("self") - o0) as f64 / hz;
    let server_cpu = (cpu_ticks(&server_pid) - s0) as f64 / hz;
    let (busy, steal) = machine_busy(m0, machine_ticks());
    done.store(true, Ordering::Release);
    let (slow_read, slow_missed, slow_missed_chunks, slow_lost) = match slow_reader {
        Some(h) => h.await.unwrap(),
        None => (0, 0, 0, 0),
    };
    let (sub_received, gaps, gap_missed) = match slow_sub {
        Some(h) => h.await.unwrap(),
        None => (0, 0, 0),
    };
    sampler.await.unwrap();
    let hwm = status_kib("self", "VmHWM:");
    let rss_end = status_kib("self", "VmRSS:");
    let server_hwm = status_kib(&server_pid, "VmHWM:");
    let client_hwm = status_kib(&client_pid, "VmHWM:");
    drop(stream);
    drop(out);
    drop(tmux);
    format!(
        "FLOOD variant={} input={input} expected={expected} received={received} missed={missed} lost={lost} \
         wall_ms={} ours_cpu={ours_cpu:.2} server_cpu={server_cpu:.2} busy={busy:.3} steal={steal:.3} \
         slow_read={slow_read} slow_missed={slow_missed} slow_missed_chunks={slow_missed_chunks} slow_lost={slow_lost} \
         sub_received={sub_received} gaps={gaps} gap_missed={gap_missed} \
         hwm_kib={hwm} sampled_peak_kib={} rss_start_kib={rss_start} rss_connected_kib={rss_connected} rss_end_kib={rss_end} \
         server_hwm_kib={server_hwm} client_hwm_kib={client_hwm}",
        variant.name(),
        wall.as_millis(),
        sampled_peak.load(Ordering::Acquire),
    )
}

/// A flood child's result line, parsed.
struct Flood {
    fields: Vec<(String, String)>,
}

impl Flood {
    fn get(&self, key: &str) -> u64 {
        self.fields
            .iter()
            .find(|(k, _)| k == key)
            .and_then(|(_, v)| v.parse().ok())
            .unwrap_or(0)
    }

    fn get_f(&self, key: &str) -> f64 {
        self.fields
            .iter()
            .find(|(k, _)| k == key)
            .and_then(|(_, v)| v.parse().ok())
            .unwrap_or(0.0)
    }

    fn mb_per_s(&self) -> f64 {
        self.get("received") as f64 / 1e6 / (self.get("wall_ms") as f64 / 1e3)
    }
}

fn run_flood_child(input: u64, variant: Variant) -> Flood {
    let exe = std::env::current_exe().unwrap();
    let o = std::process::Command::new(exe)
        .env(MODE_ENV, "flood")
        .env(FLOOD_ENV, input.to_string())
        .env(VARIANT_ENV, variant.name())
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .unwrap();
    assert!(o.status.success(), "flood child failed: {:?}", o.status);
    let out = String::from_utf8_lossy(&o.stdout);
    let line = out
        .lines()
        .find(|l| l.starts_with("FLOOD "))
        .expect("flood child printed no result");
    Flood {
        fields: line
            .split_whitespace()
            .skip(1)
            .filter_map(|kv| kv.split_once('='))
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect(),
    }
}

// ---------------------------------------------------------------------------
// Report.

fn machine(tmux: &str) -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .unwrap_or_default()
        .lines()
        .find_map(|l| {
            l.strip_prefix("model name")
                .map(|m| m.trim_start_matches([' ', '\t', ':']).to_owned())
        })
        .unwrap_or_default();
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    format!(
        "{} vCPUs ({cpu}), Linux {}, tmux {tmux}",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        kernel.trim()
    )
}

fn main() {
    if std::env::var(MODE_ENV).as_deref() == Ok("flood") {
        flood_child();
        return;
    }
    let started = Instant::now();
    let hz = clock_ticks_per_second();
    let load_before = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let flood_input: u64 = std::env::var(FLOOD_ENV)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(FLOOD_DEFAULT);

    let rt = multi_thread();
    eprintln!("streams bench: (a) latency …");
    let mut lat = latency(&rt);
    let lat_secs = started.elapsed().as_secs_f64();
    eprintln!("streams bench: (b) ingestion … ({lat_secs:.1} s so far)");
    let ing = ingest(&rt, hz);
    drop(rt);
    eprintln!(
        "streams bench: (c) flood … ({:.1} s so far)",
        started.elapsed().as_secs_f64()
    );
    let flood = run_flood_child(flood_input, Variant::Full);
    let breakdown: Vec<Flood> = if std::env::var(BREAKDOWN_ENV).as_deref() == Ok("1") {
        [
            Variant::Full,
            Variant::FastOnly,
            Variant::SlowReader,
            Variant::Sub64,
            Variant::SubDefault,
            Variant::SkipAhead,
            Variant::NoSleepOnMissed,
        ]
        .into_iter()
        .map(|v| {
            eprintln!("streams bench: breakdown {} …", v.name());
            run_flood_child(BREAKDOWN_FLOOD, v)
        })
        .collect()
    } else {
        Vec::new()
    };
    let load_after = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();

    // ---- (a)
    lat.ours.sort();
    for p in [&mut lat.poll, &mut lat.poll_phase] {
        p.total.sort();
        p.late.sort();
        p.send.sort();
    }
    let ours_p50 = pct(&lat.ours, 50.0);
    println!("## Pane streams and waits (raw figures)\n");
    println!(
        "{}; load average before `{}`, after `{}`; total {:.1} s\n",
        machine(&lat.version),
        load_before.trim(),
        load_after.trim(),
        started.elapsed().as_secs_f64()
    );
    println!(
        "### (a) Keystroke to wait wake-up (`printf \"Z%sQ\\n\" i` typed into `sh`, until the printed `Z<i>Q`)\n"
    );
    println!("| method | samples | p50 | p90 | p99 | max | min | p50 vs library |");
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    let row = |name: &str, s: &[Duration]| {
        println!(
            "| {name} | {} | {} | {} | {} | {} | {} | {:.1}× |",
            s.len(),
            fmt_ms(pct(s, 50.0)),
            fmt_ms(pct(s, 90.0)),
            fmt_ms(pct(s, 99.0)),
            fmt_ms(*s.last().unwrap()),
            fmt_ms(s[0]),
            ms(pct(s, 50.0)) / ms(ours_p50),
        );
    };
    row(
        "library: 2 × `send-keys` over the connection, push `Expect::wait`",
        &lat.ours,
    );
    row(
        "poller: `send-keys` subprocess, then `capture-pane` subprocess at once and every 50 ms",
        &lat.poll.total,
    );
    row(
        "poller, its 50 ms clock at an even spread of phases to the keystroke",
        &lat.poll_phase.total,
    );
    println!();
    println!(
        "| poller | found on 1st capture | captures per sample | `send-keys` subprocess p50 | late vs push wait: p50 | p90 | max |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for (name, p) in [
        ("capture at once, then every 50 ms", &lat.poll),
        ("50 ms clock at spread phases", &lat.poll_phase),
    ] {
        println!(
            "| {name} | {} of {} | {:.2} | {} | {} | {} | {} |",
            p.captures.iter().filter(|&&c| c == 1).count(),
            p.captures.len(),
            p.captures.iter().sum::<usize>() as f64 / p.captures.len() as f64,
            fmt_ms(pct(&p.send, 50.0)),
            fmt_ms(pct(&p.late, 50.0)),
            fmt_ms(pct(&p.late, 90.0)),
            fmt_ms(*p.late.last().unwrap()),
        );
    }
    println!();
    println!(
        "* poller p50 / library p50: **{:.1}×** (capture at once), **{:.1}×** (spread phases)",
        ms(pct(&lat.poll.total, 50.0)) / ms(ours_p50),
        ms(pct(&lat.poll_phase.total, 50.0)) / ms(ours_p50),
    );
    println!(
        "* goal library p50 ≤ 1 ms: **{}** ({})",
        if ours_p50 <= Duration::from_millis(1) {
            "met"
        } else {
            "missed"
        },
        fmt_ms(ours_p50)
    );

    // ---- (b)
    let secs = ing.wall.as_secs_f64();
    println!(
        "\n### (b) Output ingestion (`cat` of a printable file in one pane, default options, one `PaneStream` draining)\n"
    );
    println!(
        "| file | received | wall | decoded MB/s | wire MB/s (tmux writes) | bench process CPU | tmux server CPU | control client CPU | machine busy (steal) | missed / lost |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    println!(
        "| {:.1} MB | {:.1} MB{} | {secs:.1} s | **{:.2}** | {} | {:.2} s (**{:.0} %**) | {:.2} s (**{:.0} %**) | {:.2} s ({:.0} %) | {:.0} % ({:.0} %) of {} CPUs | {} B / {} |",
        ing.file_bytes as f64 / 1e6,
        ing.received as f64 / 1e6,
        if ing.received == ing.expected {
            " (all)"
        } else {
            " (NOT all)"
        },
        ing.received as f64 / 1e6 / secs,
        ing.wire.map_or("n/a".to_owned(), |w| format!(
            "{:.2}",
            w as f64 / 1e6 / secs
        )),
        ing.ours,
        ing.ours / secs * 100.0,
        ing.server,
        ing.server / secs * 100.0,
        ing.client,
        ing.client / secs * 100.0,
        ing.machine.0 * 100.0,
        ing.machine.1 * 100.0,
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        ing.missed,
        ing.lost
    );
    println!();
    println!(
        "* goal tmux is the bottleneck (near 100 % of a core): tmux server **{:.0} %**; goal bench process < 25 % of a core: **{:.0} %** ({})",
        ing.server / secs * 100.0,
        ing.ours / secs * 100.0,
        if ing.ours / secs < 0.25 {
            "met"
        } else {
            "missed"
        }
    );
    println!(
        "* CPU per decoded MB: bench process {:.1} ms, tmux server {:.1} ms (tmux / bench {:.1}×)",
        ing.ours * 1e3 / (ing.received as f64 / 1e6),
        ing.server * 1e3 / (ing.received as f64 / 1e6),
        ing.server / ing.ours
    );

    // ---- (c)
    println!(
        "\n### (c) Peak memory under a flood with slow consumers (child process, default `ConnectOptions`)\n"
    );
    let header = "| received | wall | MB/s | child VmHWM | RSS after connect | CPU bench / tmux (machine busy) | fast reader missed / lost | slow reader read / missed (Missed chunks) | slow subscription events / Gap markers / events missed | tmux server VmHWM |";
    let rule = "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|";
    let flood_row = |f: &Flood, first: Option<&str>| {
        let wall = f.get("wall_ms") as f64 / 1e3;
        println!(
            "{}| {:.1} MB{} | {wall:.1} s | {:.2} | **{:.1} MiB** | {:.1} MiB | {:.0} % / {:.0} % ({:.0} %) | {} B / {} | {:.1} MB / {:.1} MB ({}) | {} / {} / {} | {:.1} MiB |",
            first.map_or(String::new(), |c| format!("| {c} ")),
            f.get("received") as f64 / 1e6,
            if f.get("received") == f.get("expected") {
                ""
            } else {
                " (NOT all)"
            },
            f.mb_per_s(),
            mib(f.get("hwm_kib")),
            mib(f.get("rss_connected_kib")),
            f.get_f("ours_cpu") / wall * 100.0,
            f.get_f("server_cpu") / wall * 100.0,
            f.get_f("busy") * 100.0,
            f.get("missed"),
            f.get("lost"),
            f.get("slow_read") as f64 / 1e6,
            f.get("slow_missed") as f64 / 1e6,
            f.get("slow_missed_chunks"),
            f.get("sub_received"),
            f.get("gaps"),
            f.get("gap_missed"),
            mib(f.get("server_hwm_kib")),
        );
    };
    println!(
        "`head -c {} /dev/zero \\| base64` (gated) in one pane; {}; the slow reader sleeps 5 ms per 4 KiB chunk, the subscription (capacity 64) reads one event per 10 ms.\n",
        flood.get("input"),
        Variant::Full.describe()
    );
    println!("{header}");
    println!("{rule}");
    flood_row(&flood, None);
    println!();
    println!(
        "* goal child VmHWM < 64 MB: **{}** ({:.1} MiB = {:.1} MB)",
        if flood.get("hwm_kib") * 1024 < 64_000_000 {
            "met"
        } else {
            "missed"
        },
        mib(flood.get("hwm_kib")),
        flood.get("hwm_kib") as f64 * 1024.0 / 1e6,
    );
    if !breakdown.is_empty() {
        println!(
            "\n#### Memory breakdown: `head -c {BREAKDOWN_FLOOD} /dev/zero \\| base64`, one consumer set per child\n"
        );
        println!("| consumers {header}");
        println!("|---{rule}");
        for f in &breakdown {
            let v = Variant::parse(&f.fields.iter().find(|(k, _)| k == "variant").unwrap().1);
            flood_row(f, Some(v.describe()));
        }
    }
}
