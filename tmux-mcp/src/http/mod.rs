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
//! (Over 600 lines: the routes, the token and its file checks, and the
//! listener that bounds connections and header time; the last 340 are unit
//! tests. The listener is the part to move into a file of its own when issue
//! 23 lays the transports out by concern.)

use std::collections::BTreeMap;
use std::future::Future;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use axum::Router;
use axum::extract::connect_info::{ConnectInfo, Connected};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use subtle::ConstantTimeEq as _;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio_util::sync::CancellationToken;

use crate::server::TmuxMcp;

mod messages;

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

/// How long accepting waits after the system refused a connection for want
/// of resources (descriptors, memory) and no connection of ours ended.
const ACCEPT_RETRY: Duration = Duration::from_secs(1);

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
/// with mode 0700 (for the default file in the state directory). An
/// existing file must pass [`read_token_file`].
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
    // O_CREAT | O_EXCL never follows a symbolic link and never opens a FIFO
    // or another existing file: whatever is there already is judged below.
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
    match read_token_file(path) {
        Ok(Some(file)) => Ok((file.token, false)),
        Ok(None) => Err(fail(
            "it was removed while it was being read; start again".into(),
        )),
        Err(refusal) => Err(fail(refusal.reason)),
    }
}

/// The most bytes a token file may have (the token and white space around
/// it).
pub const MAX_TOKEN_FILE_BYTES: u64 = 64 * 1024;

/// What is wrong with a token file (see [`read_token_file`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TokenFileProblem {
    /// Its status cannot be read, or it cannot be opened or read.
    Unreadable,
    /// A symbolic link, a FIFO, a directory, a device or a socket.
    NotRegular,
    /// It belongs to another user.
    OtherOwner,
    /// Group or others may read or write it.
    NotPrivate,
    /// Larger than [`MAX_TOKEN_FILE_BYTES`], not text, or not one token of
    /// at least 16 printable characters.
    Contents,
}

/// Why a token file is refused, by `serve --http` and by `doctor` alike.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct TokenFileRefusal {
    /// What kind of problem.
    pub problem: TokenFileProblem,
    /// What is wrong, and what to do about it.
    pub reason: String,
    /// The file's permission bits, when its status could be read.
    pub mode: Option<u32>,
}

/// An existing token file that passed every check.
#[derive(Debug)]
#[non_exhaustive]
pub struct TokenFile {
    /// The token in it.
    pub token: Token,
    /// Its permission bits.
    pub mode: u32,
}

/// Reads and checks an existing token file, exactly as `serve --http` uses
/// it: `Ok(None)` when there is none. Refused: a symbolic link (looked at
/// with `lstat`, and opened with `O_NOFOLLOW`), anything but a regular file
/// (opened with `O_NONBLOCK`, so a FIFO put in its place between the check
/// and the open cannot block), a file of another user or that group or
/// others may read or write, one larger than [`MAX_TOKEN_FILE_BYTES`], and
/// one that is not a single token of at least 16 printable ASCII
/// characters. `doctor` calls this too, so both judge a file alike.
pub fn read_token_file(path: &Path) -> Result<Option<TokenFile>, TokenFileRefusal> {
    use std::io::Read as _;
    use std::os::unix::fs::{MetadataExt as _, OpenOptionsExt as _};
    let refuse = |problem, reason: String, mode| TokenFileRefusal {
        problem,
        reason,
        mode,
    };
    let seen = match std::fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(refuse(
                TokenFileProblem::Unreadable,
                format!("cannot read its status: {e}"),
                None,
            ));
        }
    };
    let mode = seen.mode() & 0o7777;
    not_regular(&seen).map_or(Ok(()), |why| {
        Err(refuse(TokenFileProblem::NotRegular, why, Some(mode)))
    })?;
    let flags = (rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK).bits() as i32;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(flags)
        .open(path)
        .map_err(|e| {
            refuse(
                TokenFileProblem::Unreadable,
                format!("cannot open it: {e}"),
                Some(mode),
            )
        })?;
    let meta = file.metadata().map_err(|e| {
        refuse(
            TokenFileProblem::Unreadable,
            format!("cannot read its status: {e}"),
            Some(mode),
        )
    })?;
    let mode = meta.mode() & 0o7777;
    if (meta.dev(), meta.ino()) != (seen.dev(), seen.ino()) {
        return Err(refuse(
            TokenFileProblem::NotRegular,
            "it was replaced while it was being checked; start again".into(),
            Some(mode),
        ));
    }
    not_regular(&meta).map_or(Ok(()), |why| {
        Err(refuse(TokenFileProblem::NotRegular, why, Some(mode)))
    })?;
    let uid = crate::guard::current_uid();
    if meta.uid() != uid {
        return Err(refuse(
            TokenFileProblem::OtherOwner,
            format!(
                "owned by user {}, not by this user ({uid}); use a token file of your own",
                meta.uid()
            ),
            Some(mode),
        ));
    }
    if mode & 0o077 != 0 {
        return Err(refuse(
            TokenFileProblem::NotPrivate,
            format!(
                "group or others may read or write it (mode {mode:04o}); \
                 make it private with `chmod 600 {}` (and choose a new token if others may have read it)",
                path.display()
            ),
            Some(mode),
        ));
    }
    let too_large = |size: u64| {
        refuse(
            TokenFileProblem::Contents,
            format!(
                "it has {size} bytes, more than the {MAX_TOKEN_FILE_BYTES} bytes a token file may have; \
                 put one shorter token in it, or delete it to have a new one made"
            ),
            Some(mode),
        )
    };
    if meta.len() > MAX_TOKEN_FILE_BYTES {
        return Err(too_large(meta.len()));
    }
    let mut bytes = Vec::new();
    file.take(MAX_TOKEN_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| {
            refuse(
                TokenFileProblem::Unreadable,
                format!("cannot read it: {e}"),
                Some(mode),
            )
        })?;
    // It grew after its status was read.
    if bytes.len() as u64 > MAX_TOKEN_FILE_BYTES {
        return Err(too_large(bytes.len() as u64));
    }
    let token =
        parse_token(&bytes).map_err(|why| refuse(TokenFileProblem::Contents, why, Some(mode)))?;
    Ok(Some(TokenFile { token, mode }))
}

