//! Attention events as the agent gets them: in every tool result
//! (`attention`: the events its session has not seen, each once), and from
//! `wait_for_attention`, which returns at the first event after a cursor.
//! The events come from the process's log
//! ([`crate::terminal::attention`]); here they are shown, their text
//! masked as all pane text is.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

use rmcp::handler::server::wrapper::Parameters;
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tmux_control::PaneId;

use crate::config::LOCAL_HOST;
use crate::mcp::server::TmuxMcp;
use crate::mcp::wait::{CallCtx, Waited};
use crate::reply::{Json, Summary, ToolError};
use crate::terminal::attention::{Attention, Event, Kind};
use crate::terminal::lock::lock;

/// The most events one tool result tells of (the rest come in the next
/// results, or from wait_for_attention).
pub(crate) const PER_REPLY: usize = 10;

/// The most events one wait_for_attention call returns.
const MAX_EVENTS: usize = 100;

/// One attention event as a reply shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub(crate) struct AttentionEvent {
    /// Its sequence number.
    pub seq: u64,
    /// The cursor just after it (wait_for_attention cursor: what came next).
    pub cursor: String,
    /// What happened: command_finished, waiting_for_input, asks_for_secret, prompt_returned, bell, pane_exited, pane_gone, person_attached, person_detached, person_typing or output_lost.
    pub kind: Kind,
    /// The host (`local` or a remote host's name).
    pub host: String,
    /// The terminal, when it is about one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pane: Option<String>,
    /// When it happened (milliseconds since the Unix epoch).
    pub at_ms: u64,
    /// What happened, in one sentence.
    pub summary: String,
    /// The evidence it was told from.
    pub evidence: String,
    /// The run that finished (command_finished): call run with this run_id to collect its output.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// The command line (secrets masked).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// Its exit status, or the pane's program's (pane_exited).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_status: Option<i32>,
    /// Its pipeline's statuses.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pipestatus: Option<Vec<i32>>,
    /// The region it is recorded as (read_region region_id).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub region: Option<u64>,
    /// Who typed the command line: an actor's name, or `person`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub typed_by: Option<String>,
    /// The person's tmux client.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    /// The session the client attached to or left.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// The program that reads the terminal.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub program: Option<String>,
    /// How many bells.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub count: Option<u64>,
    /// The output offset it happened at (read_output cursor).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offset: Option<u64>,
    /// Why an agent asks for a person (human_requested; secrets masked).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// The events a tool result carries, as `attention`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct Attentions {
    /// The events, oldest first (at most 10).
    pub events: Vec<AttentionEvent>,
    /// The cursor after them.
    pub cursor: String,
    /// More events wait (the next results, or wait_for_attention from the cursor).
    pub more: bool,
    /// Events were dropped from the server's log before they were told.
    pub truncated: bool,
}

impl Attentions {
    /// The sentence a result's text carries.
    pub(crate) fn sentence(&self) -> String {
        let lines: Vec<String> = self
            .events
            .iter()
            .map(|e| format!("- {}", e.summary))
            .collect();
        let mut text = format!("Attention since your last call:\n{}", lines.join("\n"));
        if self.truncated {
            text.push_str("\n(some earlier events were dropped from the server's log)");
        }
        if self.more {
            text.push_str(&format!(
                "\n(more events wait: wait_for_attention with cursor {:?})",
                self.cursor
            ));
        }
        text
    }
}

impl TmuxMcp {
    /// The process's attention log.
    pub(crate) fn attention_log(&self) -> &Arc<Attention> {
        self.inner.local.attention()
    }

    /// `event` as a reply shows it: its text masked, with its sentence.
    pub(crate) fn shown_event(&self, event: &Event) -> AttentionEvent {
        let d = &event.detail;
        let command = d.command.as_deref().map(|c| self.redact(c));
        let host = event.host.to_string();
        let pane = event.pane.map(|p| p.to_string());
        let summary = summary(event, &host, command.as_deref());
        AttentionEvent {
            seq: event.seq,
            cursor: self.attention_log().cursor(event.seq),
            kind: event.kind,
            host,
            pane,
            at_ms: event.at_ms,
            summary,
            evidence: d.evidence.clone(),
            run_id: d.run_id.clone(),
            command,
            exit_status: d.exit_status,
            pipestatus: d.pipestatus.clone(),
            region: d.region,
            typed_by: d.typed_by.clone(),
            client: d.client.clone(),
            session: d.session.clone(),
            program: d.program.clone(),
            count: d.count,
            offset: d.offset,
            reason: d.reason.as_deref().map(|r| self.redact(r)),
        }
    }

