//! Following a pane's output: a bounded log with absolute byte offsets,
//! streams that resume from an offset, and push-based waits.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use bytes::Bytes;
use tokio::sync::watch;
use tokio::time::Instant;

use crate::error::Closed;
use crate::ids::{PaneId, WindowId};
use crate::text::PlainText;

/// Default size of a followed pane's output log.
pub const DEFAULT_PANE_LOG: usize = 4 << 20;
/// How long [`PaneOutput::wait_exit`] waits for the exit status of a pane
/// that tmux already reports dead.
const STATUS_GRACE: Duration = Duration::from_millis(2500);
/// The most loss markers a log remembers.
const MAX_LOSSES: usize = 1024;

/// What is known about a followed pane's state. Updated from tmux's
/// `refresh-client -B` subscriptions (evaluated by tmux about once a second)
/// and from layout and window notifications.
///
/// ```
/// use tmux_control::PaneState;
/// let s = PaneState::default();
/// assert!(!s.dead && s.exit_status.is_none());
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct PaneState {
    /// The pane's program has exited (the pane stays with `remain-on-exit`).
    pub dead: bool,
    /// The exit status of the dead pane's program, when tmux knows it.
    pub exit_status: Option<i32>,
    /// The pane no longer exists.
    pub gone: bool,
    /// The foreground command (`#{pane_current_command}`).
    pub current_command: Option<String>,
    /// The working directory (`#{pane_current_path}`).
    pub current_path: Option<String>,
    /// The title (`#{pane_title}`).
    pub title: Option<String>,
    /// The pane is in a mode such as copy mode.
    pub in_mode: bool,
    /// The alternate screen is active (a full-screen program is running).
    pub alternate_screen: bool,
    /// The window the pane was last seen in.
    pub window: Option<WindowId>,
    /// Bumped on every layout change that involves the pane (resize, zoom, move).
    pub layout_generation: u64,
}

/// Why a pane's output ended.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PaneEnd {
    /// The pane was closed (killed, or its program exited without `remain-on-exit`).
    Gone,
    /// The connection carrying its output ended.
    ConnectionClosed(Arc<Closed>),
}

/// One piece of a pane's output stream.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PaneChunk {
    /// Bytes the pane wrote, starting at absolute byte `offset`.
    Output {
        /// Offset of the first byte since following began.
        offset: u64,
        /// The bytes, exactly as the program wrote them.
        data: Bytes,
    },
    /// The reader fell behind the bounded log: bytes `from..to` were
    /// evicted before it read them. The stream continues with the oldest
    /// byte still held, which is the next to be evicted: a reader that
    /// cannot keep up should call [`PaneStream::skip_to_end`] rather than
    /// fall behind again at once.
    Missed {
        /// First missed offset.
        from: u64,
        /// Offset after the last missed byte.
        to: u64,
    },
    /// tmux discarded some of the pane's output at this offset (flow
    /// control paused the pane); how much is unknown.
    Lost {
        /// The offset at which output is missing.
        at: u64,
    },
}

/// The shared log of one followed pane. The connection task appends; any
/// number of readers read from it without ever blocking the writer.
#[derive(Debug)]
pub(crate) struct PaneLog {
    pane: PaneId,
    inner: Mutex<LogInner>,
    /// Bumped on every change; readers wait on it.
    changed: watch::Sender<u64>,
    /// The pane's state, for [`PaneOutput::state_changes`].
    state_tx: watch::Sender<PaneState>,
    /// The last screen capture and what it is valid for.
    screen: Mutex<Option<(ScreenKey, Vec<String>)>>,
}

#[derive(Debug)]
struct LogInner {
    ring: Box<[u8]>,
    start: u64,
    end: u64,
    losses: VecDeque<u64>,
    ended: Option<PaneEnd>,
    last_output: Option<Instant>,
    state: PaneState,
}

impl PaneLog {
    pub(crate) fn new(pane: PaneId, capacity: usize, window: Option<WindowId>) -> Arc<Self> {
        let (changed, _) = watch::channel(0);
        let initial = PaneState {
            window,
            ..PaneState::default()
        };
        let (state_tx, _) = watch::channel(initial.clone());
        Arc::new(Self {
            pane,
            inner: Mutex::new(LogInner {
                ring: vec![0; capacity.max(1024)].into_boxed_slice(),
                start: 0,
                end: 0,
                losses: VecDeque::new(),
                ended: None,
                last_output: None,
                state: initial,
            }),
            changed,
            state_tx,
            screen: Mutex::new(None),
        })
    }

