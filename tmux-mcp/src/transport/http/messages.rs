//! Every JSON-RPC message posted to `/mcp` gets a JSON-RPC answer.
//!
//! rmcp's HTTP service answers a body that is not JSON with a plain-text
//! 415, reads a request of a known method whose params do not fit as a
//! custom request and answers "method not found", answers `202 Accepted` to
//! a `DELETE` of a session that has already ended, and keys a session's
//! requests in flight by id, so that of two with the same id the first one's
//! answer is dropped. This middleware, after the guard and before rmcp,
//! reads each posted body (at most [`MAX_BODY`] bytes) and decides with the
//! same rules as the stdio transport ([`crate::transport::stdio::check`]):
//!
//! - not JSON (an empty body too): `400` with a JSON-RPC `-32700` parse
//!   error, id `null`;
//! - JSON that is not a JSON-RPC message: `400` with `-32600`;
//! - a known method with params that do not fit: `200` with `-32602`
//!   invalid params and the request's id;
//! - a request whose id is that of a request of the same session still in
//!   flight: `200` with `-32600`, and the other request is still answered;
//! - a `DELETE` of a session this server does not hold: `404`.
//!
//! Everything else goes on to rmcp, body unchanged.

use std::collections::HashSet;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use rmcp::transport::streamable_http_server::SessionManager as _;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;

use crate::transport::stdio::{self, Verdict};

/// The largest body read (rmcp's own default limit, set on its service too).
pub(super) const MAX_BODY: usize = 4 * 1024 * 1024;

/// The header that names an MCP session.
const SESSION_HEADER: &str = "mcp-session-id";

/// What the middleware knows: the sessions rmcp holds, and the requests in
/// flight by session and id.
#[derive(Debug)]
pub(super) struct Messages {
    sessions: Arc<LocalSessionManager>,
    in_flight: Arc<Mutex<HashSet<(String, String)>>>,
}

impl Messages {
    pub(super) fn new(sessions: Arc<LocalSessionManager>) -> Self {
        Self {
            sessions,
            in_flight: Arc::default(),
        }
    }
}

/// Holds a request's place among those in flight until its answer has been
/// sent whole (or the client stopped reading it).
struct InFlight {
    key: (String, String),
    table: Arc<Mutex<HashSet<(String, String)>>>,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.table
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.key);
    }
}

/// A response body that keeps its request [`InFlight`] while it is sent.
struct Held {
    body: Body,
    _place: InFlight,
}

impl http_body::Body for Held {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.get_mut().body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

/// A JSON-RPC error response (as [`stdio`] writes it) with `status`.
fn answer(status: StatusCode, line: Vec<u8>) -> Response {
    let mut response = (status, line).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// The HTTP status of one of [`stdio::check`]'s answers: 200 for an error
/// about a request that was read (its params, its id), 400 for a body that
/// is not a JSON-RPC message at all.
fn status_of(line: &[u8]) -> StatusCode {
    let code = serde_json::from_slice::<serde_json::Value>(line)
        .ok()
        .and_then(|v| v.pointer("/error/code").and_then(serde_json::Value::as_i64));
    match code {
        Some(-32602) => StatusCode::OK,
        _ => StatusCode::BAD_REQUEST,
    }
}

fn session_of(request: &Request) -> Option<String> {
    request
        .headers()
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

/// The middleware (see the module's documentation).
pub(super) async fn check(
    State(messages): State<Arc<Messages>>,
    request: Request,
    next: Next,
) -> Response {
    let session = session_of(&request);
    if request.method() == Method::DELETE {
        if let Some(id) = &session
            && !messages
                .sessions
                .has_session(&id.as_str().into())
                .await
                .unwrap_or(true)
        {
            return (
                StatusCode::NOT_FOUND,
                "Not Found: no such MCP session (it has ended, or never existed)\n",
            )
                .into_response();
        }
        return next.run(request).await;
    }
    let is_json = request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(';')
                .next()
                .is_some_and(|e| e.trim().eq_ignore_ascii_case("application/json"))
        });
    // rmcp answers other methods and other media types itself (405, 415).
    if request.method() != Method::POST || !is_json {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    let bytes = match axum::body::to_bytes(body, MAX_BODY).await {
        Ok(bytes) => bytes,
        Err(e) => {
            let why = format!(
                "Invalid request: the body could not be read whole ({e}); this server reads at most {MAX_BODY} bytes per message"
            );
            return answer(
                StatusCode::PAYLOAD_TOO_LARGE,
                stdio::error_line(None, rmcp::model::ErrorCode::INVALID_REQUEST, &why),
            );
        }
    };
    let place = match stdio::check(&bytes) {
        Verdict::Reply(line) => {
            // The same words as over stdio, where a message is a line.
            let line = String::from_utf8_lossy(&line)
                .replace("Each line must be", "The body must be")
                .into_bytes();
            return answer(status_of(&line), line);
        }
        Verdict::Skip => {
            return answer(
                StatusCode::BAD_REQUEST,
                stdio::error_line(
                    None,
                    rmcp::model::ErrorCode::PARSE_ERROR,
                    "Parse error: the body is empty. The body must be one JSON-RPC message in UTF-8 JSON",
                ),
            );
        }
        Verdict::Forward => match (&session, stdio::request_id(&bytes)) {
            (Some(session), Some(id)) => {
                let key = (session.clone(), id.clone().into_json_value().to_string());
                let fresh = messages
                    .in_flight
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .insert(key.clone());
                if !fresh {
                    return answer(StatusCode::OK, stdio::duplicate_id(id));
                }
                Some(InFlight {
                    key,
                    table: Arc::clone(&messages.in_flight),
                })
            }
            _ => None,
        },
    };
    let response = next
        .run(Request::from_parts(parts, Body::from(bytes)))
        .await;
    match place {
        Some(place) => response.map(|body| {
            Body::new(Held {
                body,
                _place: place,
            })
        }),
        None => response,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_about_a_message_that_was_read_are_200_and_the_others_400() {
        let line = |code| {
            stdio::error_line(
                Some(rmcp::model::RequestId::Number(1)),
                rmcp::model::ErrorCode(code),
                "x",
            )
        };
        assert_eq!(status_of(&line(-32602)), StatusCode::OK);
        assert_eq!(status_of(&line(-32700)), StatusCode::BAD_REQUEST);
        assert_eq!(status_of(&line(-32600)), StatusCode::BAD_REQUEST);
        assert_eq!(status_of(b"not json"), StatusCode::BAD_REQUEST);
    }
}
