//! tmux formats: escaping literal text for them, decoding tmux's "vis"
//! escaping, and reading `-F` rows without ever confusing data with
//! structure.

use std::path::PathBuf;

use bytes::Bytes;

use crate::error::{Error, Result};
use crate::ids::{PaneId, SessionId, WindowId, parse_u32};

/// Decodes tmux's "vis" escaping (the `strvis(3)` family with
/// `VIS_OCTAL | VIS_CSTYLE`), as found in session and window names
/// (control-mode.md §6.3), `show-buffer` output and `capture-pane -C` lines.
///
/// * `\\` → `\`; `\ooo` (one to three octal digits) → that byte;
/// * `\a \b \t \n \v \f \r \e \E \s` → BEL, BS, TAB, LF, VT, FF, CR, ESC,
///   ESC, space;
/// * `\M-c` → `c | 0x80`, `\M^c` and `\^c` → the control character of `c`
///   with and without the high bit (`\^?` is DEL);
/// * any other `\c` → `c` (this undoes tmux's `\$` and `\"`);
/// * a lone trailing `\` stays.
///
/// Valid UTF-8 is never escaped by tmux and passes through unchanged.
///
/// ```
/// use tmux_control::command::unvis;
/// let shown = r"tab\there back\\slash nl\nx \001 é";
/// assert_eq!(unvis(shown.as_bytes()), "tab\there back\\slash nl\nx \x01 é".as_bytes());
/// assert_eq!(unvis(br"\$HOME \351"), b"$HOME \xe9");
/// ```
pub fn unvis(escaped: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(escaped.len());
    let mut i = 0;
    while i < escaped.len() {
        let b = escaped[i];
        if b != b'\\' || i + 1 == escaped.len() {
            out.push(b);
            i += 1;
            continue;
        }
        let next = escaped[i + 1];
        i += 2;
        match next {
            b'0'..=b'7' => {
                let mut value = u32::from(next - b'0');
                for _ in 0..2 {
                    match escaped.get(i) {
                        Some(&d @ b'0'..=b'7') if value * 8 + u32::from(d - b'0') <= 0xff => {
                            value = value * 8 + u32::from(d - b'0');
                            i += 1;
                        }
                        _ => break,
                    }
                }
                out.push(value as u8);
            }
            b'a' => out.push(0x07),
            b'b' => out.push(0x08),
            b't' => out.push(b'\t'),
            b'n' => out.push(b'\n'),
            b'v' => out.push(0x0b),
            b'f' => out.push(0x0c),
            b'r' => out.push(b'\r'),
            b'e' | b'E' => out.push(0x1b),
            b's' => out.push(b' '),
            b'M' => match (escaped.get(i), escaped.get(i + 1)) {
                (Some(b'-'), Some(&c)) => {
                    out.push(c | 0x80);
                    i += 2;
                }
                (Some(b'^'), Some(&c)) => {
                    out.push(control(c) | 0x80);
                    i += 2;
                }
                _ => out.push(b'M'),
            },
            b'^' => match escaped.get(i) {
                Some(&c) => {
                    out.push(control(c));
                    i += 1;
                }
                None => out.push(b'^'),
            },
            other => out.push(other),
        }
    }
    out
}

fn control(c: u8) -> u8 {
    if c == b'?' { 0x7f } else { c & 0x1f }
}

