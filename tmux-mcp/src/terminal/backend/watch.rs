//! The attention watch of one followed terminal: a task that reads the
//! pane's output stream and state as tmux pushes them and logs what needs
//! someone ([`crate::terminal::attention`]): the end of a command an agent
//! left running (`command_finished`) or of one no call waited for
//! (`prompt_returned`), a program that starts waiting for input or asks
//! for a secret, a bell, output lost, the pane's program exiting, the pane
//! going.
//!
//! Nothing here polls. The output stream wakes the task; the command
//! lines an integrated shell finished are read from its marks as they
//! arrive. Whether a running command waits for input is the kernel's
//! evidence ([`crate::terminal::probe`]), looked at only while a command
//! runs, and only when something happened: its output paused for
//! [`QUIET`] (a program prints its prompt, then reads), or its
//! foreground process exited (a pidfd says so at once; the shell then
//! reads for the next command of the line, as `sleep 1; read x` does, and
//! is looked at once it blocks: [`probe::foreground_exited`]). A program
//! that goes quiet and reads later without a process ending gives the
//! kernel nothing to push: the heartbeat ([`HEARTBEAT`]) sees it.

use std::path::PathBuf;
use std::sync::{Arc, Weak};
use std::time::Duration;

use tmux_control::command::DisplayMessage;
use tmux_control::shell::{ShellEvent, ShellPhase, ShellTracker};
use tmux_control::{PaneChunk, PaneEnd, PaneId, PaneOutput};
use tokio::time::Instant;

use crate::terminal::attention::{BellScanner, Detail, Kind};
use crate::terminal::presence;
use crate::terminal::probe::{self, Evidence};
use crate::terminal::region::{Region, TypedBy};
use crate::terminal::runs::Ended;

use super::Conn;

/// How long a running command's output must pause before the kernel is
/// asked whether it reads the terminal (a true timer: a debounce).
const QUIET: Duration = Duration::from_millis(150);

/// While a command runs silently, how often the kernel is asked again (a
/// true timer: the heartbeat for what nothing pushes; see the module docs).
const HEARTBEAT: Duration = Duration::from_secs(5);

/// How long a dead pane's exit status may follow its death before it is
/// told without one (a true timer: a grace period; tmux 3.3a sometimes
/// never reports it).
const STATUS_GRACE: Duration = Duration::from_secs(1);

/// Bells closer together than this are told as one event, with their
/// count (no timer: a comparison with the last bell event's time).
const BELL_GAP: Duration = Duration::from_secs(1);

/// Starts the attention watch of `po`'s pane on `conn`.
pub(super) fn spawn(conn: &Arc<Conn>, po: PaneOutput) {
    tokio::spawn(watch(Arc::downgrade(conn), po));
}

/// What the watch knows between wakes.
struct Watch {
    pane: PaneId,
    /// The pane's first process and terminal (a local pane, once asked).
    place: Option<Option<(u32, PathBuf)>>,
    /// The last region looked at.
    last_region: u64,
    /// A command runs (integrated shell's marks, or a run in progress).
    busy: bool,
    /// When the kernel is next asked (quiet output, heartbeat).
    look_at: Option<Instant>,
    /// The foreground process whose exit is awaited.
    foreground: Option<u32>,
    /// The last wait told: the foreground process and the output's end.
    told: Option<(Option<u32>, u64)>,
    bells: BellScanner,
    /// Bells not yet told, and when the last bell event was.
    bells_untold: u64,
    last_bell: Option<Instant>,
    /// The output offset at which a person was last told typing (once per
    /// command line: again only after a command line ended).
    typing_told: Option<u64>,
    /// The pane's program is dead; when its status is due.
    exit_due: Option<Instant>,
    exit_told: bool,
}

