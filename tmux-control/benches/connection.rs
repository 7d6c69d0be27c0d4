//! Command round trip and throughput of one persistent control-mode
//! connection, side by side with a `tmux` subprocess per command and with a
//! minimal hand-written control-mode loop over blocking pipes.
//!
//! Run with `cargo bench -p tmux-control --bench connection`. Everything
//! happens on a throwaway [`IsolatedServer`]; every `tmux` process started
//! here names its socket with `-S`.
//!
//! Round trips are measured in interleaved rounds (every contestant runs a
//! slice of its samples in every round, in rotating order) so that the slow
//! drift of a shared machine's load hits all of them alike.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::VecDeque;
use std::future::{Future, poll_fn};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Stdio};
use std::task::Poll;
use std::time::{Duration, Instant};

use tmux_control::{IsolatedServer, Tmux};

/// The command every measurement sends.
const LINE: &str = "display-message -p x";

/// Rounds of the interleaved round-trip measurement.
const ROUNDS: usize = 40;
/// Round trips per round for each in-process contestant.
const PER_ROUND: usize = 200;
/// Subprocess calls per round.
const SUBPROCESS_PER_ROUND: usize = 8;
/// Unmeasured round trips before the first round.
const WARM_UP: usize = 500;

/// Commands per throughput run.
const THROUGHPUT_N: usize = 50_000;
/// Tasks issuing them.
const THROUGHPUT_TASKS: usize = 8;
/// Commands each task keeps in flight.
const THROUGHPUT_WINDOW: usize = 1024;
/// Throughput runs per contestant.
const THROUGHPUT_RUNS: usize = 3;

// ---------------------------------------------------------------------------
// The raw control-mode loop: blocking std pipes, no tokio.

/// A second control client, `tmux -S SOCK -C attach-session -t tmux-control`.
struct RawClient {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    line: Vec<u8>,
}

/// `true` for the guard line that ends the reply to one of our own commands
/// (`%end`/`%error` with flags 1).
fn ends_own_block(line: &[u8]) -> bool {
    (line.starts_with(b"%end ") || line.starts_with(b"%error ")) && line.ends_with(b" 1\n")
}

impl RawClient {
    fn attach(socket: &Path, dir: &Path) -> RawClient {
        let mut child = std::process::Command::new("tmux") // on the isolated -S socket
            .arg("-S")
            .arg(socket)
            .args(["-C", "attach-session", "-t", "tmux-control"])
            .env_remove("TMUX")
            .env("TMUX_TMPDIR", dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn the raw control client");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::with_capacity(64 * 1024, child.stdout.take().unwrap());
        RawClient {
            child,
            stdin,
            stdout,
            line: Vec::with_capacity(256),
        }
    }

    /// One round trip: write the line, read until our `%end`. Returns
    /// whether the reply's body was `x`.
    fn round_trip(&mut self) -> bool {
        self.stdin.write_all(b"display-message -p x\n").unwrap();
        let mut body_ok = false;
        loop {
            self.line.clear();
            let n = self.stdout.read_until(b'\n', &mut self.line).unwrap();
            assert!(n > 0, "raw control client closed");
            if ends_own_block(&self.line) {
                return body_ok;
            }
            body_ok = self.line == b"x\n";
        }
    }

    fn samples(&mut self, n: usize) -> Vec<Duration> {
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            let t = Instant::now();
            let ok = self.round_trip();
            out.push(t.elapsed());
            assert!(ok, "raw loop: unexpected reply");
        }
        out
    }

    /// Writes `n` commands from a second thread while this one counts
    /// replies. Returns the wall time.
    fn throughput(&mut self, n: usize) -> Duration {
        let payload = b"display-message -p x\n".repeat(n);
        let stdin = &mut self.stdin;
        let stdout = &mut self.stdout;
        let line = &mut self.line;
        let t = Instant::now();
        std::thread::scope(|s| {
            s.spawn(move || stdin.write_all(&payload).unwrap());
            let mut seen = 0;
            while seen < n {
                line.clear();
                let got = stdout.read_until(b'\n', line).unwrap();
                assert!(got > 0, "raw control client closed");
                if ends_own_block(line) {
                    seen += 1;
                }
            }
        });
        t.elapsed()
    }

