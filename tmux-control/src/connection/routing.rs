//! Where the connection task delivers what tmux sends: replies go to their
//! callers (in `task`), pane output to the sink registered for the pane,
//! other notifications to the watchers the api registered, and every event
//! to the public subscriptions. Delivery never waits: a full subscription
//! queue counts a gap, and sinks and watchers are synchronous calls that
//! only append or record.
//!
//! Sinks and watchers are registered through the connection's command
//! channel, in order with commands, so a route exists before any command
//! sent after it is written. The task owns the routing table: no lock is
//! taken on the output path.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::task::{Context, Poll};

use futures_core::Stream;
use tokio::sync::mpsc;

use super::{Event, Shared};
use crate::error::Closed;
use crate::ids::PaneId;
use crate::proto::Notification;

/// Receives one pane's output from the connection task. Implemented by the
/// api's pane log; the connection knows nothing else about it.
pub(crate) trait PaneSink: Send + Sync {
    /// Bytes the pane wrote (`%output`, `%extended-output`), in order.
    fn output(&self, data: &[u8]);
    /// tmux paused the pane's output for this client (`%pause`): what the
    /// pane writes until the connection resumes it is lost.
    fn paused(&self);
    /// The connection ended.
    fn closed(&self, why: &Arc<Closed>);
}

/// Sees every notification except pane output, in order, synchronously,
/// before public subscribers do. Implemented by the api's follower.
pub(crate) trait Watcher: Send + Sync {
    /// One notification.
    fn notification(&self, n: &Notification);
}

/// One public subscription's end of the fan-out.
pub(super) struct Subscriber {
    pub(super) tx: mpsc::Sender<Event>,
    pub(super) missed: Arc<AtomicU64>,
}

impl Subscriber {
    /// Delivers without ever waiting: a full queue counts a miss. Returns
    /// `false` once the subscription is gone.
    fn deliver(&self, event: &Event) -> bool {
        if self.tx.is_closed() {
            return false;
        }
        // After a loss, the gap marker and the event go in together, or
        // neither does: a subscriber that frees one slot at a time would
        // otherwise receive nothing but gap markers.
        let needed = if self.missed.load(Ordering::Acquire) > 0 {
            2
        } else {
            1
        };
        if self.tx.capacity() < needed {
            if self.missed.fetch_add(1, Ordering::AcqRel) == 0 {
                tracing::debug!(
                    "a subscriber's queue is full: its events are counted as a gap until it reads"
                );
            }
            return true;
        }
        if needed == 2 {
            let missed = self.missed.swap(0, Ordering::AcqRel);
            if missed > 0 && self.tx.try_send(Event::Gap { missed }).is_err() {
                self.missed.fetch_add(missed + 1, Ordering::AcqRel);
                return true;
            }
        }
        match self.tx.try_send(event.clone()) {
            Ok(()) => true,
            Err(mpsc::error::TrySendError::Full(_)) => {
                self.missed.fetch_add(1, Ordering::AcqRel);
                true
            }
            Err(mpsc::error::TrySendError::Closed(_)) => false,
        }
    }
}

/// The routing table, owned by the connection task.
#[derive(Default)]
pub(super) struct Routes {
    panes: HashMap<PaneId, Weak<dyn PaneSink>>,
    watchers: Vec<Weak<dyn Watcher>>,
    subscribers: Vec<Subscriber>,
}

impl Routes {
    pub(super) fn add_sink(&mut self, pane: PaneId, sink: Weak<dyn PaneSink>) {
        self.panes.insert(pane, sink);
    }

    pub(super) fn add_watcher(&mut self, watcher: Weak<dyn Watcher>) {
        self.watchers.push(watcher);
    }

    pub(super) fn add_subscriber(&mut self, subscriber: Subscriber) {
        self.subscribers.push(subscriber);
    }

    fn sink(&mut self, pane: PaneId) -> Option<Arc<dyn PaneSink>> {
        let sink = self.panes.get(&pane)?.upgrade();
        if sink.is_none() {
            // Nobody follows the pane any more.
            self.panes.remove(&pane);
        }
        sink
    }

    /// Routes a notification: output to its pane's sink, the rest to the
    /// watchers; then to every subscriber.
    pub(super) fn notification(&mut self, n: Notification) {
        match &n {
            Notification::Output { pane, data }
            | Notification::ExtendedOutput { pane, data, .. } => {
                if let Some(sink) = self.sink(*pane) {
                    sink.output(data);
                }
            }
            other => {
                if let Notification::Pause { pane } = other
                    && let Some(sink) = self.sink(*pane)
                {
                    sink.paused();
                }
                self.watchers.retain(|w| match w.upgrade() {
                    Some(w) => {
                        w.notification(other);
                        true
                    }
                    None => false,
                });
            }
        }
        self.broadcast(&Event::Notification(n));
    }

