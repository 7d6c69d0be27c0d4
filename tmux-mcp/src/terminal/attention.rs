//! Attention events: one log per tmux-mcp process of the moments a
//! terminal needs someone (a command left running finished, a program
//! waits for input or asks for a secret, the prompt returned, a bell, a
//! pane exited or vanished, a person attached, detached or started
//! typing, output was lost), fed only by pushed sources (each pane's
//! output stream and state, tmux's client notifications) and read by
//! cursor.
//!
//! The log is a bounded ring ([`Attention`]): each event gets the next
//! sequence number, the oldest go when it is full, and a reader passes
//! the number of the last event it saw. Writers never wait for readers
//! (a push takes one short lock and bumps a [`tokio::sync::watch`]
//! value); a reader that fell behind the ring is told so (`truncated`)
//! and goes on from the oldest event still held. A cursor names the
//! process it came from, so a cursor from an earlier run of tmux-mcp
//! (whose events are gone) reads as truncated, never as some other
//! event.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use schemars::JsonSchema;
use serde::Serialize;
use tmux_control::PaneId;

use crate::terminal::lock::lock;

/// What happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Kind {
    /// A command an agent left running (its `run` returned `running`)
    /// finished while no call waited for it.
    CommandFinished,
    /// The program in a terminal is blocked reading it (a prompt, `read`).
    WaitingForInput,
    /// A program other than the shell's line editor reads the terminal
    /// with echo off: a password or other secret is asked for.
    AsksForSecret,
    /// A command line that no call waited for ended and the shell's
    /// prompt is back (typed by a person, or by `send_text`).
    PromptReturned,
    /// The program rang the bell (BEL outside an OSC or other string).
    Bell,
    /// The pane's program exited; the pane stays (`remain-on-exit`).
    PaneExited,
    /// The pane is gone.
    PaneGone,
    /// A person's tmux client attached to a session (or switched to it).
    PersonAttached,
    /// A person's tmux client detached (or left the session).
    PersonDetached,
    /// A person started typing into a terminal.
    PersonTyping,
    /// Part of a terminal's output was lost (tmux discarded it, or the
    /// in-memory log evicted it before the durable log had it).
    OutputLost,
    /// A person took a terminal's input over in the web view.
    PersonTookOver,
    /// A person handed a terminal's input back.
    PersonHandedBack,
    /// An agent asked for a person (`request_human`).
    HumanRequested,
}

impl Kind {
    /// Every kind, in the order the docs list them.
    pub(crate) const ALL: [Kind; 14] = [
        Kind::CommandFinished,
        Kind::WaitingForInput,
        Kind::AsksForSecret,
        Kind::PromptReturned,
        Kind::Bell,
        Kind::PaneExited,
        Kind::PaneGone,
        Kind::PersonAttached,
        Kind::PersonDetached,
        Kind::PersonTyping,
        Kind::OutputLost,
        Kind::PersonTookOver,
        Kind::PersonHandedBack,
        Kind::HumanRequested,
    ];

    /// The kind's name, as in the tools' arguments and replies.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Kind::CommandFinished => "command_finished",
            Kind::WaitingForInput => "waiting_for_input",
            Kind::AsksForSecret => "asks_for_secret",
            Kind::PromptReturned => "prompt_returned",
            Kind::Bell => "bell",
            Kind::PaneExited => "pane_exited",
            Kind::PaneGone => "pane_gone",
            Kind::PersonAttached => "person_attached",
            Kind::PersonDetached => "person_detached",
            Kind::PersonTyping => "person_typing",
            Kind::OutputLost => "output_lost",
            Kind::PersonTookOver => "person_took_over",
            Kind::PersonHandedBack => "person_handed_back",
            Kind::HumanRequested => "human_requested",
        }
    }

    /// The kind named `name`.
    pub(crate) fn parse(name: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// Whether a person at the terminal is told of it too (a message on
    /// their tmux client): what needs someone, not what they did.
    pub(crate) fn for_people(self) -> bool {
        matches!(
            self,
            Kind::CommandFinished
                | Kind::WaitingForInput
                | Kind::AsksForSecret
                | Kind::PaneExited
                | Kind::OutputLost
                | Kind::HumanRequested
        )
    }
}

