//! Text: turning raw pane output into what a reader sees, and keeping
//! replies within their size budget. Below the terminals; it imports only
//! the configuration and the library.
//!
//! - [`cooked`]: the one line model, for the durable log and every reply;
//! - `shape`: fitting output into a reply (failures first, head and tail,
//!   the cursors of the rest);
//! - `redact`: masking secrets;
//! - here: cooking a range of output ([`cook`], [`cook_lines`]), JSON sizes,
//!   failure-like lines, cuts on line ends and times.

pub mod cooked;
pub(crate) mod redact;
pub(crate) mod shape;

use std::time::SystemTime;

use tmux_control::PaneOutput;

use crate::text::cooked::cook_all;

/// The pane's width and height for cooking its output, when known (from
/// its emulated screen, with no tmux round trip).
pub fn pane_size(po: &PaneOutput) -> Option<(u16, u16)> {
    po.emulated_size().map(|(w, h)| {
        (
            u16::try_from(w).unwrap_or(u16::MAX),
            u16::try_from(h).unwrap_or(u16::MAX),
        )
    })
}

/// Cooks raw terminal output into plain text with the server's one line
/// model ([`cook_all`]): escape sequences played on a screen, so a progress
/// bar keeps its last state, a readline edit shows the edited line, and a
/// full-screen program is one line saying so. Lines are joined with LF.
/// `size` is the pane's width and height, when known.
pub fn cook(raw: &[u8], size: Option<(u16, u16)>) -> String {
    cook_all(raw, size)
        .into_iter()
        .map(|line| line.text)
        .collect::<Vec<_>>()
        .join("\n")
}

/// The command line a shell echoed between output offsets `from` and `to`
/// (its input marks), cooked (not masked). A shell that redraws the line
/// by moving the cursor relative to the line's start (fish: a carriage
/// return, then forward past the prompt) is read from the start of the
/// prompt's last line, the prompt then taken off; where that does not
/// match (a right-hand prompt, a line the log no longer holds from its
/// start), the echo alone is cooked. `None` when the log no longer holds
/// the echo or it is empty.
pub fn echoed(po: &PaneOutput, from: u64, to: u64) -> Option<String> {
    /// How far before the echo the prompt's line start is looked for.
    const BACK: u64 = 4096;
    let size = pane_size(po);
    let start = from.saturating_sub(BACK);
    let (at, raw) = po.read_from(start, usize::try_from(to.checked_sub(start)?).ok()?);
    let skip = usize::try_from(from.checked_sub(at)?).ok()?;
    let (before, input) = (raw.get(..skip)?, raw.get(skip..)?);
    let alone = cook(input, size).trim().to_owned();
    let line = before.iter().rposition(|&b| b == b'\n').map(|i| i + 1);
    let from_line = line.and_then(|line| {
        let prompt = cook(&before[line..], size);
        let prompt = prompt.trim_end();
        let whole = cook(&raw[line..], size);
        let command = whole.strip_prefix(prompt)?.trim();
        (!prompt.contains('\n')).then(|| command.to_owned())
    });
    let command = from_line.unwrap_or(alone);
    (!command.is_empty()).then_some(command)
}

/// One line of cooked output and where its raw bytes are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CookedLine {
    /// Index in the raw bytes of the line's first byte.
    pub start: usize,
    /// Index just after the line's last raw byte: where the next line
    /// starts (its LF included).
    pub end: usize,
    /// The cooked text, without the LF.
    pub text: String,
}

/// Cooks raw output like [`cook`], line by line, keeping where each line's
/// raw bytes are (to give cursors for lines). After a final line feed the
/// last line is the empty one the cursor waits on.
pub fn cook_lines(raw: &[u8], size: Option<(u16, u16)>) -> Vec<CookedLine> {
    let cooked = cook_all(raw, size);
    let starts: Vec<usize> = cooked
        .iter()
        .map(|line| usize::try_from(line.at).unwrap_or(raw.len()).min(raw.len()))
        .collect();
    cooked
        .into_iter()
        .enumerate()
        .map(|(i, line)| {
            let start = starts[i];
            let end = starts.get(i + 1).map_or(raw.len(), |&next| next.max(start));
            CookedLine {
                start,
                end,
                text: line.text,
            }
        })
        .collect()
}

/// RFC 3339 UTC time with milliseconds, like `2026-11-29T08:15:02.123Z`
/// (the audit log's and the replies' form of a time).
pub fn rfc3339(time: SystemTime) -> String {
    humantime::format_rfc3339_millis(time).to_string()
}

