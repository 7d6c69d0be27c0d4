//! Streamable HTTP: `tmux-mcp serve --http ADDR`.
//!
//! rmcp's [`StreamableHttpService`] serves MCP at `/mcp` under an axum
//! router; every MCP session (and, on the 2026-07-28 generation, every
//! stateless request) is served by a clone of one [`TmuxMcp`], so they all
//! share one tmux backend, one set of followed panes and one audit log.
//!
//! In front of every route sits one guard (an axum middleware), in this order:
//!
//! 1. **Host and Origin** (the DNS-rebinding guard): the `Host` header must
//!    name the bound port and either a loopback name (`localhost`,
//!    `127.0.0.1`, `[::1]`) or the bound address; with `--allow-remote` on
//!    an unspecified address (`0.0.0.0`, `[::]`) any IP literal is accepted,
//!    never a DNS name other than `localhost`. An `Origin`, when present,
//!    must be a loopback origin (any port) or, with `--allow-remote`, the
//!    request's own origin. Anything else: 403.
//! 2. **The bearer token**, on every request except `GET /health`:
//!    `Authorization: Bearer TOKEN`, compared in constant time; missing or
//!    wrong: 401 with `WWW-Authenticate: Bearer`.
//!
//! Behind it, on `/mcp`, `messages` gives every posted JSON-RPC message a
//! JSON-RPC answer (a parse error, invalid params, a duplicate id in
//! flight) where rmcp would answer with plain text, a wrong code, or not
//! at all.
//!
//! The token lives in a file (`--token-file`, by default `http-token` in the
//! state directory), created with mode 0600 on first use from the
//! operating system's random source; an existing one must pass
//! [`read_token_file`] (a private regular file of this user, at most
//! [`MAX_TOKEN_FILE_BYTES`], one token), which `doctor` uses too.
//!
//! Before any of that, the connection rules of `Connections`: at most
//! [`DEFAULT_MAX_CONNECTIONS`] connections (`TMUX_MCP_HTTP_MAX_CONNECTIONS`,
//! never more than half the descriptor limit); a connection that has not
//! carried an authorised request must send each request's headers within
//! [`DEFAULT_HEADER_TIMEOUT`] (`TMUX_MCP_HTTP_HEADER_TIMEOUT_SECS`) and is
//! the first to be closed when a new connection needs its place. axum's
//! `serve` offers no header timeout to set (it gives hyper's builder no
//! timer, and serving hyper directly would take new dependencies), so the
//! listener and the stream here enforce both rules.
//! docs/security.md gives the trust model.
//!
//! The token and its file are in `token`, the connection rules in
//! `listener`, the JSON-RPC answers to bad messages in `messages`.

use std::future::Future;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::connect_info::ConnectInfo;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use crate::server::TmuxMcp;

mod listener;
mod messages;
mod token;

use listener::{ConnHandle, Connection, Connections, GuardedListener, within_descriptors};
pub use token::{
    MAX_TOKEN_FILE_BYTES, Token, TokenFile, TokenFileProblem, TokenFileRefusal,
    load_or_create_token, read_token_file,
};

/// The path MCP is served at.
pub const MCP_PATH: &str = "/mcp";

/// The path of the unauthenticated health check.
pub const HEALTH_PATH: &str = "/health";

/// The name of the token file in the state directory when `--token-file`
/// is not given.
pub const DEFAULT_TOKEN_FILE: &str = "http-token";

/// The variable that sets the most connections open at once.
pub const MAX_CONNECTIONS_VAR: &str = "TMUX_MCP_HTTP_MAX_CONNECTIONS";

/// The variable that sets the header timeout, in seconds.
pub const HEADER_TIMEOUT_VAR: &str = "TMUX_MCP_HTTP_HEADER_TIMEOUT_SECS";

/// The most connections open at once unless [`MAX_CONNECTIONS_VAR`] says
/// otherwise (never more than half the descriptor limit).
pub const DEFAULT_MAX_CONNECTIONS: usize = 128;