    fn close(mut self) {
        drop(self.stdin);
        let _ = self.child.wait();
    }
}

/// A [`RawClient`] owned by a thread of its own: asked for `n` samples, it
/// measures them there and sends them back.
struct ThreadedRaw {
    ask: std::sync::mpsc::Sender<usize>,
    answer: std::sync::mpsc::Receiver<Vec<Duration>>,
    thread: std::thread::JoinHandle<()>,
}

impl ThreadedRaw {
    fn start(socket: &Path, dir: &Path) -> ThreadedRaw {
        let mut raw = RawClient::attach(socket, dir);
        let (ask, asked) = std::sync::mpsc::channel::<usize>();
        let (answer_tx, answer) = std::sync::mpsc::channel();
        let thread = std::thread::spawn(move || {
            while let Ok(n) = asked.recv() {
                answer_tx.send(raw.samples(n)).unwrap();
            }
            raw.close();
        });
        ThreadedRaw {
            ask,
            answer,
            thread,
        }
    }

    fn samples(&self, n: usize) -> Vec<Duration> {
        self.ask.send(n).unwrap();
        self.answer.recv().unwrap()
    }

    fn stop(self) {
        let ThreadedRaw { ask, thread, .. } = self;
        drop(ask);
        thread.join().unwrap();
    }
}

// ---------------------------------------------------------------------------
// The subprocess per command.

fn subprocess_samples(socket: &Path, dir: &Path, n: usize) -> Vec<Duration> {
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        let o = std::process::Command::new("tmux") // the isolated socket, next line
            .arg("-S")
            .arg(socket)
            .args(["display-message", "-p", "x"])
            .env_remove("TMUX")
            .env("TMUX_TMPDIR", dir)
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output()
            .unwrap();
        out.push(t.elapsed());
        assert_eq!(o.stdout, b"x\n", "subprocess: unexpected output");
    }
    out
}

// ---------------------------------------------------------------------------
// The library.

async fn lib_samples(tmux: &Tmux, n: usize) -> Vec<Duration> {
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        let reply = tmux.raw_line(LINE).await.unwrap();
        out.push(t.elapsed());
        assert!(
            !reply.error && reply.body.len() == 1 && &reply.body[0][..] == b"x",
            "library: unexpected reply"
        );
    }
    out
}

/// One contestant of the round-trip comparison.
struct Contestant {
    name: &'static str,
    per_round: usize,
    run: Box<dyn FnMut(usize) -> Vec<Duration>>,
    samples: Vec<Duration>,
    round_medians: Vec<Duration>,
}

impl Contestant {
    fn new(
        name: &'static str,
        per_round: usize,
        run: impl FnMut(usize) -> Vec<Duration> + 'static,
    ) -> Self {
        Contestant {
            name,
            per_round,
            run: Box::new(run),
            samples: Vec::new(),
            round_medians: Vec::new(),
        }
    }
}

/// A runtime and a connection made on it.
struct LibSetup {
    rt: std::sync::Arc<tokio::runtime::Runtime>,
    tmux: Tmux,
}

impl LibSetup {
    fn new(rt: tokio::runtime::Runtime, iso: &IsolatedServer) -> Self {
        let tmux = rt.block_on(Tmux::connect(iso.server())).unwrap();
        LibSetup {
            rt: std::sync::Arc::new(rt),
            tmux,
        }
    }

    /// The caller runs in a task spawned on the runtime (a worker thread).
    fn spawned(&self) -> impl FnMut(usize) -> Vec<Duration> + 'static {
        let rt = self.rt.clone();
        let tmux = self.tmux.clone();
        move |n| {
            let tmux = tmux.clone();
            rt.block_on(rt.spawn(async move { lib_samples(&tmux, n).await }))
                .unwrap()
        }
    }

    /// The caller is the `block_on` future on the main thread. (A
    /// current-thread runtime runs its tasks only inside `Runtime::block_on`,
    /// not `Handle::block_on`.)
    fn block_on(&self) -> impl FnMut(usize) -> Vec<Duration> + 'static {
        let rt = self.rt.clone();
        let tmux = self.tmux.clone();
        move |n| rt.block_on(lib_samples(&tmux, n))
    }
}

