//! One WebSocket per tab, multiplexed by terminal (docs/web-view.md).
//!
//! Each terminal the tab attaches is a task reading the pane's log from an
//! offset: a snapshot at offset N, or the tab's own last offset when the
//! log still holds it, then every byte from there on, in binary frames.
//! The task keeps at most [`WINDOW`] bytes sent and not acknowledged by
//! the page; a tab that does not keep up falls behind in the log (which
//! never waits for a reader), and when the log has moved past it the tab
//! gets a `lost` frame and a fresh snapshot. So a slow tab never slows
//! tmux, the agents' waits or another terminal.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::extract::State;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use bytes::{BufMut, BytesMut};
use serde::Deserialize;
use serde_json::json;
use tmux_control::command::DisplayMessage;
use tmux_control::{PaneChunk, PaneEnd, PaneOutput};
use tokio::sync::{mpsc, watch};

use super::WebView;
use super::hold::{self, Target};
use super::keys::Scope;
use super::list::Listing;
use super::session::{Session, refuse, same_origin};
use super::snapshot::snapshot;

/// The most bytes of one terminal sent to a tab and not acknowledged.
const WINDOW: u64 = 1 << 20;

/// The most bytes in one binary frame.
const FRAME: usize = 64 << 10;

/// How long a hold outlives its session's last socket, for the page to
/// reconnect (a true timer: the grace of a reconnect).
const HOLD_GRACE: Duration = Duration::from_secs(10);

/// How often at most an acknowledgement checks the tab's key again.
const RECHECK: Duration = Duration::from_secs(1);

/// The frames a tab's terminals have queued for its socket.
const QUEUE: usize = 64;

/// The answers and notices queued for a tab (`held`, `refused`, `error`):
/// sent before any terminal's output waiting, so a person learns of their
/// take-over at once even while a flood fills the socket.
const CONTROL_QUEUE: usize = 64;

/// `GET /ui/ws`: the page's own origin, a valid session, then the socket.
pub(super) async fn upgrade(
    State(view): State<Arc<WebView>>,
    headers: HeaderMap,
    ws: WebSocketUpgrade,
) -> Response {
    if let Err(why) = same_origin(&headers) {
        return refuse(StatusCode::FORBIDDEN, &why);
    }
    let Some(session) = view.sessions.of(&headers, &view.keys) else {
        return refuse(
            StatusCode::UNAUTHORIZED,
            "no session: open the link with its #key=…",
        );
    };
    ws.max_message_size(1 << 20)
        .on_upgrade(move |socket| serve(socket, view, session))
}

/// A message from the page.
#[derive(Debug, Deserialize)]
#[serde(tag = "op", rename_all = "lowercase")]
enum Op {
    Attach { id: String, from: Option<u64> },
    Detach { id: String },
    Ack { id: String, offset: u64 },
    Take { id: String },
    Release { id: String },
    Input { id: String, data: String },
    Fit { id: String, cols: u32, rows: u32 },
}

/// A terminal the tab shows: its streaming task and what the page
/// acknowledged.
struct Shown {
    acked: watch::Sender<u64>,
    task: tokio::task::JoinHandle<()>,
    /// The terminal's record, which says who views it.
    record: Arc<crate::terminal::record::Terminal>,
    /// The tab's number there.
    tab: u64,
}

impl Drop for Shown {
    fn drop(&mut self) {
        self.task.abort();
        self.record.unviewed_by(self.tab);
    }
}

/// One tab.
struct Tab {
    /// Its number (for the list of who views what).
    number: u64,
    view: Arc<WebView>,
    session: Session,
    /// The terminals' output and what must stay in order with it.
    out: mpsc::Sender<Message>,
    /// Answers and notices, sent first.
    control: mpsc::Sender<Message>,
    shown: HashMap<String, Shown>,
    /// What the last `held` frame said of each terminal shown.
    held: HashMap<String, Option<String>>,
}

fn text(value: serde_json::Value) -> Message {
    Message::Text(value.to_string().into())
}

