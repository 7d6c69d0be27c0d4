//! Signed webhooks for tmux-mcp's attention events, in the style of
//! [Standard Webhooks](https://www.standardwebhooks.com/).
//!
//! A [`Webhook`] is a queue in front of one delivery task. [`Webhook::send`]
//! never blocks and never awaits: it puts the event in a bounded channel of
//! [`QUEUE`] events and returns, so a caller on a hot path (the code that
//! notices a pane needs attention) is never held up by a slow or dead
//! receiver. When the queue is full the event is dropped and counted, not
//! lost silently: the next event that does get queued carries the count as
//! a `"dropped_before": N` field in its body (when that body is a JSON
//! object; otherwise the count waits for the next body that is one).
//!
//! The delivery task takes one event at a time, so events arrive in the
//! order they were sent, and an event is retried before the next one is
//! tried. Each event is a `POST` of its JSON body to the URL given to
//! [`Webhook::start`], with the headers of Standard Webhooks:
//! `webhook-id` (the caller's id, the same on every attempt, so that a
//! receiver can drop a delivery it has already seen), `webhook-timestamp`
//! (Unix seconds, fresh on every attempt, so that a receiver can refuse an
//! old one) and `webhook-signature` (`v1,` and the base64 of
//! HMAC-SHA256 over `{id}.{timestamp}.{body}`, see [`sign`]); the body
//! signed is byte for byte the body sent. An attempt that cannot connect,
//! fails on the way, takes longer than [`ATTEMPT_TIMEOUT`] or is answered
//! with a status other than 2xx is tried again after 1, 2, 4 and 8 seconds
//! ([`BACKOFF`]), each retry signed anew; after the fifth failure the event
//! is given up with a warning in the log.
//!
//! Only plain `http://` URLs are supported: TLS is not built in. To reach
//! an `https://` receiver, run an HTTP relay on localhost (a reverse proxy
//! that forwards to it over TLS) and give its `http://127.0.0.1:…` URL.
//!
//! Dropping the [`Webhook`] closes the queue: the delivery task still
//! delivers what was queued (with its retries), then ends.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use bytes::Bytes;
use hmac::{Hmac, KeyInit as _, Mac as _};
use http::{HeaderValue, Method, Request, Uri, header};
use http_body_util::{BodyExt as _, Full, Limited};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioTimer};
use sha2::Sha256;
use tokio::sync::mpsc;

/// How many events the queue holds before [`Webhook::send`] drops them.
pub(crate) const QUEUE: usize = 1024;

/// The waits before the second, third, fourth and fifth attempts of a
/// delivery; there is no sixth.
pub(crate) const BACKOFF: [Duration; 4] = [
    Duration::from_secs(1),
    Duration::from_secs(2),
    Duration::from_secs(4),
    Duration::from_secs(8),
];

/// How long one attempt may take, from connecting to the end of the
/// answer.
pub(crate) const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(10);

/// The most of a receiver's answer that is read (and thrown away) so that
/// its connection can be used again.
const MAX_ANSWER: usize = 64 * 1024;

/// The `user-agent` of every delivery.
const USER_AGENT: &str = concat!("tmux-mcp/", env!("CARGO_PKG_VERSION"));

/// The HMAC of the signature.
type HmacSha256 = Hmac<Sha256>;

/// The HTTP client of the delivery task: plain HTTP/1, pooled connections.
type HttpClient = Client<HttpConnector, Full<Bytes>>;

/// Why a webhook cannot be set up.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum WebhookError {
    /// The URL cannot be parsed, or lacks a scheme or a host.
    #[error("bad webhook URL: {0}")]
    BadUrl(String),
    /// The URL is valid but not one this sender can deliver to (`https://`,
    /// or a scheme other than `http://`).
    #[error("unsupported webhook URL: {0}")]
    Unsupported(String),
    /// The secret is empty.
    #[error("bad webhook secret: {0}")]
    BadSecret(String),
    /// [`Webhook::start`] was called outside a tokio runtime.
    #[error("webhook needs a tokio runtime: {0}")]
    NoRuntime(String),
}

