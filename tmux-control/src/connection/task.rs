//! The connection task: reads frames from `tmux -C`, matches replies to
//! callers in order, and hands everything else to the routing table.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::sync::{mpsc, oneshot};

use super::routing::Routes;
use super::writer::write_loop;
use super::{Event, Message, Shared, Transport};
use crate::command::{Command, CommandLine, OutputSwitch, RefreshClient};
use crate::error::{Closed, Error, Result};
use crate::proto::{DecodeError, Decoder, Frame, FrameError, Notification, Reply};

/// How long a closing connection waits for tmux to finish before killing the
/// client process (a true timer: the grace period of a shutdown).
const SHUTDOWN_GRACE: Duration = Duration::from_secs(3);
/// The most stderr kept for error messages.
const STDERR_CAP: usize = 16 * 1024;

/// Who gets the next flags-1 reply.
enum Waiter {
    /// A caller of `Connection::send`; `true` for `refresh-client -A`, whose
    /// reply body carries `%pause`/`%continue` lines in tmux up to 3.7.
    Caller(oneshot::Sender<Result<Reply>>, bool),
    /// A command the connection sent itself; the reply is ignored (but
    /// scanned like a `refresh-client -A` reply when `true`).
    Ignore(bool),
}

pub(super) struct ConnectionTask {
    pub(super) rx: mpsc::UnboundedReceiver<Message>,
    pub(super) shared: Arc<Shared>,
    pub(super) ready: Option<oneshot::Sender<Result<()>>>,
    pending: VecDeque<Waiter>,
    routes: Routes,
    exit_reason: Option<String>,
    stderr_buf: Vec<u8>,
    write_tx: Option<mpsc::UnboundedSender<Bytes>>,
}

impl ConnectionTask {
    pub(super) fn new(
        rx: mpsc::UnboundedReceiver<Message>,
        shared: Arc<Shared>,
        ready: oneshot::Sender<Result<()>>,
    ) -> Self {
        Self {
            rx,
            shared,
            ready: Some(ready),
            pending: VecDeque::new(),
            routes: Routes::default(),
            exit_reason: None,
            stderr_buf: Vec::new(),
            write_tx: None,
        }
    }

