//! tmux's "vis" escaping: [`unvis`] decodes it, and [`vis_name`] escapes a
//! name the way tmux stores window, session and buffer names.

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

fn control(c: u8) -> u8 {
    if c == b'?' { 0x7f } else { c & 0x1f }
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
}