/// How long a connection that has not carried an authorised request may
/// take to send a request's headers, unless [`HEADER_TIMEOUT_VAR`] says
/// otherwise.
pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// The largest connection cap that can be asked for.
const MAX_MAX_CONNECTIONS: usize = 1 << 16;

/// The longest header timeout that can be asked for, in seconds.
const MAX_HEADER_TIMEOUT_SECS: f64 = 3600.0;

/// Why `serve --http` cannot start or stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HttpError {
    /// The `--http` address is not an IP address and port.
    #[error(
        "--http {given:?} is not an address to listen on: {reason} (give an IP address and port, e.g. 127.0.0.1:8765)"
    )]
    BadAddress {
        /// What was given.
        given: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A non-loopback address without `--allow-remote`.
    #[error(
        "--http {addr} is not a loopback address: other machines could reach the server. \
         Use 127.0.0.1 or [::1], or add --allow-remote if you mean it (the bearer token is still required)"
    )]
    NotLoopback {
        /// The address refused.
        addr: SocketAddr,
    },
    /// The token file cannot be used.
    #[error("the bearer token file {path}: {reason}")]
    TokenFile {
        /// The token file.
        path: PathBuf,
        /// What is wrong, and what to do about it.
        reason: String,
    },
    /// A connection limit variable that is not a usable value.
    #[error("{variable}={given:?}: {reason}")]
    BadLimit {
        /// The variable.
        variable: &'static str,
        /// Its value.
        given: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The address cannot be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// The server failed while serving.
    #[error("the HTTP server failed: {0}")]
    Serve(std::io::Error),
}

impl HttpError {
    /// Whether the error is in what the user configured (exit status 2), as
    /// opposed to a failure of the system (exit status 1).
    pub fn is_config_error(&self) -> bool {
        matches!(
            self,
            Self::BadAddress { .. }
                | Self::NotLoopback { .. }
                | Self::TokenFile { .. }
                | Self::BadLimit { .. }
        )
    }
}

/// What `serve --http` was asked for.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct HttpOptions {
    /// The address to listen on (port 0: any free port).
    pub addr: SocketAddr,
    /// The bearer token file.
    pub token_file: PathBuf,
    /// Whether the token file is the default one (its directory, the state
    /// directory, is then created with mode 0700 if missing).
    pub token_file_is_default: bool,
    /// Whether a non-loopback address is allowed.
    pub allow_remote: bool,
    /// The most connections open at once ([`MAX_CONNECTIONS_VAR`]; the
    /// server uses at most half its descriptor limit).
    pub max_connections: usize,
    /// How long a connection that has not carried an authorised request
    /// may take to send a request's headers ([`HEADER_TIMEOUT_VAR`]).
    pub header_timeout: Duration,
}

impl HttpOptions {
    /// Options from the `--http` address, `--token-file` (or the default in
    /// `state_dir`, or the default state directory), `--allow-remote` and
    /// the connection limits in [`MAX_CONNECTIONS_VAR`] and
    /// [`HEADER_TIMEOUT_VAR`]. Refuses an address that is not loopback
    /// unless `allow_remote`, and a limit that is not a usable value.
    pub fn new(
        http: &str,
        token_file: Option<&Path>,
        state_dir: Option<&Path>,
        allow_remote: bool,
    ) -> Result<Self, HttpError> {
        let addr = parse_addr(http)?;
        if !is_loopback(addr.ip()) && !allow_remote {
            return Err(HttpError::NotLoopback { addr });
        }
        let (token_file, token_file_is_default) = match token_file {
            Some(path) => (path.to_path_buf(), false),
            None => {
                let dir = state_dir
                    .map(Path::to_path_buf)
                    .unwrap_or_else(crate::backend::default_state_dir);
                (dir.join(DEFAULT_TOKEN_FILE), true)
            }
        };
        let (max_connections, header_timeout) = limits(|name| std::env::var_os(name))?;
        Ok(Self {
            addr,
            token_file,
            token_file_is_default,
            allow_remote,
            max_connections,
            header_timeout,
        })
    }
}