/// How many bytes `text` takes as a JSON string's contents (serde_json
/// escapes `"`, `\` and control characters; `\n` and `\t` take two bytes,
/// other controls six).
pub fn json_len(text: &str) -> usize {
    text.bytes()
        .map(|b| match b {
            b'"' | b'\\' | b'\n' | b'\r' | b'\t' | 0x08 | 0x0c => 2,
            0..0x20 => 6,
            _ => 1,
        })
        .sum()
}

/// The longest prefix of `text` that takes at most `max` bytes in JSON
/// ([`json_len`]), cut at a character boundary.
pub fn json_prefix(text: &str, max: usize) -> &str {
    let mut used = 0;
    for (i, c) in text.char_indices() {
        let mut buf = [0u8; 4];
        used += json_len(c.encode_utf8(&mut buf));
        if used > max {
            return &text[..i];
        }
    }
    text
}

/// The longest suffix of `text` that takes at most `max` bytes in JSON,
/// cut at a character boundary.
pub fn json_suffix(text: &str, max: usize) -> &str {
    let mut used = 0;
    for (i, c) in text.char_indices().rev() {
        let mut buf = [0u8; 4];
        used += json_len(c.encode_utf8(&mut buf));
        if used > max {
            return &text[i + c.len_utf8()..];
        }
    }
    text
}

/// Lines that look like a failure or a test run's summary: error messages
/// (`error:`, `Error:`, `fatal:`, `error[E0308]:`, compiler diagnostics
/// `file:line:col: error: ...`, `SomeError:`, `SomeException`), test
/// failures (`FAIL`, `FAILED`, `failed`, `panicked at`, pytest's `E   `
/// lines, `assertion ... failed`), tracebacks, `npm ERR!`, `make: ***`,
/// crashes (`Segmentation fault`, `core dumped`), common shell errors
/// (`command not found`, `No such file or directory`, `Permission
/// denied`) and test-runner summaries (`test result:`, `Tests: ...`,
/// `N failed`, `N errors`, `Ran N tests`, pytest's `=== ... ===` lines).
const FAILURE: &str = r"(?xm)
    (?i:(?:^|[^a-z0-9_])(?:error|fatal)(?:\[[^\]\n]*\])?:)
  | \w*(?:Error|Exception)\b
  | \bFAIL(?:ED|URE|S)?\b
  | (?i:\bfail(?:ed|ing|ures?)\b)
  | (?i:\bpanic(?:ked\ at|:))
  | ^Traceback\ \(most\ recent\ call\ last\)
  | ^E\ {3,}\S
  | (?i:assertion.*\bfailed)
  | \bERR!
  | ^make(?:\[\d+\])?:\ \*\*\*
  | Segmentation\ fault | core\ dumped
  | command\ not\ found | No\ such\ file\ or\ directory | Permission\ denied
  | ^test\ result:
  | ^[\ \t]*Tests?:[\ \t].*\d
  | (?i:\b\d+\ (?:errors?|failures?)\b)
  | ^Ran\ \d+\ tests?\b
  | ^=+\ .*\b(?:passed|failed|errors?)\b.*=+$
";

fn failure_regex() -> Option<&'static regex::Regex> {
    static RE: std::sync::LazyLock<Option<regex::Regex>> =
        std::sync::LazyLock::new(|| regex::Regex::new(FAILURE).ok());
    RE.as_ref()
}

/// Whether `line` looks like a failure or a test summary (error and
/// fatal lines, compiler diagnostics, FAIL, panics, tracebacks, npm
/// errors, test-runner summaries).
pub fn looks_like_failure(line: &str) -> bool {
    failure_regex().is_some_and(|re| re.is_match(line))
}

/// The indexes of the lines of `text` (split at LF) that look like a
/// failure or a test summary, in one search of the whole text.
pub fn failure_lines(text: &str) -> Vec<usize> {
    let Some(re) = failure_regex() else {
        return Vec::new();
    };
    let mut out: Vec<usize> = Vec::new();
    let mut line = 0;
    let mut line_start = 0;
    for m in re.find_iter(text) {
        // A match that begins with the LF ending the line before (the
        // `(?:^|[^a-z0-9_])error:` case) belongs to the next line.
        let at = if text.as_bytes().get(m.start()) == Some(&b'\n') {
            m.start() + 1
        } else {
            m.start()
        };
        line += memchr_count_lf(&text.as_bytes()[line_start..at]);
        line_start = at;
        if out.last() != Some(&line) {
            out.push(line);
        }
    }
    out
}

fn memchr_count_lf(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&b| b == b'\n').count()
}

