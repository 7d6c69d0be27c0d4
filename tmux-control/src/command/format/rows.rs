//! Reading `-F` rows: [`RowSpec`], the shape of one row and its format,
//! and [`Row`], one parsed row with its typed fields.

use std::borrow::Cow;

use crate::command::format::{lossy, unvis};
use crate::error::{Error, Result};
use crate::ids::{PaneId, SessionId, WindowId, parse_u32};

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

    pub(crate) fn field(&self, i: usize) -> &'a [u8] {
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
    pub(crate) fn opt_u64(&self, i: usize, name: &str) -> Result<Option<u64>> {
        if self.field(i).is_empty() {
            Ok(None)
        } else {
            self.u64(i, name).map(Some)
        }
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
