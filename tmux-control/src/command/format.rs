//! tmux formats: escaping literal text for them, decoding tmux's "vis"
//! escaping, and reading `-F` rows without ever confusing data with
//! structure.
//!
//! (Longer than 600 lines with its unit tests, which pin every escape of
//! every tmux version; the code is one concern: the text tmux's format
//! layer reads and writes.)

use std::borrow::Cow;
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
        let (b, next) = unvis_one(escaped, i);
        out.push(b);
        i = next;
    }
    out
}

/// Decodes the one byte that the escaped text at `escaped[i..]` (not empty)
/// stands for, and returns it with the index after its escape.
fn unvis_one(escaped: &[u8], i: usize) -> (u8, usize) {
    let b = escaped[i];
    if b != b'\\' || i + 1 == escaped.len() {
        return (b, i + 1);
    }
    let next = escaped[i + 1];
    let i = i + 2;
    match next {
        b'0'..=b'7' => {
            let mut value = u32::from(next - b'0');
            let mut i = i;
            for _ in 0..2 {
                match escaped.get(i) {
                    Some(&d @ b'0'..=b'7') if value * 8 + u32::from(d - b'0') <= 0xff => {
                        value = value * 8 + u32::from(d - b'0');
                        i += 1;
                    }
                    _ => break,
                }
            }
            (value as u8, i)
        }
        b'a' => (0x07, i),
        b'b' => (0x08, i),
        b't' => (b'\t', i),
        b'n' => (b'\n', i),
        b'v' => (0x0b, i),
        b'f' => (0x0c, i),
        b'r' => (b'\r', i),
        b'e' | b'E' => (0x1b, i),
        b's' => (b' ', i),
        b'M' => match (escaped.get(i), escaped.get(i + 1)) {
            (Some(b'-'), Some(&c)) => (c | 0x80, i + 2),
            (Some(b'^'), Some(&c)) => (control(c) | 0x80, i + 2),
            _ => (b'M', i),
        },
        b'^' => match escaped.get(i) {
            Some(&c) => (control(c), i + 1),
            None => (b'^', i),
        },
        other => (other, i),
    }
}

