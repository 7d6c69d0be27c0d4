//! Web sessions: a capability key (from the link's fragment) exchanged for
//! an `HttpOnly; SameSite=Strict` cookie, and the rule that a session's
//! requests come from the page's own origin.
//!
//! A session remembers its key's grant (name and scope); each request
//! checks the key again ([`KeyStore::still_valid`]), so revoking a key ends
//! its sessions at their next request or input. Sessions live in memory
//! only, by the SHA-256 of their cookie (a lookup never compares the
//! cookie itself).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;
use sha2::{Digest, Sha256};

use super::WebView;
use super::keys::{Grant, KeyStore};

/// The session cookie's name.
pub(super) const COOKIE: &str = "tmux_mcp_web";

/// The most sessions kept at once (the oldest is dropped beyond it).
const MAX_SESSIONS: usize = 1024;

/// One session: its number (what holds are by) and its key's grant.
#[derive(Debug, Clone)]
pub(super) struct Session {
    pub(super) id: u64,
    pub(super) grant: Grant,
}

/// The sessions, by the digest of their cookie.
#[derive(Debug, Default)]
pub(super) struct Sessions {
    by_digest: Mutex<HashMap<[u8; 32], Session>>,
    last: std::sync::atomic::AtomicU64,
    /// How many sockets each session has open.
    sockets: Mutex<HashMap<u64, usize>>,
}

fn digest(cookie: &str) -> [u8; 32] {
    Sha256::digest(cookie.as_bytes()).into()
}

impl Sessions {
    /// A new session for `grant`: its cookie value.
    fn open(&self, grant: Grant) -> Option<String> {
        // 32 bytes from the operating system, as the bearer token's.
        let cookie = crate::transport::http::new_token().ok()?;
        let id = self.last.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        let mut map = self.by_digest.lock().unwrap_or_else(|e| e.into_inner());
        if map.len() >= MAX_SESSIONS
            && let Some(oldest) = map.iter().min_by_key(|(_, s)| s.id).map(|(k, _)| *k)
        {
            map.remove(&oldest);
        }
        map.insert(digest(&cookie), Session { id, grant });
        Some(cookie)
    }

    /// A socket of session `id` opened.
    pub(super) fn socket_opened(&self, id: u64) {
        *self
            .sockets
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(id)
            .or_default() += 1;
    }

    /// A socket of session `id` closed: how many it still has open.
    pub(super) fn socket_closed(&self, id: u64) -> usize {
        let mut sockets = self.sockets.lock().unwrap_or_else(|e| e.into_inner());
        let left = sockets.get(&id).map_or(0, |n| n.saturating_sub(1));
        if left == 0 {
            sockets.remove(&id);
        } else {
            sockets.insert(id, left);
        }
        left
    }

    /// How many sockets session `id` has open.
    pub(super) fn sockets(&self, id: u64) -> usize {
        self.sockets
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&id)
            .copied()
            .unwrap_or(0)
    }

    /// Whether a request's cookie names a session (its key not checked
    /// again: no file is read).
    pub(super) fn known(&self, headers: &HeaderMap) -> bool {
        cookie(headers).is_some_and(|c| {
            self.by_digest
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .contains_key(&digest(&c))
        })
    }

    /// The session of a request's cookie, if its key is still valid.
    pub(super) fn of(&self, headers: &HeaderMap, keys: &KeyStore) -> Option<Session> {
        let cookie = cookie(headers)?;
        let key = digest(&cookie);
        let mut map = self.by_digest.lock().unwrap_or_else(|e| e.into_inner());
        let session = map.get(&key)?.clone();
        if keys.still_valid(&session.grant) {
            Some(session)
        } else {
            map.remove(&key);
            None
        }
    }
}

/// The session cookie's value in a request.
fn cookie(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == COOKIE)
        .map(|(_, value)| value.to_owned())
}

