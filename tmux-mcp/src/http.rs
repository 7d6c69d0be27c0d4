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
//! The token lives in a file (`--token-file`, by default `http-token` in the
//! state directory), created with mode 0600 on first use from the
//! operating system's random source; a file that group or others may read
//! or write is refused. docs/security.md gives the trust model.

use std::future::Future;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use subtle::ConstantTimeEq as _;
use tokio_util::sync::CancellationToken;

use crate::server::TmuxMcp;

/// The path MCP is served at.
pub const MCP_PATH: &str = "/mcp";

/// The path of the unauthenticated health check.
pub const HEALTH_PATH: &str = "/health";

/// The name of the token file in the state directory when `--token-file`
/// is not given.
pub const DEFAULT_TOKEN_FILE: &str = "http-token";

/// Bytes of randomness in a new token (written as twice as many hex digits).
const TOKEN_BYTES: usize = 32;

/// The fewest characters a token read from a file may have.
const MIN_TOKEN_CHARS: usize = 16;

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
            Self::BadAddress { .. } | Self::NotLoopback { .. } | Self::TokenFile { .. }
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
}

impl HttpOptions {
    /// Options from the `--http` address, `--token-file` (or the default in
    /// `state_dir`, or the default state directory) and `--allow-remote`.
    /// Refuses an address that is not loopback unless `allow_remote`.
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
        Ok(Self {
            addr,
            token_file,
            token_file_is_default,
            allow_remote,
        })
    }
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

/// The bearer token (kept out of `Debug` output).
#[derive(Clone)]
pub struct Token(String);

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(..)")
    }
}

impl Token {
    /// The token as sent after `Bearer `.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether `given` is this token, in time independent of where they
    /// differ.
    fn matches(&self, given: &[u8]) -> bool {
        bool::from(self.0.as_bytes().ct_eq(given))
    }
}

/// Reads the token from `path`, or creates the file (mode 0600, a fresh
/// random token) when it does not exist. Returns the token and whether the
/// file was created now. `create_dir`: create a missing parent directory
/// with mode 0700 (for the default file in the state directory).
pub fn load_or_create_token(path: &Path, create_dir: bool) -> Result<(Token, bool), HttpError> {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let fail = |reason: String| HttpError::TokenFile {
        path: path.to_path_buf(),
        reason,
    };
    if create_dir && let Some(dir) = path.parent() {
        crate::backend::private_dir(dir)
            .map_err(|e| fail(format!("its directory {}: {e}", dir.display())))?;
    }
    let nofollow = rustix::fs::OFlags::NOFOLLOW.bits() as i32;
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(nofollow)
        .open(path)
    {
        Ok(mut file) => {
            let token = new_token().map_err(|e| fail(format!("no random bytes: {e}")))?;
            file.write_all(format!("{token}\n").as_bytes())
                .and_then(|()| file.sync_all())
                .map_err(|e| fail(format!("cannot write it: {e}")))?;
            return Ok((Token(token), true));
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(fail(format!("cannot create it: {e}"))),
    }
    read_token(path).map(|token| (token, false))
}

/// Reads an existing token file, refusing one that others may read or write.
fn read_token(path: &Path) -> Result<Token, HttpError> {
    use std::io::Read as _;
    use std::os::unix::fs::{MetadataExt as _, OpenOptionsExt as _};
    let fail = |reason: String| HttpError::TokenFile {
        path: path.to_path_buf(),
        reason,
    };
    let nofollow = rustix::fs::OFlags::NOFOLLOW.bits() as i32;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nofollow)
        .open(path)
        .map_err(|e| fail(format!("cannot open it (a symbolic link is refused): {e}")))?;
    let meta = file
        .metadata()
        .map_err(|e| fail(format!("cannot read its status: {e}")))?;
    if !meta.is_file() {
        return Err(fail("not a regular file".into()));
    }
    if meta.uid() != crate::guard::current_uid() {
        return Err(fail(format!(
            "owned by user {}, not by this user ({})",
            meta.uid(),
            crate::guard::current_uid()
        )));
    }
    let mode = meta.mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(fail(format!(
            "group or others may read or write it (mode {mode:04o}); \
             make it private with `chmod 600 {}` (and choose a new token if others may have read it)",
            path.display()
        )));
    }
    let mut text = String::new();
    file.take(4096)
        .read_to_string(&mut text)
        .map_err(|e| fail(format!("cannot read it as text: {e}")))?;
    let token = text.trim();
    if token.len() < MIN_TOKEN_CHARS {
        return Err(fail(format!(
            "the token must have at least {MIN_TOKEN_CHARS} characters; \
             delete the file to have a new one made"
        )));
    }
    if !token.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(fail(
            "the token must be one word of printable ASCII characters".into(),
        ));
    }
    Ok(Token(token.to_owned()))
}

