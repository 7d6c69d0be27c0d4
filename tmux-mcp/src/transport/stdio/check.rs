//! The verdict on one line from the client, and the scanner that finds its id.

use rmcp::RoleServer;
use rmcp::model::{ErrorCode, RequestId};
use rmcp::service::RxJsonRpcMessage;
use serde_json::json;

use super::MAX_LINE;

/// What to do with one line from the client.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// rmcp can parse it.
    Forward,
    /// A blank line.
    Skip,
    /// Answer it with this JSON-RPC error response (one line).
    Reply(Vec<u8>),
}

const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// The requests a client sends that rmcp knows by name (its
/// `ClientRequest`), so that one read as a custom request had params that
/// did not fit.
const STANDARD_METHODS: &[&str] = &[
    "ping",
    "initialize",
    "server/discover",
    "completion/complete",
    "logging/setLevel",
    "prompts/get",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "subscriptions/listen",
    "resources/subscribe",
    "resources/unsubscribe",
    "tools/call",
    "tools/list",
    "tasks/get",
    "tasks/update",
    "tasks/cancel",
];

/// Decides about one line (without its line feed).
pub(crate) fn check(line: &[u8]) -> Verdict {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    // rmcp ignores a byte order mark (RFC 8259 section 8.1 allows it).
    let body = line.strip_prefix(UTF8_BOM).unwrap_or(line);
    if body.iter().all(u8::is_ascii_whitespace) {
        return Verdict::Skip;
    }
    let e = match serde_json::from_slice::<RxJsonRpcMessage<RoleServer>>(body) {
        // rmcp reads a request of a method it knows whose params do not
        // fit as a custom request, and answers "method not found": the
        // method is there, its params are wrong.
        Ok(rmcp::model::JsonRpcMessage::Request(request)) => {
            return match &request.request {
                rmcp::model::ClientRequest::CustomRequest(custom)
                    if STANDARD_METHODS.contains(&custom.method.as_str()) =>
                {
                    Verdict::Reply(error_line(
                        Some(request.id.clone()),
                        ErrorCode::INVALID_PARAMS,
                        &format!(
                            "Invalid params: the params of {} do not have the form the method takes (see the MCP schema)",
                            custom.method
                        ),
                    ))
                }
                _ => Verdict::Forward,
            };
        }
        Ok(_) => return Verdict::Forward,
        Err(e) => e,
    };
    let members = Members::scan(body);
    match e.classify() {
        serde_json::error::Category::Syntax | serde_json::error::Category::Eof => {
            let why = match (std::str::from_utf8(body), lone_surrogate(body)) {
                (Err(bad), _) => format!(
                    "the line is not UTF-8 (byte {} is not part of a UTF-8 character)",
                    bad.valid_up_to() + 1
                ),
                // serde_json says "unexpected end of hex escape" for these.
                (Ok(_), Some((at, unit))) => format!(
                    "the escape \\u{unit:04x} at byte {} is a lone surrogate (half of a UTF-16 pair), which is not a character; send the whole pair, or U+FFFD in its place",
                    at + 1
                ),
                (Ok(_), None) => e.to_string(),
            };
            tracing::debug!("answering an unparseable line: {why}");
            Verdict::Reply(error_line(
                members.id,
                ErrorCode::PARSE_ERROR,
                &format!(
                    "Parse error: {why}. Each line must be one JSON-RPC message in UTF-8 JSON"
                ),
            ))
        }
        // A notification: rmcp ignores the ones it does not know, as it
        // always did, and answers the others itself.
        _ if members.method && !members.id_key => Verdict::Forward,
        _ => {
            tracing::debug!("answering a line that is not a JSON-RPC message: {e}");
            Verdict::Reply(error_line(
                members.id,
                ErrorCode::INVALID_REQUEST,
                &format!("Invalid request: not a JSON-RPC message this server understands ({e})"),
            ))
        }
    }
}

/// The first `\\uXXXX` escape in `text` that is half of a UTF-16 surrogate
/// pair without its other half: its offset and code unit.
fn lone_surrogate(text: &[u8]) -> Option<(usize, u16)> {
    let unit = |at: usize| {
        let hex = text.get(at..at + 6)?.strip_prefix(b"\\u")?;
        u16::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok()
    };
    let mut at = 0;
    while let Some(offset) = text.get(at..)?.iter().position(|&b| b == b'\\') {
        at += offset;
        match unit(at) {
            Some(high @ 0xD800..=0xDBFF) => match unit(at + 6) {
                Some(0xDC00..=0xDFFF) => at += 12,
                _ => return Some((at, high)),
            },
            Some(low @ 0xDC00..=0xDFFF) => return Some((at, low)),
            Some(_) => at += 6,
            // Any other escape: the backslash and the byte after it.
            None => at += 2,
        }
    }
    None
}