fn multi_thread(workers: Option<usize>) -> tokio::runtime::Runtime {
    let mut b = tokio::runtime::Builder::new_multi_thread();
    if let Some(w) = workers {
        b.worker_threads(w);
    }
    b.enable_all().build().unwrap()
}

// ---------------------------------------------------------------------------
// Throughput and CPU accounting.

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

/// Time a (single-threaded) process spent on a CPU and waiting for one, in
/// nanoseconds, from `/proc/<pid>/schedstat`.
fn sched_ns(pid: &str) -> (u64, u64) {
    let s = std::fs::read_to_string(format!("/proc/{pid}/schedstat")).unwrap_or_default();
    let mut f = s.split_whitespace().map(|x| x.parse::<u64>().unwrap_or(0));
    (f.next().unwrap_or(0), f.next().unwrap_or(0))
}

/// The processes whose CPU a throughput run reports.
struct Watched {
    server: String,
    lib_client: String,
    raw_client: String,
}

struct ThroughputRun {
    wall: Duration,
    server: f64,
    server_wait: f64,
    control_client: f64,
    bench: f64,
}

impl ThroughputRun {
    fn per_second(&self) -> f64 {
        THROUGHPUT_N as f64 / self.wall.as_secs_f64()
    }
}

fn measure_cpu(
    watched: &Watched,
    control_client: &str,
    hz: f64,
    f: impl FnOnce() -> Duration,
) -> ThroughputRun {
    let s0 = sched_ns(&watched.server);
    let c0 = cpu_ticks(control_client);
    let b0 = cpu_ticks("self");
    let wall = f();
    let s1 = sched_ns(&watched.server);
    let share = |d: u64| d as f64 / hz / wall.as_secs_f64();
    ThroughputRun {
        wall,
        server: (s1.0 - s0.0) as f64 / 1e9 / wall.as_secs_f64(),
        server_wait: (s1.1 - s0.1) as f64 / 1e9 / wall.as_secs_f64(),
        control_client: share(cpu_ticks(control_client) - c0),
        bench: share(cpu_ticks("self") - b0),
    }
}

/// `n` commands from `tasks` tasks, each keeping `window` in flight.
async fn lib_throughput(tmux: &Tmux, n: usize, tasks: usize, window: usize) -> Duration {
    let t = Instant::now();
    let mut set = tokio::task::JoinSet::new();
    for i in 0..tasks {
        let tmux = tmux.clone();
        let quota = n / tasks + usize::from(i < n % tasks);
        set.spawn(async move {
            let mut inflight = VecDeque::with_capacity(window);
            let mut issued = 0;
            let mut done = 0;
            while done < quota {
                while issued < quota && inflight.len() < window {
                    let mut f = Box::pin(tmux.raw_line(LINE));
                    // Poll once so the command is queued now; replies come
                    // back in order, so the oldest is awaited first.
                    let first = poll_fn(|cx| Poll::Ready(f.as_mut().poll(cx).is_pending())).await;
                    assert!(first, "command finished before it was sent");
                    inflight.push_back(f);
                    issued += 1;
                }
                let reply = inflight.pop_front().unwrap().await.unwrap();
                assert!(!reply.error && &reply.body[0][..] == b"x");
                done += 1;
            }
        });
    }
    while let Some(r) = set.join_next().await {
        r.unwrap();
    }
    t.elapsed()
}

// ---------------------------------------------------------------------------
// Statistics and output.

fn pct(sorted: &[Duration], p: f64) -> Duration {
    let i = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[i.clamp(1, sorted.len()) - 1]
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn median_f64(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn fmt_us(d: Duration) -> String {
    let u = us(d);
    if u >= 1000.0 {
        format!("{:.2} ms", u / 1000.0)
    } else {
        format!("{u:.0} µs")
    }
}

/// Ends a hung run without leaving the isolated server behind.
fn watchdog(socket: PathBuf, dir: PathBuf) {
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_secs(300));
        eprintln!("connection bench: no result after 300 s, giving up");
        let _ = std::process::Command::new("tmux") // the isolated socket, next line
            .arg("-S")
            .arg(&socket)
            .arg("kill-server")
            .env_remove("TMUX")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        let _ = std::fs::remove_dir_all(&dir);
        std::process::exit(2);
    });
}

