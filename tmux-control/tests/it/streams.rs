//! Pane output streams, waits and pane state against real tmux, on
//! isolated servers only.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::Duration;

use crate::common::{bounded, gated, ok, open_gate};
use tmux_control::{
    ConnectOptions, Event, IsolatedServer, LossReason, PaneChunk, PaneId, PaneOutput, Pattern,
    Tmux, WaitError, WaitOutcome,
};

/// Creates a window running `command` in `session`; returns its pane.
async fn window(tmux: &Tmux, session: &str, command: &str) -> PaneId {
    let quoted = command.replace('\'', "'\\''");
    let id = ok(
        tmux,
        format!("new-window -d -P -F '#{{pane_id}}' -t '{session}:' '{quoted}'"),
    )
    .await;
    id.trim().parse().unwrap()
}

async fn collect(out: &PaneOutput, from: u64, want: usize) -> Vec<u8> {
    let mut stream = out.stream_from(from);
    let mut got = Vec::with_capacity(want);
    while got.len() < want {
        match stream.next().await {
            Some(PaneChunk::Output { data, .. }) => got.extend_from_slice(&data),
            Some(other) => panic!("unexpected {other:?} after {} bytes", got.len()),
            None => panic!("stream ended after {} of {want} bytes", got.len()),
        }
    }
    got
}