/// Wraps a format so that its expansion reaches the client exactly on tmux
/// 3.4 and 3.5, and returns it unchanged on other versions.
///
/// Those two versions vis-escape every reply line for a control client but
/// leave backslashes alone (`VIS_NOSLASH`): an ESC becomes `\033`, which
/// cannot be told from the four characters `\033` a program wrote, and 3.4
/// also writes `\$` for a `$` before a letter. Doubling every backslash
/// inside the format (`#{s/\\/\\\\/:…}`, which every version
/// since 3.3a supports) makes the reply line exactly tmux's vis encoding of
/// the value, which [`unvis`] undoes. The leading `#{l:}` makes tmux read
/// what follows as a format even when it is plain text (without it, a bare
/// word would be taken for a variable name).
///
/// A `}` outside any `#{…}` in `format` (which tmux prints as it is) is
/// written `#}`, so that it cannot end the wrapper early.
pub(crate) fn armour(version: &crate::version::Version, format: &[u8]) -> Vec<u8> {
    if !version.escapes_replies() {
        return format.to_vec();
    }
    let mut out = Vec::with_capacity(format.len() + 24);
    out.extend_from_slice(br"#{s/\\/\\\\/:#{l:}");
    let mut depth = 0usize;
    let mut i = 0;
    while i < format.len() {
        match (format[i], format.get(i + 1)) {
            (b'#', Some(b'{')) => {
                depth += 1;
                out.extend_from_slice(b"#{");
                i += 2;
            }
            (b'#', Some(&next)) => {
                out.extend_from_slice(&[b'#', next]);
                i += 2;
            }
            (b'}', _) if depth > 0 => {
                depth -= 1;
                out.push(b'}');
                i += 1;
            }
            (b'}', _) => {
                out.extend_from_slice(b"#}");
                i += 1;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    // An unclosed `#{` in the caller's format: close it before the wrapper.
    out.extend(std::iter::repeat_n(b'}', depth + 1));
    out
}

/// Decodes a reply line that tmux 3.4 or 3.5 escaped without [`armour`]
/// (commands such as `show-options` whose output cannot be wrapped): `\r`,
/// `\b`, `\a`, `\v`, `\f` and three-digit `\ooo` are what tmux writes for
/// control bytes and bytes that are not UTF-8, and on 3.4 `\$` before a
/// letter, `_` or `{` for `$`; every other backslash is the value's own.
/// Other versions' lines are returned as they are.
///
/// Known limit: tmux leaves the value's own backslashes alone, so a value
/// that itself contains one of those five letters or three octal digits
/// after a backslash (the text `\033`) cannot be told from the escape and
/// is decoded.
pub(crate) fn unvis_reply(version: &crate::version::Version, line: &[u8]) -> Vec<u8> {
    if !version.escapes_replies() {
        return line.to_vec();
    }
    let dollar = version.vis_escapes_dollar();
    let mut out = Vec::with_capacity(line.len());
    let mut i = 0;
    while i < line.len() {
        let b = line[i];
        let next = line.get(i + 1).copied();
        let octal = |k: usize| line.get(i + k).is_some_and(|d| (b'0'..=b'7').contains(d));
        match (b, next) {
            (b'\\', Some(c @ (b'r' | b'b' | b'a' | b'v' | b'f'))) => {
                out.push(match c {
                    b'r' => b'\r',
                    b'b' => 0x08,
                    b'a' => 0x07,
                    b'v' => 0x0b,
                    _ => 0x0c,
                });
                i += 2;
            }
            (b'\\', Some(_)) if octal(1) && octal(2) && octal(3) && line[i + 1] <= b'3' => {
                out.push(
                    (line[i + 1] - b'0') * 64 + (line[i + 2] - b'0') * 8 + (line[i + 3] - b'0'),
                );
                i += 4;
            }
            (b'\\', Some(b'$'))
                if dollar
                    && line
                        .get(i + 2)
                        .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_' || *c == b'{') =>
            {
                out.push(b'$');
                i += 2;
            }
            _ => {
                out.push(b);
                i += 1;
            }
        }
    }
    out
}

/// Undoes [`armour`]: on tmux 3.4 and 3.5 decodes a reply line, elsewhere
/// returns it as it is.
pub(crate) fn unarmour(version: &crate::version::Version, line: &[u8]) -> Vec<u8> {
    if version.escapes_replies() {
        unvis(line)
    } else {
        line.to_vec()
    }
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
/// `new-session -s` and `rename-session` (the `$` rule only up to 3.4: pass
/// [`Version::vis_escapes_dollar`](crate::version::Version)), but before 3.7 stored
/// the `-n` name of `new-window` and `new-session` raw; the typed commands
/// pass `-n` names through [`window_name_arg`] so that every window name is
/// stored, and comes back, in the same form. From 3.7 on tmux escapes
/// buffer names in the same way (without the `$` rule).
pub(crate) fn vis_name(name: &[u8], dollar: bool) -> Vec<u8> {
    let mut out = Vec::with_capacity(name.len() + 8);
    let mut pos = 0;
    for chunk in name.utf8_chunks() {
        for &b in chunk.valid().as_bytes() {
            let next = name.get(pos + 1).copied();
            pos += 1;
            match b {
                b'\\' => out.extend_from_slice(b"\\\\"),
                b'$' if dollar
                    && next.is_some_and(|n| n.is_ascii_alphabetic() || n == b'_' || n == b'{') =>
                {
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

/// The `-n` argument of `new-window` and `new-session` for tmux `version`:
/// pre-escaped as tmux escapes every other window name (before 3.7, when
/// tmux stored `-n` raw), or the name itself (3.7 and later, where tmux
/// escapes it, and refuses control characters and invalid UTF-8).
pub(crate) fn window_name_arg(version: &crate::version::Version, name: &[u8]) -> Vec<u8> {
    if version.cleans_names() {
        name.to_vec()
    } else {
        vis_name(name, version.vis_escapes_dollar())
    }
}

/// A buffer name as tmux `version` stores it, for commands that look a
/// buffer up (3.7 and later store names escaped, but look up what they are
/// given).
pub(crate) fn buffer_lookup_name(version: &crate::version::Version, name: &[u8]) -> Vec<u8> {
    if version.cleans_names() {
        vis_name(name, false)
    } else {
        name.to_vec()
    }
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
/// Why this shape: reply lines come back raw in tmux 3.3a and 3.6+, and
/// vis-escaped with backslashes left alone in 3.4/3.5 (control characters
/// become `\001`, 3.4 writes `$HOME` as `\$HOME`), so no control character
/// is a safe separator, and free text (paths, commands, names with spaces)
/// can contain any byte but NUL.
///
/// * **Fixed fields** are values tmux builds itself from a closed alphabet:
///   ids (`$1`, `@2`, `%3`), numbers, `0`/`1` flags, layouts
///   (`b25d,80x24,0,0,0`, `{}`, `[]`) and window flags (`*-#!~MZ`). None
///   can contain a space or a backslash. A fixed field may be empty (a
///   non-current window's flags).
/// * **Free-text fields** are written by tmux itself with every backslash
///   doubled, every space as `\s` and every LF as `\n`
///   (`#{s/\\/\\\\/;s/ /\\s/;s/LF/\\n/:VAR}`), so that a value never
///   holds a raw space or LF and its backslashes cannot be confused with the
///   escapes of 3.4/3.5; the reader undoes it all with [`unvis`]. Each value
///   is expanded once, so a value that changes while tmux writes the row
///   (the command running in a pane) cannot make the row inconsistent.
///
/// Fields are separated by single spaces and a row ends at LF. A row that
/// does not have this shape is an [`Error::UnexpectedReply`] naming the
/// command and quoting the row.
pub(crate) struct RowSpec {
    pub(crate) fixed: &'static [&'static str],
    pub(crate) text: &'static [&'static str],
}

impl RowSpec {
    /// The `-F` format for this row shape (the same on every version).
    pub(crate) fn format(&self) -> String {
        let mut out = String::new();
        for (n, var) in self.fixed.iter().chain(self.text).enumerate() {
            if n > 0 {
                out.push(' ');
            }
            out.push_str("#{");
            if n >= self.fixed.len() {
                out.push_str("s/\\\\/\\\\\\\\/;s/ /\\\\s/;s/\n/\\\\n/:");
            }
            out.push_str(var);
            out.push('}');
        }
        out
    }

    /// Splits a reply body into rows of this shape.
    pub(crate) fn parse<'a>(&self, command: &'a str, body: &'a [u8]) -> Result<Vec<Row<'a>>> {
        if body.is_empty() {
            return Ok(Vec::new());
        }
        body.split(|&b| b == b'\n')
            .map(|line| self.parse_row(command, line))
            .collect()
    }

    fn parse_row<'a>(&self, command: &'a str, line: &'a [u8]) -> Result<Row<'a>> {
        let fields: Vec<&[u8]> = line.split(|&b| b == b' ').collect();
        let want = self.fixed.len() + self.text.len();
        if fields.len() != want {
            return Err(row_error(
                command,
                line,
                &format!("expected {want} fields, got {}", fields.len()),
            ));
        }
        let (fixed, text) = fields.split_at(self.fixed.len());
        Ok(Row {
            command,
            line,
            fixed: fixed.to_vec(),
            text: text
                .iter()
                .map(|t| {
                    if t.contains(&b'\\') {
                        Cow::Owned(unvis(t))
                    } else {
                        Cow::Borrowed(*t)
                    }
                })
                .collect(),
        })
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
    text: Vec<Cow<'a, [u8]>>,
}

impl<'a> Row<'a> {
    fn error(&self, what: &str) -> Error {
        row_error(self.command, self.line, what)
    }

    fn field(&self, i: usize) -> &'a [u8] {
        self.fixed.get(i).copied().unwrap_or_default()
    }

    /// Free-text field `i`, as tmux had it (its reply escaping undone).
    pub(crate) fn text(&self, i: usize) -> &[u8] {
        self.text.get(i).map(|t| &t[..]).unwrap_or_default()
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

    fn vis_name_dq(name: &[u8]) -> Vec<u8> {
        vis_name(name, true)
    }

    #[test]
    fn armour_wraps_only_on_3_4_and_3_5() {
        let v = crate::version::Version::parse;
        assert_eq!(armour(&v("3.3a"), b"#{pane_id} }"), b"#{pane_id} }");
        assert_eq!(armour(&v("3.6a"), b"x"), b"x");
        assert_eq!(
            armour(&v("3.4"), b"a} #{?x,{,}} ## #}"),
            br"#{s/\\/\\\\/:#{l:}a#} #{?x,{,}#} ## #}}".to_vec()
        );
        assert_eq!(
            armour(&v("3.5a"), b"#{x"),
            br"#{s/\\/\\\\/:#{l:}#{x}}".to_vec()
        );
        // What 3.4 writes for the armoured value `a\b$HOME<ESC>\033`
        // (backslashes doubled by the wrapper, then its reply escaping).
        assert_eq!(
            unarmour(&v("3.4"), br"a\\b\$HOME\033\\033"),
            b"a\\b$HOME\x1b\\033"
        );
        assert_eq!(unarmour(&v("3.7c"), br"a\\b"), br"a\\b");
    }

    #[test]
    fn reply_unescaping_of_3_4_and_3_5() {
        let v = crate::version::Version::parse;
        let line = br"o\z\033\001\r\$HOME \$1 \q";
        assert_eq!(unvis_reply(&v("3.3a"), line), line.to_vec());
        assert_eq!(unvis_reply(&v("3.6a"), line), line.to_vec());
        assert_eq!(
            unvis_reply(&v("3.4"), line),
            b"o\\z\x1b\x01\r$HOME \\$1 \\q".to_vec()
        );
        assert_eq!(
            unvis_reply(&v("3.5a"), line),
            b"o\\z\x1b\x01\r\\$HOME \\$1 \\q".to_vec()
        );
        assert_eq!(unvis_reply(&v("3.5a"), br"\477 \37"), br"\477 \37".to_vec());
    }

    #[test]
    fn vis_name_without_dollar() {
        assert_eq!(vis_name(br"a\b $HOME", false), br"a\\b $HOME");
        assert_eq!(vis_name(b"\t\xff", false), br"\t\377");
    }

    #[test]
    fn vis_name_matches_tmux() {
        // What tmux 3.3a stored for names given to rename-window /
        // rename-session (recorded with list-windows / list-sessions).
        assert_eq!(vis_name_dq(b"a\\b\tc"), br"a\\b\tc");
        assert_eq!(vis_name_dq(b"r\\x\ty$HOME"), br"r\\x\ty\$HOME");
        assert_eq!(
            vis_name_dq("é $ $1 ${x} $_".as_bytes()),
            r"é $ $1 \${x} \$_".as_bytes()
        );
        assert_eq!(vis_name_dq(b"\x01\x7f\xff\n\r\x07"), br"\001\177\377\n\r\a");
        for b in 1..=255u8 {
            for v in [vec![b], vec![b'$', b], vec![b, b'$', b'x']] {
                assert_eq!(unvis(&vis_name_dq(&v)), v, "{v:?}");
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
            "#{pane_id} #{pane_active} #{window_flags} \
             #{s/\\\\/\\\\\\\\/;s/ /\\\\s/;s/\n/\\\\n/:pane_title} \
             #{s/\\\\/\\\\\\\\/;s/ /\\\\s/;s/\n/\\\\n/:pane_current_path}"
        );
    }

    #[test]
    fn rows_with_hostile_text() {
        // As tmux writes them for the format above: spaces as `\s`, LF as
        // `\n`, backslashes doubled; on 3.4/3.5 control bytes as `\ooo`.
        let body = br"%1 1 * a\sb /x\n%9\s1\s:\s0:
%2 0  \\033\033 \n\n";
        let rows = SPEC.parse("list-panes", body).unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].pane(0).unwrap(), PaneId(1));
        assert_eq!(rows[0].text(0), b"a b");
        assert_eq!(rows[0].text(1), b"/x\n%9 1 : 0:");
        assert_eq!(rows[1].pane(0).unwrap(), PaneId(2));
        assert!(!rows[1].flag(1, "pane_active").unwrap());
        assert_eq!(rows[1].string(2), "");
        assert_eq!(rows[1].text(0), b"\\033\x1b");
        assert_eq!(rows[1].text(1), b"\n\n");
    }

    #[test]
    fn malformed_rows_are_errors() {
        for body in [
            &b"%1 1"[..],
            b"%1 1 * a",
            b"%1 1 * a b c",
            b"%1 1 * a b ",
            b"\n",
            b"%1 1 * a b\n",
            b"%1 1 * a b\n%2",
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
        let rows = SPEC.parse("list-panes", b"%x 2 * t p").unwrap();
        assert!(rows[0].pane(0).is_err());
        assert!(rows[0].flag(1, "pane_active").is_err());
        assert!(rows[0].u32(2, "n").is_err());
        assert_eq!(rows[0].opt_u32(2, "n").ok(), None);
        assert_eq!(session_id(b"\\$3"), Some(SessionId(3)));
        assert_eq!(session_id(b"$3"), Some(SessionId(3)));
    }
}