    fn screen_cache(&self) -> MutexGuard<'_, Option<(ScreenKey, Vec<String>)>> {
        self.screen.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn lock(&self) -> MutexGuard<'_, LogInner> {
        // A poisoned lock only means a reader panicked mid-copy; the data is intact.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn bump(&self) {
        self.changed.send_modify(|n| *n = n.wrapping_add(1));
    }

    pub(crate) fn append(&self, data: &[u8]) {
        if data.is_empty() {
            return;
        }
        {
            let mut g = self.lock();
            let cap = g.ring.len();
            let src = if data.len() > cap {
                &data[data.len() - cap..]
            } else {
                data
            };
            let skipped = (data.len() - src.len()) as u64;
            let mut pos = ((g.end + skipped) % cap as u64) as usize;
            let mut rest = src;
            while !rest.is_empty() {
                let n = rest.len().min(cap - pos);
                g.ring[pos..pos + n].copy_from_slice(&rest[..n]);
                rest = &rest[n..];
                pos = (pos + n) % cap;
            }
            g.end += data.len() as u64;
            g.start = g.start.max(g.end.saturating_sub(cap as u64));
            g.last_output = Some(Instant::now());
        }
        self.bump();
    }

    pub(crate) fn mark_lost(&self) {
        {
            let mut g = self.lock();
            let at = g.end;
            if g.losses.back() != Some(&at) {
                if g.losses.len() == MAX_LOSSES {
                    g.losses.pop_front();
                }
                g.losses.push_back(at);
            }
        }
        self.bump();
    }

    pub(crate) fn end(&self, why: PaneEnd) {
        let gone = {
            let mut g = self.lock();
            if g.ended.is_some() {
                None
            } else {
                let gone = (why == PaneEnd::Gone).then(|| {
                    g.state.gone = true;
                    g.state.clone()
                });
                g.ended = Some(why);
                gone
            }
        };
        if let Some(state) = gone {
            self.state_tx.send_replace(state);
        }
        self.bump();
    }

    pub(crate) fn update_state(&self, f: impl FnOnce(&mut PaneState)) {
        let state = {
            let mut g = self.lock();
            let before = g.state.clone();
            f(&mut g.state);
            if g.state == before {
                return;
            }
            g.state.clone()
        };
        self.state_tx.send_replace(state);
        self.bump();
    }

    pub(crate) fn pane(&self) -> PaneId {
        self.pane
    }

    pub(crate) fn window(&self) -> Option<WindowId> {
        self.lock().state.window
    }

    pub(crate) fn is_ended(&self) -> bool {
        self.lock().ended.is_some()
    }

    /// Reads at most `max` bytes from `from`, or reports what is missing.
    /// A loss marker at `from` is reported unless the reader has seen it.
    fn read(&self, from: u64, max: usize, loss_seen: Option<u64>) -> ReadAt {
        let g = self.lock();
        if loss_seen != Some(from) && g.losses.contains(&from) {
            return ReadAt::Lost(from);
        }
        if from < g.start {
            return ReadAt::Chunk(PaneChunk::Missed { from, to: g.start });
        }
        if from >= g.end {
            return if g.ended.is_some() {
                ReadAt::Ended
            } else {
                ReadAt::Nothing
            };
        }
        // Stop at the next loss marker so it is reported at its offset.
        let limit = g
            .losses
            .iter()
            .find(|&&at| at > from)
            .copied()
            .unwrap_or(g.end)
            .min(g.end);
        let len = ((limit - from) as usize).min(max);
        ReadAt::Chunk(PaneChunk::Output {
            offset: from,
            data: g.copy_out(from, len),
        })
    }
}

impl LogInner {
    /// Copies `len` held bytes starting at absolute offset `from`.
    fn copy_out(&self, from: u64, len: usize) -> Bytes {
        let cap = self.ring.len();
        let pos = (from % cap as u64) as usize;
        let first = len.min(cap - pos);
        let mut out = Vec::with_capacity(len);
        out.extend_from_slice(&self.ring[pos..pos + first]);
        out.extend_from_slice(&self.ring[..len - first]);
        Bytes::from(out)
    }
}

enum ReadAt {
    Chunk(PaneChunk),
    Lost(u64),
    Nothing,
    Ended,
}