async fn watch(conn: Weak<Conn>, po: PaneOutput) {
    let pane = po.pane();
    let Some(first) = conn.upgrade() else {
        return;
    };
    let mut w = Watch {
        pane,
        place: None,
        last_region: first.shells.regions.list(pane).last().map_or(0, |r| r.id),
        busy: false,
        look_at: None,
        foreground: None,
        told: None,
        bells: BellScanner::default(),
        bells_untold: 0,
        last_bell: None,
        exit_due: None,
        typing_told: None,
        exit_told: po.state().dead,
    };
    drop(first);
    let mut stream = po.stream_from(po.end_offset());
    let mut states = po.state_changes();
    // The state stream ends with the output; not polled again after.
    let mut states_open = true;
    let mut exit = Box::pin(foreground_exit(None));
    loop {
        let wake = [w.look_at, w.exit_due].into_iter().flatten().min();
        tokio::select! {
            chunk = stream.next() => {
                let Some(conn) = conn.upgrade() else { return };
                match chunk {
                    None => {
                        if matches!(po.ended(), Some(PaneEnd::Gone)) {
                            conn.attend(Some(pane), Kind::PaneGone, Detail {
                                evidence: "tmux reported the pane closed".to_owned(),
                                ..Detail::default()
                            });
                        }
                        return;
                    }
                    Some(PaneChunk::Output { offset, data }) => {
                        // Calls that wait on this output were woken with
                        // this watch: they go first (the watch only logs).
                        tokio::task::yield_now().await;
                        w.output(&conn, &po, offset, &data).await;
                    }
                    // This watch fell behind the in-memory log (a flood):
                    // nothing is lost by that (the durable log says when it
                    // misses output), and the shell's marks are read from
                    // the log; go on from its end.
                    Some(PaneChunk::Missed { .. }) => {
                        let _ = stream.skip_to_end();
                        w.bells = BellScanner::default();
                    }
                    Some(PaneChunk::Lost { at }) => conn.attend(Some(pane), Kind::OutputLost, Detail {
                        offset: Some(at),
                        evidence: "tmux discarded some output while the pane was paused (flow control)".to_owned(),
                        ..Detail::default()
                    }),
                    Some(_) => {}
                }
            }
            state = states.next(), if states_open => {
                let Some(state) = state else {
                    states_open = false;
                    continue;
                };
                if state.dead && !w.exit_told {
                    if state.exit_status.is_some() {
                        w.exit_due = Some(Instant::now());
                    } else {
                        w.exit_due.get_or_insert_with(|| Instant::now() + STATUS_GRACE);
                    }
                } else if !state.dead {
                    // Respawned: its next death is news again.
                    w.exit_told = false;
                    w.exit_due = None;
                    w.place = None;
                }
            }
            () = &mut exit => {
                // The foreground process exited and the terminal settled:
                // look now.
                exit.set(foreground_exit(None));
                w.foreground = None;
                w.look_at = Some(Instant::now());
            }
            // A true timer: the next debounce, heartbeat or
            // exit-status grace (see the constants).
            () = sleep_until(wake), if wake.is_some() => {
                let Some(conn) = conn.upgrade() else { return };
                let now = Instant::now();
                if w.exit_due.is_some_and(|due| due <= now) {
                    w.exit_due = None;
                    w.exit_told = true;
                    let status = po.state().exit_status;
                    conn.attend(Some(pane), Kind::PaneExited, Detail {
                        exit_status: status,
                        evidence: "tmux reported the pane's program dead (the pane stays: remain-on-exit)".to_owned(),
                        ..Detail::default()
                    });
                }
                if w.look_at.is_some_and(|at| at <= now) {
                    w.look_at = None;
                    if let Some(awaited) = w.look(&conn, &po).await {
                        exit.set(foreground_exit(Some(awaited)));
                    }
                }
            }
        }
    }
}