/// The connection cap and the header timeout from the variables `var`
/// gives (the defaults for those not set).
fn limits(
    var: impl Fn(&str) -> Option<std::ffi::OsString>,
) -> Result<(usize, Duration), HttpError> {
    let given = |variable: &'static str| -> Result<Option<String>, HttpError> {
        var(variable)
            .map(|value| {
                value.into_string().map_err(|value| HttpError::BadLimit {
                    variable,
                    given: value.to_string_lossy().into_owned(),
                    reason: "not text".into(),
                })
            })
            .transpose()
    };
    let max_connections = match given(MAX_CONNECTIONS_VAR)? {
        None => DEFAULT_MAX_CONNECTIONS,
        Some(text) => match text.trim().parse::<usize>() {
            Ok(n) if (1..=MAX_MAX_CONNECTIONS).contains(&n) => n,
            _ => {
                return Err(HttpError::BadLimit {
                    variable: MAX_CONNECTIONS_VAR,
                    given: text,
                    reason: format!(
                        "the most connections open at once must be a whole number from 1 to {MAX_MAX_CONNECTIONS} (default {DEFAULT_MAX_CONNECTIONS})"
                    ),
                });
            }
        },
    };
    let header_timeout = match given(HEADER_TIMEOUT_VAR)? {
        None => DEFAULT_HEADER_TIMEOUT,
        Some(text) => match text.trim().parse::<f64>() {
            Ok(secs) if secs > 0.0 && secs <= MAX_HEADER_TIMEOUT_SECS => {
                Duration::from_secs_f64(secs)
            }
            _ => {
                return Err(HttpError::BadLimit {
                    variable: HEADER_TIMEOUT_VAR,
                    given: text,
                    reason: format!(
                        "the header timeout must be a number of seconds above 0 and at most {MAX_HEADER_TIMEOUT_SECS} (default {})",
                        DEFAULT_HEADER_TIMEOUT.as_secs()
                    ),
                });
            }
        },
    };
    Ok((max_connections, header_timeout))
}

/// `IP:PORT`, `[IPv6]:PORT` or `localhost:PORT` (as 127.0.0.1).
fn parse_addr(given: &str) -> Result<SocketAddr, HttpError> {
    let bad = |reason: &str| HttpError::BadAddress {
        given: given.to_owned(),
        reason: reason.to_owned(),
    };
    if let Ok(addr) = given.parse::<SocketAddr>() {
        return Ok(addr);
    }
    let (host, port) = given
        .rsplit_once(':')
        .ok_or_else(|| bad("no port (ADDRESS:PORT)"))?;
    let port: u16 = port
        .parse()
        .map_err(|_| bad("the port is not a number from 0 to 65535"))?;
    if host.eq_ignore_ascii_case("localhost") {
        return Ok(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port));
    }
    Err(bad(
        "not an IP address (host names other than localhost are not resolved)",
    ))
}

fn is_loopback(ip: IpAddr) -> bool {
    ip.to_canonical().is_loopback()
}

/// Which requests the guard lets through (see the module documentation).
#[derive(Debug)]
struct Policy {
    token: Token,
    /// The bound address (its real port, also when 0 was asked for).
    bound: SocketAddr,
    allow_remote: bool,
}

/// Why the guard refused a request.
#[derive(Debug, PartialEq, Eq)]
enum Refusal {
    /// 403: a Host or Origin that is not allowed.
    Forbidden(String),
    /// 401: no token, or not the right one.
    Unauthorized { given: bool },
}

impl Policy {
    fn check(&self, method: &Method, path: &str, headers: &HeaderMap) -> Result<(), Refusal> {
        let host = self.check_host(headers)?;
        self.check_origin(headers, &host)?;
        if method == Method::GET && path == HEALTH_PATH {
            return Ok(());
        }
        match headers.get(header::AUTHORIZATION) {
            None => Err(Refusal::Unauthorized { given: false }),
            Some(_) if self.has_token(headers) => Ok(()),
            Some(_) => Err(Refusal::Unauthorized { given: true }),
        }
    }

