//! The page and xterm.js, compiled into the binary (no CDN): `tmux-mcp/web/`
//! in the source tree, with xterm.js pinned in `tmux-mcp/web/vendor/xterm/`
//! (its README says which release and how it was fetched).

use axum::extract::Path;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};

/// Every file the page is made of: its path under `/ui/`, its type, its
/// bytes.
const FILES: &[(&str, &str, &[u8])] = &[
    (
        "app.js",
        "text/javascript; charset=utf-8",
        include_bytes!("../../../web/app.js"),
    ),
    (
        "app.css",
        "text/css; charset=utf-8",
        include_bytes!("../../../web/app.css"),
    ),
    (
        "vendor/xterm.js",
        "text/javascript; charset=utf-8",
        include_bytes!("../../../web/vendor/xterm/xterm.js"),
    ),
    (
        "vendor/xterm.css",
        "text/css; charset=utf-8",
        include_bytes!("../../../web/vendor/xterm/xterm.css"),
    ),
];

/// The page itself.
const PAGE: &[u8] = include_bytes!("../../../web/index.html");

/// What every answer of the view carries: nothing of it may be framed by
/// another site, scripts only from the view itself, and no referrer (the
/// page's URL can name a terminal).
fn hardened(mut response: Response) -> Response {
    let h = response.headers_mut();
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
        ),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    response
}

/// `GET /ui`: to `/ui/`, so the page's relative paths resolve.
pub(super) async fn to_page() -> Redirect {
    Redirect::permanent("/ui/")
}

/// `GET /ui/`: the page.
pub(super) async fn page() -> Response {
    hardened(
        (
            [
                (header::CONTENT_TYPE, "text/html; charset=utf-8"),
                (header::CACHE_CONTROL, "no-cache"),
            ],
            PAGE,
        )
            .into_response(),
    )
}

/// `GET /ui/FILE`: one of the page's files.
pub(super) async fn file(Path(file): Path<String>) -> Response {
    match FILES.iter().find(|(name, _, _)| *name == file) {
        Some((_, kind, bytes)) => hardened(
            (
                [
                    (header::CONTENT_TYPE, *kind),
                    (header::CACHE_CONTROL, "no-cache"),
                ],
                *bytes,
            )
                .into_response(),
        ),
        None => (StatusCode::NOT_FOUND, "Not found\n").into_response(),
    }
}