/// What an event says beyond its kind and terminal: each field is set by
/// the kinds it belongs to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Detail {
    /// The run (`command_finished`).
    pub(crate) run_id: Option<String>,
    /// The command line as given or echoed (unmasked: masked when shown).
    pub(crate) command: Option<String>,
    /// Its exit status, or the pane's program's.
    pub(crate) exit_status: Option<i32>,
    /// The statuses of its pipeline.
    pub(crate) pipestatus: Option<Vec<i32>>,
    /// The region it is recorded as.
    pub(crate) region: Option<u64>,
    /// Who typed it: an actor's name, or `person`.
    pub(crate) typed_by: Option<String>,
    /// The person's tmux client.
    pub(crate) client: Option<String>,
    /// The session a client attached to.
    pub(crate) session: Option<String>,
    /// The foreground program (`waiting_for_input`, `asks_for_secret`).
    pub(crate) program: Option<String>,
    /// How many (bells since the last bell event).
    pub(crate) count: Option<u64>,
    /// The output offset it happened at.
    pub(crate) offset: Option<u64>,
    /// Why an agent asks for a person (`human_requested`).
    pub(crate) reason: Option<String>,
    /// How it was told: the evidence, in a few words.
    pub(crate) evidence: String,
}

/// One event in the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Event {
    /// Its sequence number (1 for the first of this process).
    pub(crate) seq: u64,
    /// When it was logged, in milliseconds since the epoch.
    pub(crate) at_ms: u64,
    /// The host whose terminal it is about (`local`, or a remote host).
    pub(crate) host: Arc<str>,
    /// The terminal, when it is about one.
    pub(crate) pane: Option<PaneId>,
    /// What happened.
    pub(crate) kind: Kind,
    /// The rest.
    pub(crate) detail: Detail,
}

/// What [`Attention::read`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Read {
    /// The events after the cursor that the filter kept, oldest first.
    pub(crate) events: Vec<Event>,
    /// The cursor to read on from: the last event looked at (kept or not).
    pub(crate) next: u64,
    /// Events after the cursor were dropped from the log before this read.
    pub(crate) truncated: bool,
    /// More events after `next` (the read stopped at its bound).
    pub(crate) more: bool,
}

/// The attention log of one tmux-mcp process (see the module docs).
#[derive(Debug)]
pub(crate) struct Attention {
    ring: Mutex<VecDeque<Event>>,
    capacity: usize,
    /// The last sequence number given (0: none yet).
    last: tokio::sync::watch::Sender<u64>,
    /// This process's mark in its cursors.
    boot: String,
}

/// The cursor's separator between the process's mark and the number.
const SEP: char = '-';