/// A handle to a followed pane: its output log, streams, waits and state.
/// Cheap to clone; the pane is followed while any handle or stream lives.
///
/// Obtain one with [`Tmux::follow`](crate::Tmux::follow).
#[derive(Debug, Clone)]
pub struct PaneOutput {
    log: Arc<PaneLog>,
    tmux: crate::Tmux,
}

/// A pane's visible screen, as `capture-pane` renders it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Screen {
    /// The lines of the screen, top to bottom, without escape sequences.
    pub lines: Vec<String>,
    /// The output offset the capture reflects (at least).
    pub offset: u64,
    /// `true` when nothing changed since the previous capture, so no tmux
    /// round trip was made.
    pub cached: bool,
}

/// What a cached screen is valid for: output offset, layout generation, mode.
type ScreenKey = (u64, u64, bool);

impl PaneOutput {
    pub(crate) fn new(log: Arc<PaneLog>, tmux: crate::Tmux) -> Self {
        Self { log, tmux }
    }

    /// The pane's visible screen. Captured over the connection
    /// (`capture-pane -p`) only when the pane wrote output, was resized or
    /// changed mode since the last capture; otherwise the cached screen is
    /// returned without a round trip.
    pub async fn screen(&self) -> crate::Result<Screen> {
        let key = {
            let g = self.log.lock();
            (g.end, g.state.layout_generation, g.state.in_mode)
        };
        if let Some((cached_key, lines)) = self.log.screen_cache().clone()
            && cached_key == key
        {
            return Ok(Screen {
                lines,
                offset: key.0,
                cached: true,
            });
        }
        let reply = self
            .tmux
            .raw_line(format!("capture-pane -p -t {}", self.log.pane))
            .await?;
        let body = crate::command::ok_body("capture-pane", reply)?;
        let lines: Vec<String> = body
            .iter()
            .map(|l| String::from_utf8_lossy(l).into_owned())
            .collect();
        *self.log.screen_cache() = Some((key, lines.clone()));
        Ok(Screen {
            lines,
            offset: key.0,
            cached: false,
        })
    }

    /// Reads the pane's state from tmux now (one `list-panes` round trip)
    /// instead of waiting for the next subscription update, which tmux
    /// sends about once a second: for example right after `respawn-pane`.
    /// The result also becomes [`PaneOutput::state`].
    pub async fn refresh_state(&self) -> crate::Result<PaneState> {
        let pane = self.log.pane;
        let rows = match self
            .tmux
            .run(crate::command::ListPanes::in_window(pane))
            .await
        {
            Ok(rows) => rows,
            Err(crate::Error::Command { message, .. }) if message.contains("can't find") => {
                self.log.end(PaneEnd::Gone);
                return Ok(self.state());
            }
            Err(e) => return Err(e),
        };
        match rows.into_iter().find(|r| r.id == pane) {
            Some(row) => {
                let text = |t: String| (!t.is_empty()).then_some(t);
                self.log.update_state(|s| {
                    s.dead = row.dead;
                    s.exit_status = if row.dead { row.dead_status } else { None };
                    s.current_command = text(row.current_command);
                    s.current_path = text(row.current_path.display().to_string());
                    s.title = text(row.title);
                    s.in_mode = row.in_mode;
                    s.alternate_screen = row.alternate_on;
                    s.window = Some(row.window);
                });
            }
            None => self.log.end(PaneEnd::Gone),
        }
        Ok(self.state())
    }

    /// The connection this pane is followed through.
    pub fn tmux(&self) -> &crate::Tmux {
        &self.tmux
    }

    /// The pane.
    pub fn pane(&self) -> PaneId {
        self.log.pane
    }

    /// Offset just after the last byte received so far.
    pub fn end_offset(&self) -> u64 {
        self.log.lock().end
    }

    /// The oldest offset still held in the bounded log.
    pub fn start_offset(&self) -> u64 {
        self.log.lock().start
    }

    /// The pane's last known state.
    pub fn state(&self) -> PaneState {
        self.log.lock().state.clone()
    }

    /// A stream of the pane's state as it changes (dead and exit status,
    /// foreground command, path, title, mode, alternate screen, window),
    /// pushed from tmux's subscriptions; see [`PaneStateChanges::next`].
    pub fn state_changes(&self) -> PaneStateChanges {
        let mut rx = self.log.state_tx.subscribe();
        rx.mark_unchanged();
        PaneStateChanges {
            rx,
            any: self.log.changed.subscribe(),
            log: self.log.clone(),
        }
    }