/// Where to cut `raw` so that the first part holds at most `max` bytes,
/// preferring just after a line feed in the second half of the budget.
pub fn cut_head(raw: &[u8], max: usize) -> usize {
    if raw.len() <= max {
        return raw.len();
    }
    match raw[..max].iter().rposition(|&b| b == b'\n') {
        Some(p) if p + 1 >= max / 2 => p + 1,
        _ => max,
    }
}

/// Where to cut `raw` so that the last part holds at most `max` bytes,
/// preferring just after a line feed near the start of that part.
pub fn cut_tail(raw: &[u8], max: usize) -> usize {
    if raw.len() <= max {
        return 0;
    }
    let start = raw.len() - max;
    match raw[start..].iter().position(|&b| b == b'\n') {
        Some(p) if p < max / 2 => start + p + 1,
        _ => start,
    }
}

/// Keeps the last lines of `lines` that fit in `max` bytes (joined with
/// LF, measured as a JSON string, [`json_len`]); returns how many leading
/// lines were dropped.
pub fn keep_last_lines(lines: &[String], max: usize) -> (usize, String) {
    let mut total = 0usize;
    let mut keep = 0usize;
    for line in lines.iter().rev() {
        let cost = json_len(line) + if keep > 0 { 2 } else { 0 };
        if total + cost > max && keep > 0 {
            break;
        }
        total += cost;
        keep += 1;
    }
    let dropped = lines.len() - keep;
    let text = lines[dropped..].join("\n");
    if json_len(&text) > max {
        // A single line longer than the budget: keep its end.
        return (dropped, json_suffix(&text, max).to_owned());
    }
    (dropped, text)
}

