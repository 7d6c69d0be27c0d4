//! Bounded, cancellable waits that report progress.

use std::future::Future;
use std::time::{Duration, Instant};

use rmcp::handler::server::common::{AsRequestContext, FromContextPart};
use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, Peer, RoleServer};
use tokio_util::sync::CancellationToken;

/// How often a wait sends a progress notification.
pub(crate) const PROGRESS_EVERY: Duration = Duration::from_secs(1);

/// What a tool call needs to wait well: the request's cancellation token and,
/// when the client asked for progress, where to send it.
///
/// The tools that wait (`run` and the `wait_for_*` tools) take a `CallCtx`
/// as an ordinary argument. It is an rmcp extractor: it implements rmcp's
/// [`FromContextPart`], so when a client calls such a tool, rmcp builds it
/// from the request's context ([`CallCtx::from_request`]), just as it builds
/// the `Parameters` argument from the request's arguments. The tool method
/// is then the whole tool: there is no second, context-free copy of it for
/// tests. Tests, and anything else that calls a tool method without an MCP
/// client, pass [`CallCtx::detached`] (or [`CallCtx::with_cancel`]) instead.
/// Taking rmcp's `RequestContext` in the tool would tie every call to a live
/// peer, which only exists inside a running MCP session.
#[derive(Debug, Clone)]
pub struct CallCtx {
    ct: CancellationToken,
    progress: Option<(Peer<RoleServer>, ProgressToken)>,
}

/// How a wait ended.
#[derive(Debug)]
pub enum Waited<T> {
    /// The future finished.
    Done(T),
    /// The client cancelled the request (`notifications/cancelled`).
    Cancelled,
}

/// Lets a `#[tool]` method take a `CallCtx` argument: rmcp fills it in from
/// the tool call's request context.
impl<C: AsRequestContext> FromContextPart<C> for CallCtx {
    fn from_context_part(context: &mut C) -> Result<Self, ErrorData> {
        Ok(Self::from_request(context.as_request_context()))
    }
}

impl CallCtx {
    /// The context of an MCP request.
    pub fn from_request(ctx: &RequestContext<RoleServer>) -> Self {
        Self {
            ct: ctx.ct.clone(),
            progress: ctx
                .meta
                .get_progress_token()
                .map(|token| (ctx.peer.clone(), token)),
        }
    }

    /// A context with no client: never cancelled, no progress (for calling
    /// tool implementations directly).
    pub fn detached() -> Self {
        Self {
            ct: CancellationToken::new(),
            progress: None,
        }
    }

    /// A detached context cancelled through `ct`.
    pub fn with_cancel(ct: CancellationToken) -> Self {
        Self { ct, progress: None }
    }

    /// Whether the request was cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.ct.is_cancelled()
    }

    /// Runs `fut` (which bounds itself by `limit`) until it finishes or the
    /// request is cancelled, sending a progress notification every second
    /// when the client gave a progress token.
    pub async fn wait<F: Future>(&self, what: &str, limit: Duration, fut: F) -> Waited<F::Output> {
        let started = Instant::now();
        let mut fut = std::pin::pin!(fut);
        let start = tokio::time::Instant::now() + PROGRESS_EVERY;
        // A true timer: the progress heartbeat (the wait itself is pushed).
        let mut ticker = tokio::time::interval_at(start, PROGRESS_EVERY);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        loop {
            tokio::select! {
                biased;
                () = self.ct.cancelled() => return Waited::Cancelled,
                out = &mut fut => return Waited::Done(out),
                _ = ticker.tick(), if self.progress.is_some() => {
                    self.progress(what, started.elapsed(), limit).await;
                }
            }
        }
    }

    async fn progress(&self, what: &str, elapsed: Duration, limit: Duration) {
        let Some((peer, token)) = &self.progress else {
            return;
        };
        let secs = elapsed.as_secs_f64();
        let param = ProgressNotificationParam::new(token.clone(), secs)
            .with_total(limit.as_secs_f64().ceil())
            .with_message(format!(
                "{what}: {:.0}s of at most {:.0}s",
                secs,
                limit.as_secs_f64()
            ));
        if let Err(e) = peer.notify_progress(param).await {
            tracing::debug!("progress notification not sent: {e}");
        }
    }
}