    pub(super) async fn run(mut self, transport: Transport) {
        let Transport {
            mut reader,
            writer,
            stderr,
            mut child,
        } = transport;
        let (write_tx, write_rx) = mpsc::unbounded_channel::<Bytes>();
        let writer = tokio::spawn(write_loop(writer, write_rx));
        self.write_tx = Some(write_tx);

        let mut decoder = Decoder::new();
        let mut buf = BytesMut::with_capacity(64 * 1024);
        let mut err_buf = [0u8; 4096];
        let mut stderr = stderr;
        let mut reading = true;
        let mut requests_open = true;
        let mut batch = Vec::new();
        // A true timer: the shutdown grace period, armed only while shutting
        // down (far away until then).
        let deadline = tokio::time::sleep(Duration::from_secs(3600 * 24 * 365));
        tokio::pin!(deadline);
        let mut shutting_down = false;

        while reading {
            tokio::select! {
                biased;
                read = reader.read_buf(&mut buf) => match read {
                    Ok(0) | Err(_) => reading = false,
                    Ok(_) => {
                        decoder.push(&buf);
                        buf.clear();
                        self.drain(&mut decoder);
                    }
                },
                msg = self.rx.recv(), if requests_open => match msg {
                    Some(first) => {
                        batch.clear();
                        self.accept(first, &mut batch);
                        while let Ok(more) = self.rx.try_recv() {
                            self.accept(more, &mut batch);
                        }
                        if !batch.is_empty()
                            && let Some(w) = &self.write_tx
                        {
                            let _ = w.send(Bytes::copy_from_slice(&batch));
                        }
                    }
                    None => {
                        // Every handle is gone: close tmux's stdin, which
                        // makes it detach us; keep reading until EOF.
                        requests_open = false;
                        self.write_tx = None;
                        shutting_down = true;
                        deadline.as_mut().reset(tokio::time::Instant::now() + SHUTDOWN_GRACE);
                    }
                },
                n = read_some(&mut stderr, &mut err_buf) => match n {
                    Some(n) => {
                        let room = STDERR_CAP.saturating_sub(self.stderr_buf.len());
                        self.stderr_buf.extend_from_slice(&err_buf[..n.min(room)]);
                    }
                    None => stderr = None,
                },
                () = &mut deadline, if shutting_down => {
                    shutting_down = false;
                    match child.as_mut() {
                        Some(child) => { let _ = child.start_kill(); }
                        // A stream has no process to stop: stop reading it.
                        None => reading = false,
                    }
                }
            }
        }
        if let Err(e) = decoder.finish() {
            self.routes.broadcast(&Event::ProtocolError(e));
        }
        self.write_tx = None;
        writer.abort();
        let status = match child.as_mut() {
            // The client is exiting: collect its status, but never hang on it.
            Some(child) => match tokio::time::timeout(SHUTDOWN_GRACE, child.wait()).await {
                Ok(Ok(status)) => status.code(),
                _ => {
                    let _ = child.start_kill();
                    child.wait().await.ok().and_then(|s| s.code())
                }
            },
            None => None,
        };
        if let Some(mut stderr) = stderr {
            let mut rest = Vec::new();
            // A bounded last read of what the client said before exiting.
            let _ = tokio::time::timeout(Duration::from_millis(200), stderr.read_to_end(&mut rest))
                .await;
            let room = STDERR_CAP.saturating_sub(self.stderr_buf.len());
            self.stderr_buf
                .extend_from_slice(&rest[..rest.len().min(room)]);
        }
        let closed = Arc::new(Closed {
            reason: self.exit_reason.take(),
            stderr: String::from_utf8_lossy(&self.stderr_buf).trim().to_owned(),
            exit_status: status,
        });
        tracing::info!(
            server = %self.shared.server,
            reason = ?closed.reason,
            exit_status = ?closed.exit_status,
            "connection closed"
        );
        self.shared.set_closed(closed.clone());
        if let Some(ready) = self.ready.take() {
            let _ = ready.send(Err(Error::Closed(closed.clone())));
        }
        for waiter in self.pending.drain(..) {
            if let Waiter::Caller(tx, _) = waiter {
                let _ = tx.send(Err(Error::Closed(closed.clone())));
            }
        }
        // Requests and registrations that raced with the close.
        self.rx.close();
        while let Ok(msg) = self.rx.try_recv() {
            match msg {
                Message::Request { reply, .. } => {
                    let _ = reply.send(Err(Error::Closed(closed.clone())));
                }
                Message::Route { sink, ack, .. } => {
                    if let Some(sink) = sink.upgrade() {
                        sink.closed(&closed);
                    }
                    let _ = ack.send(());
                }
                Message::Subscribe(_) | Message::Watch(_) => {}
            }
        }
        self.routes.close(&closed);
    }

    fn accept(&mut self, msg: Message, batch: &mut Vec<u8>) {
        match msg {
            Message::Request { line, reply } => {
                batch.extend_from_slice(&line);
                batch.push(b'\n');
                let rescan = is_refresh_a(&line);
                self.pending.push_back(Waiter::Caller(reply, rescan));
            }
            Message::Subscribe(s) => self.routes.add_subscriber(s),
            Message::Route { pane, sink, ack } => {
                self.routes.add_sink(pane, sink);
                let _ = ack.send(());
            }
            Message::Watch(w) => self.routes.add_watcher(w),
        }
    }

    fn drain(&mut self, decoder: &mut Decoder) {
        loop {
            match decoder.decode() {
                Ok(frame) => self.frame(frame),
                Err(DecodeError::Incomplete) => return,
                Err(DecodeError::Failed(e)) => self.frame_error(e),
            }
        }
    }

