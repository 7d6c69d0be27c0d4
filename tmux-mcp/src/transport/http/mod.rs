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
//! `listener`, the JSON-RPC answers to bad messages in `messages`, the
//! options and limits of `serve --http` in `options`, the Host, Origin and
//! token checks in `guard`, and the routes and serving in `serve`; here
//! are the constants, the errors and the bound server, [`HttpServer`].
//!
//! [`StreamableHttpService`]: rmcp::transport::streamable_http_server::StreamableHttpService

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::mcp::server::TmuxMcp;

mod guard;
mod listener;
mod messages;
mod options;
mod serve;
mod token;

pub(in crate::transport) use guard::host_allowed;
use listener::within_descriptors;
pub use options::HttpOptions;
pub use token::{
    MAX_TOKEN_FILE_BYTES, Token, TokenFile, TokenFileProblem, TokenFileRefusal,
    load_or_create_token, read_token_file,
};
// The web view's keys file is checked, and its keys made, the same way.
pub(crate) use token::{Advice, new_token, read_private_file};

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
fn is_loopback(ip: IpAddr) -> bool {
    ip.to_canonical().is_loopback()
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
}