    /// Why the output ended, once it has.
    pub fn ended(&self) -> Option<PaneEnd> {
        self.log.lock().ended.clone()
    }

    /// The bytes held between `from` and the end (at most `max`), and the
    /// range before `from` that is no longer held, if any.
    pub fn read_from(&self, from: u64, max: usize) -> (u64, Bytes) {
        let g = self.log.lock();
        let from = from.clamp(g.start, g.end);
        let len = ((g.end - from) as usize).min(max);
        (from, g.copy_out(from, len))
    }

    /// A stream of everything from now on.
    pub fn stream(&self) -> PaneStream {
        let from = self.end_offset();
        self.stream_from(from)
    }

    /// A stream from absolute offset `from` (older bytes that were evicted
    /// are reported as [`PaneChunk::Missed`]).
    pub fn stream_from(&self, from: u64) -> PaneStream {
        PaneStream {
            log: self.log.clone(),
            rx: self.log.changed.subscribe(),
            cursor: from,
            lost_seen: None,
        }
    }

    /// Starts waiting for `pattern` in the output that arrives from now on.
    ///
    /// Create the wait *before* acting (sending keys), then await
    /// [`Expect::wait`]: nothing written in between can be missed.
    pub fn expect(&self, pattern: Pattern) -> Expect {
        Expect {
            stream: self.stream(),
            pattern,
        }
    }

    /// Like [`PaneOutput::expect`], searching from absolute offset `from`
    /// (for example a [`Match::resume_offset`] or an earlier
    /// [`PaneOutput::end_offset`]), so a series of waits misses nothing.
    pub fn expect_from(&self, pattern: Pattern, from: u64) -> Expect {
        Expect {
            stream: self.stream_from(from),
            pattern,
        }
    }

    /// Waits until the pane has written nothing for `quiet`, measured from
    /// now or from its last output, whichever is later. Fails with
    /// [`WaitError::Timeout`] after `timeout`.
    pub async fn wait_idle(&self, quiet: Duration, timeout: Duration) -> Result<(), WaitError> {
        let deadline = Instant::now() + timeout;
        let began = Instant::now();
        let mut rx = self.log.changed.subscribe();
        loop {
            let (last, ended) = {
                let g = self.log.lock();
                (g.last_output, g.ended.clone())
            };
            if let Some(end) = ended {
                return Err(WaitError::Ended(end));
            }
            let quiet_from = last.map_or(began, |l| l.max(began));
            let due = quiet_from + quiet;
            if Instant::now() >= due {
                return Ok(());
            }
            tokio::select! {
                () = tokio::time::sleep_until(due.min(deadline)) => {
                    if Instant::now() >= deadline && Instant::now() < due {
                        return Err(WaitError::Timeout { waited: timeout, tail: String::new() });
                    }
                }
                changed = rx.changed() => {
                    if changed.is_err() {
                        return Err(WaitError::Ended(PaneEnd::Gone));
                    }
                }
            }
        }
    }

    /// Waits until the pane's program has exited (`remain-on-exit` keeps the
    /// pane and its exit status) or the pane is gone.
    pub async fn wait_exit(&self, timeout: Duration) -> Result<PaneExit, WaitError> {
        let deadline = Instant::now() + timeout;
        let mut rx = self.log.changed.subscribe();
        // tmux can report a pane dead a little before its exit status (and
        // 3.3a occasionally never reports the status): give the status up
        // to STATUS_GRACE after death, then answer without it.
        let mut status_due: Option<Instant> = None;
        loop {
            let wake = {
                let g = self.log.lock();
                let exit = PaneExit {
                    status: g.state.exit_status,
                    gone: g.state.gone,
                };
                if g.state.gone || (g.state.dead && exit.status.is_some()) {
                    return Ok(exit);
                }
                if g.state.dead {
                    let due = *status_due.get_or_insert_with(|| Instant::now() + STATUS_GRACE);
                    if Instant::now() >= due.min(deadline) {
                        return Ok(exit);
                    }
                }
                if let Some(PaneEnd::ConnectionClosed(c)) = &g.ended {
                    return Err(WaitError::Ended(PaneEnd::ConnectionClosed(c.clone())));
                }
                status_due.map_or(deadline, |due| due.min(deadline))
            };
            tokio::select! {
                () = tokio::time::sleep_until(wake) => {
                    if status_due.is_none() && Instant::now() >= deadline {
                        return Err(WaitError::Timeout { waited: timeout, tail: String::new() });
                    }
                }
                changed = rx.changed() => {
                    if changed.is_err() {
                        return Err(WaitError::Ended(PaneEnd::Gone));
                    }
                }
            }
        }
    }
}