/// The answer to a line over [`MAX_LINE`], of which `head` is the start.
pub(crate) fn oversized(head: &[u8], len: usize) -> Verdict {
    tracing::warn!(len, "answering a line over the length limit");
    Verdict::Reply(error_line(
        Members::scan(head).id,
        ErrorCode::INVALID_REQUEST,
        &format!(
            "Invalid request: the line is {len} bytes long; this server reads at most {MAX_LINE} bytes per message"
        ),
    ))
}

/// A JSON-RPC error response as one line. The id is `null` when it cannot
/// be read (JSON-RPC 2.0 section 5): present, as the MCP Python SDK requires.
pub(crate) fn error_line(id: Option<RequestId>, code: ErrorCode, message: &str) -> Vec<u8> {
    let id = id.map_or(serde_json::Value::Null, RequestId::into_json_value);
    let reply = json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": code.0, "message": message},
    });
    let mut line = reply.to_string().into_bytes();
    line.push(b'\n');
    line
}

/// The answer to a request whose id is that of a request still in flight.
pub(crate) fn duplicate_id(id: RequestId) -> Vec<u8> {
    let shown = id.clone().into_json_value();
    error_line(
        Some(id),
        ErrorCode::INVALID_REQUEST,
        &format!(
            "Invalid request: the id {shown} is that of a request still in flight; this request was not run (JSON-RPC ids must be unique among requests in flight; the other request is still answered)"
        ),
    )
}

/// The id of a line that is a JSON-RPC request (a `method` and an `id`).
pub(crate) fn request_id(line: &[u8]) -> Option<RequestId> {
    let members = Members::scan(line);
    members.method.then_some(members.id).flatten()
}

/// What a line that may not parse says about itself: its top-level `id`
/// (when it is a valid JSON-RPC id) and whether it has `id` and `method`
/// members. Found by a scanner that only follows the structure (strings,
/// brackets, commas), so that a bad byte, a lone surrogate or a huge number
/// elsewhere in the line does not hide the id; it stops at the first
/// structural error, keeping what it found before.
#[derive(Debug, Default, PartialEq)]
pub(super) struct Members {
    pub(super) id: Option<RequestId>,
    pub(super) id_key: bool,
    pub(super) method: bool,
}

impl Members {
    pub(super) fn scan(text: &[u8]) -> Self {
        let mut found = Self::default();
        let mut s = Scanner { text, at: 0 };
        s.space();
        if !s.eat(b'{') {
            return found;
        }
        loop {
            s.space();
            let Some(key) = s.string() else {
                return found;
            };
            s.space();
            if !s.eat(b':') {
                return found;
            }
            s.space();
            let start = s.at;
            let complete = s.value();
            let raw = &text[start..s.at];
            match key {
                b"id" if !found.id_key => {
                    found.id_key = true;
                    if complete {
                        found.id = serde_json::from_slice::<RequestId>(raw).ok();
                    }
                }
                b"method" => found.method = true,
                _ => {}
            }
            if !complete {
                return found;
            }
            s.space();
            if !s.eat(b',') {
                return found;
            }
        }
    }
}

/// A cursor over bytes that may not be JSON.
struct Scanner<'a> {
    text: &'a [u8],
    at: usize,
}

impl<'a> Scanner<'a> {
    fn peek(&self) -> Option<u8> {
        self.text.get(self.at).copied()
    }

    fn eat(&mut self, b: u8) -> bool {
        let hit = self.peek() == Some(b);
        if hit {
            self.at += 1;
        }
        hit
    }

    fn space(&mut self) {
        while self.peek().is_some_and(|b| b" \t\r\n".contains(&b)) {
            self.at += 1;
        }
    }

