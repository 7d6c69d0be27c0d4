//! The connection rules in front of the routes: at most so many
//! connections, and a header timeout for those that have not carried an
//! authorised request (see the module documentation of [`super`]).

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use axum::extract::connect_info::Connected;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use super::MAX_CONNECTIONS_VAR;

/// How long accepting waits after the system refused a connection for want
/// of resources (descriptors, memory) and no connection of ours ended.
const ACCEPT_RETRY: Duration = Duration::from_secs(1);

/// `max` or, when lower, half the soft descriptor limit (at least 1): the
/// other half is for tmux, the panes' logs and the rest of the server, so
/// the cap is reached before descriptors run out.
pub(super) fn within_descriptors(max: usize) -> usize {
    let limit = rustix::process::getrlimit(rustix::process::Resource::Nofile);
    match limit.current.and_then(|n| usize::try_from(n / 2).ok()) {
        Some(half) => max.min(half.max(1)),
        None => max,
    }
}

/// Locks `mutex`; a panic elsewhere while it was held leaves plain data
/// that is still consistent (every update is one assignment), so it is
/// used as it is.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The open connections of one server, with its cap and header timeout.
///
/// A connection is *authorised* once a request on it has carried the right
/// token. Until then it must deliver each request's headers within the
/// header timeout (of being accepted, or of its previous answer), or it is
/// closed; and when the cap is reached, a new connection takes the place
/// of the oldest one that is not authorised. Authorised connections are
/// never closed by either rule; when all `max` are authorised, a new
/// connection is closed at once.
#[derive(Debug)]
pub(super) struct Connections {
    max: usize,
    header_timeout: Duration,
    table: Mutex<Table>,
    /// Notified whenever a connection's stream is dropped.
    ended: tokio::sync::Notify,
}

#[derive(Debug, Default)]
struct Table {
    next_id: u64,
    /// By id: oldest first.
    open: BTreeMap<u64, Arc<Connection>>,
}

impl Connections {
    pub(super) fn new(max: usize, header_timeout: Duration) -> Self {
        Self {
            max,
            header_timeout,
            table: Mutex::new(Table::default()),
            ended: tokio::sync::Notify::new(),
        }
    }

    /// Makes room for a new connection and records it; `None` when every
    /// open connection is authorised and the cap is reached.
    fn admit(&self) -> Option<(u64, Arc<Connection>)> {
        let mut table = lock(&self.table);
        while table.open.len() >= self.max {
            if !shed_oldest(&mut table) {
                return None;
            }
        }
        let id = table.next_id;
        table.next_id += 1;
        let connection = Arc::new(Connection::new(self.header_timeout));
        table.open.insert(id, Arc::clone(&connection));
        Some((id, connection))
    }

    /// Closes the oldest connection that is not authorised; false when
    /// there is none.
    fn shed_oldest(&self) -> bool {
        shed_oldest(&mut lock(&self.table))
    }

    fn release(&self, id: u64) {
        lock(&self.table).open.remove(&id);
        self.ended.notify_waiters();
    }
}

/// Removes the oldest connection that is not authorised from `table` and
/// tells it to close; false when there is none.
fn shed_oldest(table: &mut Table) -> bool {
    let oldest = table
        .open
        .iter()
        .find(|(_, connection)| !connection.is_authorised())
        .map(|(id, _)| *id);
    match oldest.and_then(|id| table.open.remove(&id)) {
        Some(connection) => {
            tracing::debug!("closed an HTTP connection without an authorised request to make room");
            connection.shed();
            true
        }
        None => false,
    }
}

/// What the server knows of one connection, shared by its stream (which
/// enforces it) and the guard (which sees its requests).
#[derive(Debug)]
pub(super) struct Connection {
    header_timeout: Duration,
    state: Mutex<ConnectionState>,
}