    /// Whether events were logged after the last one this session was
    /// told of (one atomic read each).
    pub(crate) fn has_untold_events(&self) -> bool {
        self.attention_log().last() > self.seen.load(Ordering::Acquire)
    }

    /// The events this session has not been told of, at most
    /// [`PER_REPLY`] and within `room` bytes (their JSON and sentences),
    /// leaving out those `skip` accepts (told otherwise); those returned
    /// are told now, the rest stay for the next result. `None` when there
    /// are none, or none fits.
    pub(crate) fn untold_events(
        &self,
        skip: impl Fn(&Event) -> bool,
        room: usize,
    ) -> Option<Attentions> {
        let log = self.attention_log();
        let seen = self.seen.load(Ordering::Acquire);
        if !self.has_untold_events() {
            return None;
        }
        let ahead = lock(&self.told_ahead).clone();
        let read = log.read(seen, PER_REPLY, |e| !skip(e) && !ahead.contains(&e.seq));
        // The paragraph's heading and notes, the object's other fields, and
        // the escaping of the text.
        let mut used: usize = 320;
        let mut events = Vec::new();
        for event in &read.events {
            let shown = self.shown_event(event);
            let cost = serde_json::to_string(&shown).map_or(usize::MAX, |j| j.len())
                + serde_json::to_string(&shown.summary).map_or(usize::MAX, |j| j.len())
                + 8;
            if used.saturating_add(cost) > room {
                break;
            }
            used += cost;
            events.push(shown);
        }
        let all = events.len() == read.events.len();
        // Told up to the last one shown (or, when all fit, past the ones
        // skipped after it too).
        let next = match (all, events.last()) {
            (true, _) => read.next,
            (false, Some(last)) => last.seq,
            (false, None) => return None,
        };
        self.see(next);
        lock(&self.told_ahead).retain(|s| *s > next);
        if events.is_empty() && !read.truncated {
            return None;
        }
        Some(Attentions {
            events,
            cursor: log.cursor(next),
            more: read.more || !all,
            truncated: read.truncated,
        })
    }

    /// Marks the events up to number `seq` told to this session.
    fn see(&self, seq: u64) {
        self.seen.fetch_max(seq, Ordering::AcqRel);
    }
}