async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// Completes when the foreground process exits and the terminal settles
/// (`(foreground, pane's first process, terminal)`; never for `None`).
async fn foreground_exit(awaited: Option<(u32, u32, PathBuf)>) {
    match awaited {
        Some((fg, pid, tty)) => probe::foreground_exited(fg, pid, &tty).await,
        None => std::future::pending().await,
    }
}

impl Watch {
    /// A chunk of output at `offset`.
    async fn output(&mut self, conn: &Arc<Conn>, po: &PaneOutput, offset: u64, data: &[u8]) {
        let rung = self.bells.feed(data);
        if rung > 0 {
            self.bells_untold += rung;
            let now = Instant::now();
            if self
                .last_bell
                .is_none_or(|at| now.duration_since(at) >= BELL_GAP)
            {
                self.last_bell = Some(now);
                conn.attend(
                    Some(self.pane),
                    Kind::Bell,
                    Detail {
                        count: Some(std::mem::take(&mut self.bells_untold)),
                        offset: Some(offset),
                        evidence: "BEL in the output, outside any OSC or other string".to_owned(),
                        ..Detail::default()
                    },
                );
            }
        }
        let phase = if conn.shells.has_slot(self.pane) {
            conn.shells
                .get(&conn.tmux, po)
                .await
                .map(|slot| slot.phase())
        } else {
            None
        };
        if self.regions(conn, po) {
            self.typing_told = None;
        }
        conn.wrapped_ended(po);
        self.busy = phase == Some(ShellPhase::Running) || conn.run_in_progress(self.pane);
        if phase.is_some() && !self.busy {
            self.typing(conn, offset).await;
        }
        if self.busy && !conn.remote {
            // Output: a wait told before is over, and the program may
            // be about to read.
            self.told = None;
            self.look_at = Some(Instant::now() + QUIET);
        } else {
            self.look_at = None;
        }
    }

    /// Logs the command lines the pane's integrated shell finished since
    /// the last look.
    /// Returns whether any ended.
    fn regions(&mut self, conn: &Conn, po: &PaneOutput) -> bool {
        let mut any = false;
        for region in conn.shells.regions.since(self.pane, self.last_region) {
            self.last_region = region.id;
            any = true;
            if !region.integrated || region.recovered {
                continue;
            }
            conn.region_ended(po, &region);
        }
        any
    }

    /// Output at an integrated shell's prompt that no input of this server
    /// caused, while the server has a person's client: a person may be
    /// typing. One `list-clients` says whether one is (a key from their
    /// client in the last seconds); told once per command line.
    async fn typing(&mut self, conn: &Conn, offset: u64) {
        if self.typing_told.is_some()
            || !conn.humans.any()
            || conn.last_input(self.pane).is_some_and(|at| at >= offset)
        {
            return;
        }
        let Some(window) = conn
            .journals
            .live_output(self.pane)
            .and_then(|po| po.state().window)
        else {
            return;
        };
        if let Some(client) = presence::typing_at(&conn.tmux, &conn.humans, self.pane, window).await
        {
            self.typing_told = Some(offset);
            conn.attend(
                Some(self.pane),
                Kind::PersonTyping,
                Detail {
                    client: Some(client),
                    offset: Some(offset),
                    evidence: "output at the shell's prompt that no agent typed, and a key from the person's tmux client within the last seconds".to_owned(),
                    ..Detail::default()
                },
            );
        }
    }