    /// Whether the request carries the right bearer token.
    fn has_token(&self, headers: &HeaderMap) -> bool {
        headers
            .get(header::AUTHORIZATION)
            .and_then(|v| strip_bearer(v.as_bytes()))
            .is_some_and(|token| self.token.matches(token))
    }

    /// Checks the Host header; returns it, normalised (lower case, with the
    /// port).
    fn check_host(&self, headers: &HeaderMap) -> Result<Authority, Refusal> {
        let forbidden = |why: &str| Refusal::Forbidden(format!("Host header {why}"));
        let raw = headers
            .get(header::HOST)
            .ok_or_else(|| forbidden("missing"))?
            .to_str()
            .map_err(|_| forbidden("not text"))?;
        let host = Authority::parse(raw, 80).ok_or_else(|| forbidden("malformed"))?;
        let allowed = match &host.host {
            HostName::Localhost => true,
            HostName::Ip(ip) => {
                *ip == Ipv4Addr::LOCALHOST
                    || *ip == IpAddr::from(std::net::Ipv6Addr::LOCALHOST)
                    || *ip == self.bound.ip()
                    || (self.allow_remote && self.bound.ip().is_unspecified())
            }
            HostName::Other(_) => false,
        };
        if !allowed {
            return Err(forbidden(
                "does not name this server's address (a possible DNS-rebinding attack)",
            ));
        }
        if host.port != self.bound.port() {
            return Err(forbidden("names another port"));
        }
        Ok(host)
    }

    fn check_origin(&self, headers: &HeaderMap, host: &Authority) -> Result<(), Refusal> {
        let Some(raw) = headers.get(header::ORIGIN) else {
            return Ok(());
        };
        let forbidden = || Refusal::Forbidden("Origin header is not a loopback origin".into());
        let raw = raw.to_str().map_err(|_| forbidden())?;
        let uri: axum::http::Uri = raw.parse().map_err(|_| forbidden())?;
        let default_port = match uri.scheme_str() {
            Some("http") => 80,
            Some("https") => 443,
            _ => return Err(forbidden()),
        };
        let authority = uri
            .authority()
            .and_then(|a| Authority::parse(a.as_str(), default_port))
            .ok_or_else(forbidden)?;
        let loopback = match &authority.host {
            HostName::Localhost => true,
            HostName::Ip(ip) => is_loopback(*ip),
            HostName::Other(_) => false,
        };
        if loopback || (self.allow_remote && authority == *host) {
            Ok(())
        } else {
            Err(forbidden())
        }
    }
}

/// `Bearer TOKEN` (the scheme in any case) → `TOKEN`.
fn strip_bearer(value: &[u8]) -> Option<&[u8]> {
    let (scheme, rest) = value.split_at_checked(7)?;
    if !scheme.eq_ignore_ascii_case(b"bearer ") {
        return None;
    }
    Some(rest.trim_ascii())
}

/// A host and port, as in a Host header or an origin.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Authority {
    host: HostName,
    port: u16,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum HostName {
    Localhost,
    Ip(IpAddr),
    Other(String),
}

impl Authority {
    /// Parses `host[:port]` (`[v6]:port` for IPv6), without user info.
    fn parse(raw: &str, default_port: u16) -> Option<Self> {
        let authority: axum::http::uri::Authority = raw.parse().ok()?;
        if authority.as_str().contains('@') {
            return None;
        }
        let port = authority.port_u16().unwrap_or(default_port);
        let name = authority.host();
        let bare = name
            .strip_prefix('[')
            .and_then(|n| n.strip_suffix(']'))
            .unwrap_or(name);
        let host = if let Ok(ip) = bare.parse::<IpAddr>() {
            HostName::Ip(ip.to_canonical())
        } else if bare.eq_ignore_ascii_case("localhost") || bare.eq_ignore_ascii_case("localhost.")
        {
            HostName::Localhost
        } else {
            HostName::Other(bare.to_ascii_lowercase())
        };
        Some(Self { host, port })
    }
}