/// An event's sentence.
fn summary(event: &Event, host: &str, command: Option<&str>) -> String {
    let d = &event.detail;
    let place = match (event.pane, host == LOCAL_HOST) {
        (Some(p), true) => format!("pane {p}"),
        (Some(p), false) => format!("pane {p} on {host}"),
        (None, true) => "the tmux server".to_owned(),
        (None, false) => format!("the tmux server on {host}"),
    };
    let status = |s: Option<i32>| {
        s.map_or_else(
            || "an unknown status".to_owned(),
            |s| format!("exit status {s}"),
        )
    };
    let line = command.map_or_else(String::new, |c| format!("`{c}` "));
    let who = d.typed_by.as_deref().map_or_else(String::new, |t| {
        if t == "person" {
            " (typed by a person)".to_owned()
        } else {
            format!(" (typed by {t})")
        }
    });
    match event.kind {
        Kind::CommandFinished => format!(
            "{place}: {line}finished with {} (run {}; call run with run_id to collect its output)",
            status(d.exit_status),
            d.run_id.as_deref().unwrap_or("?")
        ),
        Kind::WaitingForInput => format!(
            "{place}: {} waits for input (answer with send_text)",
            d.program.as_deref().unwrap_or("the program")
        ),
        Kind::AsksForSecret => format!(
            "{place}: {} asks for a secret (echo is off; a person should type it)",
            d.program.as_deref().unwrap_or("the program")
        ),
        Kind::PromptReturned => format!(
            "{place}: {line}{who}ended with {}; the prompt is back",
            status(d.exit_status)
        ),
        Kind::Bell => format!("{place}: the bell rang ({}×)", d.count.unwrap_or(1)),
        Kind::PaneExited => format!("{place}: its program exited with {}", status(d.exit_status)),
        Kind::PaneGone => format!("{place} is gone"),
        Kind::PersonAttached => format!(
            "{place}: a person's tmux client {} attached to session {}",
            d.client.as_deref().unwrap_or("?"),
            d.session.as_deref().unwrap_or("?")
        ),
        Kind::PersonDetached => format!(
            "{place}: a person's tmux client {} detached",
            d.client.as_deref().unwrap_or("?")
        ),
        Kind::PersonTyping => format!(
            "{place}: a person (tmux client {}) is typing",
            d.client.as_deref().unwrap_or("?")
        ),
        Kind::OutputLost => format!("{place}: output was lost ({})", d.evidence),
        Kind::PersonTookOver => format!(
            "{place}: a person ({}) took its input over in the web view; your input there answers human_holds until they hand it back",
            d.client.as_deref().unwrap_or("?")
        ),
        Kind::PersonHandedBack => format!(
            "{place}: the person ({}) handed its input back",
            d.client.as_deref().unwrap_or("?")
        ),
        Kind::HumanRequested => format!(
            "{place}: an agent asks for a person: {}",
            d.reason.as_deref().unwrap_or("?")
        ),
    }
}

const WAIT_FOR_ATTENTION: &str = "Wait until a terminal (any this server follows, or targets) needs attention; returns at the first event. Kinds: command_finished (a command you left running ended; exit status, run_id), waiting_for_input, asks_for_secret (a program asks for a secret), prompt_returned (a command line nobody waited for ended), bell, pane_exited, pane_gone, person_attached, person_detached, person_typing, output_lost, person_took_over, person_handed_back (the web view), human_requested. \
Events are numbered: cursor (an event's or a reply's) returns what came after it, so nothing is missed or seen twice, even after a reconnect; truncated means the cursor is older than the log. Without cursor it starts after the last event this session was told of (every tool result carries untold events as attention).";

/// Arguments of `wait_for_attention`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct WaitForAttentionArgs {
    /// Only events about these panes; default: every terminal, and server-wide events (people attaching and detaching).
    pub targets: Option<Vec<String>>,
    /// Only these kinds (listed above); default all.
    pub kinds: Option<Vec<String>>,
    /// Return the events after this cursor (an event's or a reply's).
    pub cursor: Option<String>,
    /// Most events returned (default 20, at most 100).
    #[schemars(range(min = 1))]
    pub max_events: Option<u32>,
    /// Default 30 s; capped at the server's maximum (60).
    #[schemars(range(min = 0))]
    pub timeout_secs: Option<f64>,
}

/// Result of `wait_for_attention`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct WaitForAttentionResult {
    /// events (at least one came) or timeout.
    pub status: String,
    /// The events, oldest first.
    pub events: Vec<AttentionEvent>,
    /// The cursor to pass next: after the last event looked at.
    pub cursor: String,
    /// Events after the cursor given were dropped from the server's log (or the cursor is from an earlier run of the server) before this call.
    pub truncated: bool,
    /// More events wait after the cursor (the call stopped at max_events).
    pub more: bool,
    /// How long the call waited, in milliseconds.
    pub waited_ms: u64,
}

impl Summary for WaitForAttentionResult {
    fn summary(&self) -> String {
        let mut text = if self.events.is_empty() {
            format!(
                "No attention event within {} ms; cursor={:?}.",
                self.waited_ms, self.cursor
            )
        } else {
            let lines: Vec<String> = self
                .events
                .iter()
                .map(|e| format!("- {}", e.summary))
                .collect();
            format!(
                "{} attention event(s); cursor={:?}:\n{}",
                self.events.len(),
                self.cursor,
                lines.join("\n")
            )
        };
        if self.truncated {
            text.push_str("\nSome events after the cursor given were dropped from the server's log (truncated).");
        }
        if self.more {
            text.push_str("\nMore events wait: call again with the cursor.");
        }
        text
    }
}

