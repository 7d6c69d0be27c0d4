//! The bounded log of one followed pane: a ring of its output with
//! absolute byte offsets, loss markers, its end and its state. The
//! connection task appends (as the pane's [`PaneSink`]); readers copy out
//! without ever blocking the writer for longer than a copy.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, Weak};

use bytes::Bytes;
use tokio::sync::watch;
use tokio::time::Instant;

use super::state::PaneState;
use crate::connection::PaneSink;
use crate::error::Closed;
use crate::ids::{PaneId, WindowId};

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
    /// cannot keep up should call [`PaneStream::skip_to_end`](crate::PaneStream::skip_to_end) rather than
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

/// Why part of a pane's output is not in its log: see [`Loss`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum LossReason {
    /// The bounded log dropped the bytes to make room for newer output
    /// ([`ConnectOptions::pane_log`](crate::ConnectOptions::pane_log)): they
    /// reached the log and were later evicted. The range says how many.
    Evicted,
    /// tmux discarded the pane's output before it reached the log, because
    /// the connection fell behind and flow control (`pause-after`,
    /// [`ConnectOptions::pause_after`](crate::ConnectOptions::pause_after))
    /// paused the pane. The discarded bytes never got offsets, so the range
    /// is empty (`from == to`, where output resumed) and how many bytes were
    /// lost is unknown: tmux does not say.
    Paused,
}

/// A range of a pane's output that a reader of the log cannot have: from
/// [`PaneOutput::losses`](crate::PaneOutput::losses).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Loss {
    /// First offset of the loss.
    pub from: u64,
    /// Offset after the loss (equal to `from` for [`LossReason::Paused`]).
    pub to: u64,
    /// Why the bytes are missing.
    pub reason: LossReason,
}

impl Loss {
    /// How many bytes were lost, when that is known (evicted bytes); `None`
    /// for output tmux discarded.
    pub fn bytes(&self) -> Option<u64> {
        match self.reason {
            LossReason::Evicted => Some(self.to - self.from),
            LossReason::Paused => None,
        }
    }
}

/// What a cached screen is valid for: output offset, layout generation, mode.
pub(super) type ScreenKey = (u64, u64, bool);

/// The most loss markers a log remembers.
const MAX_LOSSES: usize = 1024;

/// Decides how a log ends when the connection carrying its output closes
/// (set for a pane followed through an observer connection, whose close
/// can mean that the pane's session is gone).
pub(super) trait CloseHandler: Send + Sync {
    /// The connection carrying `log`'s output closed, for `why`.
    fn connection_closed(&self, log: Arc<PaneLog>, why: Arc<Closed>);
}

/// The shared log of one followed pane. The connection task appends; any
/// number of readers read from it without ever blocking the writer.
pub(crate) struct PaneLog {
    pane: PaneId,
    me: Weak<PaneLog>,
    /// Told instead of ending the log when its connection closes.
    on_close: OnceLock<Weak<dyn CloseHandler>>,
    inner: Mutex<LogInner>,
    /// Bumped on every change; readers wait on it.
    pub(super) changed: watch::Sender<u64>,
    /// The pane's state, for [`PaneOutput::state_changes`].
    pub(super) state_tx: watch::Sender<PaneState>,
    /// The last screen capture and what it is valid for.
    screen: Mutex<Option<(ScreenKey, Vec<String>)>>,
    /// The emulated screen, when in sync (feature `emulator`).
    #[cfg(feature = "emulator")]
    emulator: Mutex<Option<super::emulator::Emulator>>,
}

#[derive(Debug)]
pub(super) struct LogInner {
    ring: Box<[u8]>,
    pub(super) start: u64,
    pub(super) end: u64,
    losses: VecDeque<u64>,
    /// How many times tmux discarded output (every pause, also those no
    /// longer in `losses`).
    pub(super) pauses: u64,
    pub(super) ended: Option<PaneEnd>,
    pub(super) last_output: Option<Instant>,
    pub(super) state: PaneState,
}

