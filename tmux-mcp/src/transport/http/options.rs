//! What `serve --http` was asked for: the address (loopback unless
//! `--allow-remote`), the token file, and the connection limits from
//! [`MAX_CONNECTIONS_VAR`] and [`HEADER_TIMEOUT_VAR`].

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::{
    DEFAULT_HEADER_TIMEOUT, DEFAULT_MAX_CONNECTIONS, DEFAULT_TOKEN_FILE, HEADER_TIMEOUT_VAR,
    HttpError, MAX_CONNECTIONS_VAR, is_loopback,
};

/// The largest connection cap that can be asked for.
const MAX_MAX_CONNECTIONS: usize = 1 << 16;

/// The longest header timeout that can be asked for, in seconds.
const MAX_HEADER_TIMEOUT_SECS: f64 = 3600.0;

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
                    .unwrap_or_else(crate::terminal::backend::default_state_dir);
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

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::transport::http::listener::within_descriptors;

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
