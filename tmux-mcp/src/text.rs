//! Turning raw pane output into text for the model, and keeping replies
//! within their size budget.

use tmux_control::PlainText;

/// Cooks raw terminal output into plain text: escape sequences removed
/// (the library's [`PlainText`]), CR LF turned into LF, a carriage return
/// followed by more text replaces the line so far (progress bars keep their
/// last state), and backspace removes the previous character.
pub fn cook(raw: &[u8]) -> String {
    let mut cooker = Cooker::default();
    let mut out: Vec<u8> = Vec::with_capacity(raw.len());
    cooker.feed(raw, |line| {
        out.extend_from_slice(line);
        out.push(b'\n');
    });
    out.extend_from_slice(&cooker.line);
    String::from_utf8_lossy(&out).into_owned()
}

/// One line of cooked output and where its raw bytes are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CookedLine {
    /// Index in the raw bytes of the line's first byte.
    pub start: usize,
    /// Index just after the line's last raw byte (its LF included).
    pub end: usize,
    /// The cooked text, without the LF.
    pub text: String,
}

/// Cooks raw output like [`cook`], line by line, keeping where each line's
/// raw bytes are (to give cursors for lines). The last line is the
/// unterminated rest (possibly empty).
pub fn cook_lines(raw: &[u8]) -> Vec<CookedLine> {
    let mut cooker = Cooker::default();
    let mut lines = Vec::new();
    let mut line_start = 0;
    let mut at = 0;
    while at < raw.len() {
        // Feed up to and including the next LF: a line can only end there.
        let piece_end = memchr_lf(&raw[at..]).map_or(raw.len(), |p| at + p + 1);
        let mut ended = None;
        cooker.feed(&raw[at..piece_end], |line| {
            ended = Some(String::from_utf8_lossy(line).into_owned());
        });
        if let Some(text) = ended {
            lines.push(CookedLine {
                start: line_start,
                end: piece_end,
                text,
            });
            line_start = piece_end;
        }
        at = piece_end;
    }
    lines.push(CookedLine {
        start: line_start,
        end: raw.len(),
        text: String::from_utf8_lossy(&cooker.line).into_owned(),
    });
    lines
}

fn memchr_lf(raw: &[u8]) -> Option<usize> {
    raw.iter().position(|&b| b == b'\n')
}

/// The state of [`cook`] between pieces of raw output.
#[derive(Debug, Default)]
struct Cooker {
    plain: PlainText,
    line: Vec<u8>,
    pending_cr: bool,
    staged: Vec<u8>,
}

impl Cooker {
    /// Cooks `raw`, calling `done` with each completed line (without LF).
    fn feed(&mut self, raw: &[u8], mut done: impl FnMut(&[u8])) {
        let mut rest = raw;
        while !rest.is_empty() {
            let cut = rest
                .iter()
                .position(|&b| b == b'\r' || b == 0x08)
                .unwrap_or(rest.len());
            self.staged.clear();
            self.plain.feed(&rest[..cut], &mut self.staged);
            for &b in &self.staged {
                if b == b'\n' {
                    done(&self.line);
                    self.line.clear();
                    self.pending_cr = false;
                } else {
                    if self.pending_cr {
                        self.line.clear();
                        self.pending_cr = false;
                    }
                    self.line.push(b);
                }
            }
            match rest.get(cut) {
                Some(b'\r') => self.pending_cr = true,
                Some(_) => {
                    // Backspace: drop one UTF-8 character.
                    while let Some(b) = self.line.pop() {
                        if b & 0xc0 != 0x80 {
                            break;
                        }
                    }
                }
                None => {}
            }
            rest = &rest[(cut + 1).min(rest.len())..];
        }
    }
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

/// Quotes `word` for a POSIX shell when it needs quoting.
pub fn shell_quote(word: &str) -> String {
    let safe = !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=:@%+,".contains(&b));
    if safe {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// Words quoted for a POSIX shell (as [`shell_quote`] does) and joined
/// with spaces: a command line a person can paste.
pub fn shell_words(words: &[String]) -> String {
    words
        .iter()
        .map(|w| shell_quote(w))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn cooks_terminal_output() {
        assert_eq!(cook(b"a\r\nb\r\n"), "a\nb\n");
        assert_eq!(cook(b" 10%\r 50%\r100%\r\ndone"), "100%\ndone");
        assert_eq!(cook(b"\x1b[1;31mred\x1b[0m\r\n"), "red\n");
        assert_eq!(cook(b"abc\x08\x08X"), "aX");
        assert_eq!(cook("caf\u{e9}\x08e".as_bytes()), "cafe");
        assert_eq!(cook(b"\x1b]0;title\x07x"), "x");
        assert_eq!(cook(b"keep\r"), "keep");
    }

    #[test]
    fn cooks_lines_with_their_raw_ranges() {
        let raw = b"a\r\nb 10%\rb 99%\r\n\x1b]0;t\nitle\x07c\r\nend";
        let lines = cook_lines(raw);
        let texts: Vec<&str> = lines.iter().map(|l| l.text.as_str()).collect();
        assert_eq!(texts, ["a", "b 99%", "c", "end"]);
        // A LF inside an escape sequence ends no line.
        assert_eq!((lines[0].start, lines[0].end), (0, 3));
        assert_eq!((lines[1].start, lines[1].end), (3, 16));
        assert_eq!((lines[2].start, lines[2].end), (16, 30));
        assert_eq!((lines[3].start, lines[3].end), (30, raw.len()));
        assert_eq!(cook_lines(b"x\n").last().map(|l| l.text.as_str()), Some(""));
        // The same text as cook.
        let joined: Vec<String> = lines.iter().map(|l| l.text.clone()).collect();
        assert_eq!(joined.join("\n"), cook(raw));
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

    #[test]
    fn quotes_for_the_shell() {
        assert_eq!(shell_quote("work-1"), "work-1");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's;$x"), r"'it'\''s;$x'");
        assert_eq!(shell_quote(""), "''");
    }
}
