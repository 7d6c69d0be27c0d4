//! The web view: a live view of every terminal in the browser, with
//! take-over and hand-back (docs/web-view.md is the protocol).
//!
//! It is served under `/ui/`: by `serve --http` on the same port (behind
//! its Host guard; the bearer token is not asked, the web view checks its
//! own cookie), and for the stdio server or `serve --unix` on a listener of
//! its own (`--web ADDR`, [`serve`]), behind the same Host check.
//!
//! - `assets`: the page and xterm.js, compiled into the binary;
//! - `session`: capability keys exchanged for `HttpOnly` cookies, and the
//!   exact-Origin rule;
//! - `keys`: the named, revocable keys, stored hashed, and [`cli`]: the
//!   `tmux-mcp web-key` that makes, lists and revokes them;
//! - `list`: the live list of terminals every tab gets;
//! - `snapshot`: a pane's screen at an exact output offset;
//! - `socket`: one WebSocket per tab, multiplexed by terminal, each
//!   terminal a bounded subscriber of the pane's log with acknowledgements;
//! - `hold`: take-over and hand-back, and a person's input.
//!
//! Viewers never resize a pane: the view follows panes through the
//! server's control connections (observers attach with `ignore-size`) and
//! the page scales its terminal to the pane's size.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};

use crate::mcp::server::{TmuxMcp, WebLink};

mod assets;
pub mod cli;
mod hold;
mod keys;
mod list;
mod session;
mod snapshot;
mod socket;

use keys::KeyStore;
pub use keys::Scope;
use session::Sessions;

/// Where the web view is served.
pub const WEB_PATH: &str = "/ui";

/// Whether `path` is the web view's (the HTTP guard leaves its
/// authentication to it).
pub(crate) fn is_web_path(path: &str) -> bool {
    path == WEB_PATH || path.starts_with("/ui/")
}

/// The web view of one server: its keys, its sessions and the live list
/// of terminals, shared by every tab.
pub struct WebView {
    server: TmuxMcp,
    keys: KeyStore,
    sessions: Sessions,
    list: list::Live,
    fits: hold::Fits,
}

impl std::fmt::Debug for WebView {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebView").finish_non_exhaustive()
    }
}

impl WebView {
    /// The web view of `server`, whose page will be at `page` (like
    /// `http://127.0.0.1:8765/ui/`): makes the server's own key (`link`,
    /// scope `input`) and gives `web_view` its links.
    pub fn new(server: TmuxMcp, page: String) -> Arc<Self> {
        let keys = KeyStore::new(&server.backend.state_dir());
        let key = keys.ephemeral("link", Scope::Input);
        let _ = server.inner.web.set(WebLink { page, key });
        Arc::new(Self {
            list: list::Live::new(server.clone()),
            server,
            keys,
            sessions: Sessions::default(),
            fits: hold::Fits::default(),
        })
    }

    /// The routes under `/ui`.
    pub fn router(self: &Arc<Self>) -> Router {
        Router::new()
            .route(WEB_PATH, axum::routing::get(assets::to_page))
            .route("/ui/", axum::routing::get(assets::page))
            .route("/ui/{*file}", axum::routing::get(assets::file))
            .route(
                "/ui/session",
                axum::routing::get(session::resume).post(session::exchange),
            )
            .route("/ui/ws", axum::routing::get(socket::upgrade))
            .with_state(Arc::clone(self))
    }

    /// Whether a request carries a valid session cookie (for the HTTP
    /// listener's rule that keeps authorised connections open).
    /// The handlers check the key itself; this only looks the cookie up.
    pub(crate) fn authorised(&self, headers: &axum::http::HeaderMap) -> bool {
        self.sessions.known(headers)
    }
}

/// Why the web view's own listener cannot start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WebError {
    /// Not a loopback address, and `--web-allow-remote` was not given.
    #[error(
        "--web {0} is not a loopback address: other machines could reach the web view. Use 127.0.0.1:PORT, or add --web-allow-remote if you mean it (a key is still required)"
    )]
    NotLoopback(SocketAddr),
    /// The address cannot be bound.
    #[error("cannot listen on {addr} for the web view: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// The operating system's error.
        source: std::io::Error,
    },
}