impl PaneLog {
    pub(crate) fn new(pane: PaneId, capacity: usize, window: Option<WindowId>) -> Arc<Self> {
        let (changed, _) = watch::channel(0);
        let initial = PaneState {
            window,
            ..PaneState::default()
        };
        let (state_tx, _) = watch::channel(initial.clone());
        Arc::new_cyclic(|me| Self {
            pane,
            me: me.clone(),
            on_close: OnceLock::new(),
            inner: Mutex::new(LogInner {
                ring: vec![0; capacity.max(1024)].into_boxed_slice(),
                start: 0,
                end: 0,
                losses: VecDeque::new(),
                pauses: 0,
                ended: None,
                last_output: None,
                state: initial,
            }),
            changed,
            state_tx,
            screen: Mutex::new(None),
            #[cfg(feature = "emulator")]
            emulator: Mutex::new(None),
        })
    }

    /// Has `handler` decide how the log ends when its connection closes.
    pub(super) fn on_close(&self, handler: Weak<dyn CloseHandler>) {
        let _ = self.on_close.set(handler);
    }

    #[cfg(feature = "emulator")]
    pub(super) fn emulator(&self) -> MutexGuard<'_, Option<super::emulator::Emulator>> {
        // Poisoned only if feeding panicked; the emulator is dropped then.
        self.emulator.lock().unwrap_or_else(|e| {
            let mut g = e.into_inner();
            *g = None;
            g
        })
    }

    pub(super) fn screen_cache(&self) -> MutexGuard<'_, Option<(ScreenKey, Vec<String>)>> {
        self.screen.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(super) fn lock(&self) -> MutexGuard<'_, LogInner> {
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
        let _end = {
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
            g.end
        };
        #[cfg(feature = "emulator")]
        self.feed_if_behind(_end);
        self.bump();
    }

    pub(crate) fn mark_lost(&self) {
        #[cfg(feature = "emulator")]
        self.emulator_lost();
        {
            let mut g = self.lock();
            g.pauses += 1;
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

    /// The losses that touch `from..to`: the evicted part of the range, then
    /// every pause marker at an offset from `from` to `to` inclusive (a pause
    /// at either end may have cost bytes of the range), in offset order.
    pub(super) fn losses(&self, from: u64, to: u64) -> Vec<Loss> {
        let g = self.lock();
        let mut out = Vec::new();
        if from < g.start && from < to {
            out.push(Loss {
                from,
                to: g.start.min(to),
                reason: LossReason::Evicted,
            });
        }
        out.extend(
            g.losses
                .iter()
                .filter(|&&at| from <= at && at <= to)
                .map(|&at| Loss {
                    from: at,
                    to: at,
                    reason: LossReason::Paused,
                }),
        );
        out
    }

    /// Reads at most `max` bytes from `from`, or reports what is missing.
    /// A loss marker at `from` is reported unless the reader has seen it.
    pub(super) fn read(&self, from: u64, max: usize, loss_seen: Option<u64>) -> ReadAt {
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
    pub(super) fn copy_out(&self, from: u64, len: usize) -> Bytes {
        let cap = self.ring.len();
        let pos = (from % cap as u64) as usize;
        let first = len.min(cap - pos);
        let mut out = Vec::with_capacity(len);
        out.extend_from_slice(&self.ring[pos..pos + first]);
        out.extend_from_slice(&self.ring[..len - first]);
        Bytes::from(out)
    }
}

pub(super) enum ReadAt {
    Chunk(PaneChunk),
    Lost(u64),
    Nothing,
    Ended,
}

impl std::fmt::Debug for PaneLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PaneLog")
            .field("pane", &self.pane)
            .field("inner", &self.inner)
            .finish_non_exhaustive()
    }
}

impl PaneSink for PaneLog {
    fn output(&self, data: &[u8]) {
        self.append(data);
    }

    fn paused(&self) {
        self.mark_lost();
    }

    fn closed(&self, why: &Arc<Closed>) {
        let handler = self.on_close.get().and_then(Weak::upgrade);
        match (handler, self.me.upgrade()) {
            (Some(handler), Some(me)) => handler.connection_closed(me, why.clone()),
            _ => self.end(PaneEnd::ConnectionClosed(why.clone())),
        }
    }
}

