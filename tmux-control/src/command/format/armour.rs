//! The reply escaping of tmux 3.4 and 3.5: [`armour`] wraps a format so
//! that its expansion comes back exactly, [`unarmour`] undoes it, and
//! [`unvis_reply`] decodes a reply line that could not be wrapped.

use crate::command::format::unvis;

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

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

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
}