/// Serves the web view of `server` on a listener of its own at `addr`
/// (`--web`), behind the Host check, until the process ends; returns the
/// address bound.
///
/// ```no_run
/// # async fn f() -> Result<(), Box<dyn std::error::Error>> {
/// use tmux_control_mcp::{Config, TmuxMcp};
/// let server = TmuxMcp::new(Config::default())?;
/// let bound = tmux_control_mcp::transport::web::serve(server, "127.0.0.1:0".parse()?, false).await?;
/// println!("{}", tmux_control_mcp::transport::web::page_url(bound));
/// # Ok(()) }
/// ```
pub async fn serve(
    server: TmuxMcp,
    addr: SocketAddr,
    allow_remote: bool,
) -> Result<SocketAddr, WebError> {
    if !addr.ip().to_canonical().is_loopback() && !allow_remote {
        return Err(WebError::NotLoopback(addr));
    }
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|source| WebError::Bind { addr, source })?;
    let bound = listener
        .local_addr()
        .map_err(|source| WebError::Bind { addr, source })?;
    let view = WebView::new(server, page_url(bound));
    let app = view
        .router()
        .fallback(|| async {
            (
                StatusCode::NOT_FOUND,
                "Not found: the web view is at /ui/\n",
            )
        })
        .layer(middleware::from_fn_with_state(
            Arc::new((bound, allow_remote)),
            host_guard,
        ));
    tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, app).await {
            tracing::error!("the web view's listener failed: {e}");
        }
    });
    Ok(bound)
}

/// The page's URL for a listener bound at `bound` (loopback for an
/// unspecified address).
///
/// ```
/// use tmux_control_mcp::transport::web::page_url;
/// assert_eq!(page_url("0.0.0.0:8766".parse()?), "http://127.0.0.1:8766/ui/");
/// assert_eq!(page_url("[::1]:8766".parse()?), "http://[::1]:8766/ui/");
/// # Ok::<(), std::net::AddrParseError>(())
/// ```
pub fn page_url(bound: SocketAddr) -> String {
    let ip = match bound.ip() {
        std::net::IpAddr::V4(ip) if ip.is_unspecified() => std::net::Ipv4Addr::LOCALHOST.into(),
        std::net::IpAddr::V6(ip) if ip.is_unspecified() => std::net::Ipv6Addr::LOCALHOST.into(),
        ip => ip,
    };
    format!("http://{}{WEB_PATH}/", SocketAddr::new(ip, bound.port()))
}

/// The Host check of `--web`'s own listener (`serve --http` has its guard).
async fn host_guard(
    State(at): State<Arc<(SocketAddr, bool)>>,
    request: Request,
    next: Next,
) -> Response {
    match crate::transport::http::host_allowed(at.0, at.1, request.headers()) {
        Ok(()) => next.run(request).await,
        Err(why) => {
            tracing::warn!(%why, "refused a web view request");
            (StatusCode::FORBIDDEN, format!("Forbidden: {why}\n")).into_response()
        }
    }
}

/// `text` with every web key in it masked: each `key=` followed by a key's
/// 64 hex digits (as the view's links carry it) becomes `key=[masked]`.
/// For diagnostics, which may hold a `web_view` reply at the debug level:
/// no key ever reaches a log.
///
/// ```
/// use tmux_control_mcp::transport::web::mask_keys;
/// let line = format!("url: http://127.0.0.1:1/ui/#key={}", "ab".repeat(32));
/// assert_eq!(mask_keys(line.as_bytes()).as_ref(), b"url: http://127.0.0.1:1/ui/#key=[masked]");
/// assert_eq!(mask_keys(b"key=short").as_ref(), b"key=short");
/// ```
pub fn mask_keys(text: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    const NAME: &[u8] = b"key=";
    const DIGITS: usize = 2 * keys::KEY_BYTES;
    let is_key = |rest: &[u8]| {
        rest.len() >= DIGITS
            && rest[..DIGITS].iter().all(u8::is_ascii_hexdigit)
            && rest.get(DIGITS).is_none_or(|b| !b.is_ascii_hexdigit())
    };
    let found = memchr::memmem::find_iter(text, NAME).any(|at| is_key(&text[at + NAME.len()..]));
    if !found {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = Vec::with_capacity(text.len());
    let mut at = 0;
    while at < text.len() {
        if text[at..].starts_with(NAME) && is_key(&text[at + NAME.len()..]) {
            out.extend_from_slice(b"key=[masked]");
            at += NAME.len() + DIGITS;
        } else {
            out.push(text[at]);
            at += 1;
        }
    }
    std::borrow::Cow::Owned(out)
}