/// Escapes `text` so that tmux's format expansion yields it unchanged.
///
/// tmux expands `#{…}`, `#(…)`, `#S` and friends in formats and in some
/// command arguments (session and window names, `-c` directories, pane
/// titles, option names, `display-message`). `##` stands for one `#`, except
/// that tmux keeps a run of `#` followed by `[` as a style (`##[` stays
/// `##[`), so `#[` is written as `#{l:#[}` (the `l:` literal modifier).
/// Nothing else is special to format expansion.
///
/// ```
/// use tmux_control::command::escape_format;
/// assert_eq!(escape_format(b"#{pane_id} #S"), b"##{pane_id} ##S");
/// assert_eq!(escape_format(b"#[fg=red]"), b"#{l:#[}fg=red]");
/// ```
pub fn escape_format(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len() + 8);
    let mut i = 0;
    while i < text.len() {
        match (text[i], text.get(i + 1)) {
            (b'#', Some(b'[')) => {
                out.extend_from_slice(b"#{l:#[}");
                i += 2;
            }
            (b'#', _) => {
                out.extend_from_slice(b"##");
                i += 1;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    out
}

/// Escapes a name the way tmux stores window and session names
/// (`utf8_stravis` with `VIS_OCTAL | VIS_CSTYLE | VIS_TAB | VIS_NL`): `\\`
/// doubled, `$` before a letter, `_` or `{` as `\$`, C escapes for BEL, BS,
/// TAB, LF, VT, FF and CR, `\ooo` for other control bytes and bytes that
/// are not valid UTF-8; valid UTF-8 unchanged. [`unvis`] undoes it.
///
/// tmux applies this itself to names given to `rename-window`,
/// `new-session -s` and `rename-session`, but stores the `-n` name of
/// `new-window` and `new-session` raw; the typed commands pass `-n` names
/// through this function so that every window name is stored, and comes
/// back, in the same form.
pub(crate) fn vis_name(name: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(name.len() + 8);
    let mut pos = 0;
    for chunk in name.utf8_chunks() {
        for &b in chunk.valid().as_bytes() {
            let next = name.get(pos + 1).copied();
            pos += 1;
            match b {
                b'\\' => out.extend_from_slice(b"\\\\"),
                b'$' if next.is_some_and(|n| n.is_ascii_alphabetic() || n == b'_' || n == b'{') => {
                    out.extend_from_slice(b"\\$")
                }
                0x07 => out.extend_from_slice(b"\\a"),
                0x08 => out.extend_from_slice(b"\\b"),
                b'\t' => out.extend_from_slice(b"\\t"),
                b'\n' => out.extend_from_slice(b"\\n"),
                0x0b => out.extend_from_slice(b"\\v"),
                0x0c => out.extend_from_slice(b"\\f"),
                b'\r' => out.extend_from_slice(b"\\r"),
                0x00..=0x1f | 0x7f => out.extend_from_slice(format!("\\{b:03o}").as_bytes()),
                _ => out.push(b),
            }
        }
        for &b in chunk.invalid() {
            pos += 1;
            out.extend_from_slice(format!("\\{b:03o}").as_bytes());
        }
    }
    out
}

/// Joins reply body lines with LF: the bytes tmux printed, minus the final
/// newline.
pub(crate) fn join_lines(body: &[Bytes]) -> Vec<u8> {
    let mut out = Vec::with_capacity(body.iter().map(|l| l.len() + 1).sum());
    for (n, line) in body.iter().enumerate() {
        if n > 0 {
            out.push(b'\n');
        }
        out.extend_from_slice(line);
    }
    out
}

/// Turns raw bytes into a path (exact on Unix).
pub(crate) fn bytes_to_path(bytes: &[u8]) -> PathBuf {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        PathBuf::from(std::ffi::OsStr::from_bytes(bytes))
    }
    #[cfg(not(unix))]
    {
        PathBuf::from(String::from_utf8_lossy(bytes).into_owned())
    }
}

/// Turns a decoded name into a `String`, replacing invalid UTF-8.
pub(crate) fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The shape of one `-F` row: fixed fields, then free-text fields.
///
/// Why this shape: reply lines come back unescaped in tmux 3.3a and 3.6+, and
/// vis-escaped in 3.4/3.5 (control characters become `\001`, a `\x1f`
/// separator becomes four bytes), so no control character is a safe
/// separator, and free text (paths, commands, names with spaces) can contain
/// any printable one and even LF.
///
/// * **Fixed fields** are values tmux builds itself from a closed alphabet:
///   ids (`$1`, `@2`, `%3`), numbers, `0`/`1` flags, layouts
///   (`b25d,80x24,0,0,0`, `{}`, `[]`) and window flags (`*-#!~MZ`). None
///   can contain a space, so they are separated by single spaces and come
///   first. A fixed field may be empty (a non-current window's flags).
/// * **Free-text fields** come last, each written as `#{n:VAR}:#{VAR}`: the
///   value's length in bytes (`n:` is `strlen`), a colon, then exactly that
///   many bytes, then a space (or, after the last one, LF or the end of the
///   reply). The reader takes the announced number of bytes, whatever they
///   are, so a space, a colon or a newline in a path or a pane title cannot
///   shift a field or split a row.
///
/// A row that does not have this shape is an [`Error::UnexpectedReply`]
/// naming the command and quoting the row. On tmux 3.4/3.5 a free-text value
/// that contains control characters or `$` before a letter comes back longer
/// than announced (the reply line is vis-escaped after the length was
/// computed); that row then fails to parse rather than being misread.
pub(crate) struct RowSpec {
    pub(crate) fixed: &'static [&'static str],
    pub(crate) text: &'static [&'static str],
}