/// The changes of a pane's [`PaneState`], from
/// [`PaneOutput::state_changes`].
#[derive(Debug)]
pub struct PaneStateChanges {
    rx: watch::Receiver<PaneState>,
    /// Every change of the log, to notice the end of the output.
    any: watch::Receiver<u64>,
    log: Arc<PaneLog>,
}

impl PaneStateChanges {
    /// Waits for the next change and returns the new state. Several changes
    /// that happen before a call are seen as one (the latest). Returns
    /// `None` once the pane's output has ended (the pane is gone, reported
    /// first as a state with `gone`, or the connection closed).
    pub async fn next(&mut self) -> Option<PaneState> {
        loop {
            if self.rx.has_changed().unwrap_or(false) {
                return Some(self.rx.borrow_and_update().clone());
            }
            self.any.borrow_and_update();
            if self.log.is_ended() {
                return None;
            }
            tokio::select! {
                // `changed` marks the new value seen: return it now.
                r = self.rx.changed() => {
                    r.ok()?;
                    return Some(self.rx.borrow_and_update().clone());
                }
                r = self.any.changed() => r.ok()?,
            }
        }
    }
}

/// How a pane's program ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct PaneExit {
    /// The exit status, when tmux reported it. The pane must be kept with
    /// `remain-on-exit` for tmux to know it, and tmux 3.3a occasionally
    /// never reports it; the wait gives it a short grace period after death.
    pub status: Option<i32>,
    /// The pane itself is gone (it was not kept after its program exited).
    pub gone: bool,
}

/// A pane's output as a stream of [`PaneChunk`]s from an offset.
#[derive(Debug)]
pub struct PaneStream {
    log: Arc<PaneLog>,
    rx: watch::Receiver<u64>,
    cursor: u64,
    lost_seen: Option<u64>,
}

impl PaneStream {
    /// The offset of the next byte this stream will return.
    pub fn offset(&self) -> u64 {
        self.cursor
    }

    /// Moves the stream to the newest output, skipping everything not yet
    /// read (for a reader that fell behind and wants the live end). Returns
    /// the skipped range as a [`PaneChunk::Missed`], or `None` if nothing
    /// was skipped.
    pub fn skip_to_end(&mut self) -> Option<PaneChunk> {
        let end = self.log.lock().end;
        if end <= self.cursor {
            return None;
        }
        let skipped = PaneChunk::Missed {
            from: self.cursor,
            to: end,
        };
        self.cursor = end;
        Some(skipped)
    }

    /// The next chunk (at most 64 KiB); `None` once the pane's output has
    /// ended and everything was read.
    pub async fn next(&mut self) -> Option<PaneChunk> {
        self.next_max(64 * 1024).await
    }

    /// Like [`PaneStream::next`] with a size cap per chunk.
    pub async fn next_max(&mut self, max: usize) -> Option<PaneChunk> {
        loop {
            // Mark the current version seen before reading, so a change
            // that lands after the read wakes us.
            self.rx.borrow_and_update();
            match self.log.read(self.cursor, max.max(1), self.lost_seen) {
                ReadAt::Lost(at) => {
                    self.lost_seen = Some(at);
                    return Some(PaneChunk::Lost { at });
                }
                ReadAt::Chunk(chunk) => {
                    self.cursor = match &chunk {
                        PaneChunk::Output { offset, data } => offset + data.len() as u64,
                        PaneChunk::Missed { to, .. } => *to,
                        PaneChunk::Lost { at } => *at,
                    };
                    return Some(chunk);
                }
                ReadAt::Ended => return None,
                ReadAt::Nothing => {}
            }
            if self.rx.changed().await.is_err() {
                return None;
            }
        }
    }
}

/// What to wait for in a pane's output.
///
/// ```
/// use tmux_control::Pattern;
/// assert!(Pattern::literal("a.b").is_ok());
/// assert!(Pattern::regex("(unclosed").is_err());
/// ```
#[derive(Debug, Clone)]
pub struct Pattern {
    regex: regex::bytes::Regex,
    raw: bool,
}

impl Pattern {
    /// Matches `text` literally.
    pub fn literal(text: &str) -> Result<Self, crate::Error> {
        Self::regex(&regex::escape(text))
    }

