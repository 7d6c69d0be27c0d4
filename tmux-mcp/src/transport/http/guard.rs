//! The guard in front of every route (an axum middleware): the Host and
//! Origin checks (the DNS-rebinding guard), then the bearer token on every
//! request except `GET /health`; a refusal is a 403 or a 401 (see the
//! module documentation of [`super`]).

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;

use axum::extract::connect_info::ConnectInfo;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::listener::{ConnHandle, Connection};
use super::{HEALTH_PATH, Token, is_loopback};

/// Which requests the guard lets through (see the module documentation).
#[derive(Debug)]
pub(super) struct Policy {
    pub(super) token: Token,
    /// The bound address (its real port, also when 0 was asked for).
    pub(super) bound: SocketAddr,
    pub(super) allow_remote: bool,
    /// The web view under `/ui`, whose session cookie authorises a
    /// connection as the token does.
    pub(super) web: Option<Arc<crate::transport::web::WebView>>,
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
        // The web view checks its own cookie, and the exact Origin.
        if crate::transport::web::is_web_path(path) {
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
        host_of(self.bound, self.allow_remote, headers)
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

/// Checks the Host header against the bound address (see the module
/// documentation of [`super`]); returns it, normalised (lower case, with
/// the port).
fn host_of(
    bound: SocketAddr,
    allow_remote: bool,
    headers: &HeaderMap,
) -> Result<Authority, Refusal> {
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
                || *ip == bound.ip()
                || (allow_remote && bound.ip().is_unspecified())
        }
        HostName::Other(_) => false,
    };
    if !allowed {
        return Err(forbidden(
            "does not name this server's address (a possible DNS-rebinding attack)",
        ));
    }
    if host.port != bound.port() {
        return Err(forbidden("names another port"));
    }
    Ok(host)
}

/// The DNS-rebinding guard alone, for the web view's own listener
/// (`--web`): `Err` with the reason when the `Host` header does not name
/// this server.
pub(in crate::transport) fn host_allowed(
    bound: SocketAddr,
    allow_remote: bool,
    headers: &HeaderMap,
) -> Result<(), String> {
    match host_of(bound, allow_remote, headers) {
        Ok(_) => Ok(()),
        Err(Refusal::Forbidden(why)) => Err(why),
        Err(Refusal::Unauthorized { .. }) => Err("unauthorised".to_owned()),
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

pub(super) async fn guard(
    State(policy): State<Arc<Policy>>,
    request: Request,
    next: Next,
) -> Response {
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
                && (policy.has_token(request.headers())
                    || policy
                        .web
                        .as_ref()
                        .is_some_and(|web| web.authorised(request.headers())))
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

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::transport::http::MCP_PATH;

    fn policy(bound: &str, allow_remote: bool) -> Policy {
        Policy {
            token: Token("0123456789abcdef0123".into()),
            bound: bound.parse().unwrap(),
            allow_remote,
            web: None,
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
}