    /// Asks the kernel whether the running command reads the terminal, and
    /// logs it when it newly does. Returns a foreground process to await
    /// the exit of (with the pane's first process and terminal).
    async fn look(&mut self, conn: &Arc<Conn>, po: &PaneOutput) -> Option<(u32, u32, PathBuf)> {
        if !self.busy {
            return None;
        }
        // The log may hold output this watch has not read yet (the command
        // ended, its shell back at its prompt): nothing to ask then.
        if conn.shells.has_slot(self.pane) {
            let phase = conn.shells.get(&conn.tmux, po).await.map(|s| s.phase());
            if self.regions(conn, po) {
                self.typing_told = None;
            }
            if phase != Some(ShellPhase::Running) && !conn.run_in_progress(self.pane) {
                self.busy = false;
                return None;
            }
        }
        let (pid, tty) = self.place(conn).await?;
        let evidence = probe::probe(pid, &tty);
        self.look_at = Some(Instant::now() + HEARTBEAT);
        if evidence.reading_terminal == Some(true) {
            self.reading(conn, po, evidence).await;
            return None;
        }
        // Another program runs in the foreground: its exit is the next
        // moment the shell may read.
        let fg = evidence.foreground.filter(|fg| *fg != pid)?;
        if self.foreground == Some(fg) {
            return None;
        }
        self.foreground = Some(fg);
        Some((fg, pid, tty))
    }

    /// The running command reads the terminal: logs it once, unless more
    /// output is on its way or the shell is back at its prompt.
    async fn reading(&mut self, conn: &Arc<Conn>, po: &PaneOutput, evidence: Evidence) {
        // The command may have ended already, its end mark still in flight
        // through tmux: one round trip brings whatever output tmux holds.
        let before = po.end_offset();
        let _ = conn
            .tmux
            .run(DisplayMessage::format("#{pane_id}").target(self.pane))
            .await;
        if po.end_offset() != before {
            return;
        }
        if conn.shells.has_slot(self.pane)
            && conn
                .shells
                .get(&conn.tmux, po)
                .await
                .is_some_and(|s| s.phase() != ShellPhase::Running)
        {
            let _ = self.regions(conn, po);
            return;
        }
        let key = (evidence.foreground, po.end_offset());
        if self.told == Some(key) {
            return;
        }
        self.told = Some(key);
        let secret = evidence.echo == Some(false);
        conn.attend(
            Some(self.pane),
            if secret {
                Kind::AsksForSecret
            } else {
                Kind::WaitingForInput
            },
            Detail {
                program: evidence.command.clone(),
                offset: Some(po.end_offset()),
                evidence: format!(
                    "{} is blocked reading the terminal{}",
                    evidence
                        .command
                        .as_deref()
                        .unwrap_or("the foreground process"),
                    if secret { " with echo off" } else { "" }
                ),
                ..Detail::default()
            },
        );
    }

    /// The pane's first process and terminal, asked once (`None` when tmux
    /// does not say).
    async fn place(&mut self, conn: &Conn) -> Option<(u32, PathBuf)> {
        if self.place.is_none() {
            let row = conn.pane_row(self.pane).await.ok();
            self.place = Some(row.and_then(|r| r.pid.map(|pid| (pid, r.tty))));
        }
        self.place.clone().flatten()
    }
}

/// Feeds `tracker` the pane's output from where it stopped to the end;
/// the end of the command typed at `typed_at`, if it came.
fn catch_up(tracker: &mut ShellTracker, po: &PaneOutput, typed_at: u64) -> Option<Ended> {
    loop {
        let from = tracker.resume_offset();
        let (at, bytes) = po.read_from(from, 1 << 20);
        if at > from {
            // The log no longer holds those bytes.
            tracker.skip_to(at);
        }
        if bytes.is_empty() {
            return None;
        }
        for event in tracker.feed(at, &bytes) {
            if let ShellEvent::Finished(f) = event
                && f.end > typed_at
            {
                return Some(Ended {
                    output_start: f.output_start,
                    output_end: f.output_end,
                    end: f.end,
                    status: f.status,
                    pipestatus: f.pipestatus,
                });
            }
        }
    }
}

/// A region's command line as the shell echoed it (unmasked).
fn echoed(po: &PaneOutput, region: &Region) -> Option<String> {
    let (from, to) = region.input?;
    crate::text::echoed(po, from, to)
}

impl Conn {
    /// Logs an event about `pane` of this connection's host.
    pub(crate) fn attend(&self, pane: Option<PaneId>, kind: Kind, detail: Detail) {
        self.attention.push(&self.host, pane, kind, detail);
    }

