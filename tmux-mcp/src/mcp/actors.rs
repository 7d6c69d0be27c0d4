//! Actors: the name each MCP session goes by, and the caller of each tool
//! call. Who did what to which pane is kept with the terminal
//! ([`crate::terminal::actors`]).
//!
//! Every session has an actor name: a name given for the session (an
//! `X-MCP-Actor` HTTP header, or `_meta["tmux-mcp/actor"]` in the request
//! or in the session's `initialize`, which `tmux-mcp bridge --actor` sets),
//! else the server's `--actor`, else the client's own name from
//! `initialize` (`clientInfo.name`). It is a label for people reading the
//! audit log and the replies, not an identity: any client can claim any
//! name (docs/security.md).
//!
//! The server sets the caller's name for the length of each tool call, so
//! that the tools read it with [`current`] without a new argument. What
//! each caller did to each pane (who created it and typed into it when,
//! and its input turn) is kept with the pane's record, in
//! [`crate::terminal::actors`].

use std::future::Future;
use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::service::RequestContext;

use crate::config::actor_name;

/// The `_meta` key (in `initialize` or in any request) that names the
/// session's actor.
pub(crate) const ACTOR_META_KEY: &str = "tmux-mcp/actor";

/// The HTTP header that names the session's actor.
pub(crate) const ACTOR_HEADER: &str = "x-mcp-actor";

/// The name used when nothing names the caller (a tool called outside an
/// MCP request, a client without a name).
pub(crate) const UNNAMED: &str = "unknown";

tokio::task_local! {
    static ACTOR: Arc<str>;
}

/// Runs `fut` (one tool call) as `actor`.
pub(crate) fn scope<F: Future>(actor: Arc<str>, fut: F) -> impl Future<Output = F::Output> {
    ACTOR.scope(actor, fut)
}

/// The actor of the tool call being served ([`UNNAMED`] outside one).
pub(crate) fn current() -> Arc<str> {
    ACTOR
        .try_with(Arc::clone)
        .unwrap_or_else(|_| Arc::from(UNNAMED))
}

/// The actor of a request: the `X-MCP-Actor` header of an HTTP request
/// (read from the `http::request::Parts` rmcp's HTTP transport puts in the
/// request's extensions), `_meta["tmux-mcp/actor"]` of the request, then
/// `session` (what the session's `initialize` named there), then
/// `configured` (`--actor`), then the client's name, then [`UNNAMED`].
pub(crate) fn of_request(
    ctx: &RequestContext<RoleServer>,
    session: Option<&str>,
    configured: Option<&str>,
) -> String {
    header_actor(&ctx.extensions)
        .or_else(|| named_in(&ctx.meta))
        .or_else(|| session.and_then(actor_name))
        .or_else(|| configured.and_then(actor_name))
        .or_else(|| ctx.client_info().and_then(|info| actor_name(&info.name)))
        .unwrap_or_else(|| UNNAMED.to_owned())
}

/// The actor a request's `_meta` names (`tmux-mcp/actor`), if any.
pub(crate) fn named_in(meta: &rmcp::model::RequestMetaObject) -> Option<String> {
    meta.0
        .0
        .get(ACTOR_META_KEY)
        .and_then(serde_json::Value::as_str)
        .and_then(actor_name)
}

/// The `X-MCP-Actor` header of the HTTP request whose head rmcp's HTTP
/// transport put in `extensions`, if any.
fn header_actor(extensions: &rmcp::model::Extensions) -> Option<String> {
    extensions
        .get::<http::request::Parts>()
        .and_then(|parts| parts.headers.get(ACTOR_HEADER))
        .and_then(|value| value.to_str().ok())
        .and_then(actor_name)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn the_http_header_names_the_actor() {
        let mut extensions = rmcp::model::Extensions::default();
        assert_eq!(header_actor(&extensions), None);
        let (parts, ()) = http::Request::builder()
            .header("X-MCP-Actor", " reviewer ")
            .body(())
            .unwrap()
            .into_parts();
        extensions.insert(parts);
        assert_eq!(header_actor(&extensions).as_deref(), Some("reviewer"));
    }
}