    fn frame(&mut self, frame: Frame) {
        match frame {
            Frame::Reply(reply) if reply.flags & 1 == 1 => match self.pending.pop_front() {
                Some(Waiter::Caller(tx, rescan)) => {
                    if rescan {
                        self.flow_lines(&reply);
                    }
                    let _ = tx.send(Ok(reply));
                }
                Some(Waiter::Ignore(rescan)) => {
                    if rescan {
                        self.flow_lines(&reply);
                    }
                }
                None => self.routes.broadcast(&Event::Unsolicited(reply)),
            },
            Frame::Reply(reply) => {
                if let Some(ready) = self.ready.take() {
                    let result = crate::command::ok_body("attach", reply.clone()).map(drop);
                    let _ = ready.send(result);
                }
                self.routes.broadcast(&Event::Unsolicited(reply));
            }
            Frame::Notification(n) => self.notification(n),
            Frame::Stray(line) => self.routes.broadcast(&Event::Stray(line)),
            // -C never produces DCS frames.
            _ => {}
        }
    }

    fn frame_error(&mut self, e: FrameError) {
        if let FrameError::BlockTooLarge { header, .. } = &e
            && header.flags & 1 == 1
            && let Some(Waiter::Caller(tx, _)) = self.pending.pop_front()
        {
            let _ = tx.send(Err(Error::Protocol(e.clone())));
        }
        self.routes.broadcast(&Event::ProtocolError(e));
    }

    /// tmux up to 3.7 writes the `%pause`/`%continue` caused by
    /// `refresh-client -A` inside that command's reply; handle and publish
    /// them as the notifications they are.
    fn flow_lines(&mut self, reply: &Reply) {
        for line in &reply.body {
            if (line.starts_with(b"%pause %") || line.starts_with(b"%continue %"))
                && let Ok(n) = crate::proto::parse_notification_line(line)
            {
                self.notification(n);
            }
        }
    }

    /// What the connection itself does with a notification, then routing.
    fn notification(&mut self, n: Notification) {
        match &n {
            Notification::Pause { pane } => {
                tracing::debug!(%pane, "tmux paused the pane's output (it fell behind); resuming it");
                // Flow control: every pane's output is consumed as it
                // arrives, so resume at once (the sink records the loss).
                self.internal(RefreshClient::pane_output(*pane, OutputSwitch::Continue));
            }
            Notification::Continue { pane } => {
                tracing::debug!(%pane, "the pane's output continues");
            }
            Notification::Exit { reason } => {
                self.exit_reason = reason
                    .as_ref()
                    .map(|r| String::from_utf8_lossy(r).into_owned());
            }
            Notification::SessionChanged { session, .. } => self.shared.set_session(*session),
            _ => {}
        }
        self.routes.notification(n);
    }

    /// Sends a `refresh-client -A` of the connection's own; its reply is
    /// ignored but scanned for flow-control lines.
    fn internal(&mut self, command: RefreshClient) {
        let mut line = CommandLine::for_version(self.shared.version().clone());
        if command.encode(&mut line).is_err() {
            return;
        }
        if let Some(w) = &self.write_tx {
            let mut bytes = line.into_bytes();
            bytes.push(b'\n');
            if w.send(Bytes::from(bytes)).is_ok() {
                self.pending.push_back(Waiter::Ignore(true));
            }
        }
    }
}

/// Reads from the optional stderr stream; never ready when there is none.
async fn read_some(
    stderr: &mut Option<Box<dyn AsyncRead + Unpin + Send>>,
    buf: &mut [u8],
) -> Option<usize> {
    match stderr {
        Some(s) => match s.read(buf).await {
            Ok(0) | Err(_) => None,
            Ok(n) => Some(n),
        },
        None => std::future::pending().await,
    }
}

/// `refresh-client … -A …`: its reply may hold flow-control lines.
fn is_refresh_a(line: &[u8]) -> bool {
    line.starts_with(b"refresh-client") && memchr::memmem::find(line, b" -A").is_some()
}