#[derive(Debug)]
struct ConnectionState {
    /// A request on it carried the right token.
    authorised: bool,
    /// When the headers of the request awaited must have arrived; `None`
    /// while a request is served, and once authorised.
    deadline: Option<tokio::time::Instant>,
    /// Closed to make room for another.
    shed: bool,
    /// The task reading the connection, woken when the above change.
    reader: Option<Waker>,
}

/// What the stream must do now.
enum Watch {
    /// Fail: the connection was shed.
    Shed,
    /// Read, failing at this deadline if there is one.
    Read(Option<tokio::time::Instant>),
}

impl Connection {
    pub(super) fn new(header_timeout: Duration) -> Self {
        Self {
            header_timeout,
            state: Mutex::new(ConnectionState {
                authorised: false,
                deadline: Some(tokio::time::Instant::now() + header_timeout),
                shed: false,
                reader: None,
            }),
        }
    }

    fn is_authorised(&self) -> bool {
        lock(&self.state).authorised
    }

    fn is_shed(&self) -> bool {
        lock(&self.state).shed
    }

    /// What reading must do; `waker` is woken when that changes.
    fn watch(&self, waker: &Waker) -> Watch {
        let mut state = lock(&self.state);
        if state.shed {
            return Watch::Shed;
        }
        if !state.reader.as_ref().is_some_and(|w| w.will_wake(waker)) {
            state.reader = Some(waker.clone());
        }
        Watch::Read(state.deadline)
    }

    /// Changes the state and wakes the reader.
    fn update(&self, change: impl FnOnce(&mut ConnectionState)) {
        let reader = {
            let mut state = lock(&self.state);
            change(&mut state);
            state.reader.take()
        };
        if let Some(reader) = reader {
            reader.wake();
        }
    }

    fn shed(&self) {
        self.update(|state| state.shed = true);
    }

    /// A request's headers arrived: no deadline while it is served.
    pub(super) fn request_arrived(&self) {
        self.update(|state| state.deadline = None);
    }

    /// It carried the right token: no deadline, and never shed.
    pub(super) fn authorise(&self) {
        self.update(|state| {
            state.authorised = true;
            state.deadline = None;
        });
    }

    /// The request was answered: unless authorised, the next request's
    /// headers must arrive within the header timeout.
    pub(super) fn request_answered(&self) {
        let timeout = self.header_timeout;
        self.update(|state| {
            if !state.authorised {
                state.deadline = Some(tokio::time::Instant::now() + timeout);
            }
        });
    }
}

/// The TCP listener of `serve --http`, with the connection rules of
/// [`Connections`].
pub(super) struct GuardedListener {
    pub(super) listener: tokio::net::TcpListener,
    pub(super) connections: Arc<Connections>,
}

impl GuardedListener {
    /// After a failed `accept`: one connection's failure is passed over; a
    /// lack of resources (descriptors, memory) is logged, the oldest
    /// connection without an authorised request is closed to free its
    /// descriptor, and accepting resumes when a connection ends.
    async fn accept_failed(&self, error: std::io::Error) {
        use std::io::ErrorKind;
        if matches!(
            error.kind(),
            ErrorKind::ConnectionAborted | ErrorKind::ConnectionReset | ErrorKind::Interrupted
        ) {
            return;
        }
        tracing::warn!(%error, "cannot accept an HTTP connection");
        let ended = self.connections.ended.notified();
        tokio::pin!(ended);
        ended.as_mut().enable();
        self.connections.shed_oldest();
        // A true timer: a deadline. Descriptors freed elsewhere in the
        // process (not by one of these connections ending) give no event,
        // so accepting is tried again after at most this long.
        let _ = tokio::time::timeout(ACCEPT_RETRY, ended).await;
    }
}

