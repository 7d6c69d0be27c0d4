//! Serving: the routes (`/mcp` behind `messages`, `/health`, and the
//! answer to any other path) assembled behind the guard, every MCP session
//! served by its own value of one shared `TmuxMcp`, on the listener that
//! enforces the connection rules, until shutdown.

use std::future::Future;
use std::sync::Arc;

use axum::Router;
use axum::http::StatusCode;
use axum::middleware;
use axum::response::IntoResponse;
use axum::routing::get;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use super::guard::{Policy, guard};
use super::listener::{ConnHandle, Connections, GuardedListener};
use super::{HEALTH_PATH, HttpError, HttpServer, MCP_PATH, messages};

impl HttpServer {
    /// Serves until `shutdown` completes; then ends every MCP session and
    /// returns once open connections are closed.
    pub async fn serve(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), HttpError> {
        let cancel = CancellationToken::new();
        let shared = self.server.clone();
        let config = StreamableHttpServerConfig::default()
            .with_cancellation_token(cancel.child_token())
            // The guard in front of every route checks Host and Origin (with
            // the port, and the --allow-remote rules rmcp's lists cannot
            // express); rmcp's own Host check would only repeat it for /mcp.
            .disable_allowed_hosts()
            .disable_allowed_origins()
            .with_max_request_body_bytes(messages::MAX_BODY);
        let sessions = Arc::new(LocalSessionManager::default());
        let mcp = StreamableHttpService::new(
            // One server for every session: clones share all state.
            // Each session its own value (its own resource subscriptions),
            // all sharing one server's state.
            move || Ok(shared.for_session()),
            Arc::clone(&sessions),
            config,
        );
        // Every message posted to /mcp gets a JSON-RPC answer.
        let mcp = Router::new()
            .route_service(MCP_PATH, mcp)
            .layer(middleware::from_fn_with_state(
                Arc::new(messages::Messages::new(sessions)),
                messages::check,
            ));
        let web = crate::transport::web::WebView::new(
            self.server.clone(),
            crate::transport::web::page_url(self.local),
        );
        let policy = Arc::new(Policy {
            token: self.token,
            bound: self.local,
            allow_remote: self.allow_remote,
            web: Some(Arc::clone(&web)),
        });
        let app = Router::new()
            .route(HEALTH_PATH, get(health))
            .merge(mcp)
            .merge(web.router())
            .fallback(not_found)
            .layer(middleware::from_fn_with_state(policy, guard));
        let listener = GuardedListener {
            listener: self.listener,
            connections: Arc::new(Connections::new(self.max_connections, self.header_timeout)),
        };
        let stop = cancel.clone();
        axum::serve(
            listener,
            app.into_make_service_with_connect_info::<ConnHandle>(),
        )
        .with_graceful_shutdown(async move {
            shutdown.await;
            // Ends the sessions' SSE streams, so the graceful shutdown
            // does not wait for clients that hold one open.
            stop.cancel();
        })
        .await
        .map_err(HttpError::Serve)
    }
}

async fn health() -> impl IntoResponse {
    axum::Json(serde_json::json!({
        "status": "ok",
        "name": crate::mcp::server::SERVER_NAME,
        "version": env!("CARGO_PKG_VERSION"),
    }))
}

async fn not_found() -> impl IntoResponse {
    (
        StatusCode::NOT_FOUND,
        format!("Not found: MCP is served at {MCP_PATH}, the health check at {HEALTH_PATH}\n"),
    )
}