/// Why a file of this status cannot be a token file, if it cannot.
fn not_regular(meta: &std::fs::Metadata) -> Option<String> {
    use std::os::unix::fs::FileTypeExt as _;
    let kind = meta.file_type();
    if kind.is_file() {
        return None;
    }
    if kind.is_symlink() {
        return Some(
            "it is a symbolic link, which is refused; point --token-file at the file itself".into(),
        );
    }
    let what = if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_dir() {
        "a directory"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_char_device() || kind.is_block_device() {
        "a device"
    } else {
        "not a file"
    };
    Some(format!(
        "not a regular file (it is {what}); point --token-file at a regular file"
    ))
}

/// The token in a token file's bytes: one word of printable ASCII, at
/// least [`MIN_TOKEN_CHARS`] long, with white space around it.
fn parse_token(bytes: &[u8]) -> Result<Token, String> {
    let text = std::str::from_utf8(bytes).map_err(|_| {
        "it is not text; put one token of printable characters in it, \
         or delete it to have a new one made"
            .to_owned()
    })?;
    let token = text.trim();
    if token.len() < MIN_TOKEN_CHARS {
        return Err(format!(
            "the token must have at least {MIN_TOKEN_CHARS} characters; \
             delete the file to have a new one made"
        ));
    }
    if !token.bytes().all(|b| b.is_ascii_graphic()) {
        return Err("the token must be one word of printable ASCII characters".into());
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

/// `max` or, when lower, half the soft descriptor limit (at least 1): the
/// other half is for tmux, the panes' logs and the rest of the server, so
/// the cap is reached before descriptors run out.
fn within_descriptors(max: usize) -> usize {
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
struct Connections {
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
    fn new(max: usize, header_timeout: Duration) -> Self {
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
struct Connection {
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
    fn new(header_timeout: Duration) -> Self {
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
    fn request_arrived(&self) {
        self.update(|state| state.deadline = None);
    }

    /// It carried the right token: no deadline, and never shed.
    fn authorise(&self) {
        self.update(|state| {
            state.authorised = true;
            state.deadline = None;
        });
    }

    /// The request was answered: unless authorised, the next request's
    /// headers must arrive within the header timeout.
    fn request_answered(&self) {
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
struct GuardedListener {
    listener: tokio::net::TcpListener,
    connections: Arc<Connections>,
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
struct GuardedStream {
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
struct ConnHandle(Arc<Connection>);

impl<'a> Connected<axum::serve::IncomingStream<'a, GuardedListener>> for ConnHandle {
    fn connect_info(stream: axum::serve::IncomingStream<'a, GuardedListener>) -> Self {
        Self(Arc::clone(&stream.io().connection))
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

    #[test]
    fn token_file_checks() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir =
            std::env::temp_dir().join(format!("tmux-mcp-token-checks-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let write = |name: &str, text: &str| {
            let path = dir.join(name);
            std::fs::write(&path, text).unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
            path
        };
        assert!(read_token_file(&dir.join("missing")).unwrap().is_none());

        let long = "t".repeat(5000);
        let file = read_token_file(&write("long", &format!("{long}\n")))
            .unwrap()
            .unwrap();
        assert_eq!(file.token.as_str(), long);
        assert_eq!(file.mode, 0o600);

        let max = usize::try_from(MAX_TOKEN_FILE_BYTES).unwrap();
        let largest = format!("{}\n", "m".repeat(max - 1));
        assert!(
            read_token_file(&write("largest", &largest))
                .unwrap()
                .is_some()
        );
        let refusal = read_token_file(&write("huge", &"h".repeat(max + 1))).unwrap_err();
        assert_eq!(refusal.problem, TokenFileProblem::Contents);
        assert!(refusal.reason.contains("65537 bytes"), "{}", refusal.reason);

        let link = dir.join("link");
        std::os::unix::fs::symlink(dir.join("long"), &link).unwrap();
        let refusal = read_token_file(&link).unwrap_err();
        assert_eq!(refusal.problem, TokenFileProblem::NotRegular);
        assert!(
            refusal.reason.contains("symbolic link"),
            "{}",
            refusal.reason
        );
        assert!(load_or_create_token(&link, false).is_err());

        let refusal = read_token_file(&dir).unwrap_err();
        assert_eq!(refusal.problem, TokenFileProblem::NotRegular);
        assert!(refusal.reason.contains("a directory"), "{}", refusal.reason);

        for bad in ["short\n", "two words-of-token-text\n"] {
            let refusal = read_token_file(&write("bad", bad)).unwrap_err();
            assert_eq!(refusal.problem, TokenFileProblem::Contents, "{bad}");
        }
        let open = write("open", "a-token-of-enough-characters\n");
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o640)).unwrap();
        let refusal = read_token_file(&open).unwrap_err();
        assert_eq!(refusal.problem, TokenFileProblem::NotPrivate);
        assert_eq!(refusal.mode, Some(0o640));
        std::fs::remove_dir_all(&dir).unwrap();
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