/// What kind of [`WebhookError`] an error is, without its message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum WebhookErrorKind {
    /// [`WebhookError::BadUrl`].
    BadUrl,
    /// [`WebhookError::Unsupported`].
    Unsupported,
    /// [`WebhookError::BadSecret`].
    BadSecret,
    /// [`WebhookError::NoRuntime`].
    NoRuntime,
}

impl WebhookError {
    /// What kind of failure this is.
    pub(crate) fn kind(&self) -> WebhookErrorKind {
        match self {
            WebhookError::BadUrl(_) => WebhookErrorKind::BadUrl,
            WebhookError::Unsupported(_) => WebhookErrorKind::Unsupported,
            WebhookError::BadSecret(_) => WebhookErrorKind::BadSecret,
            WebhookError::NoRuntime(_) => WebhookErrorKind::NoRuntime,
        }
    }
}

/// The `webhook-signature` header value of one delivery: `v1,` and the
/// standard base64 of HMAC-SHA256 keyed with `secret` over
/// `{id}.{timestamp}.{body}`, where `body` is exactly the bytes sent.
pub(crate) fn sign(secret: &[u8], id: &str, timestamp: u64, body: &[u8]) -> String {
    let Ok(mut mac) = HmacSha256::new_from_slice(secret) else {
        // Not reached: HMAC takes a key of any length (RFC 2104 hashes a
        // long one). Should it ever be, no receiver accepts this value.
        return String::from("v1,");
    };
    mac.update(id.as_bytes());
    mac.update(b".");
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    format!("v1,{}", BASE64.encode(mac.finalize().into_bytes()))
}

/// A signed webhook sender: a bounded queue in front of one delivery task
/// (see the module documentation).
#[derive(Debug)]
pub(crate) struct Webhook {
    /// The queue to the delivery task.
    queue: mpsc::Sender<Event>,
    /// Events dropped on a full queue and not yet reported in a body.
    dropped: Arc<AtomicU64>,
}

/// One event in the queue.
#[derive(Debug)]
struct Event {
    /// The caller's id: the `webhook-id` of every attempt.
    id: String,
    /// The JSON body, `dropped_before` already added.
    body: serde_json::Value,
    /// How many events were dropped before this one (counted in `body`
    /// when it is an object), kept to put back should this one be dropped
    /// too.
    dropped_before: u64,
}

impl Webhook {
    /// Starts a sender that posts to `url`, signing with `secret` (see
    /// [`crate::config::webhook_secret`]), and spawns its delivery task.
    ///
    /// `url` must be an absolute `http://` URL with a host; an `https://`
    /// URL is refused with [`WebhookError::Unsupported`], as TLS is not
    /// built in (use an HTTP relay on localhost). Must be called inside a
    /// tokio runtime ([`WebhookError::NoRuntime`] otherwise). An empty
    /// secret is refused with [`WebhookError::BadSecret`].
    pub(crate) fn start(url: &str, secret: Vec<u8>) -> Result<Webhook, WebhookError> {
        Webhook::start_with(url, secret, QUEUE)
    }

    /// [`Webhook::start`] with a queue of `capacity` events (at least one).
    fn start_with(url: &str, secret: Vec<u8>, capacity: usize) -> Result<Webhook, WebhookError> {
        let uri = parse_url(url)?;
        if secret.is_empty() {
            return Err(WebhookError::BadSecret("the secret is empty".into()));
        }
        let runtime = tokio::runtime::Handle::try_current()
            .map_err(|err| WebhookError::NoRuntime(err.to_string()))?;
        let client = Client::builder(TokioExecutor::new())
            .pool_timer(TokioTimer::new())
            .build(HttpConnector::new());
        let (queue, events) = mpsc::channel(capacity.max(1));
        runtime.spawn(deliver_all(
            Delivery {
                client,
                uri,
                secret,
            },
            events,
        ));
        Ok(Webhook {
            queue,
            dropped: Arc::new(AtomicU64::new(0)),
        })
    }