impl RowSpec {
    /// The `-F` format for this row shape.
    pub(crate) fn format(&self) -> String {
        let mut out = String::new();
        for (n, var) in self.fixed.iter().enumerate() {
            if n > 0 {
                out.push(' ');
            }
            out.push_str("#{");
            out.push_str(var);
            out.push('}');
        }
        for var in self.text {
            out.push_str(" #{n:");
            out.push_str(var);
            out.push_str("}:#{");
            out.push_str(var);
            out.push('}');
        }
        out
    }

    /// Splits a reply body into rows of this shape.
    pub(crate) fn parse<'a>(&self, command: &'a str, body: &'a [u8]) -> Result<Vec<Row<'a>>> {
        let mut rows = Vec::new();
        let mut pos = 0;
        while pos < body.len() {
            let (row, next) = self.parse_row(command, body, pos)?;
            rows.push(row);
            pos = next;
        }
        Ok(rows)
    }

    fn parse_row<'a>(
        &self,
        command: &'a str,
        data: &'a [u8],
        start: usize,
    ) -> Result<(Row<'a>, usize)> {
        let bad = |what: &str, at: usize| {
            let end = memchr::memchr(b'\n', &data[at.min(data.len())..])
                .map_or(data.len(), |n| at.min(data.len()) + n);
            row_error(command, &data[start..end], what)
        };
        let total = self.fixed.len() + self.text.len();
        let mut pos = start;
        let mut fixed = Vec::with_capacity(self.fixed.len());
        let mut text = Vec::with_capacity(self.text.len());
        for (n, name) in self.fixed.iter().enumerate() {
            let end = data[pos..]
                .iter()
                .position(|&b| b == b' ' || b == b'\n')
                .map_or(data.len(), |k| pos + k);
            fixed.push(&data[pos..end]);
            pos = end;
            let last = n + 1 == total;
            pos = expect_separator(data, pos, last)
                .ok_or_else(|| bad(&format!("no field after `{name}`"), start))?;
        }
        for (n, name) in self.text.iter().enumerate() {
            let colon = data[pos..]
                .iter()
                .take(11)
                .position(|&b| b == b':')
                .map(|k| pos + k)
                .ok_or_else(|| bad(&format!("no length before `{name}`"), start))?;
            let len = parse_u32(&data[pos..colon])
                .ok_or_else(|| bad(&format!("bad length before `{name}`"), start))?
                as usize;
            let begin = colon + 1;
            let end = begin
                .checked_add(len)
                .filter(|&e| e <= data.len())
                .ok_or_else(|| bad(&format!("`{name}` is shorter than announced"), start))?;
            text.push(&data[begin..end]);
            let last = n + 1 == self.text.len();
            pos = expect_separator(data, end, last)
                .ok_or_else(|| bad(&format!("`{name}` does not end where announced"), start))?;
        }
        let line_end = if pos > start && data.get(pos - 1) == Some(&b'\n') {
            pos - 1
        } else {
            pos
        };
        Ok((
            Row {
                command,
                line: &data[start..line_end],
                fixed,
                text,
            },
            pos,
        ))
    }
}

/// After a field ending at `pos`: a space when more fields follow, else LF
/// or the end of the data. Returns where the next field or row starts.
fn expect_separator(data: &[u8], pos: usize, last: bool) -> Option<usize> {
    match (data.get(pos), last) {
        (None, true) => Some(pos),
        (Some(b'\n'), true) => Some(pos + 1),
        (Some(b' '), false) => Some(pos + 1),
        _ => None,
    }
}

fn row_error(command: &str, line: &[u8], what: &str) -> Error {
    const MAX: usize = 200;
    let shown = String::from_utf8_lossy(&line[..line.len().min(MAX)]);
    let more = if line.len() > MAX { "…" } else { "" };
    Error::UnexpectedReply {
        command: command.to_owned(),
        detail: format!("{what} in row {shown:?}{more}"),
    }
}

/// One parsed `-F` row.
pub(crate) struct Row<'a> {
    command: &'a str,
    line: &'a [u8],
    fixed: Vec<&'a [u8]>,
    text: Vec<&'a [u8]>,
}

impl<'a> Row<'a> {
    fn error(&self, what: &str) -> Error {
        row_error(self.command, self.line, what)
    }