/// What the pty makes of a program's output (`onlcr`: LF becomes CR LF).
fn through_pty(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len() * 11 / 10);
    for &b in data {
        if b == b'\n' {
            out.push(b'\r');
        }
        out.push(b);
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wait_matches_the_printed_mark_not_the_echoed_command() {
    let iso = IsolatedServer::new().unwrap();
    bounded(async {
        let tmux = Tmux::connect(iso.server()).await.unwrap();
        let pane = window(&tmux, "tmux-control", "sh").await;
        let out = tmux.follow(pane).await.unwrap();
        let wait = out.expect(Pattern::literal("MARK"));
        ok(
            &tmux,
            format!("send-keys -t {pane} -l \"sleep 0.2; printf 'MA%sRK\\\\n' ''\""),
        )
        .await;
        ok(&tmux, format!("send-keys -t {pane} Enter")).await;
        let m = wait.wait(Duration::from_secs(20)).await.unwrap();
        assert_eq!(m.text, "MARK");
        // The echoed command line came first and did not match.
        assert!(m.before.contains("MA%sRK"), "context: {:?}", m.before);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_match_split_across_output_lines_is_found() {
    let iso = IsolatedServer::new().unwrap();
    bounded(async {
        let tmux = Tmux::connect(iso.server()).await.unwrap();
        let pane = window(
            &tmux,
            "tmux-control",
            &gated(
                "split",
                "printf 'SPL'; sleep 0.3; printf '\\033[1mIT\\033[0m\\n'; sleep 30",
            ),
        )
        .await;
        let out = tmux.follow(pane).await.unwrap();
        let mut events = tmux.subscribe();
        let wait = out.expect(Pattern::literal("SPLIT"));
        open_gate(&tmux, "split").await;
        let m = wait.wait(Duration::from_secs(20)).await.unwrap();
        assert_eq!(m.text, "SPLIT");
        // It really arrived in two %output lines, with escape codes in between.
        let mut pieces: Vec<Vec<u8>> = Vec::new();
        while pieces.concat().len() < b"SPL\x1b[1mIT".len() {
            if let Some(Event::Notification(
                tmux_control::proto::Notification::Output { pane: p, data }
                | tmux_control::proto::Notification::ExtendedOutput { pane: p, data, .. },
            )) = events.recv().await
                && p == pane
            {
                pieces.push(data.to_vec());
            }
        }
        assert_eq!(pieces[0], b"SPL", "{pieces:?}");
        // A raw pattern sees the escape codes.
        let raw = out.expect(Pattern::regex("never").unwrap().raw());
        assert!(matches!(
            raw.wait(Duration::from_millis(300)).await,
            Err(WaitError::Timeout { .. })
        ));
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_panes_in_ten_sessions_stream_at_once_byte_exact() {
    let iso = IsolatedServer::new().unwrap();
    bounded(async {
        let tmux = Tmux::connect(iso.server()).await.unwrap();
        let mut panes = Vec::new();
        for s in 0..10 {
            ok(&tmux, format!("new-session -d -s s{s} -x 100 -y 30")).await;
            for w in 0..5 {
                let tag = format!("s{s}w{w}");
                let cmd = gated(
                    &tag,
                    &format!("awk 'BEGIN{{for(i=0;i<3000;i++) print \"{tag}-\" i}}'; sleep 60"),
                );
                let pane = window(&tmux, &format!("s{s}"), &cmd).await;
                let mut expected = String::new();
                for i in 0..3000 {
                    expected.push_str(&format!("{tag}-{i}\n"));
                }
                panes.push((pane, tag, through_pty(expected.as_bytes())));
            }
        }
        let mut follows = Vec::new();
        for (pane, _, _) in &panes {
            follows.push(tmux.follow(*pane).await.unwrap());
        }
        for (_, tag, _) in &panes {
            open_gate(&tmux, tag).await;
        }
        let mut tasks = Vec::new();
        for ((_, _, expected), out) in panes.into_iter().zip(follows) {
            tasks.push(tokio::spawn(async move {
                let got = collect(&out, 0, expected.len()).await;
                assert!(got == expected, "{}: output differs", out.pane());
            }));
        }
        for t in tasks {
            t.await.unwrap();
        }
        // Observers never resized anything.
        let sizes = ok(
            &tmux,
            "list-windows -a -F '#{session_name} #{window_width}x#{window_height}'",
        )
        .await;
        for line in sizes.lines().filter(|l| l.starts_with("s")) {
            assert!(line.ends_with("100x30"), "{line}");
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pane_death_delivers_its_exit_status() {
    let iso = IsolatedServer::new().unwrap();
    bounded(async {
        let tmux = Tmux::connect(iso.server()).await.unwrap();
        ok(&tmux, "set-option -g remain-on-exit on").await;
        let pane = window(&tmux, "tmux-control", &gated("seven", "exit 7")).await;
        let out = tmux.follow(pane).await.unwrap();
        open_gate(&tmux, "seven").await;
        let exit = out.wait_exit(Duration::from_secs(20)).await.unwrap();
        assert_eq!(exit.status, Some(7));
        assert!(!exit.gone);
        assert!(out.state().dead);
        // After a respawn, refresh_state sees the new program at once
        // (subscriptions would take up to a second).
        ok(&tmux, format!("respawn-pane -k -t {pane} 'exec sleep 30'")).await;
        let fresh = out.refresh_state().await.unwrap();
        assert!(!fresh.dead && fresh.exit_status.is_none(), "{fresh:?}");
        assert!(!out.state().dead);

        // Without remain-on-exit the pane disappears; the wait says so.
        ok(&tmux, "set-option -g remain-on-exit off").await;
        let pane = window(&tmux, "tmux-control", &gated("three", "exit 3")).await;
        let out = tmux.follow(pane).await.unwrap();
        open_gate(&tmux, "three").await;
        let exit = out.wait_exit(Duration::from_secs(20)).await.unwrap();
        assert!(exit.gone);
        let mut stream = out.stream_from(out.end_offset());
        assert_eq!(stream.next().await, None, "a gone pane's stream ends");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pane_state_follows_the_foreground_command() {
    let iso = IsolatedServer::new().unwrap();
    bounded(async {
        let tmux = Tmux::connect(iso.server()).await.unwrap();
        let pane = window(&tmux, "tmux-control", "sh").await;
        let out = tmux.follow(pane).await.unwrap();
        ok(&tmux, format!("send-keys -t {pane} -l 'exec sleep 30'")).await;
        ok(&tmux, format!("send-keys -t {pane} Enter")).await;
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while out.state().current_command.as_deref() != Some("sleep") {
            assert!(tokio::time::Instant::now() < deadline, "{:?}", out.state());
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let mut changes = out.state_changes();
        ok(&tmux, format!("copy-mode -t {pane}")).await;
        // The change is pushed: no polling needed.
        loop {
            let state = changes.next().await.unwrap();
            if state.in_mode {
                break;
            }
        }
        assert!(out.state().in_mode);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_pane_resumes_and_reports_the_loss() {
    let iso = IsolatedServer::new().unwrap();
    bounded(async {
        let tmux = Tmux::connect(iso.server()).await.unwrap();
        let pane = window(&tmux, "tmux-control", "sh").await;
        let out = tmux.follow(pane).await.unwrap();
        let mut stream = out.stream();
        let mut events = tmux.subscribe();
        // What pause-after does when a client falls behind, forced by hand.
        ok(&tmux, format!("refresh-client -A '{pane}:pause'")).await;
        let mut paused = false;
        while !paused {
            if let Some(Event::Notification(tmux_control::proto::Notification::Pause { pane: p })) =
                events.recv().await
            {
                paused = p == pane;
            }
        }
        // The connection resumed it by itself: typed text shows up again.
        let wait = out.expect(Pattern::literal("after-pause"));
        ok(&tmux, format!("send-keys -t {pane} -l 'echo after-pause'")).await;
        ok(&tmux, format!("send-keys -t {pane} Enter")).await;
        wait.wait(Duration::from_secs(20)).await.unwrap();
        let from = stream.offset();
        let mut lost_at = None;
        while let Some(chunk) = stream.next().await {
            match chunk {
                PaneChunk::Lost { at } => lost_at = Some(at),
                PaneChunk::Output { data, .. } if data.windows(11).any(|w| w == b"after-pause") => {
                    break;
                }
                _ => {}
            }
        }
        let at = lost_at.expect("the loss was not reported");
        // The log answers for the range afterwards, as the stream did.
        let losses = out.losses(from, out.end_offset());
        let found: Vec<(u64, u64, LossReason)> =
            losses.iter().map(|l| (l.from, l.to, l.reason)).collect();
        assert_eq!(found, vec![(at, at, LossReason::Paused)]);
        assert_eq!(losses[0].bytes(), None, "tmux does not say how much");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wait_for_gives_raw_offsets_and_a_series_of_waits_misses_nothing() {
    let iso = IsolatedServer::new().unwrap();
    bounded(async {
        let tmux = Tmux::connect(iso.server()).await.unwrap();
        ok(&tmux, "set-option -g remain-on-exit on").await;
        // Two matches in one write (the first with escape codes inside it),
        // then an unfinished line, finished after a second gate; the program
        // exits 4 after a third (tmux can drop what a program writes just
        // before it exits, so the exit waits until "half" was read).
        let pane = window(
            &tmux,
            "tmux-control",
            &gated(
                "one",
                &format!(
                    "printf 'x\\033[1mSP\\033[0mLIT y SPLIT z\\nhal'; {}; exit 4",
                    gated("two", &format!("printf 'f'; {}", gated("three", "true")))
                ),
            ),
        )
        .await;
        let out = tmux.follow(pane).await.unwrap();
        let from = out.end_offset();
        open_gate(&tmux, "one").await;
        let second = Duration::from_secs(20);
        let raw = |m: &tmux_control::Match| {
            let (at, bytes) = out.read_from(m.start, usize::try_from(m.end - m.start).unwrap());
            assert_eq!(at, m.start);
            bytes.to_vec()
        };
        let WaitOutcome::Matched(first) =
            out.wait_for(Pattern::literal("SPLIT"), from, second).await
        else {
            panic!("no first match")
        };
        assert_eq!(raw(&first), b"SP\x1b[0mLIT", "{first:?}");
        assert_eq!(first.before, "x");
        // Resumed at the first match's end, the second one in the same
        // write is found.
        let again = out
            .wait_for(Pattern::literal("SPLIT"), first.end, second)
            .await;
        let WaitOutcome::Matched(next) = &again else {
            panic!("{again:?}")
        };
        assert_eq!(raw(next), b"SPLIT");
        assert!(next.start > first.end);
        // A timeout resumes at the start of the unfinished line, so a match
        // that straddles it is still found.
        let quiet = Duration::from_millis(300);
        let timed = out
            .wait_for(Pattern::literal("half"), again.resume_offset(), quiet)
            .await;
        let WaitOutcome::Timeout { resume_offset, .. } = timed else {
            panic!("{timed:?}")
        };
        let (_, rest) = out.read_from(resume_offset, 3);
        assert_eq!(&rest[..], b"hal");
        open_gate(&tmux, "two").await;
        let last = out
            .wait_for(Pattern::literal("half"), resume_offset, second)
            .await;
        let WaitOutcome::Matched(half) = last else {
            panic!("{last:?}")
        };
        assert_eq!(half.text, "half");
        // Then the program's exit, with its status.
        open_gate(&tmux, "three").await;
        let exit = out
            .wait_for(Pattern::literal("never"), half.end, second)
            .await;
        let WaitOutcome::Exited {
            exit,
            resume_offset,
        } = exit
        else {
            panic!("{exit:?}")
        };
        assert_eq!(exit.status, Some(4));
        assert_eq!(resume_offset, out.end_offset());
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_waits_and_timeouts() {
    let iso = IsolatedServer::new().unwrap();
    bounded(async {
        let tmux = Tmux::connect(iso.server()).await.unwrap();
        let pane = window(
            &tmux,
            "tmux-control",
            &gated(
                "idle",
                "for i in 1 2 3 4 5; do echo $i; sleep 0.1; done; sleep 30",
            ),
        )
        .await;
        let out = tmux.follow(pane).await.unwrap();
        open_gate(&tmux, "idle").await;
        let started = std::time::Instant::now();
        out.wait_idle(Duration::from_millis(300), Duration::from_secs(20))
            .await
            .unwrap();
        assert!(
            started.elapsed() >= Duration::from_millis(700),
            "{:?}",
            started.elapsed()
        );
        let never = out.expect(Pattern::literal("never printed"));
        let err = never.wait(Duration::from_millis(200)).await.unwrap_err();
        assert!(matches!(err, WaitError::Timeout { .. }), "{err}");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_megabytes_arrive_byte_exact_while_a_slow_reader_gets_gaps() {
    let iso = IsolatedServer::new().unwrap();
    // Deterministic printable data, so the pty only adds CR before LF.
    // Written and hashed in pieces, so the test itself stays small in memory.
    let path = iso.dir().join("big.txt");
    let mut file = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    let mut expected = Hash64::default();
    let mut x: u64 = 0x9e3779b97f4a7c15;
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut written = 0usize;
    let mut line = [0u8; 77];
    while written < 200 << 20 {
        for b in &mut line[..76] {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            *b = ALPHABET[(x % 64) as usize];
        }
        line[76] = b'\n';
        std::io::Write::write_all(&mut file, &line).unwrap();
        expected.update(&through_pty(&line));
        written += line.len();
    }
    std::io::Write::flush(&mut file).unwrap();
    drop(file);
    let expected_len = expected.len;
    let expected_sum = expected.finish();

    tokio::time::timeout(Duration::from_secs(600), async {
        let tmux = Tmux::connect_with(iso.server(), ConnectOptions::default().pane_log(8 << 20))
            .await
            .unwrap();
        let pane = window(&tmux, "tmux-control", &gated("big", &format!("cat {}; sleep 60", path.display()))).await;
        let out = tmux.follow(pane).await.unwrap();
        let mut slow_events = tmux.subscribe_with_capacity(16);
        let slow_out = out.clone();
        let slow = tokio::spawn(async move {
            let mut stream = slow_out.stream();
            let mut missed = 0u64;
            let mut read = 0u64;
            while read + missed < 50 << 20 {
                match stream.next_max(4096).await {
                    Some(PaneChunk::Output { data, .. }) => read += data.len() as u64,
                    Some(PaneChunk::Missed { from, to }) => missed += to - from,
                    Some(_) => {}
                    None => break,
                }
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
            missed
        });
        open_gate(&tmux, "big").await;
        let mut stream = out.stream_from(0);
        let mut hash = Hash64::default();
        let mut total = 0usize;
        while total < expected_len {
            match stream.next().await {
                Some(PaneChunk::Output { data, .. }) => {
                    hash.update(&data);
                    total += data.len();
                }
                other => panic!("after {total} bytes: {other:?}"),
            }
        }
        assert_eq!(total, expected_len);
        assert_eq!(hash.finish(), expected_sum, "checksum differs");
        let missed = slow.await.unwrap();
        assert!(missed > 0, "the slow reader never fell behind");
        let mut gap = 0;
        while let Ok(Some(e)) = tokio::time::timeout(Duration::from_millis(100), slow_events.recv()).await {
            if let Event::Gap { missed } = e {
                gap += missed;
            }
        }
        assert!(gap > 0, "the slow event subscriber got no gap marker");
        let peak = peak_rss_kib();
        eprintln!("200 MB through one pane: peak RSS {peak} KiB, slow reader missed {missed} bytes, slow subscriber {gap} events");
        assert!(peak < 256 * 1024, "peak RSS {peak} KiB");
    })
    .await
    .expect("test timed out");
}

fn peak_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse().ok())
        .unwrap()
}

/// An order-sensitive 64-bit hash over a byte stream fed in arbitrary
/// pieces (8 bytes at a time, so it is quick even unoptimised).
#[derive(Default)]
struct Hash64 {
    state: u64,
    carry: Vec<u8>,
    len: usize,
}

impl Hash64 {
    fn update(&mut self, mut data: &[u8]) {
        self.len += data.len();
        if !self.carry.is_empty() {
            let take = (8 - self.carry.len()).min(data.len());
            self.carry.extend_from_slice(&data[..take]);
            data = &data[take..];
            if self.carry.len() == 8 {
                let word = u64::from_le_bytes(self.carry[..].try_into().unwrap());
                self.mix(word);
                self.carry.clear();
            }
        }
        let mut words = data.chunks_exact(8);
        for w in &mut words {
            self.mix(u64::from_le_bytes(w.try_into().unwrap()));
        }
        self.carry.extend_from_slice(words.remainder());
    }

    fn mix(&mut self, word: u64) {
        self.state = (self.state ^ word)
            .wrapping_mul(0x100000001b3)
            .rotate_left(29);
    }

    fn finish(mut self) -> u64 {
        let mut last = [0u8; 8];
        last[..self.carry.len()].copy_from_slice(&self.carry);
        let carry_len = self.carry.len() as u64;
        self.mix(u64::from_le_bytes(last) ^ (carry_len << 56));
        self.state ^ self.len as u64
    }
}

/// A screen line showing `word` as printed output, not as the typed command.
fn printed(lines: &[String], word: &str) -> bool {
    lines
        .iter()
        .any(|l| l.contains(word) && !l.contains("echo"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_live_screen_costs_no_round_trip_when_nothing_changed() {
    let iso = IsolatedServer::new().unwrap();
    bounded(async {
        let tmux = Tmux::connect(iso.server()).await.unwrap();
        let pane = window(&tmux, "tmux-control", "sh").await;
        let out = tmux.follow(pane).await.unwrap();
        let wait = out.expect(Pattern::literal("first-screen"));
        ok(&tmux, format!("send-keys -t {pane} -l 'echo first-screen'")).await;
        ok(&tmux, format!("send-keys -t {pane} Enter")).await;
        wait.wait(Duration::from_secs(20)).await.unwrap();
        out.wait_idle(Duration::from_millis(200), Duration::from_secs(20))
            .await
            .unwrap();
        let a = out.screen().await.unwrap();
        assert!(!a.cached);
        assert!(printed(&a.lines, "first-screen"), "{a:?}");
        let b = out.screen().await.unwrap();
        assert!(
            b.cached,
            "nothing changed, yet the screen was captured again"
        );
        assert_eq!(a.lines, b.lines);
        // New output invalidates the cache.
        let wait = out.expect(Pattern::literal("second-screen"));
        ok(
            &tmux,
            format!("send-keys -t {pane} -l 'echo second-screen'"),
        )
        .await;
        ok(&tmux, format!("send-keys -t {pane} Enter")).await;
        wait.wait(Duration::from_secs(20)).await.unwrap();
        out.wait_idle(Duration::from_millis(200), Duration::from_secs(20))
            .await
            .unwrap();
        let c = out.screen().await.unwrap();
        assert!(!c.cached);
        assert!(printed(&c.lines, "second-screen"), "{c:?}");
        // So does a resize.
        let _ = out.screen().await.unwrap();
        ok(&tmux, format!("resize-window -t {pane} -x 60 -y 20")).await;
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        loop {
            let d = out.screen().await.unwrap();
            if !d.cached {
                assert_eq!(d.lines.len(), 20);
                break;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "resize did not invalidate the screen"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
}