    pub(super) fn broadcast(&mut self, event: &Event) {
        self.subscribers.retain(|s| s.deliver(event));
    }

    /// The connection ended: every sink hears why, and dropping the
    /// subscribers' senders ends each subscription with [`Event::Closed`].
    pub(super) fn close(&mut self, why: &Arc<Closed>) {
        for sink in self.panes.drain().filter_map(|(_, s)| s.upgrade()) {
            sink.closed(why);
        }
        self.watchers.clear();
        self.subscribers.clear();
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SubState {
    Open,
    Draining,
    Done,
}

/// A stream of [`Event`]s from one connection, with its own bounded queue:
/// a [`Stream`], or [`Subscription::recv`] without an extension trait.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use tokio_stream::StreamExt as _;
/// use tmux_control::command::{NewWindow, RenameWindow};
/// use tmux_control::proto::Notification;
/// use tmux_control::{Event, IsolatedServer, Tmux};
/// let server = IsolatedServer::new()?;
/// let tmux = Tmux::connect(server.server()).await?;
/// let created = tmux.run(NewWindow::new()).await?;
/// // Subscribed in order with commands: sees what the next command causes.
/// let mut renames = tmux.subscribe().filter(|e| {
///     matches!(e, Event::Notification(Notification::WindowRenamed { .. }))
/// });
/// tmux.run(RenameWindow::new(created.window, "logs")).await?;
/// let renamed = renames.next().await;
/// assert!(matches!(renamed, Some(Event::Notification(Notification::WindowRenamed { .. }))));
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct Subscription {
    rx: mpsc::Receiver<Event>,
    missed: Arc<AtomicU64>,
    shared: Arc<Shared>,
    state: SubState,
}

impl Subscription {
    /// The queue length of [`Tmux::subscribe`](crate::Tmux::subscribe).
    pub const DEFAULT_CAPACITY: usize = 4096;

    pub(super) fn new(
        rx: mpsc::Receiver<Event>,
        missed: Arc<AtomicU64>,
        shared: Arc<Shared>,
        registered: bool,
    ) -> Self {
        Self {
            rx,
            missed,
            shared,
            state: if registered {
                SubState::Open
            } else {
                SubState::Draining
            },
        }
    }

    /// The next event; `None` after [`Event::Closed`] has been returned.
    pub async fn recv(&mut self) -> Option<Event> {
        std::future::poll_fn(|cx| self.poll_recv(cx)).await
    }

    /// The next event if one is queued, without waiting: `None` when none
    /// is (or after [`Event::Closed`] has been returned). For a reader
    /// that takes what piled up while it was busy in one go.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use tmux_control::command::NewWindow;
    /// use tmux_control::{IsolatedServer, Tmux};
    /// let server = IsolatedServer::new()?;
    /// let tmux = Tmux::connect(server.server()).await?;
    /// let mut events = tmux.subscribe();
    /// assert!(events.try_recv().is_none());
    /// tmux.run(NewWindow::new()).await?;
    /// // The reply came after the notifications the command caused.
    /// assert!(events.try_recv().is_some());
    /// # Ok(()) }
    /// ```
    pub fn try_recv(&mut self) -> Option<Event> {
        let mut cx = Context::from_waker(std::task::Waker::noop());
        match self.poll_recv(&mut cx) {
            Poll::Ready(event) => event,
            Poll::Pending => None,
        }
    }

    /// Polls for the next event (what [`Subscription::recv`] and the
    /// [`Stream`] impl do).
    pub fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Option<Event>> {
        loop {
            match self.state {
                SubState::Done => return Poll::Ready(None),
                SubState::Draining => {
                    let missed = self.missed.swap(0, Ordering::AcqRel);
                    if missed > 0 {
                        return Poll::Ready(Some(Event::Gap { missed }));
                    }
                    self.state = SubState::Done;
                    return Poll::Ready(Some(Event::Closed(self.shared.closed())));
                }
                SubState::Open => match self.rx.try_recv() {
                    Ok(e) => return Poll::Ready(Some(e)),
                    Err(mpsc::error::TryRecvError::Disconnected) => {
                        self.state = SubState::Draining;
                    }
                    Err(mpsc::error::TryRecvError::Empty) => {
                        let missed = self.missed.swap(0, Ordering::AcqRel);
                        if missed > 0 {
                            return Poll::Ready(Some(Event::Gap { missed }));
                        }
                        match self.rx.poll_recv(cx) {
                            Poll::Ready(Some(e)) => return Poll::Ready(Some(e)),
                            Poll::Ready(None) => self.state = SubState::Draining,
                            Poll::Pending => return Poll::Pending,
                        }
                    }
                },
            }
        }
    }
}

impl Stream for Subscription {
    type Item = Event;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Event>> {
        self.get_mut().poll_recv(cx)
    }
}