async fn serve(mut socket: WebSocket, view: Arc<WebView>, session: Session) {
    let (out, mut queued) = mpsc::channel::<Message>(QUEUE);
    let (control, mut answers) = mpsc::channel::<Message>(CONTROL_QUEUE);
    view.sessions.socket_opened(session.id);
    let mut list = view.list.subscribe();
    static TABS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let mut tab = Tab {
        number: TABS.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
        view: Arc::clone(&view),
        session: session.clone(),
        out,
        control,
        shown: HashMap::new(),
        held: HashMap::new(),
    };
    let hello = text(json!({
        "t": "hello",
        "name": session.grant.name,
        "scope": session.grant.scope,
    }));
    if socket.send(hello).await.is_err() {
        return tab.closed().await;
    }
    let first = list.borrow_and_update().clone();
    if !first.frame.is_empty()
        && socket
            .send(Message::Text(first.frame.as_str().into()))
            .await
            .is_err()
    {
        return tab.closed().await;
    }
    let mut checked = std::time::Instant::now();
    loop {
        tokio::select! {
            biased;
            Some(frame) = answers.recv() => {
                if socket.send(frame).await.is_err() {
                    break;
                }
            }
            incoming = socket.recv() => match incoming {
                Some(Ok(Message::Text(t))) => {
                    // Every message checks the key again (a revocation
                    // applies at once), but an acknowledgement, which comes
                    // with every frame the page writes, at most once a
                    // second: a revoked viewer is cut off within a second
                    // of output, without a file read a frame.
                    let ack = t.as_str().starts_with(r#"{"op":"ack""#);
                    let due = !ack || checked.elapsed() >= RECHECK;
                    if due {
                        checked = std::time::Instant::now();
                    }
                    if due && !tab.view.keys.still_valid(&tab.session.grant) {
                        let _ = socket.send(text(json!({"t": "error", "why": "this key was revoked"}))).await;
                        break;
                    }
                    tab.on(t.as_str()).await;
                }
                Some(Ok(Message::Close(_))) | None | Some(Err(_)) => break,
                Some(Ok(_)) => {}
            },
            Some(frame) = queued.recv() => {
                if socket.send(frame).await.is_err() {
                    break;
                }
            }
            changed = list.changed() => {
                if changed.is_err() {
                    break;
                }
                let listing = list.borrow_and_update().clone();
                tab.tell_holds(&listing);
                if socket.send(Message::Text(listing.frame.as_str().into())).await.is_err() {
                    break;
                }
            }
        }
    }
    tab.closed().await;
}

impl Tab {
    /// Sends a frame to the page (in order with the terminals' frames).
    async fn send(&self, value: serde_json::Value) {
        let _ = self.control.send(text(value)).await;
    }

    async fn refuse(&self, op: &str, id: &str, why: &str) {
        self.send(json!({"t": "refused", "op": op, "id": id, "why": why}))
            .await;
    }

    /// One message from the page.
    async fn on(&mut self, message: &str) {
        let op = match serde_json::from_str::<Op>(message) {
            Ok(op) => op,
            Err(e) => {
                self.send(json!({"t": "error", "why": format!("not a message of this view: {e}")}))
                    .await;
                return;
            }
        };
        match op {
            Op::Attach { id, from } => self.attach(id, from).await,
            Op::Detach { id } => {
                if self.shown.remove(&id).is_some() {
                    self.view.list.changed();
                }
                self.held.remove(&id);
            }
            Op::Ack { id, offset } => {
                if let Some(shown) = self.shown.get(&id) {
                    shown.acked.send_if_modified(|acked| {
                        let newer = offset > *acked;
                        if newer {
                            *acked = offset;
                        }
                        newer
                    });
                }
            }
            Op::Take { id } => self.take(&id).await,
            Op::Fit { id, cols, rows } => {
                let outcome = match Target::parse(&self.view.server, &id) {
                    Ok(target) => {
                        hold::fit(&target, &self.session, (cols, rows), &self.view.fits).await
                    }
                    Err(why) => Err(why),
                };
                if let Err(why) = outcome {
                    self.refuse("fit", &id, &why).await;
                }
            }
            Op::Release { id } => match Target::parse(&self.view.server, &id) {
                Ok(target) => {
                    if hold::release(
                        &target,
                        self.session.id,
                        &self.session.grant.name,
                        &self.view.fits,
                    )
                    .await
                    {
                        self.view.list.changed();
                    }
                }
                Err(why) => self.refuse("release", &id, &why).await,
            },
            Op::Input { id, data } => {
                if self.session.grant.scope != Scope::Input {
                    return self
                        .refuse("input", &id, "this key may only view (scope view)")
                        .await;
                }
                let outcome = match Target::parse(&self.view.server, &id) {
                    Ok(target) => hold::input(&target, &self.session, &data).await,
                    Err(why) => Err(why),
                };
                if let Err(why) = outcome {
                    self.refuse("input", &id, &why).await;
                }
            }
        }
    }

    async fn take(&mut self, id: &str) {
        if self.session.grant.scope != Scope::Input {
            return self
                .refuse("take", id, "this key may only view (scope view)")
                .await;
        }
        let outcome = match Target::parse(&self.view.server, id) {
            Ok(target) => hold::take(&target, &self.session).await,
            Err(why) => Err(why),
        };
        match outcome {
            Ok(()) => self.view.list.changed(),
            Err(why) => self.refuse("take", id, &why).await,
        }
    }

    /// Starts (or starts again) streaming `id` from `from`.
    async fn attach(&mut self, id: String, from: Option<u64>) {
        let target = match Target::parse(&self.view.server, &id) {
            Ok(target) => target,
            Err(why) => return self.refuse("attach", &id, &why).await,
        };
        let followed = match target.conn().await {
            Ok(conn) => conn
                .follow(target.pane)
                .await
                .map(|po| (po, conn.terminals.entry(target.pane)))
                .map_err(|e| e.to_string()),
            Err(why) => Err(why),
        };
        let (po, record) = match followed {
            Ok(followed) => followed,
            Err(why) => return self.refuse("attach", &id, &why).await,
        };
        let (acked, acks) = watch::channel(0);
        let listed = self.view.list.poker();
        let task = tokio::spawn(stream(
            id.clone(),
            po,
            from,
            self.out.clone(),
            (acks, listed),
        ));
        record.viewed_by(self.number, &self.session.grant.name);
        let shown = Shown {
            acked,
            task,
            record,
            tab: self.number,
        };
        self.shown.insert(id.clone(), shown);
        self.held.remove(&id);
        self.view.list.changed();
        let listing = self.view.list.latest();
        self.tell_holds(&listing);
    }

    /// Queues a `held` frame for each shown terminal whose holder changed
    /// in `listing`.
    fn tell_holds(&mut self, listing: &Listing) {
        for id in self.shown.keys() {
            let hold = listing.held.get(id);
            let by = hold.map(|(by, _)| by.clone());
            if self.held.get(id) == Some(&by) {
                continue;
            }
            let you = hold.is_some_and(|(_, session)| *session == self.session.id);
            let frame = text(json!({"t": "held", "id": id, "by": by, "you": you}));
            // The queue is for the page; a full one drops this frame and
            // the next list change tells again.
            if self.control.try_send(frame).is_ok() {
                self.held.insert(id.clone(), by);
            }
        }
    }

    /// The socket closed: its terminals stop; the session's holds end
    /// after [`HOLD_GRACE`] unless one of its sockets is open again.
    async fn closed(self) {
        let view = Arc::clone(&self.view);
        let session = self.session.clone();
        drop(self);
        view.list.changed();
        if view.sessions.socket_closed(session.id) > 0 {
            return;
        }
        tokio::spawn(async move {
            tokio::time::sleep(HOLD_GRACE).await;
            if view.sessions.sockets(session.id) > 0 {
                return;
            }
            release_all(&view, &session).await;
        });
    }
}

/// Ends every hold of `session`, on every host.
async fn release_all(view: &WebView, session: &Session) {
    let mut servers = vec![view.server.clone()];
    servers.extend(view.server.remote_hosts());
    let mut any = false;
    for server in servers {
        let Some(conn) = server.backend.current().await else {
            continue;
        };
        for (pane, terminal) in conn.terminals.all_with_panes() {
            if terminal.hold().is_some_and(|h| h.session == session.id) {
                let target = Target {
                    server: server.clone(),
                    pane,
                };
                any |= hold::release(&target, session.id, &session.grant.name, &view.fits).await;
            }
        }
    }
    if any {
        view.list.changed();
    }
}

/// Microseconds since the Unix epoch, now.
fn now_us() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX))
}