    /// A string's raw bytes between its quotes (escapes kept as written).
    fn string(&mut self) -> Option<&'a [u8]> {
        if !self.eat(b'"') {
            return None;
        }
        let start = self.at;
        while let Some(b) = self.peek() {
            match b {
                b'"' => {
                    let raw = &self.text[start..self.at];
                    self.at += 1;
                    return Some(raw);
                }
                b'\\' => self.at += 2,
                _ => self.at += 1,
            }
        }
        self.at = self.text.len();
        None
    }

    /// Skips one value; false when the line ends (or breaks) inside it.
    fn value(&mut self) -> bool {
        match self.peek() {
            Some(b'"') => self.string().is_some(),
            Some(b'{' | b'[') => {
                let mut depth = 0usize;
                while let Some(b) = self.peek() {
                    match b {
                        b'"' => {
                            if self.string().is_none() {
                                return false;
                            }
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => {
                            depth -= 1;
                            if depth == 0 {
                                self.at += 1;
                                return true;
                            }
                        }
                        _ => {}
                    }
                    self.at += 1;
                }
                false
            }
            Some(_) => {
                let start = self.at;
                while self
                    .peek()
                    .is_some_and(|b| !b" \t\r\n,:{}[]\"".contains(&b))
                {
                    self.at += 1;
                }
                // A number cut by the end of the line may be missing digits.
                self.at > start && self.peek().is_some()
            }
            None => false,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn reply(line: &[u8]) -> Value {
        match check(line) {
            Verdict::Reply(bytes) => {
                assert!(bytes.ends_with(b"\n"));
                assert_eq!(bytes.iter().filter(|&&b| b == b'\n').count(), 1);
                serde_json::from_slice(&bytes).unwrap()
            }
            other => panic!("{}: {other:?}", String::from_utf8_lossy(line)),
        }
    }

    fn id_of(line: &[u8]) -> Option<RequestId> {
        Members::scan(line).id
    }

    #[test]
    fn lines_rmcp_parses_go_on_blank_ones_are_skipped() {
        for line in [
            &br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#[..],
            br#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"run","arguments":{"command":"\ud83d\ude80"}}}"#,
            b"\xEF\xBB\xBF{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\r",
            // Unknown notifications: rmcp ignores them.
            br#"{"jsonrpc":"2.0","method":"notifications/whatever","params":5}"#,
            br#"{"jsonrpc":"2.0","method":"$/lsp"}"#,
        ] {
            assert_eq!(check(line), Verdict::Forward, "{}", String::from_utf8_lossy(line));
        }
        for line in [&b""[..], b"   ", b"\r", b"\t \r"] {
            assert_eq!(check(line), Verdict::Skip);
        }
    }

    #[test]
    fn unparseable_lines_get_a_parse_error_with_the_id_when_it_can_be_read() {
        let cases: [(&[u8], Value, &str); 9] = [
            (b"not json", Value::Null, "expected ident"),
            (b"\xff\xfe garbage", Value::Null, "not UTF-8 (byte 1 "),
            (b"1e999", Value::Null, "number out of range"),
            (
                br#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"send_text","arguments":{"text":"\ud800"}}}"#,
                json!(5),
                "the escape \\ud800 at byte 97 is a lone surrogate",
            ),
            (
                br#"{"jsonrpc":"2.0","method":"tools/call","params":{"arguments":{"text":"\udc00x"}},"id":"late"}"#,
                json!("late"),
                "surrogate",
            ),
            (
                b"{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\",\"params\":{\"text\":\"a\xffb\"}}",
                json!(6),
                "not UTF-8 (byte 66 ",
            ),
            (
                br#"{"jsonrpc":"2.0","id":7,"method":"ping","params":{"x":1e999}}"#,
                json!(7),
                "number out of range",
            ),
            (br#"{"jsonrpc":"2.0","id":8,"meth"#, json!(8), "EOF while parsing"),
            // A lone surrogate in the id itself: no id to answer with.
            (br#"{"jsonrpc":"2.0","id":"\ud800","method":"ping"}"#, Value::Null, "surrogate"),
        ];
        for (line, id, why) in cases {
            let r = reply(line);
            let shown = String::from_utf8_lossy(line);
            assert_eq!(r["jsonrpc"], "2.0", "{shown}");
            assert_eq!(r["id"], id, "{shown}: {r}");
            assert!(r.as_object().unwrap().contains_key("id"), "{shown}");
            assert_eq!(r["error"]["code"], -32700, "{shown}: {r}");
            let message = r["error"]["message"].as_str().unwrap();
            assert!(message.starts_with("Parse error: "), "{message}");
            assert!(message.contains(why), "{shown}: {message}");
        }
    }

    #[test]
    fn a_known_method_with_params_that_do_not_fit_gets_invalid_params() {
        for line in [
            &br#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"run","arguments":[]}}"#[..],
            br#"{"jsonrpc":"2.0","id":4,"method":"tasks/get","params":{"taskId":5}}"#,
        ] {
            let Verdict::Reply(bytes) = check(line) else {
                panic!("{}: not answered here", String::from_utf8_lossy(line))
            };
            let r: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
            assert_eq!((r["id"].clone(), r["error"]["code"].clone()), (json!(4), json!(-32602)), "{r}");
        }
        // Well-formed requests, and methods rmcp does not know, still go on.
        let ok = br#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"run","arguments":{}}}"#;
        assert_eq!(check(ok), Verdict::Forward);
        let custom = br#"{"jsonrpc":"2.0","id":4,"method":"x/y","params":{}}"#;
        assert_eq!(check(custom), Verdict::Forward);
    }

    #[test]
    fn json_that_is_not_a_message_gets_invalid_request_with_its_id() {
        for (line, id) in [
            (
                &br#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":5}"#[..],
                json!(9),
            ),
            (br#"{"jsonrpc":"1.0","id":"x","method":"ping"}"#, json!("x")),
            (br#"[]"#, Value::Null),
            (br#"{"id":10}"#, json!(10)),
            (br#"42"#, Value::Null),
        ] {
            let r = reply(line);
            assert_eq!(r["id"], id, "{}", String::from_utf8_lossy(line));
            assert_eq!(r["error"]["code"], -32600);
            let message = r["error"]["message"].as_str().unwrap();
            assert!(message.starts_with("Invalid request: "), "{message}");
        }
    }

    #[test]
    fn the_id_is_found_past_whatever_breaks_the_line() {
        assert_eq!(id_of(br#"{"id":1}"#), Some(RequestId::Number(1)));
        assert_eq!(
            id_of(br#" { "a" : [1, {"b": "}\"]"}], "id" : "sq" } "#),
            Some(RequestId::String("sq".into()))
        );
        assert_eq!(
            id_of(br#"{"id":"s\"q"}"#),
            Some(RequestId::String("s\"q".into()))
        );
        assert_eq!(
            id_of(br#"{"a":[1,{"b":"}\"]"}],"id":"sq"}"#),
            Some(RequestId::String("sq".into()))
        );
        assert_eq!(
            id_of(b"{\"p\":\"\xff\xfe\",\"id\":3}"),
            Some(RequestId::Number(3))
        );
        assert_eq!(
            id_of(br#"{"p":1e999,"id":-4}"#),
            Some(RequestId::Number(-4))
        );
        assert_eq!(id_of(br#"{"id":2.0}"#), Some(RequestId::Number(2)));
        // Not an id: absent, broken before it, or not a string or integer.
        for line in [
            &br#"{"method":"ping"}"#[..],
            br#"{"p":"unterminated,"id":1}"#,
            br#"{"id":1.5}"#,
            br#"{"id":null}"#,
            br#"{"id":[1]}"#,
            br#"{"id":1"#,
            br#"{"id""#,
            br#"["id",1]"#,
            b"",
            b"{",
        ] {
            assert_eq!(id_of(line), None, "{}", String::from_utf8_lossy(line));
        }
        // The first id counts.
        assert_eq!(id_of(br#"{"id":1,"id":2}"#), Some(RequestId::Number(1)));
        let m = Members::scan(br#"{"jsonrpc":"2.0","method":"x","params":{"id":5}}"#);
        assert!(m.method && !m.id_key && m.id.is_none());
    }

    #[test]
    fn lone_surrogates_are_found_and_pairs_are_not() {
        assert_eq!(lone_surrogate(br#""\ud800""#), Some((1, 0xd800)));
        assert_eq!(lone_surrogate(br#""a\\ud800""#), None);
        assert_eq!(
            lone_surrogate(br#""\ud83d\ude80 \uDC00""#),
            Some((14, 0xdc00))
        );
        assert_eq!(lone_surrogate(br#""\ud83d\u0041""#), Some((1, 0xd83d)));
        assert_eq!(lone_surrogate(br#""\ud83d\ude80\n\u00e9\""#), None);
        assert_eq!(lone_surrogate(br#""\ud8"#), None);
        assert_eq!(lone_surrogate(b"\\"), None);
    }

    #[test]
    fn oversized_lines_get_invalid_request_with_their_id() {
        let r = match oversized(
            br#"{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"#,
            MAX_LINE + 5,
        ) {
            Verdict::Reply(bytes) => serde_json::from_slice::<Value>(&bytes).unwrap(),
            other => panic!("{other:?}"),
        };
        assert_eq!(r["id"], 11);
        assert_eq!(r["error"]["code"], -32600);
        assert!(
            r["error"]["message"]
                .as_str()
                .unwrap()
                .contains(&format!("{} bytes long", MAX_LINE + 5))
        );
    }
}