    fn field(&self, i: usize) -> &'a [u8] {
        self.fixed.get(i).copied().unwrap_or_default()
    }

    /// Free-text field `i`, raw.
    pub(crate) fn text(&self, i: usize) -> &'a [u8] {
        self.text.get(i).copied().unwrap_or_default()
    }

    /// Fixed field `i` as text (layouts, flags).
    pub(crate) fn string(&self, i: usize) -> String {
        lossy(self.field(i))
    }

    pub(crate) fn u32(&self, i: usize, name: &str) -> Result<u32> {
        parse_u32(self.field(i)).ok_or_else(|| self.error(&format!("`{name}` is not a number")))
    }

    pub(crate) fn u64(&self, i: usize, name: &str) -> Result<u64> {
        let f = self.field(i);
        std::str::from_utf8(f)
            .ok()
            .filter(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| self.error(&format!("`{name}` is not a number")))
    }

    /// A number that tmux leaves empty when it does not apply.
    pub(crate) fn opt_u32(&self, i: usize, name: &str) -> Result<Option<u32>> {
        if self.field(i).is_empty() {
            Ok(None)
        } else {
            self.u32(i, name).map(Some)
        }
    }

    /// A signed number that tmux leaves empty when it does not apply.
    pub(crate) fn opt_i32(&self, i: usize, name: &str) -> Result<Option<i32>> {
        let f = self.field(i);
        if f.is_empty() {
            return Ok(None);
        }
        std::str::from_utf8(f)
            .ok()
            .and_then(|s| s.parse().ok())
            .map(Some)
            .ok_or_else(|| self.error(&format!("`{name}` is not a number")))
    }

    pub(crate) fn flag(&self, i: usize, name: &str) -> Result<bool> {
        match self.field(i) {
            b"1" => Ok(true),
            b"0" => Ok(false),
            _ => Err(self.error(&format!("`{name}` is not 0 or 1"))),
        }
    }

    pub(crate) fn session(&self, i: usize) -> Result<SessionId> {
        session_id(self.field(i)).ok_or_else(|| self.error("bad session id"))
    }

    pub(crate) fn window(&self, i: usize) -> Result<WindowId> {
        WindowId::from_bytes(self.field(i)).ok_or_else(|| self.error("bad window id"))
    }

    pub(crate) fn pane(&self, i: usize) -> Result<PaneId> {
        PaneId::from_bytes(self.field(i)).ok_or_else(|| self.error("bad pane id"))
    }
}