/// A binary frame of `id`'s output at `offset`.
fn data_frame(id: &str, offset: u64, read_us: u64, data: &[u8]) -> Message {
    let id = id.as_bytes();
    let mut b = BytesMut::with_capacity(1 + 2 + id.len() + 16 + data.len());
    b.put_u8(1);
    b.put_u16(u16::try_from(id.len()).unwrap_or(u16::MAX));
    b.put_slice(&id[..id.len().min(usize::from(u16::MAX))]);
    b.put_u64(offset);
    b.put_u64(read_us);
    b.put_slice(data);
    Message::Binary(b.freeze())
}

/// Streams `id`'s output to the tab (see the module docs) until the pane
/// ends, the tab detaches it or the socket closes.
async fn stream(
    id: String,
    po: PaneOutput,
    from: Option<u64>,
    out: mpsc::Sender<Message>,
    (mut acks, listed): (watch::Receiver<u64>, watch::Sender<u64>),
) {
    let mut generation = po.state().layout_generation;
    let shown = |s: &tmux_control::PaneState| {
        (
            s.title.clone(),
            s.current_command.clone(),
            s.dead,
            s.alternate_screen,
            s.in_mode,
        )
    };
    let mut listed_as = shown(&po.state());
    let (mut start, mut size) = match from {
        Some(at) if at >= po.start_offset() && at <= po.end_offset() => (at, pane_size(&po).await),
        _ => match send_snapshot(&id, &po, &out).await {
            Some((at, size)) => (at, Some(size)),
            None => return,
        },
    };
    let mut states = po.state_changes();
    let mut states_open = true;
    loop {
        // The page has everything before `start`.
        let mut sent = start;
        let mut log = po.stream_from(start);
        let restart = loop {
            // Keep at most WINDOW bytes unacknowledged.
            let acked = (*acks.borrow()).max(start);
            if sent.saturating_sub(acked) > WINDOW {
                if acks.changed().await.is_err() {
                    return;
                }
                continue;
            }
            tokio::select! {
                chunk = log.next_max(FRAME) => match chunk {
                    Some(PaneChunk::Output { offset, data }) => {
                        let frame = data_frame(&id, offset, now_us(), &data);
                        if out.send(frame).await.is_err() {
                            return;
                        }
                        sent = offset + data.len() as u64;
                    }
                    Some(PaneChunk::Missed { from, to }) => {
                        let why = format!("this view fell behind: bytes {from}..{to} left the server's log before it could send them");
                        break Some((to, why));
                    }
                    Some(PaneChunk::Lost { at }) => {
                        break Some((at, "tmux discarded output here (flow control paused the pane)".to_owned()));
                    }
                    // A kind of chunk this view does not know: start over
                    // from a snapshot rather than show it wrong.
                    Some(_) => break Some((sent, "the pane's log reported something this view cannot show".to_owned())),
                    None => {
                        let why = match po.ended() {
                            Some(PaneEnd::Gone) => "the pane is gone".to_owned(),
                            Some(other) => format!("its output ended: {other:?}"),
                            None => "its output ended".to_owned(),
                        };
                        let _ = out.send(text(json!({"t": "ended", "id": id, "why": why}))).await;
                        return;
                    }
                },
                state = states.next(), if states_open => {
                    let Some(state) = state else {
                        states_open = false;
                        continue;
                    };
                    // What the list shows of the pane changed: it is made
                    // again.
                    if shown(&state) != listed_as {
                        listed_as = shown(&state);
                        listed.send_modify(|n| *n += 1);
                    }
                    // Only a layout change can change the pane's size: then
                    // tmux is asked (one round trip a change).
                    if state.layout_generation == generation {
                        continue;
                    }
                    generation = state.layout_generation;
                    let now = pane_size(&po).await;
                    if now != size && let Some((cols, rows)) = now {
                        size = now;
                        let frame = text(json!({"t": "resize", "id": id, "cols": cols, "rows": rows}));
                        if out.send(frame).await.is_err() {
                            return;
                        }
                    }
                }
            }
        };
        let Some((at, why)) = restart else { return };
        let lost = text(json!({"t": "lost", "id": id, "at": at, "why": why}));
        if out.send(lost).await.is_err() {
            return;
        }
        match send_snapshot(&id, &po, &out).await {
            Some((at, now)) => (start, size) = (at, Some(now)),
            None => return,
        }
    }
}