/// Whether the request comes from the page's own origin: an `Origin`
/// header equal to `http://` and the `Host` header (`https://` too, for a
/// view behind a TLS proxy). A request without `Origin` is refused: the
/// browsers this is for always send it on a POST and a WebSocket.
pub(super) fn same_origin(headers: &HeaderMap) -> Result<(), String> {
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .ok_or("no Host header")?;
    let origin = headers
        .get(header::ORIGIN)
        .and_then(|h| h.to_str().ok())
        .ok_or("no Origin header: requests must come from the view's own page")?;
    let own = [format!("http://{host}"), format!("https://{host}")];
    if own.iter().any(|o| o.eq_ignore_ascii_case(origin)) {
        Ok(())
    } else {
        Err(format!(
            "Origin {origin:?} is not this view's own origin (a page of another site)"
        ))
    }
}

/// A JSON refusal.
pub(super) fn refuse(status: StatusCode, why: &str) -> Response {
    (status, axum::Json(json!({ "error": why }))).into_response()
}

/// The answer naming a session's grant.
fn granted(grant: &Grant) -> serde_json::Value {
    json!({ "name": grant.name, "scope": grant.scope })
}

/// `POST /ui/session` `{"key": KEY}`: a key for a cookie.
pub(super) async fn exchange(
    State(view): State<Arc<WebView>>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Response {
    if let Err(why) = same_origin(&headers) {
        return refuse(StatusCode::FORBIDDEN, &why);
    }
    let key = serde_json::from_slice::<serde_json::Value>(&body)
        .ok()
        .and_then(|v| v.get("key").and_then(|k| k.as_str()).map(str::to_owned));
    let Some(key) = key else {
        return refuse(
            StatusCode::BAD_REQUEST,
            "send {\"key\": KEY}, the key from the link",
        );
    };
    let Some(grant) = view.keys.check(&key) else {
        return refuse(
            StatusCode::UNAUTHORIZED,
            "this key is not valid (wrong, or revoked): ask for a new link",
        );
    };
    let Some(cookie) = view.sessions.open(grant.clone()) else {
        return refuse(
            StatusCode::INTERNAL_SERVER_ERROR,
            "the operating system's random source failed",
        );
    };
    let mut response = axum::Json(granted(&grant)).into_response();
    let set = format!("{COOKIE}={cookie}; HttpOnly; SameSite=Strict; Path=/ui");
    if let Ok(value) = HeaderValue::from_str(&set) {
        response.headers_mut().insert(header::SET_COOKIE, value);
    }
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// `GET /ui/session`: the session of the cookie the page has, if any.
pub(super) async fn resume(State(view): State<Arc<WebView>>, headers: HeaderMap) -> Response {
    match view.sessions.of(&headers, &view.keys) {
        Some(session) => axum::Json(granted(&session.grant)).into_response(),
        None => refuse(
            StatusCode::UNAUTHORIZED,
            "no session: open the link with its #key=…",
        ),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(*k, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    #[test]
    fn only_the_pages_own_origin_passes() {
        let own = headers(&[
            ("host", "127.0.0.1:8765"),
            ("origin", "http://127.0.0.1:8765"),
        ]);
        assert!(same_origin(&own).is_ok());
        for origin in [
            "http://127.0.0.1:9999",
            "http://localhost:8765",
            "http://evil.example",
            "null",
        ] {
            let other = headers(&[("host", "127.0.0.1:8765"), ("origin", origin)]);
            assert!(same_origin(&other).is_err(), "{origin}");
        }
        assert!(same_origin(&headers(&[("host", "127.0.0.1:8765")])).is_err());
    }

    #[test]
    fn the_cookie_is_found_among_others() {
        let h = headers(&[("cookie", "a=1; tmux_mcp_web=abc; b=2")]);
        assert_eq!(cookie(&h).as_deref(), Some("abc"));
        assert_eq!(cookie(&headers(&[("cookie", "tmux_mcp_webx=1")])), None);
    }
}