/// Parses a session id, tolerating the `\$` that tmux 3.4 may write.
pub(crate) fn session_id(field: &[u8]) -> Option<SessionId> {
    SessionId::from_bytes(field.strip_prefix(b"\\").unwrap_or(field))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn unvis_cases() {
        assert_eq!(unvis(b""), b"");
        assert_eq!(unvis(b"plain"), b"plain");
        assert_eq!(unvis(br"\\"), b"\\");
        assert_eq!(unvis(br"\\n"), b"\\n");
        assert_eq!(unvis(br"a\"), b"a\\");
        assert_eq!(unvis(br"\0"), b"\0");
        assert_eq!(unvis(br"\0x"), b"\0x");
        assert_eq!(unvis(br"\0001"), b"\x001");
        assert_eq!(unvis(br"\377\376"), b"\xff\xfe");
        assert_eq!(unvis(br"\400"), b"\x200");
        assert_eq!(
            unvis(br"\a\b\t\n\v\f\r\e\E\s"),
            b"\x07\x08\t\n\x0b\x0c\r\x1b\x1b "
        );
        assert_eq!(unvis(br"\M-a\M^a\^a\^?"), b"\xe1\x81\x01\x7f");
        assert_eq!(unvis(br"\M"), b"M");
        assert_eq!(unvis(br"\$HOME \${X} \$"), b"$HOME ${X} $");
        assert_eq!(unvis("é ✓".as_bytes()), "é ✓".as_bytes());
    }

    #[test]
    fn unvis_undoes_tmux_show_buffer_for_every_byte() {
        // What tmux 3.3a's show-buffer printed for each byte (recorded).
        for b in 1..=255u8 {
            let shown: Vec<u8> = match b {
                0x07 => b"\\a".to_vec(),
                0x08 => b"\\b".to_vec(),
                0x09 => b"\\t".to_vec(),
                0x0a => b"\n".to_vec(),
                0x0b => b"\\v".to_vec(),
                0x0c => b"\\f".to_vec(),
                0x0d => b"\\r".to_vec(),
                b'\\' => b"\\\\".to_vec(),
                0x01..=0x1f | 0x7f..=0xff => format!("\\{b:03o}").into_bytes(),
                _ => vec![b],
            };
            assert_eq!(unvis(&shown), vec![b], "{b:#x}");
        }
    }

    #[test]
    fn vis_name_matches_tmux() {
        // What tmux 3.3a stored for names given to rename-window /
        // rename-session (recorded with list-windows / list-sessions).
        assert_eq!(vis_name(b"a\\b\tc"), br"a\\b\tc");
        assert_eq!(vis_name(b"r\\x\ty$HOME"), br"r\\x\ty\$HOME");
        assert_eq!(
            vis_name("é $ $1 ${x} $_".as_bytes()),
            r"é $ $1 \${x} \$_".as_bytes()
        );
        assert_eq!(vis_name(b"\x01\x7f\xff\n\r\x07"), br"\001\177\377\n\r\a");
        for b in 1..=255u8 {
            for v in [vec![b], vec![b'$', b], vec![b, b'$', b'x']] {
                assert_eq!(unvis(&vis_name(&v)), v, "{v:?}");
            }
        }
    }

    #[test]
    fn escape_format_cases() {
        assert_eq!(escape_format(b""), b"");
        assert_eq!(escape_format(b"#"), b"##");
        assert_eq!(escape_format(b"##["), b"###{l:#[}");
        assert_eq!(escape_format(b"a#"), b"a##");
        assert_eq!(escape_format(b"{}%,"), b"{}%,");
    }

    const SPEC: RowSpec = RowSpec {
        fixed: &["pane_id", "pane_active", "window_flags"],
        text: &["pane_title", "pane_current_path"],
    };

    #[test]
    fn row_format() {
        assert_eq!(
            SPEC.format(),
            "#{pane_id} #{pane_active} #{window_flags} #{n:pane_title}:#{pane_title} \
             #{n:pane_current_path}:#{pane_current_path}"
        );
    }

    #[test]
    fn rows_with_hostile_text() {
        let body = b"%1 1 * 3:a b 12:/x\n%9 1 : 0:\n%2 0  0: 2:\n\n";
        let rows = SPEC.parse("list-panes", body).unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].pane(0).unwrap(), PaneId(1));
        assert_eq!(rows[0].text(0), b"a b");
        assert_eq!(rows[0].text(1), b"/x\n%9 1 : 0:");
        assert_eq!(rows[1].pane(0).unwrap(), PaneId(2));
        assert!(!rows[1].flag(1, "pane_active").unwrap());
        assert_eq!(rows[1].string(2), "");
        assert_eq!(rows[1].text(0), b"");
        assert_eq!(rows[1].text(1), b"\n\n");
    }

    #[test]
    fn malformed_rows_are_errors() {
        for body in [
            &b"%1 1"[..],
            b"%1 1 * 3:ab",
            b"%1 1 * 3:abcd 0:",
            b"%1 1 * x:abc 0:",
            b"%1 1 * 3:abc 0:x",
            b"%1 1 * 3:abc 0: ",
            b"%1 1 * 99999999999:abc 0:",
            b"%1 1 * 4294967296:abc 0:",
            b"\n",
            b"%1 1 * 3:abc",
        ] {
            let err = match SPEC.parse("list-panes", body) {
                Err(e) => e,
                Ok(_) => panic!("{:?} parsed", String::from_utf8_lossy(body)),
            };
            match err {
                Error::UnexpectedReply { command, detail } => {
                    assert_eq!(command, "list-panes");
                    assert!(detail.contains("in row"), "{detail}");
                }
                other => panic!("{other:?}"),
            }
        }
        assert!(SPEC.parse("x", b"").unwrap().is_empty());
    }

    #[test]
    fn typed_field_errors() {
        let rows = SPEC.parse("list-panes", b"%x 2 * 0: 0:").unwrap();
        assert!(rows[0].pane(0).is_err());
        assert!(rows[0].flag(1, "pane_active").is_err());
        assert!(rows[0].u32(2, "n").is_err());
        assert_eq!(rows[0].opt_u32(2, "n").ok(), None);
        assert_eq!(session_id(b"\\$3"), Some(SessionId(3)));
        assert_eq!(session_id(b"$3"), Some(SessionId(3)));
    }
}