    /// Queues an event for delivery, with `id` as its `webhook-id` (make it
    /// unique per event: receivers dedupe on it). Never blocks: on a full
    /// queue the event is dropped and counted, and the next event queued
    /// gets `"dropped_before": N` in its body (see the module
    /// documentation).
    pub(crate) fn send(&self, id: String, mut body: serde_json::Value) {
        let mut dropped_before = 0;
        if let serde_json::Value::Object(fields) = &mut body {
            dropped_before = self.dropped.swap(0, Ordering::Relaxed);
            if dropped_before > 0 {
                fields.insert("dropped_before".into(), dropped_before.into());
            }
        }
        let event = Event {
            id,
            body,
            dropped_before,
        };
        let (event, why) = match self.queue.try_send(event) {
            Ok(()) => return,
            Err(mpsc::error::TrySendError::Full(event)) => (event, "the queue is full"),
            Err(mpsc::error::TrySendError::Closed(event)) => (event, "the delivery task has ended"),
        };
        // This one and those it was to report stay counted for the next.
        let before = self
            .dropped
            .fetch_add(event.dropped_before + 1, Ordering::Relaxed);
        if before == 0 {
            tracing::warn!(
                id = %event.id,
                "webhook: {why}; dropping events (the next one delivered counts them)"
            );
        }
    }
}

/// Checks a webhook URL: absolute, `http://`, with a host.
fn parse_url(url: &str) -> Result<Uri, WebhookError> {
    let uri: Uri = url
        .trim()
        .parse()
        .map_err(|err| WebhookError::BadUrl(format!("{url:?}: {err}")))?;
    let Some(scheme) = uri.scheme_str() else {
        return Err(WebhookError::BadUrl(format!(
            "{url:?} is not an absolute URL (give http://HOST:PORT/PATH)"
        )));
    };
    if scheme.eq_ignore_ascii_case("https") {
        return Err(WebhookError::Unsupported(format!(
            "{url:?}: https is not supported, TLS is not built in; run an HTTP relay on \
             localhost that forwards to it and give its http:// URL"
        )));
    }
    if !scheme.eq_ignore_ascii_case("http") {
        return Err(WebhookError::Unsupported(format!(
            "{url:?}: only http:// URLs are supported"
        )));
    }
    if uri.host().is_none_or(str::is_empty) {
        return Err(WebhookError::BadUrl(format!("{url:?} has no host")));
    }
    Ok(uri)
}

/// What the delivery task needs for every event.
struct Delivery {
    /// The HTTP client, its connections kept between deliveries.
    client: HttpClient,
    /// Where to post.
    uri: Uri,
    /// The HMAC key.
    secret: Vec<u8>,
}

/// The delivery task: one event at a time, in order, until the queue is
/// closed and empty.
async fn deliver_all(delivery: Delivery, mut events: mpsc::Receiver<Event>) {
    while let Some(event) = events.recv().await {
        delivery.deliver(event).await;
    }
}