    /// Matches a regular expression (Rust `regex` syntax; `(?m)` for `^`/`$` per line).
    pub fn regex(pattern: &str) -> Result<Self, crate::Error> {
        let regex = regex::bytes::Regex::new(pattern)
            .map_err(|e| crate::Error::InvalidArgument(format!("bad pattern: {e}")))?;
        Ok(Self { regex, raw: false })
    }

    /// Match against the raw bytes, escape sequences included (default:
    /// plain text with escape sequences and carriage returns removed).
    pub fn raw(mut self) -> Self {
        self.raw = true;
        self
    }
}

/// A match found by [`Expect::wait`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Match {
    /// The matched text (plain text unless the pattern is raw).
    pub text: String,
    /// Up to 512 bytes of text before the match.
    pub before: String,
    /// Text after the match that had arrived with it.
    pub after: String,
    /// Offset of the match's start in the text searched since the wait began.
    pub text_offset: u64,
    /// Raw stream offset just after the output chunk that completed the
    /// match: everything from here on was not yet looked at.
    pub resume_offset: u64,
}

/// Why a wait ended without a match.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum WaitError {
    /// The deadline passed.
    #[error("no match within {waited:?}; last output: {tail:?}")]
    Timeout {
        /// How long the wait lasted.
        waited: Duration,
        /// The last few hundred bytes of text seen.
        tail: String,
    },
    /// The pane's output ended first.
    #[error("the pane's output ended: {0:?}")]
    Ended(PaneEnd),
}

/// A wait registered with [`PaneOutput::expect`].
#[derive(Debug)]
pub struct Expect {
    stream: PaneStream,
    pattern: Pattern,
}

/// How far back (in text bytes) a new chunk's search starts, so that a
/// match split across chunks is found.
const LOOKBACK: usize = 4096;
/// The most text a wait keeps for searching and context.
const WINDOW: usize = 256 * 1024;

impl Expect {
    /// The raw offset from which this wait looks.
    pub fn offset(&self) -> u64 {
        self.stream.offset()
    }

    /// Waits for the pattern, at most `timeout`. Cancel-safe: dropping the
    /// future abandons the wait and nothing else.
    pub async fn wait(mut self, timeout: Duration) -> Result<Match, WaitError> {
        let deadline = Instant::now() + timeout;
        let mut plain = PlainText::new();
        let mut text: Vec<u8> = Vec::new();
        // Text offset of text[0] since the wait began.
        let mut dropped: u64 = 0;
        let mut searched_to = 0usize;
        loop {
            let chunk = tokio::select! {
                c = self.stream.next() => c,
                () = tokio::time::sleep_until(deadline) => {
                    return Err(WaitError::Timeout { waited: timeout, tail: tail(&text) });
                }
            };
            let Some(chunk) = chunk else {
                let end = self
                    .stream
                    .log
                    .lock()
                    .ended
                    .clone()
                    .unwrap_or(PaneEnd::Gone);
                return Err(WaitError::Ended(end));
            };
            let PaneChunk::Output { data, .. } = chunk else {
                continue;
            };
            let before_len = text.len();
            if self.pattern.raw {
                text.extend_from_slice(&data);
            } else {
                plain.feed(&data, &mut text);
            }
            // Search from a little before the new text (or the start of its line).
            let line_start = text[..before_len]
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |p| p + 1);
            let from = line_start
                .max(before_len.saturating_sub(LOOKBACK))
                .min(searched_to.max(before_len.saturating_sub(LOOKBACK)));
            if let Some(m) = self.pattern.regex.find_at(&text, from) {
                let ctx_start = m.start().saturating_sub(512);
                return Ok(Match {
                    text: String::from_utf8_lossy(m.as_bytes()).into_owned(),
                    before: String::from_utf8_lossy(&text[ctx_start..m.start()]).into_owned(),
                    after: String::from_utf8_lossy(&text[m.end()..]).into_owned(),
                    text_offset: dropped + m.start() as u64,
                    resume_offset: self.stream.offset(),
                });
            }
            searched_to = text.len();
            if text.len() > WINDOW {
                let cut = text.len() - WINDOW / 2;
                text.drain(..cut);
                dropped += cut as u64;
                searched_to -= cut;
            }
        }
    }
}

fn tail(text: &[u8]) -> String {
    String::from_utf8_lossy(&text[text.len().saturating_sub(400)..]).into_owned()
}