/// Feeding the emulated screen (feature `emulator`; the emulator itself is
/// in `emulator.rs`, which knows nothing of the log).
#[cfg(feature = "emulator")]
impl PaneLog {
    /// Feeds the emulator what it has not seen; drops it (out of sync) if
    /// some of that is no longer held.
    pub(super) fn catch_up(&self, slot: &mut Option<super::emulator::Emulator>) {
        let Some(e) = slot.as_mut() else {
            return;
        };
        loop {
            let chunk = {
                let g = self.lock();
                if e.fed < g.start {
                    None
                } else if e.fed >= g.end {
                    return;
                } else {
                    let len = usize::try_from((g.end - e.fed).min(super::emulator::EAGER_BYTES))
                        .unwrap_or(0);
                    Some(g.copy_out(e.fed, len))
                }
            };
            match chunk {
                Some(data) => e.feed(&data),
                None => {
                    *slot = None;
                    return;
                }
            }
        }
    }

    /// After an append: feeds the emulator now if much is waiting.
    pub(super) fn feed_if_behind(&self, end: u64) {
        let mut slot = self.emulator();
        if slot
            .as_ref()
            .is_some_and(|e| end - e.fed.min(end) > super::emulator::EAGER_BYTES)
        {
            self.catch_up(&mut slot);
        }
    }

    /// tmux discarded output here: the emulator, fed up to this point, is
    /// out of sync from now on.
    pub(super) fn emulator_lost(&self) {
        let mut slot = self.emulator();
        self.catch_up(&mut slot);
        *slot = None;
    }

    /// tmux resized the pane: resizes the emulator after the output so
    /// far. Returns true when that left it out of sync (the pane grew, and
    /// tmux may have brought lines back from its history): it must be
    /// seeded again.
    pub(crate) fn resize_emulator(&self, cols: u32, rows: u32) -> bool {
        let mut slot = self.emulator();
        self.catch_up(&mut slot);
        let grew = slot.as_mut().is_some_and(|e| e.resize(cols, rows));
        if grew {
            *slot = None;
        }
        grew
    }

    /// The pane's program was started again at output offset `at`, which
    /// reset its screen: the emulator starts blank there.
    pub(super) fn reset_emulator_at(&self, at: u64) {
        let mut slot = self.emulator();
        if let Some(e) = slot.as_mut() {
            let (cols, rows) = e.size();
            *e = super::emulator::Emulator::blank(cols, rows, at);
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn log() -> Arc<PaneLog> {
        PaneLog::new(PaneId(1), 1024, None)
    }

    #[test]
    fn losses_name_evicted_ranges_and_pauses_in_order() {
        let log = log();
        log.append(&[b'a'; 600]);
        log.mark_lost(); // tmux discarded output at 600
        log.append(&[b'b'; 600]);
        // 1200 bytes in a 1024-byte ring: 0..176 were evicted.
        assert_eq!(log.lock().start, 176);
        log.mark_lost(); // and again at 1200
        log.mark_lost(); // the same offset is recorded once
        log.append(&[b'c'; 100]);
        assert_eq!(log.lock().start, 276);
        let evicted = Loss {
            from: 0,
            to: 276,
            reason: LossReason::Evicted,
        };
        let paused = |at| Loss {
            from: at,
            to: at,
            reason: LossReason::Paused,
        };
        assert_eq!(
            log.losses(0, 1300),
            vec![evicted, paused(600), paused(1200)]
        );
        assert_eq!(evicted.bytes(), Some(276));
        assert_eq!(paused(600).bytes(), None);
        // Only what touches the range, both ends included for pauses.
        assert_eq!(
            log.losses(100, 600),
            vec![
                Loss {
                    from: 100,
                    ..evicted
                },
                paused(600)
            ]
        );
        assert_eq!(log.losses(601, 1199), vec![]);
        assert_eq!(log.losses(1200, 1300), vec![paused(1200)]);
        assert_eq!(
            log.losses(50, 60),
            vec![Loss {
                from: 50,
                to: 60,
                ..evicted
            }]
        );
        assert_eq!(log.losses(60, 60), vec![]);
    }

    #[test]
    fn the_oldest_pause_markers_are_forgotten_beyond_the_limit() {
        let log = log();
        for _ in 0..=MAX_LOSSES {
            log.mark_lost();
            log.append(b"x");
        }
        let all = log.losses(0, u64::MAX);
        assert_eq!(
            all.len(),
            MAX_LOSSES + 1,
            "the evicted range and the pauses kept"
        );
        assert_eq!(all[0].reason, LossReason::Evicted);
        assert_eq!(all[1].from, 1, "the pause at 0 was forgotten");
    }
}