    /// Whether a run is in progress in `pane` (typed, its end not seen).
    fn run_in_progress(&self, pane: PaneId) -> bool {
        self.runs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .any(|r| r.pane == pane && r.ended.is_none() && r.abandoned.is_none())
    }

    /// Reads the end marks of the wrapped runs in `po`'s pane that no call
    /// waits for (each run's own tracker, brought up to date with the
    /// pane's output): an end is kept for the call that resumes the run,
    /// and logged as `command_finished`.
    fn wrapped_ended(&self, po: &PaneOutput) {
        let pane = po.pane();
        let mut finished = Vec::new();
        {
            let mut runs = self.runs.lock().unwrap_or_else(|e| e.into_inner());
            let waiting = runs.iter_mut().filter(|(_, r)| {
                r.pane == pane
                    && r.shell.is_none()
                    && r.ended.is_none()
                    && r.abandoned.is_none()
                    && r.waiters == 0
            });
            for (id, run) in waiting {
                run.tracker.typed(run.typed_at);
                if let Some(end) = catch_up(&mut run.tracker, po, run.typed_at) {
                    finished.push((id.clone(), run.command.clone(), end.clone()));
                    run.ended = Some(end);
                }
            }
        }
        for (run_id, command, end) in finished {
            self.attend(
                Some(pane),
                Kind::CommandFinished,
                Detail {
                    run_id: Some(run_id),
                    command: Some(command),
                    exit_status: end.status,
                    offset: Some(end.end),
                    evidence: "the wrapped form's end marker arrived while no call waited for it"
                        .to_owned(),
                    ..Detail::default()
                },
            );
        }
    }

    /// An integrated shell's command line ended: the end of a run no call
    /// waits for (kept for the call that resumes it, and logged), nothing
    /// for a run a call waits for or collected, else a prompt that
    /// returned after a command line no call waited for.
    fn region_ended(&self, po: &PaneOutput, region: &Region) {
        let pane = po.pane();
        let typed_by = region.typed_by.as_ref().map(|t| match t {
            TypedBy::Actor(a) => a.to_string(),
            TypedBy::Person => "person".to_owned(),
        });
        let finished = {
            let mut runs = self.runs.lock().unwrap_or_else(|e| e.into_inner());
            let run = runs.iter_mut().find(|(_, r)| {
                r.pane == pane
                    && r.shell.is_some()
                    && r.ended.is_none()
                    && r.abandoned.is_none()
                    && r.typed_at < region.end
            });
            match run {
                Some((_, r)) if r.waiters > 0 => return,
                Some((id, r)) => {
                    r.ended = Some(Ended {
                        output_start: region.output_start,
                        output_end: region.output_end,
                        end: region.end,
                        status: region.status,
                        pipestatus: region.pipestatus.clone().unwrap_or_default(),
                    });
                    Some((id.clone(), r.command.clone()))
                }
                None => None,
            }
        };
        if finished.is_none() && self.was_collected(pane, region.output_end) {
            return;
        }
        let detail = Detail {
            exit_status: region.status,
            pipestatus: region.pipestatus.clone(),
            region: Some(region.id),
            typed_by,
            offset: Some(region.end),
            ..Detail::default()
        };
        match finished {
            Some((run_id, command)) => self.attend(
                Some(pane),
                Kind::CommandFinished,
                Detail {
                    run_id: Some(run_id),
                    command: Some(command),
                    evidence: "the shell marked the command's end while no call waited for it"
                        .to_owned(),
                    ..detail
                },
            ),
            None => self.attend(
                Some(pane),
                Kind::PromptReturned,
                Detail {
                    command: region.command.clone().or_else(|| echoed(po, region)),
                    evidence: "the shell marked a command line's end and its prompt".to_owned(),
                    ..detail
                },
            ),
        }
    }
}