async fn guard(State(policy): State<Arc<Policy>>, request: Request, next: Next) -> Response {
    // The connection's record (absent only for a router served without
    // `ConnHandle`, as in unit tests): its headers have arrived.
    let connection = request
        .extensions()
        .get::<ConnectInfo<ConnHandle>>()
        .map(|info| Arc::clone(&info.0.0));
    if let Some(connection) = &connection {
        connection.request_arrived();
    }
    let response = answer(&policy, request, next, connection.as_deref()).await;
    if let Some(connection) = &connection {
        connection.request_answered();
    }
    response
}

/// The guard's answer: the route's, or a refusal.
async fn answer(
    policy: &Policy,
    request: Request,
    next: Next,
    connection: Option<&Connection>,
) -> Response {
    match policy.check(request.method(), request.uri().path(), request.headers()) {
        Ok(()) => {
            if let Some(connection) = connection
                && policy.has_token(request.headers())
            {
                connection.authorise();
            }
            next.run(request).await
        }
        Err(Refusal::Forbidden(why)) => {
            tracing::warn!(%why, "refused an HTTP request");
            (StatusCode::FORBIDDEN, format!("Forbidden: {why}\n")).into_response()
        }
        Err(Refusal::Unauthorized { given }) => {
            let challenge = if given {
                "Bearer realm=\"tmux-mcp\", error=\"invalid_token\""
            } else {
                "Bearer realm=\"tmux-mcp\""
            };
            let body = if given {
                "Unauthorized: the bearer token is wrong\n"
            } else {
                "Unauthorized: send the header Authorization: Bearer TOKEN (the token is in the token file)\n"
            };
            let mut response = (StatusCode::UNAUTHORIZED, body).into_response();
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static(challenge),
            );
            response
        }
    }
}

async fn health() -> impl IntoResponse {
    axum::Json(serde_json::json!({
        "status": "ok",
        "name": crate::server::SERVER_NAME,
        "version": env!("CARGO_PKG_VERSION"),
    }))
}

async fn not_found() -> impl IntoResponse {
    (
        StatusCode::NOT_FOUND,
        format!("Not found: MCP is served at {MCP_PATH}, the health check at {HEALTH_PATH}\n"),
    )
}

/// A bound, not yet serving, HTTP server.
#[derive(Debug)]
pub struct HttpServer {
    listener: tokio::net::TcpListener,
    local: SocketAddr,
    token: Token,
    token_created: bool,
    token_file: PathBuf,
    allow_remote: bool,
    max_connections: usize,
    header_timeout: Duration,
    server: TmuxMcp,
}

impl HttpServer {
    /// Binds `options.addr`, then reads or creates the token file.
    pub async fn bind(server: TmuxMcp, options: HttpOptions) -> Result<Self, HttpError> {
        let listener = tokio::net::TcpListener::bind(options.addr)
            .await
            .map_err(|source| HttpError::Bind {
                addr: options.addr,
                source,
            })?;
        let local = listener.local_addr().map_err(|source| HttpError::Bind {
            addr: options.addr,
            source,
        })?;
        let (token, token_created) =
            load_or_create_token(&options.token_file, options.token_file_is_default)?;
        let max_connections = within_descriptors(options.max_connections);
        if max_connections < options.max_connections {
            tracing::warn!(
                asked = options.max_connections,
                used = max_connections,
                "at most half the descriptor limit (ulimit -n) is used for HTTP connections"
            );
        }
        Ok(Self {
            listener,
            local,
            token,
            token_created,
            token_file: options.token_file,
            allow_remote: options.allow_remote,
            max_connections,
            header_timeout: options.header_timeout,
            server,
        })
    }