/// Removes trailing empty (or all-space) lines.
pub fn trim_trailing_blank(lines: &mut Vec<String>) {
    while lines.last().is_some_and(|l| l.trim().is_empty()) {
        lines.pop();
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn cooks_terminal_output() {
        assert_eq!(cook(b"a\r\nb\r\n", None), "a\nb\n");
        assert_eq!(cook(b" 10%\r 50%\r100%\r\ndone", None), "100%\ndone");
        assert_eq!(cook(b"\x1b[1;31mred\x1b[0m\r\n", None), "red\n");
        // Backspace moves the cursor, as on a screen: what follows
        // overwrites, and readline's erase is a blank or an erase-line.
        assert_eq!(cook(b"abc\x08\x08X", None), "aXc");
        assert_eq!(cook(b"abc\x08 \x08\x08\x1b[K", None), "a");
        assert_eq!(cook("caf\u{e9}\x08e".as_bytes(), None), "cafe");
        assert_eq!(cook(b"\x1b]0;title\x07x", None), "x");
        assert_eq!(cook(b"keep\r", None), "keep");
    }

    #[test]
    fn cooks_lines_with_their_raw_ranges() {
        let raw = b"a\r\nb 10%\rb 99%\r\n\x1b]0;t\nitle\x07c\r\nend";
        let lines = cook_lines(raw, None);
        let texts: Vec<&str> = lines.iter().map(|l| l.text.as_str()).collect();
        assert_eq!(texts, ["a", "b 99%", "c", "end"]);
        // A LF inside an escape sequence ends no line.
        assert_eq!((lines[0].start, lines[0].end), (0, 3));
        assert_eq!((lines[1].start, lines[1].end), (3, 16));
        assert_eq!((lines[2].start, lines[2].end), (16, 30));
        assert_eq!((lines[3].start, lines[3].end), (30, raw.len()));
        assert_eq!(
            cook_lines(b"x\r\n", None).last().map(|l| l.text.as_str()),
            Some("")
        );
        // The same text as cook.
        let joined: Vec<String> = lines.iter().map(|l| l.text.clone()).collect();
        assert_eq!(joined.join("\n"), cook(raw, None));
    }

    #[test]
    fn the_same_lines_as_the_durable_log() {
        use crate::text::cooked::Cooker;
        // A progress bar redrawn with CR, a readline edit with cursor
        // motion (left twice, insert, erase to the end), and a wrapped line.
        let raw = "get  10%\rget  55%\rget 100%\r\n$ echo helo wrld\x1b[3D\x1b[1@o\x1b[C\x1b[C\x1b[C\x1b[C\r\nhelo world\r\n".as_bytes();
        let mut log = Cooker::new(0);
        log.resize(40, 10);
        let mut logged = log.feed(0, raw);
        logged.extend(log.finish());
        let read = cook_lines(raw, Some((40, 10)));
        let logged: Vec<&str> = logged.iter().map(|l| l.text.as_str()).collect();
        let read: Vec<&str> = read.iter().map(|l| l.text.as_str()).collect();
        assert_eq!(logged, ["get 100%", "$ echo helo world", "helo world"]);
        assert_eq!(read[..3], logged[..]);
        assert_eq!(read[3..], [""]);
    }

    #[test]
    fn dates() {
        use std::time::{Duration, UNIX_EPOCH};
        assert_eq!(rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        let t = UNIX_EPOCH + Duration::from_millis(1_795_966_751_123);
        assert_eq!(rfc3339(t), "2026-11-29T15:39:11.123Z");
        let leap = UNIX_EPOCH + Duration::from_secs(951_782_400); // 2000-02-29
        assert_eq!(&rfc3339(leap)[..10], "2000-02-29");
    }

    #[test]
    fn json_sizes() {
        assert_eq!(json_len("ab"), 2);
        assert_eq!(json_len("a\n\"\\"), 7);
        assert_eq!(json_len("\u{1}"), 6);
        assert_eq!(json_len("é"), 2);
        assert_eq!(json_prefix("ab\ncd", 3), "ab");
        assert_eq!(json_prefix("ab\ncd", 4), "ab\n");
        assert_eq!(json_prefix("ééé", 5), "éé");
        assert_eq!(json_suffix("ab\ncd", 3), "cd");
        assert_eq!(json_suffix("ab\ncd", 100), "ab\ncd");
        for (text, max) in [("ab\ncd", 3), ("ééé", 5), ("", 0)] {
            assert!(json_len(json_prefix(text, max)) <= max);
            assert!(json_len(json_suffix(text, max)) <= max);
        }
    }

    #[test]
    fn failure_like_lines() {
        for line in [
            "error: could not compile `x` (bin \"x\") due to 1 previous error",
            "error[E0308]: mismatched types",
            "src/main.c:12:5: error: expected ';' before '}' token",
            "Error: Cannot find module 'x'",
            "fatal: not a git repository",
            "ValueError: invalid literal for int()",
            "Exception in thread \"main\" java.lang.NullPointerException",
            "FAIL: test_17 expected 3 got 4",
            "--- FAIL: TestParse (0.00s)",
            "FAILED tests/test_a.py::test_b - assert 1 == 2",
            "thread 'main' panicked at src/main.rs:2:5:",
            "panic: runtime error: index out of range",
            "Traceback (most recent call last):",
            "E       assert 3 == 4",
            "npm ERR! code ELIFECYCLE",
            "make: *** [Makefile:3: all] Error 1",
            "Segmentation fault (core dumped)",
            "bash: foo: command not found",
            "ls: cannot access 'x': No such file or directory",
            "test result: ok. 12 passed; 0 failed; 0 ignored",
            "Tests:       1 failed, 4 passed, 5 total",
            "2 errors generated.",
            "Ran 5 tests in 0.001s",
            "========= 1 failed, 2 passed in 0.12s =========",
            "Build failed",
        ] {
            assert!(looks_like_failure(line), "{line}");
        }
        for line in [
            "ok 17: test_17 passed in 0.017s",
            "Compiling tmux-mcp v0.1.0",
            "100000",
            "warning: unused variable: `x`",
            "the terrorist",
            "Finished `dev` profile [unoptimized] target(s) in 2.3s",
            "errors.go is fine",
            "",
        ] {
            assert!(!looks_like_failure(line), "{line}");
        }
    }

    #[test]
    fn failure_lines_in_one_search() {
        let text = "ok\nerror: a\nok\nFAIL x FAILED\n\nTests: 1 failed\nerror: at end";
        assert_eq!(failure_lines(text), [1, 3, 5, 6]);
        assert_eq!(failure_lines("ok\nfine"), Vec::<usize>::new());
        // The same lines as one test per line.
        let lines: Vec<&str> = text.split('\n').collect();
        let each: Vec<usize> = (0..lines.len())
            .filter(|&i| looks_like_failure(lines[i]))
            .collect();
        assert_eq!(failure_lines(text), each);
    }

    #[test]
    fn cuts_on_lines() {
        let raw = b"line1\nline2\nline3\n";
        assert_eq!(cut_head(raw, 100), raw.len());
        assert_eq!(cut_head(raw, 14), 12);
        assert_eq!(cut_tail(raw, 100), 0);
        assert_eq!(cut_tail(raw, 8), 12);
        let (dropped, text) = keep_last_lines(&["a".into(), "bb".into(), "cc".into()], 6);
        assert_eq!((dropped, text.as_str()), (1, "bb\ncc"));
        let (dropped, text) = keep_last_lines(&["0123456789".into()], 4);
        assert_eq!((dropped, text.as_str()), (0, "6789"));
    }
}
