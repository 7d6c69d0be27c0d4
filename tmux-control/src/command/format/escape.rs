//! Escaping literal text for tmux's format expansion: [`escape_format`].

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

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn escape_format_cases() {
        assert_eq!(escape_format(b""), b"");
        assert_eq!(escape_format(b"#"), b"##");
        assert_eq!(escape_format(b"##["), b"###{l:#[}");
        assert_eq!(escape_format(b"a#"), b"a##");
        assert_eq!(escape_format(b"{}%,"), b"{}%,");
    }
}
