//! Following panes: the api layer over the connection's pane routes, and
//! the public handle [`Tmux`].
//!
//! [`Tmux`] is defined here, not in the connection layer: it is a thin
//! client over the crate-private `connection::Connection` (as
//! tokio-postgres' `Client` is over its private connection) that also
//! holds this layer's own state for the connection, the follower, as a
//! typed field made at connect time. The connection layer so keeps no
//! state of a layer above it and imports nothing from here, and the
//! internals below (observers, the callbacks of the follower) use the
//! private connection handle.
//!
//! - `handle`: [`Tmux`], connecting, and the connection-level methods,
//!   which delegate to the connection.
//! - `follow`: [`Tmux::follow`](crate::Tmux::follow), the per-connection
//!   follower (observer clients for other sessions, the state
//!   subscriptions, the watcher that applies notifications to pane state).
//! - `log`: the bounded output log of one pane, the connection's sink.
//! - `stream`: [`PaneStream`], reading the log from any offset.
//! - `expect`: [`Pattern`] and [`Expect`], push-based waits.
//! - `state`: [`PaneState`] and its changes.
//! - `screen`: [`Screen`], the visible screen, as tmux captures it.
//! - `emulator` (feature `emulator`): `EmulatedScreen`, the visible screen
//!   from an emulator fed with the pane's output.
//! - `spawn`: [`Tmux::spawn`](crate::Tmux::spawn), a program started in a
//!   new pane already followed.
//! - `resolve`: [`Tmux::resolve`](crate::Tmux::resolve), a target to ids.
//! - `marks`: OSC 133 and OSC 7 marks found in the output.
//! - `shell`: shell integration hooks for bash, zsh and fish, and
//!   [`ShellTracker`](crate::shell::ShellTracker), which reads a command's end and statuses back from
//!   the marks.
//!
//! Everything here talks to tmux through typed commands on a [`Tmux`]
//! handle or, inside, on its connection.

#[cfg(feature = "emulator")]
mod emulated;
#[cfg(feature = "emulator")]
mod emulator;
mod expect;
mod follow;
mod handle;
mod input;
mod log;
mod marks;
mod resolve;
mod screen;
pub mod shell;
mod spawn;
mod state;
mod stream;

use std::sync::Arc;
use std::time::Duration;

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures_core::Stream;
use tokio::time::Instant;
use tokio_stream::wrappers::WatchStream;

#[cfg(feature = "emulator")]
pub use emulator::EmulatedScreen;
pub use expect::{Expect, Match, Pattern, WaitError, WaitOutcome};
pub use handle::Tmux;
pub use input::Typed;
pub use log::{Loss, LossReason, PaneChunk, PaneEnd};
pub use resolve::Resolved;
pub use screen::Screen;
pub use spawn::Spawned;
pub use state::{PaneExit, PaneState};
pub use stream::PaneStream;

use crate::ids::PaneId;
use log::PaneLog;
use marks::Marks;

/// How long [`PaneOutput::wait_exit`] waits for the exit status of a pane
/// that tmux already reports dead (a true timer: a grace period).
const STATUS_GRACE: Duration = Duration::from_millis(2500);

/// A handle to a followed pane: its output log, streams, waits and state.
/// Cheap to clone; the pane is followed while any handle or stream lives.
///
/// Obtain one with [`Tmux::follow`](crate::Tmux::follow).
#[derive(Debug, Clone)]
pub struct PaneOutput {
    log: Arc<PaneLog>,
    tmux: Tmux,
}

impl PaneOutput {
    pub(crate) fn new(log: Arc<PaneLog>, tmux: Tmux) -> Self {
        Self { log, tmux }
    }