impl Delivery {
    /// Delivers one event, with its retries; logs a warning if it gives up.
    async fn deliver(&self, event: Event) {
        let body = match serde_json::to_vec(&event.body) {
            Ok(body) => Bytes::from(body),
            Err(err) => {
                tracing::warn!(id = %event.id, "webhook: event not sent, its body is not JSON: {err}");
                return;
            }
        };
        let id = match HeaderValue::from_str(&event.id) {
            Ok(id) => id,
            Err(_) => {
                tracing::warn!(
                    id = ?event.id,
                    "webhook: event not sent, its id cannot be an HTTP header value"
                );
                return;
            }
        };
        let attempts = BACKOFF.len() + 1;
        let mut last_failure = String::new();
        for attempt in 1..=attempts {
            match self.attempt(&event.id, &id, &body).await {
                Ok(()) => return,
                Err(failure) => {
                    tracing::debug!(id = %event.id, attempt, "webhook: attempt failed: {failure}");
                    last_failure = failure;
                }
            }
            if let Some(wait) = BACKOFF.get(attempt - 1) {
                // A true timer: retry backoff.
                tokio::time::sleep(*wait).await;
            }
        }
        tracing::warn!(
            id = %event.id,
            url = %self.uri,
            "webhook: gave up after {attempts} attempts: {last_failure}"
        );
    }

    /// One signed POST; `Err` says why it did not succeed.
    async fn attempt(&self, id: &str, id_header: &HeaderValue, body: &Bytes) -> Result<(), String> {
        let timestamp = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs();
        let signature = sign(&self.secret, id, timestamp, body);
        let request = Request::builder()
            .method(Method::POST)
            .uri(self.uri.clone())
            .header(header::CONTENT_TYPE, "application/json")
            .header(header::USER_AGENT, USER_AGENT)
            .header("webhook-id", id_header.clone())
            .header("webhook-timestamp", timestamp)
            .header("webhook-signature", signature)
            .body(Full::new(body.clone()))
            .map_err(|err| format!("cannot build the request: {err}"))?;
        let exchange = async {
            let response = self
                .client
                .request(request)
                .await
                .map_err(|err| error_chain(&err))?;
            let status = response.status();
            // Read the answer (up to a limit) so that the connection can
            // serve the next delivery; what it says does not matter.
            let _ = Limited::new(response.into_body(), MAX_ANSWER)
                .collect()
                .await;
            if status.is_success() {
                Ok(())
            } else {
                Err(format!("the receiver answered {status}"))
            }
        };
        // A true timer, a deadline: of one attempt.
        match tokio::time::timeout(ATTEMPT_TIMEOUT, exchange).await {
            Ok(result) => result,
            Err(_) => Err(format!("no answer within {} s", ATTEMPT_TIMEOUT.as_secs())),
        }
    }
}