impl Attention {
    /// A log that keeps the last `capacity` events (at least one).
    pub(crate) fn new(capacity: usize) -> Arc<Self> {
        let started = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis());
        Arc::new(Self {
            ring: Mutex::new(VecDeque::new()),
            capacity: capacity.max(1),
            last: tokio::sync::watch::Sender::new(0),
            boot: format!("{:x}{:x}", started, std::process::id()),
        })
    }

    /// Logs an event about `pane` on `host`; returns its number.
    pub(crate) fn push(
        &self,
        host: &Arc<str>,
        pane: Option<PaneId>,
        kind: Kind,
        detail: Detail,
    ) -> u64 {
        let at_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        let mut ring = lock(&self.ring);
        let seq = ring.back().map_or(*self.last.borrow(), |e| e.seq) + 1;
        if ring.len() == self.capacity {
            ring.pop_front();
        }
        ring.push_back(Event {
            seq,
            at_ms,
            host: host.clone(),
            pane,
            kind,
            detail,
        });
        drop(ring);
        tracing::debug!(seq, kind = kind.name(), ?pane, "attention");
        self.last.send_replace(seq);
        seq
    }

    /// The number of the last event logged (0: none yet).
    pub(crate) fn last(&self) -> u64 {
        *self.last.borrow()
    }

    /// Changes each time an event is logged (the value: its number).
    pub(crate) fn subscribe(&self) -> tokio::sync::watch::Receiver<u64> {
        self.last.subscribe()
    }

    /// At most `max` events after number `after` that `keep` accepts.
    pub(crate) fn read(&self, after: u64, max: usize, keep: impl Fn(&Event) -> bool) -> Read {
        let ring = lock(&self.ring);
        let oldest = ring.front().map_or(self.last() + 1, |e| e.seq);
        let mut read = Read {
            truncated: after + 1 < oldest,
            next: after,
            ..Read::default()
        };
        for event in ring.iter().filter(|e| e.seq > after) {
            if read.events.len() == max {
                read.more = true;
                break;
            }
            read.next = event.seq;
            if keep(event) {
                read.events.push(event.clone());
            }
        }
        read
    }

    /// Waits until an event after number `after` is logged (at once when
    /// there is one).
    pub(crate) async fn wait_after(&self, after: u64) {
        let mut rx = self.subscribe();
        let _ = rx.wait_for(|last| *last > after).await;
    }

    /// The cursor that stands for number `seq`.
    pub(crate) fn cursor(&self, seq: u64) -> String {
        format!("{}{SEP}{seq}", self.boot)
    }

    /// The number a cursor stands for. A cursor of an earlier tmux-mcp
    /// process reads as 0 and `true` (everything since it is gone); one
    /// that is not a cursor is an error.
    pub(crate) fn parse_cursor(&self, cursor: &str) -> Result<(u64, bool), String> {
        let (boot, seq) = cursor
            .rsplit_once(SEP)
            .and_then(|(b, s)| Some((b, s.parse::<u64>().ok()?)))
            .ok_or_else(|| format!("{cursor:?} is not an attention cursor (one from an event or a reply's \"cursor\")"))?;
        if boot != self.boot {
            return Ok((0, true));
        }
        Ok((seq.min(self.last()), false))
    }
}

/// Finds bells in a pane's output: BEL (0x07) outside OSC, DCS, SOS, PM
/// and APC strings (where BEL or ST ends the string and is no bell). The
/// state carries over from one chunk to the next.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct BellScanner {
    state: Scan,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum Scan {
    #[default]
    Ground,
    /// After ESC.
    Escape,
    /// Inside a string.
    Text,
    /// After ESC inside a string (`\` ends it).
    TextEscape,
}