fn main() {
    let started = Instant::now();
    let iso = IsolatedServer::new().unwrap();
    let socket: PathBuf = iso.socket_path();
    let dir: PathBuf = iso.dir().to_path_buf();
    let hz = clock_ticks_per_second();
    watchdog(socket.clone(), dir.clone());
    let load_before = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();

    // The primary setup: the default multi-thread runtime (one worker per CPU).
    let main_lib = LibSetup::new(multi_thread(None), &iso);
    let info = |q: &str| -> String {
        let r = main_lib.rt.block_on(main_lib.tmux.raw_line(q)).unwrap();
        String::from_utf8_lossy(&r.body[0]).into_owned()
    };
    let version = info("display-message -p '#{version}'");
    let server_pid = info("display-message -p '#{pid}'");
    let lib_client_pid = info("display-message -p '#{client_pid}'");

    // Variations of the caller's runtime, each with a connection of its own.
    let one_worker = LibSetup::new(multi_thread(Some(1)), &iso);
    let current = LibSetup::new(
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap(),
        &iso,
    );

    let raw = std::rc::Rc::new(std::cell::RefCell::new(RawClient::attach(&socket, &dir)));
    let raw_client_pid = raw.borrow().child.id().to_string();

    let threaded_raw = std::rc::Rc::new(ThreadedRaw::start(&socket, &dir));

    let mut contestants = vec![
        Contestant::new(
            "raw control-mode loop (blocking pipes, a thread of its own)",
            PER_ROUND,
            {
                let raw = threaded_raw.clone();
                move |n| raw.samples(n)
            },
        ),
        Contestant::new(
            "library, multi-thread runtime (2 workers), caller in a spawned task",
            PER_ROUND,
            main_lib.spawned(),
        ),
        Contestant::new(
            "library, multi-thread runtime, caller in `block_on` (main thread)",
            PER_ROUND,
            main_lib.block_on(),
        ),
        Contestant::new(
            "library, multi-thread runtime with 1 worker, spawned caller",
            PER_ROUND,
            one_worker.spawned(),
        ),
        Contestant::new(
            "library, current-thread runtime",
            PER_ROUND,
            current.block_on(),
        ),
        Contestant::new("raw control-mode loop, on the main thread", PER_ROUND, {
            let raw = raw.clone();
            move |n| raw.borrow_mut().samples(n)
        }),
        Contestant::new("subprocess per command", SUBPROCESS_PER_ROUND, {
            let socket = socket.clone();
            let dir = dir.clone();
            move |n| subprocess_samples(&socket, &dir, n)
        }),
    ];

    // Warm-up.
    for c in &mut contestants {
        let n = if c.per_round == PER_ROUND {
            WARM_UP
        } else {
            10
        };
        (c.run)(n);
    }
    // Interleaved rounds, rotating the order.
    let k = contestants.len();
    for round in 0..ROUNDS {
        for j in 0..k {
            let c = &mut contestants[(round + j) % k];
            let mut s = (c.run)(c.per_round);
            s.sort();
            c.round_medians.push(pct(&s, 50.0));
            c.samples.extend(s);
        }
    }
    let rtt_secs = started.elapsed().as_secs_f64();

    // Throughput: the library connection, then the raw client, alternately.
    let watched = Watched {
        server: server_pid.clone(),
        lib_client: lib_client_pid.clone(),
        raw_client: raw_client_pid.clone(),
    };
    let mut lib_runs = Vec::new();
    let mut raw_runs = Vec::new();
    for _ in 0..THROUGHPUT_RUNS {
        lib_runs.push(measure_cpu(&watched, &watched.lib_client, hz, || {
            main_lib.rt.block_on(lib_throughput(
                &main_lib.tmux,
                THROUGHPUT_N,
                THROUGHPUT_TASKS,
                THROUGHPUT_WINDOW,
            ))
        }));
        raw_runs.push(measure_cpu(&watched, &watched.raw_client, hz, || {
            raw.borrow_mut().throughput(THROUGHPUT_N)
        }));
    }
    let load_after = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();

    // ---- Report ----
    for c in &mut contestants {
        c.samples.sort();
    }
    let raw_p50 = pct(&contestants[0].samples, 50.0);
    let lib_p50 = pct(&contestants[1].samples, 50.0);
    let sub_p50 = pct(&contestants[k - 1].samples, 50.0);

    println!("## Command round trip and throughput (raw figures)\n");
    println!(
        "tmux {version}, {} CPUs, load average before `{}`, after `{}`; {} rounds, round trips {:.1} s, total {:.1} s\n",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        load_before.trim(),
        load_after.trim(),
        ROUNDS,
        rtt_secs,
        started.elapsed().as_secs_f64()
    );
    println!(
        "| `{LINE}` round trip | samples | p50 | p90 | p99 | per-round p50 (min–max) | p50 vs raw loop |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for c in &contestants {
        let s = &c.samples;
        let lo = *c.round_medians.iter().min().unwrap();
        let hi = *c.round_medians.iter().max().unwrap();
        println!(
            "| {} | {} | {} | {} | {} | {}–{} | {:.2}× |",
            c.name,
            s.len(),
            fmt_us(pct(s, 50.0)),
            fmt_us(pct(s, 90.0)),
            fmt_us(pct(s, 99.0)),
            fmt_us(lo),
            fmt_us(hi),
            us(pct(s, 50.0)) / us(raw_p50)
        );
    }
    // Rounds are ~10 ms apart, so a round's pair of medians saw nearly the
    // same machine; the spread of their ratio shows how much is noise.
    let mut per_round: Vec<f64> = contestants[1]
        .round_medians
        .iter()
        .zip(&contestants[0].round_medians)
        .map(|(l, r)| us(*l) / us(*r))
        .collect();
    per_round.sort_by(f64::total_cmp);
    let at = |p: f64| per_round[((p / 100.0) * (per_round.len() - 1) as f64).round() as usize];
    println!();
    println!(
        "* subprocess / library (p50): **{:.1}×** (goal ≥ 30×)",
        us(sub_p50) / us(lib_p50)
    );
    println!(
        "* library / raw loop (p50): **{:.2}×** (goal ≤ 1.3×), {:+.1} µs; p90 {:.2}×; per-round ratio median {:.2}×, 10th–90th percentile of rounds {:.2}–{:.2}×",
        us(lib_p50) / us(raw_p50),
        us(lib_p50) - us(raw_p50),
        us(pct(&contestants[1].samples, 90.0)) / us(pct(&contestants[0].samples, 90.0)),
        at(50.0),
        at(10.0),
        at(90.0)
    );
    println!();
    println!(
        "| {THROUGHPUT_N} × `{LINE}` pipelined | run | commands/s | tmux server on CPU | tmux server waiting for a CPU | control client process CPU | bench process CPU | server CPU µs/command |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    let row = |name: &str, i: usize, r: &ThroughputRun| {
        println!(
            "| {name} | {} | {:.0} | {:.0} % | {:.0} % | {:.0} % | {:.0} % | {:.1} |",
            i + 1,
            r.per_second(),
            r.server * 100.0,
            r.server_wait * 100.0,
            r.control_client * 100.0,
            r.bench * 100.0,
            r.server * r.wall.as_secs_f64() * 1e6 / THROUGHPUT_N as f64
        );
    };
    for (i, r) in lib_runs.iter().enumerate() {
        row(
            &format!("library, {THROUGHPUT_TASKS} tasks × {THROUGHPUT_WINDOW} in flight"),
            i,
            r,
        );
    }
    for (i, r) in raw_runs.iter().enumerate() {
        row("raw loop, writer thread + reader thread", i, r);
    }
    let lib_tp = median_f64(lib_runs.iter().map(ThroughputRun::per_second).collect());
    let raw_tp = median_f64(raw_runs.iter().map(ThroughputRun::per_second).collect());
    println!();
    println!(
        "* library throughput (median of {THROUGHPUT_RUNS}): **{lib_tp:.0} commands/s** (goal ≥ 60,000); raw loop {raw_tp:.0}/s; library / raw {:.2}×",
        lib_tp / raw_tp
    );

    // Tear down: the raw client, then the connections (on their runtimes).
    drop(contestants);
    if let Ok(cell) = std::rc::Rc::try_unwrap(raw) {
        cell.into_inner().close();
    }
    if let Ok(t) = std::rc::Rc::try_unwrap(threaded_raw) {
        t.stop();
    }
    drop(current);
    drop(one_worker);
    drop(main_lib);
    drop(iso);
}