#[tool_router(router = attention_router, vis = "pub(crate)")]
impl TmuxMcp {
    #[tool(description = WAIT_FOR_ATTENTION, annotations(title = "Wait for attention", read_only_hint = true, destructive_hint = false, idempotent_hint = false, open_world_hint = false))]
    pub(crate) async fn wait_for_attention(
        &self,
        Parameters(args): Parameters<WaitForAttentionArgs>,
        cc: CallCtx,
    ) -> Result<Json<WaitForAttentionResult>, ToolError> {
        const TOOL: &str = "wait_for_attention";
        let limit = self.wait_limit(TOOL, args.timeout_secs)?;
        let log = self.attention_log().clone();
        let kinds = match &args.kinds {
            None => None,
            Some(names) => Some(
                names
                    .iter()
                    .map(|n| {
                        Kind::parse(n).ok_or_else(|| {
                            let all: Vec<&str> = Kind::ALL.iter().map(|k| k.name()).collect();
                            ToolError::new(
                                TOOL,
                                format!("{n:?} is not an event kind"),
                                format!("Give some of {}", all.join(", ")),
                            )
                        })
                    })
                    .collect::<Result<Vec<Kind>, ToolError>>()?,
            ),
        };
        let panes = match &args.targets {
            None => None,
            Some(targets) => {
                let conn = self.conn().await?;
                let mut panes: Vec<PaneId> = Vec::new();
                for t in targets {
                    panes.push(conn.resolve(t).await?.pane);
                }
                Some(panes)
            }
        };
        let (mut after, truncated_before) = match &args.cursor {
            Some(c) => log.parse_cursor(c).map_err(|why| {
                ToolError::new(
                    TOOL,
                    why,
                    "Pass a cursor from an event or an earlier reply, or leave it out",
                )
            })?,
            None => (self.seen.load(Ordering::Acquire), false),
        };
        let max = args
            .max_events
            .map_or(20, |m| (m as usize).clamp(1, MAX_EVENTS));
        let host: Arc<str> = self.backend.host().into();
        // Without a cursor, what this session was told of already is left out.
        let told = match &args.cursor {
            None => lock(&self.told_ahead).clone(),
            Some(_) => Default::default(),
        };
        let keep = |e: &Event| {
            !told.contains(&e.seq)
                && kinds.as_ref().is_none_or(|k| k.contains(&e.kind))
                && panes.as_ref().is_none_or(|p| {
                    e.pane
                        .is_some_and(|pane| e.host == host && p.contains(&pane))
                })
        };
        let started = Instant::now();
        let mut truncated = truncated_before;
        let wait = async {
            loop {
                let read = log.read(after, max, keep);
                truncated |= read.truncated;
                after = read.next;
                if !read.events.is_empty() || read.more {
                    return read;
                }
                log.wait_after(after).await;
            }
        };
        let what = "Waiting for an attention event";
        // A true timer: the call's deadline.
        let read = match cc
            .wait(what, limit, tokio::time::timeout(limit, wait))
            .await
        {
            Waited::Cancelled => {
                return Err(ToolError::new(
                    TOOL,
                    "the client cancelled the request",
                    "Call it again with the cursor to go on",
                ));
            }
            Waited::Done(Ok(read)) => Some(read),
            Waited::Done(Err(_)) => None,
        };
        let (events, more) = match read {
            Some(r) => (r.events, r.more),
            None => (Vec::new(), false),
        };
        // Told now: the next results do not tell them again. A filtered
        // wait leaves the events it passed over to them.
        if args.kinds.is_none() && args.targets.is_none() {
            self.see(after);
        } else {
            let seen = self.seen.load(Ordering::Acquire);
            lock(&self.told_ahead).extend(events.iter().map(|e| e.seq).filter(|s| *s > seen));
        }
        let waited_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        Ok(Json(WaitForAttentionResult {
            status: if events.is_empty() {
                "timeout"
            } else {
                "events"
            }
            .to_owned(),
            events: events.iter().map(|e| self.shown_event(e)).collect(),
            cursor: log.cursor(after),
            truncated,
            more,
            waited_ms,
        }))
    }
}