/// A fresh token: [`TOKEN_BYTES`] bytes from the operating system, as hex.
fn new_token() -> std::io::Result<String> {
    use std::fmt::Write as _;
    let mut bytes = [0u8; TOKEN_BYTES];
    let mut filled = 0;
    while filled < bytes.len() {
        match rustix::rand::getrandom(&mut bytes[filled..], rustix::rand::GetRandomFlags::empty()) {
            Ok(n) => filled += n,
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
    let mut hex = String::with_capacity(TOKEN_BYTES * 2);
    for b in bytes {
        // Writing to a String cannot fail.
        let _ = write!(hex, "{b:02x}");
    }
    Ok(hex)
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
        let given = headers
            .get(header::AUTHORIZATION)
            .map(|v| v.as_bytes())
            .ok_or(Refusal::Unauthorized { given: false })?;
        let token = strip_bearer(given).ok_or(Refusal::Unauthorized { given: true })?;
        if self.token.matches(token) {
            Ok(())
        } else {
            Err(Refusal::Unauthorized { given: true })
        }
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
    match policy.check(request.method(), request.uri().path(), request.headers()) {
        Ok(()) => next.run(request).await,
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
        Ok(Self {
            listener,
            local,
            token,
            token_created,
            token_file: options.token_file,
            allow_remote: options.allow_remote,
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
            .disable_allowed_origins();
        let mcp = StreamableHttpService::new(
            // One server for every session: clones share all state.
            // Each session its own value (its own resource subscriptions),
            // all sharing one server's state.
            move || Ok(shared.for_session()),
            Arc::new(LocalSessionManager::default()),
            config,
        );
        let policy = Arc::new(Policy {
            token: self.token,
            bound: self.local,
            allow_remote: self.allow_remote,
        });
        let app = Router::new()
            .route(HEALTH_PATH, get(health))
            .route_service(MCP_PATH, mcp)
            .fallback(not_found)
            .layer(middleware::from_fn_with_state(policy, guard));
        let stop = cancel.clone();
        axum::serve(self.listener, app)
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
    fn token_files() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = std::env::temp_dir().join(format!("tmux-mcp-token-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let path = dir.join("state").join("http-token");
        let (token, created) = load_or_create_token(&path, true).unwrap();
        assert!(created);
        assert_eq!(token.as_str().len(), 64);
        assert!(token.as_str().bytes().all(|b| b.is_ascii_hexdigit()));
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let (again, created) = load_or_create_token(&path, true).unwrap();
        assert!(!created);
        assert_eq!(again.as_str(), token.as_str());
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let err = load_or_create_token(&path, true).unwrap_err();
        assert!(err.is_config_error());
        assert!(err.to_string().contains("mode 0644"), "{err}");
        std::fs::write(dir.join("short"), "abc\n").unwrap();
        std::fs::set_permissions(dir.join("short"), std::fs::Permissions::from_mode(0o600))
            .unwrap();
        assert!(load_or_create_token(&dir.join("short"), false).is_err());
        assert!(load_or_create_token(&dir.join("missing/x"), false).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