    /// The address listened on (with the real port when 0 was asked for).
    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }

    /// The MCP endpoint's URL.
    pub fn url(&self) -> String {
        let host = if self.local.ip().is_unspecified() {
            // Reachable on every interface; loopback is one of them.
            match self.local {
                SocketAddr::V4(_) => SocketAddr::new(Ipv4Addr::LOCALHOST.into(), self.local.port()),
                SocketAddr::V6(_) => {
                    SocketAddr::new(std::net::Ipv6Addr::LOCALHOST.into(), self.local.port())
                }
            }
        } else {
            self.local
        };
        format!("http://{host}{MCP_PATH}")
    }

    /// Whether the token file was created by [`HttpServer::bind`].
    pub fn token_created(&self) -> bool {
        self.token_created
    }

    /// The token clients must send.
    pub fn token(&self) -> &Token {
        &self.token
    }

    /// The token file.
    pub fn token_file(&self) -> &Path {
        &self.token_file
    }

    /// The most connections open at once.
    pub fn max_connections(&self) -> usize {
        self.max_connections
    }

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
        let policy = Arc::new(Policy {
            token: self.token,
            bound: self.local,
            allow_remote: self.allow_remote,
        });
        let app = Router::new()
            .route(HEALTH_PATH, get(health))
            .merge(mcp)
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

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn policy(bound: &str, allow_remote: bool) -> Policy {
        Policy {
            token: Token("0123456789abcdef0123".into()),
            bound: bound.parse().unwrap(),
            allow_remote,
        }
    }

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, HeaderValue::from_str(value).unwrap());
        }
        map
    }

    const AUTH: (&str, &str) = ("authorization", "Bearer 0123456789abcdef0123");

    fn check(p: &Policy, pairs: &[(&'static str, &str)]) -> Result<(), Refusal> {
        p.check(&Method::POST, MCP_PATH, &headers(pairs))
    }

    #[test]
    fn addresses() {
        assert_eq!(parse_addr("127.0.0.1:0").unwrap().port(), 0);
        assert_eq!(
            parse_addr("localhost:8765").unwrap(),
            "127.0.0.1:8765".parse().unwrap()
        );
        assert!(parse_addr("[::1]:1").unwrap().ip().is_loopback());
        assert!(matches!(
            parse_addr("example.com:80"),
            Err(HttpError::BadAddress { .. })
        ));
        assert!(matches!(
            parse_addr("127.0.0.1"),
            Err(HttpError::BadAddress { .. })
        ));
        assert!(matches!(
            HttpOptions::new("0.0.0.0:1", None, Some(Path::new("/s")), false),
            Err(HttpError::NotLoopback { .. })
        ));
        let o = HttpOptions::new("0.0.0.0:1", None, Some(Path::new("/s")), true).unwrap();
        assert_eq!(o.token_file, Path::new("/s/http-token"));
        assert!(o.token_file_is_default);
    }

    #[test]
    fn loopback_hosts_with_the_bound_port_pass() {
        let p = policy("127.0.0.1:4000", false);
        for host in [
            "127.0.0.1:4000",
            "localhost:4000",
            "LOCALHOST:4000",
            "[::1]:4000",
        ] {
            assert_eq!(check(&p, &[("host", host), AUTH]), Ok(()), "{host}");
        }
        for host in [
            "evil.example:4000",
            "127.0.0.1:4001",
            "127.0.0.1",
            "10.0.0.1:4000",
            "u@127.0.0.1:4000",
        ] {
            assert!(
                matches!(
                    check(&p, &[("host", host), AUTH]),
                    Err(Refusal::Forbidden(_))
                ),
                "{host}"
            );
        }
        assert!(matches!(check(&p, &[AUTH]), Err(Refusal::Forbidden(_))));
    }

    #[test]
    fn origins() {
        let p = policy("127.0.0.1:4000", false);
        let host = ("host", "127.0.0.1:4000");
        for origin in [
            "http://localhost:6274",
            "http://127.0.0.1:4000",
            "https://[::1]",
        ] {
            assert_eq!(
                check(&p, &[host, ("origin", origin), AUTH]),
                Ok(()),
                "{origin}"
            );
        }
        for origin in [
            "http://evil.example",
            "null",
            "file://",
            "http://10.1.1.1:4000",
        ] {
            assert!(
                matches!(
                    check(&p, &[host, ("origin", origin), AUTH]),
                    Err(Refusal::Forbidden(_))
                ),
                "{origin}"
            );
        }
    }

    #[test]
    fn remote_mode_accepts_the_bound_address_and_ip_literals_only() {
        let p = policy("192.0.2.7:4000", true);
        assert_eq!(check(&p, &[("host", "192.0.2.7:4000"), AUTH]), Ok(()));
        assert_eq!(
            check(
                &p,
                &[
                    ("host", "192.0.2.7:4000"),
                    ("origin", "http://192.0.2.7:4000"),
                    AUTH
                ]
            ),
            Ok(())
        );
        assert!(check(&p, &[("host", "192.0.2.8:4000"), AUTH]).is_err());
        assert!(check(&p, &[("host", "myhost.lan:4000"), AUTH]).is_err());
        let any = policy("0.0.0.0:4000", true);
        assert_eq!(check(&any, &[("host", "198.51.100.1:4000"), AUTH]), Ok(()));
        assert!(check(&any, &[("host", "rebind.example:4000"), AUTH]).is_err());
        assert!(
            check(
                &any,
                &[
                    ("host", "198.51.100.1:4000"),
                    ("origin", "http://203.0.113.5:4000"),
                    AUTH
                ]
            )
            .is_err()
        );
        // Without --allow-remote an unspecified bind is refused earlier, but
        // the guard alone still accepts loopback only.
        let local = policy("0.0.0.0:4000", false);
        assert!(check(&local, &[("host", "198.51.100.1:4000"), AUTH]).is_err());
    }

    #[test]
    fn the_token_is_required_except_for_health() {
        let p = policy("127.0.0.1:4000", false);
        let host = ("host", "127.0.0.1:4000");
        assert_eq!(
            check(&p, &[host]),
            Err(Refusal::Unauthorized { given: false })
        );
        for wrong in [
            "Bearer 0123456789abcdef0124",
            "Bearer",
            "Basic abc",
            "Bearer 0123",
        ] {
            assert_eq!(
                check(&p, &[host, ("authorization", wrong)]),
                Err(Refusal::Unauthorized { given: true }),
                "{wrong}"
            );
        }
        assert_eq!(
            check(
                &p,
                &[host, ("authorization", "bearer 0123456789abcdef0123")]
            ),
            Ok(())
        );
        let h = headers(&[host]);
        assert_eq!(p.check(&Method::GET, HEALTH_PATH, &h), Ok(()));
        assert!(p.check(&Method::POST, HEALTH_PATH, &h).is_err());
        // The Host guard applies to /health too.
        let bad = headers(&[("host", "evil.example:4000")]);
        assert!(matches!(
            p.check(&Method::GET, HEALTH_PATH, &bad),
            Err(Refusal::Forbidden(_))
        ));
    }

    #[test]
    fn limits_from_variables() {
        assert_eq!(
            limits(|_| None).unwrap(),
            (DEFAULT_MAX_CONNECTIONS, DEFAULT_HEADER_TIMEOUT)
        );
        let set = |max: &'static str, timeout: &'static str| {
            move |name: &str| match name {
                MAX_CONNECTIONS_VAR => Some(max.into()),
                HEADER_TIMEOUT_VAR => Some(timeout.into()),
                _ => None,
            }
        };
        assert_eq!(
            limits(set("20", "0.5")).unwrap(),
            (20, Duration::from_millis(500))
        );
        for (max, timeout) in [
            ("0", "1"),
            ("many", "1"),
            ("65537", "1"),
            ("1", "0"),
            ("1", "-1"),
            ("1", "nan"),
            ("1", "inf"),
            ("1", "3601"),
        ] {
            let err = limits(set(max, timeout)).unwrap_err();
            assert!(err.is_config_error(), "{err}");
            assert!(err.to_string().contains("TMUX_MCP_HTTP_"), "{err}");
        }
        assert_eq!(within_descriptors(1), 1);
    }
}