    /// Reads the pane's state from tmux now (one `list-panes` round trip)
    /// instead of waiting for the next subscription update, which tmux
    /// sends about once a second: for example right after `respawn-pane`.
    /// The result also becomes [`PaneOutput::state`].
    pub async fn refresh_state(&self) -> crate::error::Result<PaneState> {
        let pane = self.log.pane();
        let rows = match self
            .tmux
            .run(crate::command::ListPanes::in_window(pane))
            .await
        {
            Ok(rows) => rows,
            Err(e) if e.kind() == crate::error::ErrorKind::NotFound => {
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
    pub fn tmux(&self) -> &Tmux {
        &self.tmux
    }

    /// The pane.
    pub fn pane(&self) -> PaneId {
        self.log.pane()
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
        PaneStateChanges {
            states: WatchStream::from_changes(self.log.state_tx.subscribe()),
            any: WatchStream::from_changes(self.log.changed.subscribe()),
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

    /// What of the output range `from..to` the log cannot give back, and
    /// why: the part evicted from the bounded log (a range, so how many
    /// bytes is known), then each point where tmux discarded output because
    /// flow control paused the pane (how much is unknown; tmux does not
    /// say), in offset order. A pause exactly at `from` or `to` is included.
    /// Streams report the same losses as they pass them
    /// ([`PaneChunk::Missed`], [`PaneChunk::Lost`]); this answers for any
    /// range afterwards, for a reply about it. The log remembers the last
    /// 1024 pauses.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use tmux_control::command::NewWindow;
    /// use tmux_control::{IsolatedServer, Pattern, Tmux};
    /// let server = IsolatedServer::new()?;
    /// let tmux = Tmux::connect(server.server()).await?;
    /// let started = tmux.spawn(NewWindow::new().command("echo hello; exec sleep 60")).await?;
    /// let out = &started.output;
    /// out.expect_from(Pattern::literal("hello"), started.start)
    ///     .wait(std::time::Duration::from_secs(10))
    ///     .await?;
    /// // Nothing evicted, nothing discarded.
    /// assert!(out.losses(started.start, out.end_offset()).is_empty());
    /// # Ok(()) }
    /// ```
    pub fn losses(&self, from: u64, to: u64) -> Vec<Loss> {
        self.log.losses(from, to)
    }

    /// A stream of everything from now on.
    pub fn stream(&self) -> PaneStream {
        let from = self.end_offset();
        self.stream_from(from)
    }

    /// A stream from absolute offset `from` (older bytes that were evicted
    /// are reported as [`PaneChunk::Missed`]).
    pub fn stream_from(&self, from: u64) -> PaneStream {
        PaneStream::new(self.log.clone(), from)
    }

    /// The shell integration marks (OSC 133 and OSC 7) in the output from
    /// offset `from` on, as they arrive.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use tmux_control::command::NewWindow;
    /// use tmux_control::{IsolatedServer, Tmux};
    /// use tmux_control::shell::ShellMark;
    /// let server = IsolatedServer::new()?;
    /// let tmux = Tmux::connect(server.server()).await?;
    /// let started = tmux
    ///     .spawn(NewWindow::new().command(r"printf '\033]133;D;7\007'; exec sleep 60"))
    ///     .await?;
    /// let mark = started.output.marks_from(started.start).next().await.expect("a mark");
    /// assert_eq!(mark.mark, ShellMark::CommandEnd { status: Some(7), params: vec![] });
    /// # Ok(()) }
    /// ```
    pub fn marks_from(&self, from: u64) -> Marks {
        Marks::new(self.stream_from(from))
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
    /// (for example a [`Match::end`] or an earlier
    /// [`PaneOutput::end_offset`]), so a series of waits misses nothing.
    pub fn expect_from(&self, pattern: Pattern, from: u64) -> Expect {
        Expect {
            stream: self.stream_from(from),
            pattern,
        }
    }

    /// Waits, at most `timeout`, for `pattern` in the output from absolute
    /// offset `from`, for the pane's program to exit, or for the pane to
    /// end, whichever comes first: the wait every client of a pane wants,
    /// with one [`WaitOutcome`] that says where to resume. Output that
    /// reached the log before the exit was seen is searched first, so a
    /// program that prints its answer and exits is
    /// [`WaitOutcome::Matched`] (though tmux itself can drop the last bytes
    /// a program writes as it exits: it closes the pane's terminal when it
    /// reaps the program, without reading what is left). A dead state is
    /// read again from tmux before the wait (it can be stale right after
    /// `respawn-pane`). Cancel-safe.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use std::time::Duration;
    /// use tmux_control::command::{NewPane, NewWindow};
    /// use tmux_control::{IsolatedServer, Pattern, Tmux, WaitOutcome};
    /// let server = IsolatedServer::new()?;
    /// let tmux = Tmux::connect(server.server()).await?;
    /// // (The pause keeps the output clear of the exit: see above.)
    /// let what = NewPane::from(NewWindow::new().command("echo one two; sleep 0.3; exit 3"));
    /// let started = tmux.spawn(what.remain_on_exit()).await?;
    /// let pane = &started.output;
    /// let second = Duration::from_secs(10);
    /// let WaitOutcome::Matched(m) = pane.wait_for(Pattern::regex("o")?, started.start, second).await
    /// else { panic!("no match") };
    /// assert_eq!(m.before, "");
    /// // Resuming at the match's end finds the next one, then the exit.
    /// let again = pane.wait_for(Pattern::literal("two"), m.end, second).await;
    /// assert!(matches!(again, WaitOutcome::Matched(_)));
    /// let last = pane.wait_for(Pattern::literal("three"), again.resume_offset(), second).await;
    /// let WaitOutcome::Exited { exit, .. } = last else { panic!("{last:?}") };
    /// assert_eq!(exit.status, Some(3));
    /// # Ok(()) }
    /// ```
    pub async fn wait_for(&self, pattern: Pattern, from: u64, timeout: Duration) -> WaitOutcome {
        let deadline = Instant::now() + timeout;
        if self.state().dead {
            // Best effort: if tmux cannot answer, the followed state stands.
            let _ = self.refresh_state().await;
        }
        let (mut stream, pattern) = self.expect_from(pattern, from).into_parts();
        let mut search = expect::Search::new(stream.offset());
        let exit = self.wait_exit(timeout);
        tokio::pin!(exit);
        loop {
            tokio::select! {
                biased;
                chunk = stream.next() => match search.chunk(&pattern, chunk, &stream) {
                    expect::Step::More => {}
                    expect::Step::Found(m) => return WaitOutcome::Matched(*m),
                    expect::Step::Ended(end) => {
                        return WaitOutcome::Ended { end, resume_offset: stream.offset() };
                    }
                },
                exit = &mut exit => {
                    let resume_offset = self.end_offset();
                    return match exit {
                        Ok(exit) if exit.gone => {
                            WaitOutcome::Ended { end: PaneEnd::Gone, resume_offset }
                        }
                        Ok(exit) => WaitOutcome::Exited { exit, resume_offset },
                        Err(WaitError::Ended(end)) => WaitOutcome::Ended { end, resume_offset },
                        Err(WaitError::Timeout { .. }) => break,
                    };
                }
                // A true timer: the caller's deadline (the exit wait's own
                // deadline is the same one).
                () = tokio::time::sleep_until(deadline) => break,
            }
        }
        WaitOutcome::Timeout {
            waited: timeout,
            tail: search.tail(),
            resume_offset: search.resume_offset(&stream),
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
/// [`PaneOutput::state_changes`]: a [`Stream`] of states, or
/// [`PaneStateChanges::next`] without an extension trait.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use tokio_stream::StreamExt as _;
/// use tmux_control::command::{NewPane, NewWindow};
/// use tmux_control::{IsolatedServer, Tmux};
/// let server = IsolatedServer::new()?;
/// let tmux = Tmux::connect(server.server()).await?;
/// let what = NewPane::from(NewWindow::new().command("exec sleep 1")).remain_on_exit();
/// let started = tmux.spawn(what).await?;
/// // The first state in which the program has exited, pushed by tmux.
/// let mut changes = started.output.state_changes().filter(|s| s.dead);
/// let dead = changes.next().await.expect("the pane's state ends dead");
/// assert!(dead.dead);
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct PaneStateChanges {
    /// Yields the latest state after each change.
    states: WatchStream<PaneState>,
    /// Every change of the log, to notice the end of the output.
    any: WatchStream<u64>,
    log: Arc<PaneLog>,
}

impl PaneStateChanges {
    /// Waits for the next change and returns the new state. Several changes
    /// that happen before a call are seen as one (the latest). Returns
    /// `None` once the pane's output has ended (the pane is gone, reported
    /// first as a state with `gone`, or the connection closed).
    pub async fn next(&mut self) -> Option<PaneState> {
        std::future::poll_fn(|cx| self.poll_change(cx)).await
    }

    fn poll_change(&mut self, cx: &mut Context<'_>) -> Poll<Option<PaneState>> {
        loop {
            if let Poll::Ready(state) = Pin::new(&mut self.states).poll_next(cx) {
                return Poll::Ready(state);
            }
            if self.log.is_ended() {
                return Poll::Ready(None);
            }
            match Pin::new(&mut self.any).poll_next(cx) {
                Poll::Ready(Some(_)) => {}
                Poll::Ready(None) => return Poll::Ready(None),
                Poll::Pending => return Poll::Pending,
            }
        }
    }
}

impl Stream for PaneStateChanges {
    type Item = PaneState;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<PaneState>> {
        self.get_mut().poll_change(cx)
    }
}