impl BellScanner {
    /// How many bells `data` rings.
    pub(crate) fn feed(&mut self, data: &[u8]) -> u64 {
        let mut bells = 0;
        for &b in data {
            self.state = match (self.state, b) {
                (Scan::Ground, 0x07) => {
                    bells += 1;
                    Scan::Ground
                }
                (Scan::Ground, 0x1b) => Scan::Escape,
                (Scan::Ground, _) => Scan::Ground,
                // OSC, DCS, SOS, PM, APC open a string.
                (Scan::Escape, b']' | b'P' | b'X' | b'^' | b'_') => Scan::Text,
                (Scan::Escape, 0x1b) => Scan::Escape,
                (Scan::Escape, 0x07) => {
                    bells += 1;
                    Scan::Ground
                }
                (Scan::Escape, _) => Scan::Ground,
                // BEL ends the string; CAN and SUB abort it.
                (Scan::Text, 0x07 | 0x18 | 0x1a) => Scan::Ground,
                (Scan::Text, 0x1b) => Scan::TextEscape,
                (Scan::Text, _) => Scan::Text,
                // ST ends it; any other escape aborts it and starts anew.
                (Scan::TextEscape, b'\\') => Scan::Ground,
                (Scan::TextEscape, b']' | b'P' | b'X' | b'^' | b'_') => Scan::Text,
                (Scan::TextEscape, 0x1b) => Scan::Escape,
                (Scan::TextEscape, _) => Scan::Ground,
            };
        }
        bells
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn host() -> Arc<str> {
        "local".into()
    }

    #[test]
    fn events_are_numbered_read_once_and_bounded() {
        let log = Attention::new(3);
        assert_eq!(log.last(), 0);
        for _ in 0..5 {
            log.push(&host(), Some(PaneId(1)), Kind::Bell, Detail::default());
        }
        assert_eq!(log.last(), 5);
        // Number 1 and 2 were dropped: a cursor before them is truncated.
        let read = log.read(0, 10, |_| true);
        assert!(read.truncated);
        assert_eq!(
            read.events.iter().map(|e| e.seq).collect::<Vec<_>>(),
            [3, 4, 5]
        );
        assert_eq!(read.next, 5);
        // A cursor at the oldest held is not.
        let read = log.read(2, 10, |_| true);
        assert!(!read.truncated);
        assert_eq!(read.events.len(), 3);
        // Bounded reads say there is more, and resume where they stopped.
        let read = log.read(2, 2, |_| true);
        assert_eq!((read.events.len(), read.next, read.more), (2, 4, true));
        let read = log.read(read.next, 2, |_| true);
        assert_eq!((read.events.len(), read.next, read.more), (1, 5, false));
        // A filter skips events but the cursor moves past them.
        let read = log.read(2, 10, |e| e.seq == 4);
        assert_eq!((read.events.len(), read.next), (1, 5));
        assert_eq!(
            log.read(5, 10, |_| true),
            Read {
                next: 5,
                ..Read::default()
            }
        );
    }

    #[test]
    fn cursors_name_their_process() {
        let log = Attention::new(10);
        log.push(&host(), None, Kind::PersonAttached, Detail::default());
        let cursor = log.cursor(1);
        assert_eq!(log.parse_cursor(&cursor), Ok((1, false)));
        // A number past the end reads as the end.
        assert_eq!(log.parse_cursor(&log.cursor(9)), Ok((1, false)));
        let other = Attention::new(10);
        let foreign = format!("x{}", other.cursor(1));
        assert_eq!(log.parse_cursor(&foreign), Ok((0, true)));
        assert!(log.parse_cursor("nonsense").is_err());
    }

    #[tokio::test]
    async fn a_wait_wakes_on_the_next_event() {
        let log = Attention::new(10);
        let waiter = {
            let log = log.clone();
            tokio::spawn(async move { log.wait_after(0).await })
        };
        log.push(&host(), None, Kind::Bell, Detail::default());
        waiter.await.unwrap();
        // Already there: at once.
        log.wait_after(0).await;
    }

    #[test]
    fn bells_are_found_outside_strings_only() {
        let mut scan = BellScanner::default();
        assert_eq!(scan.feed(b"a\x07b\x07"), 2);
        // An OSC title ended by BEL, and one ended by ST, ring nothing.
        assert_eq!(scan.feed(b"\x1b]0;title\x07"), 0);
        assert_eq!(scan.feed(b"\x1b]133;A\x1b\\"), 0);
        // A string split across chunks.
        assert_eq!(scan.feed(b"\x1b]2;ti"), 0);
        assert_eq!(scan.feed(b"tle\x07\x07"), 1);
        // DCS and APC too; CAN aborts a string.
        assert_eq!(scan.feed(b"\x1bPq#0\x07\x1b_x\x18\x07"), 1);
        // CSI is no string: a BEL after it rings.
        assert_eq!(scan.feed(b"\x1b[31m\x07"), 1);
    }
}