/// An error and its sources, `: `-separated (hyper's own message alone is
/// terse, such as "client error (Connect)").
fn error_chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use std::convert::Infallible;

    use http::{HeaderMap, Response, StatusCode};
    use http_body_util::Empty;
    use hyper::body::Incoming;
    use hyper::service::service_fn;
    use hyper_util::rt::TokioIo;
    use serde_json::json;
    use tokio::net::TcpListener;
    use tokio::sync::{Mutex, Notify};

    use super::*;

    /// A request as the receiver saw it.
    struct Received {
        /// Its headers.
        headers: HeaderMap,
        /// Its body, exactly as received.
        body: Bytes,
    }

    /// What the test receiver does: answers these statuses in turn (then
    /// 200), and holds its first answer until `release` is notified when
    /// `hold_first` is set.
    #[derive(Default)]
    struct Script {
        /// Statuses of the first answers.
        statuses: Vec<StatusCode>,
        /// Whether the first answer waits for `release`.
        hold_first: bool,
    }

    /// A real HTTP/1 receiver on 127.0.0.1; returns its URL, the requests
    /// it gets, and the notify that releases a held first answer.
    async fn receiver(script: Script) -> (String, mpsc::UnboundedReceiver<Received>, Arc<Notify>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/hook", listener.local_addr().unwrap());
        let (tx, rx) = mpsc::unbounded_channel();
        let release = Arc::new(Notify::new());
        let state = Arc::new(Mutex::new((script, 0usize)));
        let held = release.clone();
        tokio::spawn(async move {
            loop {
                let (stream, _) = listener.accept().await.unwrap();
                let tx = tx.clone();
                let state = state.clone();
                let held = held.clone();
                let service = service_fn(move |request: Request<Incoming>| {
                    let tx = tx.clone();
                    let state = state.clone();
                    let held = held.clone();
                    async move {
                        let (parts, body) = request.into_parts();
                        let body = body.collect().await.unwrap().to_bytes();
                        let (status, hold) = {
                            let mut state = state.lock().await;
                            let n = state.1;
                            state.1 += 1;
                            let status = state.0.statuses.get(n).copied().unwrap_or(StatusCode::OK);
                            (status, n == 0 && state.0.hold_first)
                        };
                        tx.send(Received {
                            headers: parts.headers,
                            body,
                        })
                        .unwrap();
                        if hold {
                            held.notified().await;
                        }
                        let mut response = Response::new(Empty::<Bytes>::new());
                        *response.status_mut() = status;
                        Ok::<_, Infallible>(response)
                    }
                });
                tokio::spawn(async move {
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        (url, rx, release)
    }

    /// The next request, within 5 s (a true timer: the test's deadline).
    async fn next(requests: &mut mpsc::UnboundedReceiver<Received>) -> Received {
        tokio::time::timeout(Duration::from_secs(5), requests.recv())
            .await
            .expect("a request within 5 s")
            .expect("the receiver is running")
    }

    /// A header as text.
    fn text<'a>(headers: &'a HeaderMap, name: &str) -> &'a str {
        headers
            .get(name)
            .unwrap_or_else(|| panic!("header {name}"))
            .to_str()
            .unwrap()
    }

    /// A body as JSON.
    fn json_of(body: &Bytes) -> serde_json::Value {
        serde_json::from_slice(body).unwrap()
    }

    const SECRET: &[u8] = b"0123456789abcdef0123";

    #[tokio::test]
    async fn a_delivery_has_every_header_and_a_valid_signature() {
        let (url, mut requests, _) = receiver(Script::default()).await;
        let hook = Webhook::start(&url, SECRET.to_vec()).unwrap();
        hook.send("evt_1".into(), json!({"pane": "%3", "reason": "bell"}));
        let got = next(&mut requests).await;

        assert_eq!(text(&got.headers, "content-type"), "application/json");
        assert_eq!(text(&got.headers, "webhook-id"), "evt_1");
        assert_eq!(
            text(&got.headers, "user-agent"),
            format!("tmux-mcp/{}", env!("CARGO_PKG_VERSION"))
        );
        let timestamp: u64 = text(&got.headers, "webhook-timestamp").parse().unwrap();
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs();
        assert!(
            now.abs_diff(timestamp) <= 60,
            "timestamp {timestamp}, now {now}"
        );

        // Verified independently of `sign`, over the bytes received.
        let signature = text(&got.headers, "webhook-signature");
        let encoded = signature.strip_prefix("v1,").expect("a v1 signature");
        let mut mac = HmacSha256::new_from_slice(SECRET).unwrap();
        mac.update(format!("evt_1.{timestamp}.").as_bytes());
        mac.update(&got.body);
        mac.verify_slice(&BASE64.decode(encoded).unwrap())
            .expect("the signature verifies");
        assert_eq!(json_of(&got.body), json!({"pane": "%3", "reason": "bell"}));
    }

    #[tokio::test]
    async fn a_failed_attempt_is_retried_with_the_same_id() {
        let script = Script {
            statuses: vec![StatusCode::INTERNAL_SERVER_ERROR],
            ..Script::default()
        };
        let (url, mut requests, _) = receiver(script).await;
        let hook = Webhook::start(&url, SECRET.to_vec()).unwrap();
        let started = tokio::time::Instant::now();
        hook.send("evt_retry".into(), json!({"n": 1}));
        let first = next(&mut requests).await;
        let second = next(&mut requests).await;
        let waited = started.elapsed();

        assert_eq!(text(&first.headers, "webhook-id"), "evt_retry");
        assert_eq!(text(&second.headers, "webhook-id"), "evt_retry");
        assert_eq!(first.body, second.body);
        assert!(waited >= BACKOFF[0], "retried after {waited:?}");
        // The retry is signed anew, and its signature verifies.
        let timestamp: u64 = text(&second.headers, "webhook-timestamp").parse().unwrap();
        assert_eq!(
            text(&second.headers, "webhook-signature"),
            sign(SECRET, "evt_retry", timestamp, &second.body)
        );
    }

    #[tokio::test]
    async fn events_arrive_in_order() {
        let (url, mut requests, _) = receiver(Script::default()).await;
        let hook = Webhook::start(&url, SECRET.to_vec()).unwrap();
        for n in 0..3 {
            hook.send(format!("evt_{n}"), json!({"n": n}));
        }
        for n in 0..3 {
            let got = next(&mut requests).await;
            assert_eq!(text(&got.headers, "webhook-id"), format!("evt_{n}"));
            assert_eq!(json_of(&got.body), json!({"n": n}));
        }
    }

    #[tokio::test]
    async fn dropped_events_are_counted_in_the_next_one() {
        let script = Script {
            hold_first: true,
            ..Script::default()
        };
        let (url, mut requests, release) = receiver(script).await;
        let hook = Webhook::start_with(&url, SECRET.to_vec(), 1).unwrap();
        hook.send("evt_0".into(), json!({"n": 0}));
        // The delivery task is now waiting on the held answer.
        let _ = next(&mut requests).await;
        hook.send("evt_1".into(), json!({"n": 1})); // queued
        hook.send("evt_2".into(), json!({"n": 2})); // dropped
        hook.send("evt_3".into(), json!("not an object")); // dropped
        release.notify_one();
        let got = next(&mut requests).await;
        assert_eq!(json_of(&got.body), json!({"n": 1}));
        hook.send("evt_4".into(), json!({"n": 4}));
        let got = next(&mut requests).await;
        assert_eq!(text(&got.headers, "webhook-id"), "evt_4");
        assert_eq!(json_of(&got.body), json!({"n": 4, "dropped_before": 2}));
        hook.send("evt_5".into(), json!({"n": 5}));
        let got = next(&mut requests).await;
        assert_eq!(json_of(&got.body), json!({"n": 5}));
    }

    #[tokio::test]
    async fn secrets_and_urls_are_checked() {
        let key: Vec<u8> = (0..24).collect();
        let err = Webhook::start("https://x", key.clone()).unwrap_err();
        assert_eq!(err.kind(), WebhookErrorKind::Unsupported);
        assert!(err.to_string().contains("TLS"), "{err}");
        for bad in ["not a url", "/just/a/path", ""] {
            let err = Webhook::start(bad, key.clone()).unwrap_err();
            assert_eq!(err.kind(), WebhookErrorKind::BadUrl, "{bad:?}: {err}");
        }
        assert_eq!(
            Webhook::start("ftp://x/", key.clone()).unwrap_err().kind(),
            WebhookErrorKind::Unsupported
        );
        assert_eq!(
            Webhook::start("http://127.0.0.1:9/", Vec::new())
                .unwrap_err()
                .kind(),
            WebhookErrorKind::BadSecret
        );
    }

    #[test]
    fn start_outside_a_runtime_is_an_error() {
        let err = Webhook::start("http://127.0.0.1:9/", SECRET.to_vec()).unwrap_err();
        assert_eq!(err.kind(), WebhookErrorKind::NoRuntime);
    }

    #[test]
    fn the_standard_webhooks_test_vector() {
        let secret =
            crate::config::webhook_secret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap();
        assert_eq!(
            sign(
                &secret,
                "msg_p5jXN8AQM9LWM0D4loKWxJek",
                1614265330,
                br#"{"test": 2432232314}"#
            ),
            "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
        );
    }
}
