//! Turning raw pane output into text for the model, and keeping replies
//! within their size budget.

use tmux_control::PlainText;

/// Cooks raw terminal output into plain text: escape sequences removed
/// (the library's [`PlainText`]), CR LF turned into LF, a carriage return
/// followed by more text replaces the line so far (progress bars keep their
/// last state), and backspace removes the previous character.
pub fn cook(raw: &[u8]) -> String {
    let mut plain = PlainText::new();
    let mut line: Vec<u8> = Vec::new();
    let mut out: Vec<u8> = Vec::with_capacity(raw.len());
    let mut pending_cr = false;
    let mut staged = Vec::new();
    let mut rest = raw;
    while !rest.is_empty() {
        let cut = rest
            .iter()
            .position(|&b| b == b'\r' || b == 0x08)
            .unwrap_or(rest.len());
        staged.clear();
        plain.feed(&rest[..cut], &mut staged);
        for &b in &staged {
            if b == b'\n' {
                out.extend_from_slice(&line);
                out.push(b'\n');
                line.clear();
                pending_cr = false;
            } else {
                if pending_cr {
                    line.clear();
                    pending_cr = false;
                }
                line.push(b);
            }
        }
        match rest.get(cut) {
            Some(b'\r') => pending_cr = true,
            Some(_) => {
                // Backspace: drop one UTF-8 character.
                while let Some(b) = line.pop() {
                    if b & 0xc0 != 0x80 {
                        break;
                    }
                }
            }
            None => {}
        }
        rest = &rest[(cut + 1).min(rest.len())..];
    }
    out.extend_from_slice(&line);
    String::from_utf8_lossy(&out).into_owned()
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
/// LF); returns how many leading lines were dropped.
pub fn keep_last_lines(lines: &[String], max: usize) -> (usize, String) {
    let mut total = 0usize;
    let mut keep = 0usize;
    for line in lines.iter().rev() {
        let cost = line.len() + 1;
        if total + cost > max && keep > 0 {
            break;
        }
        total += cost;
        keep += 1;
    }
    let dropped = lines.len() - keep;
    let mut text = lines[dropped..].join("\n");
    if text.len() > max {
        // A single line longer than the budget: keep its end.
        let mut start = text.len() - max;
        while !text.is_char_boundary(start) {
            start += 1;
        }
        text = text[start..].to_owned();
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