/// The pane's size, as tmux says it now.
async fn pane_size(po: &PaneOutput) -> Option<(u32, u32)> {
    let line = po
        .tmux()
        .run(DisplayMessage::format("#{pane_width} #{pane_height}").target(po.pane()))
        .await
        .ok()?;
    let line = String::from_utf8_lossy(&line);
    let (cols, rows) = line.trim().split_once(' ')?;
    Some((cols.parse().ok()?, rows.parse().ok()?))
}

/// Sends a snapshot of `po`; the offset and size it is at (`None`: the
/// socket closed).
async fn send_snapshot(
    id: &str,
    po: &PaneOutput,
    out: &mpsc::Sender<Message>,
) -> Option<(u64, (u32, u32))> {
    let snap = snapshot(po).await;
    let frame = text(json!({
        "t": "snapshot",
        "id": id,
        "offset": snap.offset,
        "cols": snap.cols,
        "rows": snap.rows,
        "data": snap.data,
    }));
    out.send(frame).await.ok()?;
    Some((snap.offset, (snap.cols, snap.rows)))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn a_data_frame_is_laid_out_as_the_protocol_says() {
        let Message::Binary(b) = data_frame("local:%3", 258, 7, b"hi") else {
            panic!("not binary");
        };
        assert_eq!(b[0], 1);
        assert_eq!(u16::from_be_bytes([b[1], b[2]]), 8);
        assert_eq!(&b[3..11], b"local:%3");
        assert_eq!(u64::from_be_bytes(b[11..19].try_into().unwrap()), 258);
        assert_eq!(u64::from_be_bytes(b[19..27].try_into().unwrap()), 7);
        assert_eq!(&b[27..], b"hi");
    }

    #[test]
    fn the_pages_messages_parse_and_others_do_not() {
        let attach: Op =
            serde_json::from_str(r#"{"op":"attach","id":"local:%3","from":12}"#).unwrap();
        assert!(matches!(attach, Op::Attach { from: Some(12), .. }));
        let fresh: Op = serde_json::from_str(r#"{"op":"attach","id":"local:%3"}"#).unwrap();
        assert!(matches!(fresh, Op::Attach { from: None, .. }));
        let fit: Op =
            serde_json::from_str(r#"{"op":"fit","id":"a:%1","cols":80,"rows":24}"#).unwrap();
        assert!(matches!(
            fit,
            Op::Fit {
                cols: 80,
                rows: 24,
                ..
            }
        ));
        for bad in [
            r#"{"op":"exec","id":"x"}"#,
            r#"{"op":"input","id":"x"}"#,
            "[]",
            "not json",
        ] {
            assert!(serde_json::from_str::<Op>(bad).is_err(), "{bad}");
        }
    }
}