impl axum::serve::Listener for GuardedListener {
    type Io = GuardedStream;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (GuardedStream, SocketAddr) {
        loop {
            match self.listener.accept().await {
                Ok((stream, addr)) => match self.connections.admit() {
                    Some((id, connection)) => {
                        let deadline =
                            tokio::time::Instant::now() + self.connections.header_timeout;
                        let stream = GuardedStream {
                            stream,
                            id,
                            connection,
                            connections: Arc::clone(&self.connections),
                            timer: Box::pin(tokio::time::sleep_until(deadline)),
                        };
                        return (stream, addr);
                    }
                    None => {
                        tracing::warn!(
                            max = self.connections.max,
                            "refused an HTTP connection: all open connections carry authorised requests (raise {MAX_CONNECTIONS_VAR})"
                        );
                        drop(stream);
                    }
                },
                Err(error) => self.accept_failed(error).await,
            }
        }
    }

    fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }
}

/// A connection's stream: reading fails once the connection is shed or
/// its header deadline has passed, which makes the HTTP server close it.
pub(super) struct GuardedStream {
    stream: tokio::net::TcpStream,
    id: u64,
    connection: Arc<Connection>,
    connections: Arc<Connections>,
    /// The header deadline: a true timer.
    timer: Pin<Box<tokio::time::Sleep>>,
}

impl Drop for GuardedStream {
    fn drop(&mut self) {
        self.connections.release(self.id);
    }
}

fn shed_error() -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::ConnectionAborted,
        "closed to make room for another connection",
    )
}

impl AsyncRead for GuardedStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = &mut *self;
        match this.connection.watch(cx.waker()) {
            Watch::Shed => return Poll::Ready(Err(shed_error())),
            Watch::Read(Some(deadline)) => {
                if this.timer.deadline() != deadline {
                    this.timer.as_mut().reset(deadline);
                }
                if this.timer.as_mut().poll(cx).is_ready() {
                    tracing::debug!(
                        "closed an HTTP connection: its request headers did not arrive in time"
                    );
                    return Poll::Ready(Err(std::io::Error::new(
                        std::io::ErrorKind::TimedOut,
                        "the request headers did not arrive in time",
                    )));
                }
            }
            Watch::Read(None) => {}
        }
        Pin::new(&mut this.stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for GuardedStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        if self.connection.is_shed() {
            return Poll::Ready(Err(shed_error()));
        }
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        if self.connection.is_shed() {
            return Poll::Ready(Err(shed_error()));
        }
        Pin::new(&mut self.stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

/// The connection's record, handed to every request on it (as
/// `ConnectInfo`) so the guard can tell it what it saw.
#[derive(Clone)]
pub(super) struct ConnHandle(pub(super) Arc<Connection>);

impl<'a> Connected<axum::serve::IncomingStream<'a, GuardedListener>> for ConnHandle {
    fn connect_info(stream: axum::serve::IncomingStream<'a, GuardedListener>) -> Self {
        Self(Arc::clone(&stream.io().connection))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn unauthorised_connections_make_room_and_authorised_ones_stay() {
        let connections = Connections::new(2, Duration::from_secs(10));
        let (first, a) = connections.admit().unwrap();
        let (_, b) = connections.admit().unwrap();
        a.authorise();
        // Full: the oldest connection without an authorised request goes.
        let (_, c) = connections.admit().unwrap();
        assert!(b.is_shed());
        assert!(!a.is_shed() && !c.is_shed());
        c.authorise();
        // Full of authorised connections: the new one is refused.
        assert!(connections.admit().is_none());
        connections.release(first);
        assert!(connections.admit().is_some());
    }

    #[test]
    fn the_header_deadline_is_armed_until_a_request_is_authorised() {
        let connection = Connection::new(Duration::from_secs(10));
        let deadline = |c: &Connection| lock(&c.state).deadline;
        assert!(deadline(&connection).is_some());
        connection.request_arrived();
        assert!(deadline(&connection).is_none());
        connection.request_answered();
        assert!(deadline(&connection).is_some());
        connection.request_arrived();
        connection.authorise();
        connection.request_answered();
        assert!(deadline(&connection).is_none());
        assert!(connection.is_authorised());
    }
}
